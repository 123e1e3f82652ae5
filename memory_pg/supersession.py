"""The supersession decision: new, replaces a current memory, or repeats one (pure: no SQL, no I/O).

For each new memory: is it new, does it replace a current memory of the same user
and type (same topic key; a statement of change about the same subject; or similar
enough and confirmed by a judge when one is configured), or does it repeat one
(merged, nothing stored twice)? The write plan (:mod:`memory_pg.plans.write`) runs
the decision under a per-(user, type) advisory lock, so two concurrent writers on one
topic leave exactly one current row.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from memory_pg import _facts
from memory_pg._segment import EN_STOPWORDS, ordered_words, segment
from memory_pg.config import SupersedePolicy
from memory_pg.entities import extract, has_han
from memory_pg.sql.memories import NewMemory
from memory_pg.text import changes, topics

logger = logging.getLogger(__name__)


#: Any callable that answers a prompt with text: an LLM client, or a test's function.
Judge = Callable[[str], str]

Action = Literal["add", "supersede", "merge"]


# -- supersession: the pure decision --------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A current memory a new one may replace or repeat."""

    id: uuid.UUID
    topic: str | None
    text: str
    content_hash: str
    similarity: float
    same_topic: bool


@dataclass(frozen=True)
class Decision:
    """What to do with one new memory.

    Attributes:
        action: ``add`` (store it), ``supersede`` (store it, mark ``targets`` as
            replaced by it) or ``merge`` (store nothing: it repeats ``targets[0]``).
        targets: the current memories concerned.
        reason: ``new``, ``topic``, ``change``, ``similar``, ``judge``, ``duplicate`` or
            ``near_duplicate``.
        similarity: cosine similarity to the first target.
        topic: the topic key the new memory should carry (inherited when detected).
    """

    action: Action
    targets: tuple[uuid.UUID, ...] = ()
    reason: str = "new"
    similarity: float | None = None
    topic: str | None = None
    #: Why a ``change`` replaced its targets (:meth:`memory_pg.text.changes.Evidence.as_detail`,
    #: and the judge's verdict where one confirmed it), for the history.
    evidence: dict[str, object] | None = None


JUDGE_PROMPT = (
    "You maintain an agent's long-term memory. Compare two memories of the same user.\n"
    "EXISTING: {old}\nNEW: {new}\n"
    "Answer with exactly one word:\n"
    "CONTRADICTS - the new memory updates or replaces the existing one (it is no longer true);\n"
    "SAME - both state the same fact;\n"
    "DIFFERENT - both can be true at once.\n"
)


#: The line a judge is shown when the rules found a signal of change in the new memory.
CUE_LINE = "The new memory signals a change with: {cue}\n"


def ask_judge(judge: Judge, old: str, new: str, cue: str = "") -> Action:
    """Ask ``judge`` whether ``new`` replaces, repeats or sits beside ``old`` (with the
    signal of change the rules found in ``new``, when there is one).

    Any answer other than a clear CONTRADICTS or SAME (or an exception) keeps both:
    losing a fact is worse than keeping one too many.
    """
    prompt = JUDGE_PROMPT.format(old=old, new=new)
    if cue:
        prompt = prompt.replace("Answer with", CUE_LINE.format(cue=cue) + "Answer with", 1)
    try:
        answer = judge(prompt)
    except Exception as exc:  # a judge is user code or a network call: never fail the write
        logger.warning("supersession judge failed (%s): keeping both memories", type(exc).__name__)
        return "add"
    word = re.search(r"[A-Za-z]+", str(answer).upper())
    verdict = word.group(0) if word else ""
    if verdict.startswith("CONTRADICT"):
        return "supersede"
    if verdict == "SAME":
        return "merge"
    return "add"


def word_overlap(a: str, b: str) -> float:
    """Jaccard overlap of the two texts' words (jieba words for Chinese), 0..1.

    The vector alone cannot tell two facts apart when the model cannot read the
    text: all-MiniLM-L6-v2 maps "我喜欢猫" and "我讨厌狗" to the same vector (every
    character is ``[UNK]``, cosine 1.0), and "meeting at 3pm" / "meeting at 4pm"
    score 0.93. Merging or replacing also needs the words to agree.
    """
    sa, sb = segment(a), segment(b)
    wa = (set(sa.words) - EN_STOPWORDS) | set(sa.cjk)
    wb = (set(sb.words) - EN_STOPWORDS) | set(sb.cjk)
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


def _other_people(a: str, b: str) -> bool:
    """Whether the two texts are about two people: each starts with a Chinese name
    (jieba's person tag) and the names differ.

    "小王喜欢喝咖啡" and "小李喜欢喝咖啡" read alike (cosine 0.84 with a model that
    sees both as ``[UNK]``, word overlap 0.6), but they are facts about two people,
    not one fact that changed. A name in the value ("项目负责人是王芳" / "…是李娜") is
    what changed, and is left to the other rules; so is English, which the model
    reads and whose capitalised first word is no sure name ("Vim is my editor").
    """
    return bool((first := _first_person(a)) and (other := _first_person(b)) and first != other)


def _first_person(text: str) -> str | None:
    """The key of the Chinese name ``text`` starts with, if it does."""
    start = text.lstrip()
    for found in extract(start):
        if found.kind == "person" and has_han(found.name) and start.startswith(found.name):
            return found.key
    return None


#: Numbers written as words: "two appointments" is not a repeat of "three
#: appointments", nor "两周" of "三周".
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty "
    "sixty seventy eighty ninety hundred thousand million billion half dozen "
    "once twice".split()
)
_ZH_NUMERAL = re.compile(r"[零〇一二两三四五六七八九十百千万亿半]")


def _numbers(text: str) -> list[str]:
    """The words of ``text`` that hold a number: digits, a number word, or a Chinese
    numeral ("两周", "五公里"; a word such as "一起" counts too: when unsure, two
    texts that differ in one are kept apart)."""
    seg = segment(text)
    latin = [w for w in seg.words if any(ch.isdigit() for ch in w) or w.casefold() in _NUMBER_WORDS]
    return sorted(latin + [w for w in seg.cjk if _ZH_NUMERAL.search(w)])


def _words_of(text: str) -> list[str]:
    """:func:`memory_pg._segment.ordered_words` with English function words left out."""
    return [w for w in ordered_words(text) if w not in EN_STOPWORDS]


def _swap(a: str, b: str) -> tuple[int, int] | None:
    """Where two texts differ by Chinese words swapped for others: how many words they
    share before the swap and after it; None when they differ otherwise (a word
    added or dropped, or only Latin words swapped: the model reads those)."""
    ta, tb = _words_of(a), _words_of(b)
    size = min(len(ta), len(tb))
    before = 0
    while before < size and ta[before] == tb[before]:
        before += 1
    after = 0
    while after < size - before and ta[-1 - after] == tb[-1 - after]:
        after += 1
    gone, came = ta[before : len(ta) - after], tb[before : len(tb) - after]
    if not gone or not came or not has_han("".join(gone + came)):
        return None
    if after and ta[len(ta) - after] in _COPULA:
        # "蓝色是我最喜欢的颜色" / "绿色是…": the value put first; it changed.
        return before, 0
    return before, after


#: A shared rest that starts with one of these says what the swapped words are.
_COPULA = frozenset({"是", "为", "乃"})


def _other_subjects(a: str, b: str) -> bool:
    """Whether the two texts say one thing of two subjects: Chinese words swapped
    before the rest they share, which is more than they share before the swap
    ("登录模块已上线" / "支付模块已上线", "我女儿在北京上学" / "我儿子…"). A value
    that changed comes after what the two share ("项目负责人是王芳" / "…李娜"), or
    before a shared rest that says what it is ("蓝色是我最喜欢的颜色" / "绿色是…").

    The bundled model reads no Chinese (every character ``[UNK]``: such pairs score
    about 1.0), and the words alone agree on all but the subject.
    """
    swap = _swap(a, b)
    return swap is not None and swap[1] > swap[0]


#: Words that turn a statement around. Two texts alike but for one of these say
#: opposite things ("…with breakfast" / "…never with breakfast"): not a repeat.
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without|cannot)\b|n't\b"
    r"|[不没沒别別无無未非勿莫]",
    re.IGNORECASE,
)


def _negations(text: str) -> list[str]:
    return sorted(m.group(0).lower() for m in _NEGATION.finditer(text))


def decide(
    *,
    memory_type: str,
    topic: str | None,
    content_hash: str,
    new_text: str,
    candidates: Sequence[Candidate],
    policy: SupersedePolicy,
    judge: Judge | None = None,
) -> Decision:
    """Decide whether a new memory is added, replaces current ones, or repeats one.

    Rules, first match wins: the same text → merge (``duplicate``); similarity at or
    above ``merge_threshold``, with the same numbers and negations → merge
    (``near_duplicate``); a question or other
    non-fact (:func:`memory_pg._facts.non_fact`) → add, replacing nothing; the same
    topic key → supersede (``topic``); for ``detect_types``: an explicit statement of
    change about what a current memory says (:func:`memory_pg._facts.change_applies`)
    → supersede it (``change``), or, with a ``judge``, supersede what the judge calls
    contradicted; then the nearest memory, if similar enough, is confirmed by
    ``judge`` (CONTRADICTS → supersede, SAME → merge), or, with no judge, replaced
    from ``detect_threshold`` on (``similar``).
    """
    if not policy.enabled or not candidates:
        return Decision("add", topic=topic)
    for cand in candidates:
        if cand.content_hash == content_hash:
            return Decision("merge", (cand.id,), "duplicate", cand.similarity, topic)
    nearest = max(candidates, key=lambda c: c.similarity)
    overlap = word_overlap(new_text, nearest.text)
    if (
        nearest.similarity >= policy.merge_threshold
        and overlap >= policy.merge_min_overlap
        # "item 3" is not a repeat of "item 4", however alike the rest reads.
        and _numbers(new_text) == _numbers(nearest.text)
        # Nor is "never with breakfast" one of "with breakfast".
        and _negations(new_text) == _negations(nearest.text)
        and not _other_people(new_text, nearest.text)
        # "负责订单系统" / "负责支付系统": a word swapped is a new fact, never a repeat.
        and _swap(new_text, nearest.text) is None
    ):
        return Decision("merge", (nearest.id,), "near_duplicate", nearest.similarity, topic)
    if _facts.non_fact(new_text) is not None:
        return Decision("add", topic=topic)  # a question never replaces anything
    same_topic = tuple(dict.fromkeys(c.id for c in candidates if c.same_topic))
    if same_topic:
        return Decision("supersede", same_topic, "topic", None, topic)
    # A statement of change replaces what it names in any type but the dialogue (a
    # todo moved or dropped is replaced too); similarity alone only in detect_types.
    if memory_type not in policy.detect_types and memory_type == "dialogue":
        return Decision("add", topic=topic)
    changed = _changed(new_text, candidates, judge)
    if changed:
        # The closest replaced memory lends its topic, whatever order the lookup gave.
        closest, evidence = max(changed, key=lambda c: c[0].similarity)
        inherit = topic if topic is not None else closest.topic
        reason = "change" if judge is None else "judge"
        targets = tuple(dict.fromkeys(c.id for c, _ in changed))
        return Decision("supersede", targets, reason, closest.similarity, inherit, evidence)
    if memory_type not in policy.detect_types:
        return Decision("add", topic=topic)
    inherit = topic if topic is not None else nearest.topic
    if judge is not None:
        if nearest.similarity < policy.judge_threshold:
            return Decision("add", topic=topic)
        verdict = ask_judge(judge, nearest.text, new_text)
        if verdict == "add":
            return Decision("add", topic=topic)
        return Decision(verdict, (nearest.id,), "judge", nearest.similarity, inherit)
    if (
        nearest.similarity >= policy.detect_threshold
        and overlap >= policy.detect_min_overlap
        # "第3个需求" and "第4个需求" are two facts, not one changed: when unsure, keep both.
        and _numbers(new_text) == _numbers(nearest.text)
        # "数据库使用 PostgreSQL" / "数据库使用 Redis 做缓存": products of two kinds, two facts.
        and not _facts.different_kinds(new_text, nearest.text)
        # "小王喜欢喝咖啡" / "小李喜欢喝咖啡": one fact each of two people.
        and not _other_people(new_text, nearest.text)
        # "登录模块已上线" / "支付模块已上线": one thing said of two subjects.
        and not _other_subjects(new_text, nearest.text)
        # "…is at Sarah's like always": a restatement, however alike it reads.
        and not changes.unchanged(new_text)
    ):
        return Decision("supersede", (nearest.id,), "similar", nearest.similarity, inherit)
    return Decision("add", topic=topic)


def _changed(
    new_text: str, candidates: Sequence[Candidate], judge: Judge | None
) -> list[tuple[Candidate, dict[str, object]]]:
    """The candidates a statement of change replaces, in candidate order, each with the
    evidence for the history.

    The rules decide: the phrasings of :func:`memory_pg._facts.change_applies`, then
    the structure of :func:`memory_pg.text.changes.judge` (a signal of change, the
    same subject, the old value given up). With a judge, each candidate the rules
    point at is put to it with the signal found, and only those it calls
    contradicted are replaced (the vector cannot find them: a model that cannot read
    Chinese gives meaningless similarities).
    """
    signal = changes.cue(new_text)
    # Said with no word of change, a new number of a named thing ("Windows 10" /
    # "Windows 11"), a thing to do finished ("物业费交了") or a negation lifted ("开始
    # 能吃辣了") may still be one: the structure alone decides those.
    cued = signal is not None or _facts.is_change(new_text)
    # A key said again with another value ("Dentist: Dr. Kim") replaces offline only
    # where both values are of one kind (two names, two amounts, two dates); with a
    # judge, any other value is proposed to it too ("Favorite color: navy blue").
    restate = judge is not None
    if not cued and not changes.may_change(new_text):
        return []
    kinds_new = topics.product_topics(new_text)
    seen: set[uuid.UUID] = set()
    found: list[tuple[Candidate, dict[str, object]]] = []
    for cand in candidates:
        if cand.id in seen or _facts.non_fact(cand.text) is not None:
            continue
        evidence: dict[str, object] | None = None
        if cued and _facts.change_applies(new_text, cand.text):
            evidence = {"cue_kind": "phrase", "cue": signal[1] if signal else ""}
        else:
            judged = changes.judge(
                cand.text,
                new_text,
                (topics.product_topics(cand.text), kinds_new),
                similar=_reads_alike(cand, new_text),
                restate=restate,
            )
            evidence = judged.as_detail() if judged else None
        if evidence is None:
            continue
        seen.add(cand.id)
        if judge is not None:
            verdict = ask_judge(judge, cand.text, new_text, str(evidence.get("cue") or ""))
            if verdict != "supersede":
                continue
            evidence = {**evidence, "confirmed_by": "judge"}
        found.append((cand, evidence))
    return found


#: The cosine similarity from which two texts the model reads are one subject for the
#: change decision ("I drink two coffees a day" / "I quit caffeine").
SAME_SUBJECT_SIMILARITY = 0.45


def _reads_alike(cand: Candidate, new_text: str) -> bool:
    """Whether the embedding model, reading both texts (no Chinese: the bundled model
    sees it as unknown tokens), finds them close."""
    return (
        cand.similarity >= SAME_SUBJECT_SIMILARITY
        and not has_han(cand.text)
        and not has_han(new_text)
    )


#: Current memories sharing words with a statement of change, compared with it.


#: How far below the best similarity of the matrix product a row of the batch is still
#: checked with an exact dot product (float32 rounding is far smaller).
SCREEN_SLACK = 1e-3


def decide_batch(
    rows: list[NewMemory],
    found: list[list[Candidate]],
    policy: SupersedePolicy,
    judge: Judge | None = None,
) -> list[Decision]:
    """Decide each row in order; a row also sees the rows of this batch before it.

    An earlier row of the batch is a candidate like a current memory when it has
    the same type and was neither merged away nor replaced. Of those, only the ones
    :func:`decide` can act on are passed: the first with the same text,
    the most similar (the first of equals) and those with the same topic key. The
    decision is the one all of them would give, without a Python loop over every
    pair of the batch (which made a batch of 500 cost seconds).
    """
    if not policy.enabled:
        return [Decision("add", topic=row.topic) for row in rows]
    vectors = np.asarray([row.embedding for row in rows], dtype=np.float32)
    # A screen only: similarities are recomputed pair by pair below, as decide() saw
    # them before, so rounding in the matrix product never changes a decision.
    approx = vectors @ vectors.T
    types = np.asarray([row.memory_type for row in rows], dtype=object)
    # A memory meets only memories of its own scope (shared, or private).
    privates = np.asarray([row.private for row in rows], dtype=bool)
    hashes = np.asarray([row.content_hash for row in rows], dtype=object)
    at = {row.id: i for i, row in enumerate(rows)}
    live = np.zeros(len(rows), dtype=bool)  # earlier rows that are current memories
    by_topic: dict[tuple[str, str], list[int]] = {}
    gone: set[uuid.UUID] = set()  # replaced by this batch: no longer current
    decisions: list[Decision] = []
    for i, row in enumerate(rows):
        cands = [c for c in found[i] if c.id not in gone]
        eligible = live[:i] & (types[:i] == row.memory_type) & (privates[:i] == row.private)
        if eligible.any():
            picked = _batch_candidates(rows, i, eligible, approx, hashes, by_topic, live)
            for j, sim in picked:
                dj = decisions[j]
                same_topic = row.topic is not None and dj.topic == row.topic
                earlier = rows[j]
                cands.append(
                    Candidate(
                        earlier.id,
                        dj.topic,
                        earlier.text,
                        earlier.content_hash,
                        sim,
                        same_topic,
                    )
                )
        d = decide(
            memory_type=row.memory_type,
            topic=row.topic,
            content_hash=row.content_hash,
            new_text=row.text,
            candidates=cands,
            policy=policy,
            judge=judge,
        )
        if d.topic != row.topic:
            rows[i] = dataclasses.replace(row, topic=d.topic)
        decisions.append(d)
        if d.action != "merge":
            live[i] = True
            if d.topic is not None:
                by_topic.setdefault((row.memory_type, d.topic), []).append(i)
        if d.action == "supersede":
            gone.update(d.targets)
            for target in d.targets:
                if target in at:
                    live[at[target]] = False
    return decisions


def _batch_candidates(
    rows: list[NewMemory],
    i: int,
    eligible: np.ndarray[Any, Any],
    approx: np.ndarray[Any, Any],
    hashes: np.ndarray[Any, Any],
    by_topic: dict[tuple[str, str], list[int]],
    live: np.ndarray[Any, Any],
) -> list[tuple[int, float]]:
    """Earlier rows of the batch that decide() can act on for row ``i``, in batch
    order, with their similarity to it."""
    row = rows[i]
    picked: set[int] = set()
    duplicates = np.flatnonzero(eligible & (hashes[:i] == row.content_hash))
    if duplicates.size:
        picked.add(int(duplicates[0]))
    if row.topic is not None:
        picked.update(j for j in by_topic.get((row.memory_type, row.topic), ()) if eligible[j])
    if _facts.is_change(row.text):
        # A statement of change may replace any earlier row, however dissimilar.
        picked.update(int(j) for j in np.flatnonzero(eligible))
    screened = np.where(eligible, approx[i, :i], -np.inf)
    near = np.flatnonzero(screened >= screened.max() - SCREEN_SLACK)
    sims = {int(j): float(np.dot(rows[j].embedding, row.embedding)) for j in near}
    # The most similar, the first of equals winning as in decide()'s max().
    picked.add(max(sims, key=lambda j: (sims[j], -j)))
    for j in picked - sims.keys():
        sims[j] = float(np.dot(rows[j].embedding, row.embedding))
    return [(j, sims[j]) for j in sorted(picked)]
