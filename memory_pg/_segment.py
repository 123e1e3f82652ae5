"""Text segmentation for full-text search: jieba for Chinese, words for everything else.

PostgreSQL's parser cannot split Chinese (it has no spaces), so text is cut here,
before it reaches ``to_tsvector``: Chinese runs become jieba's search-mode words,
other runs become lower-case words that PostgreSQL's ``english`` configuration
stems. The same cutting serves documents and queries, so they meet.

Chinese words are also indexed by their sound: toneless pinyin, syllables joined
("游泳" → ``youyong``), with weight ``B`` so a memory's length (its ``D`` words)
does not change. A query word matches by its characters *or* its sound, as one
term: "游勇课" (a typo by sound, the commonest kind in Chinese typed by pinyin
input) meets "游泳班", and a word typed in pinyin in a Chinese query ("那个 gang
qin 课", "我的weijing") meets "钢琴" and "胃镜". One term, not two: a word spelled
right is not counted twice. A Chinese word's characters are indexed with weight
``B`` too and asked as terms of their own: compounds share a root ("租金" meets
"月租").
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

# Han, kana, hangul and CJK punctuation blocks: runs of these go to jieba.
_CJK_RUN = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002ebef]+"
)
_WORD = re.compile(r"[^\W_]+(?:['.+#-][^\W_]+)*", re.UNICODE)
_CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]")

#: Chinese function words that carry no topic; everything else is kept.
_ZH_STOPWORDS = frozenset(
    "的 了 是 在 我 你 他 她 它 们 我们 你们 他们 这 那 这个 那个 和 与 及 或 也 都 就 而 "
    "吗 呢 吧 啊 呀 哦 嗯 着 过 把 被 给 对 从 向 到 于 为 以 之 其 又 还 很 太 更 最 "
    "什么 怎么 哪 哪个 哪些 谁 多少 几 一个 一些 有 没有 没 不 是否 要 会 能 可以 "
    "请 让 吗 如何 为什么 关于 一下".split()
)
#: English function words: what two texts share without saying the same thing
#: (:func:`memory_pg.supersession.word_overlap`; jieba's side drops Chinese ones).
EN_STOPWORDS = frozenset(
    "a an the our my your his her their its we i you he she they it is are was were be "
    "will would shall should can could to of in on at as for with from by and or this that "
    "these those me us them".split()
)
#: Words that ask rather than say ("在哪儿", "怎么样", "对吗", "什么时候"): a question
#: is not about them, and a memory that holds one is not the answer for it.
_ZH_QUESTION_WORDS = frozenset(
    "哪里 哪儿 哪天 哪年 哪月 几号 几月 几点 几时 何时 时候 什么时候 多久 "
    "怎么样 怎样 什么样 怎么办 是不是 不是 对不对 有没有 对吗 好吗 是吗 呢 啦 嘛 "
    "知道 记得 告诉 还记得 平时 一般 通常".split()
)
#: Off switches for measuring (``benchmarks/zh_dev.py``); all on by default.
QUESTION_STOPWORDS = True
OOV_PIECES = True
TRADITIONAL_FOLDING = True
PINYIN = True

_lock = threading.Lock()
_jieba_ready = False


def _jieba() -> object:
    global _jieba_ready
    import jieba

    if not _jieba_ready:
        with _lock:
            if not _jieba_ready:
                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                _jieba_ready = True
    return jieba


@dataclass(frozen=True)
class Segments:
    """Text cut into the words each text-search configuration receives.

    Attributes:
        words: non-Chinese words, lower-case, for the ``english`` configuration.
        cjk: Chinese (and other CJK) words, for the ``simple`` configuration.
    """

    words: tuple[str, ...]
    cjk: tuple[str, ...]

    @property
    def words_text(self) -> str:
        """The words joined by spaces, for ``to_tsvector('english', ...)``."""
        return " ".join(self.words)

    @property
    def cjk_text(self) -> str:
        """The CJK words joined by spaces, for ``to_tsvector('simple', ...)``."""
        return " ".join(self.cjk)

    @property
    def alike_text(self) -> str:
        """What the Chinese words of two characters or more are also found by: their
        sounds (:func:`sound`) and their characters (:func:`_chars`), joined by spaces,
        for ``to_tsvector('simple', ...)``."""
        sounds = [_heard(w) for w in self.cjk]
        chars = _chars(self.cjk) if CHARS else []
        return " ".join(dict.fromkeys([s for s in sounds if s] + chars))


#: Off switch for measuring: a Chinese word's characters as terms of their own.
CHARS = True
#: Chinese numerals: a value, not a topic ("四十平" and "四十岁" share no subject).
_NUMERALS = frozenset("零〇一二两三四五六七八九十百千万亿几半")


#: A query asks a character alone only when jieba's dictionary holds it in at most
#: this many words: "子" (in 4,612: 孩子, 桌子, 房子…) or "生" (2,940) say little of
#: what a word is about, "租" (160) or "琴" (244) say much. None: every character.
#: Chosen on tune halves (300 to 3000 and none measured; docs/measurements.md).
CHAR_LIMIT: int | None = 1000


@lru_cache(maxsize=1)
def _productivity() -> dict[str, int]:
    """How many words of two characters or more jieba's dictionary holds each
    character in (its words of frequency 0 are prefixes, not words)."""
    counts: dict[str, int] = {}
    for word, freq in _jieba().dt.FREQ.items():  # type: ignore[attr-defined]
        if freq and len(word) > 1:
            for c in set(word):
                counts[c] = counts.get(c, 0) + 1
    return counts


def _telling(char: str) -> bool:
    """Whether a query asks ``char`` alone (:data:`CHAR_LIMIT`)."""
    return CHAR_LIMIT is None or _productivity().get(char, 0) <= CHAR_LIMIT


def tells(word: str) -> bool:
    """Whether ``word`` says what it is about where it is found inside other words:
    any word of two characters or more, or a character that jieba's dictionary holds
    in few words (猫, 课; not 人 or 家, found in thousands: "跟人打架")."""
    return len(word) > 1 or not _CJK_CHAR.match(word) or _telling(word)


def in_dictionary(word: str) -> bool:
    """Whether jieba's dictionary holds ``word`` as a word (not a prefix of one)."""
    return bool(_jieba().dt.FREQ.get(word))  # type: ignore[attr-defined]


@lru_cache(maxsize=4096)
def whole_words(text: str) -> frozenset[str]:
    """The words jieba's precise mode cuts ``text`` into: "老太太" is one word, not
    太太 inside it; "拿到手机" is 拿到 and 手机, not 到手."""
    return frozenset(w for w in _jieba().lcut(normalize(text)) if w.strip())  # type: ignore[attr-defined]


def _chars(words: Iterable[str]) -> list[str]:
    """The Han characters of words of two characters or more, function characters
    and numerals left out: "房租" holds 租, which "月租" and "租金" hold too. Chinese
    compounds share their head or their root rather than the whole word, so a word
    also meets its kin by a character (weight ``B`` in a memory, as its sound)."""
    out: dict[str, None] = {}
    for word in words:
        if len(word) > 1:
            for c in word:
                if c not in _STOP_CHARS and c not in _NUMERALS and _CJK_CHAR.match(c):
                    out.setdefault(c, None)
    return list(out)


def index_words(text: str, context: str | None) -> tuple[str, str, str, str, str]:
    """A memory's words as the full-text index reads them: the English and the
    Chinese words of ``text``, what the Chinese ones are also found by (sounds and
    characters), then the words of ``context`` (with what its Chinese words are also
    found by). Each joined by spaces."""
    own, framing = segment(text), segment(context or "")
    framed_cjk = " ".join(x for x in (framing.cjk_text, framing.alike_text) if x)
    return own.words_text, own.cjk_text, own.alike_text, framing.words_text, framed_cjk


def sound(word: str) -> str | None:
    """A Chinese word's toneless pinyin, syllables joined, ü as u ("游泳" → ``youyong``,
    "绿地" → ``ludi``); None when a character is not Han (kana, hangul) or when
    sounds are off (:data:`PINYIN`)."""
    return _sound(word) if PINYIN else None


#: One-character function words: a word jieba guessed that holds one is a wrong join
#: ("课是" in "游泳课是几点"), whose sound would meet an unrelated word (科室).
_STOP_CHARS = frozenset(w for w in _ZH_STOPWORDS if len(w) == 1)


def _heard(word: str) -> str | None:
    """The sound a word is indexed and asked by: words of two characters or more,
    but not a wrong join jieba guessed around a function word."""
    if len(word) < 2:
        return None
    # Not in jieba's dictionary. (Its prefix entries of frequency 0, "吴有" of 吴有为,
    # count as known: treating them as joins too lost half a point on zh_attr's tune half.)
    known = _jieba().dt.FREQ.get(word)  # type: ignore[attr-defined]
    if known is None and any(c in _STOP_CHARS for c in word):
        return None
    return sound(word)


@lru_cache(maxsize=8192)
def _sound(word: str) -> str | None:
    if not word or not all(_CJK_CHAR.match(c) for c in word):
        return None
    from pypinyin import lazy_pinyin

    syllables = lazy_pinyin(word, v_to_u=False)
    joined = "".join(syllables).replace("v", "u")
    return joined if joined.isascii() and joined.isalpha() else None


@lru_cache(maxsize=1)
def _syllables() -> frozenset[str]:
    """Every toneless pinyin syllable (ü as u): pypinyin's dictionary, tones dropped."""
    from pypinyin.pinyin_dict import pinyin_dict

    out: set[str] = set()
    for readings in pinyin_dict.values():
        for reading in readings.split(","):
            bare = "".join(
                c for c in unicodedata.normalize("NFD", reading) if not unicodedata.combining(c)
            )
            if bare.isascii() and bare.isalpha() and (len(bare) > 1 or bare in "aeo"):
                out.add(bare.lower())
    return frozenset(out)


def _splits(word: str) -> bool:
    """Whether ``word`` is two pinyin syllables or more run together ("weijing"),
    not one ("xian")."""
    known = _syllables()
    if word in known:
        return False
    # made[i]: word[:i] is a run of syllables (a syllable has at most six letters).
    made = [True] + [False] * len(word)
    for end in range(1, len(word) + 1):
        made[end] = any(
            made[start] and word[start:end] in known for start in range(max(0, end - 6), end)
        )
    return made[-1]


#: Off switch for measuring: the sounds of a query's character pairs that no word of
#: it holds (:func:`_pair_sounds`).
PAIR_SOUNDS = True


def _pair_sounds(text: str, asked: set[str], joins: set[str]) -> list[str]:
    """The sounds of adjacent Han characters of ``text`` not already asked: a typo
    can break a word jieba would have kept whole ("学为旗" for "学围棋": 学为 / 旗),
    and the pair "为旗" still sounds as 围棋 (``weiqi``). Pairs stay between
    function and question words ("是", "几点"): "师是研" holds no pair, whose 是研
    would sound as 实验; nor is a wrong join of the query's own (``joins``: "课是")
    asked by sound as a pair."""
    if not PINYIN or not PAIR_SOUNDS:
        return []
    out: list[str] = []
    for run in _CJK_RUN.findall(normalize(text)):
        spans: list[str] = [""]
        for token in _jieba().cut(run):  # type: ignore[attr-defined]
            if token in _ZH_STOPWORDS or token in _ZH_QUESTION_WORDS:
                spans.append("")
            else:
                # A join jieba guessed ("学为" of "学为旗") stays whole: breaking it at
                # its function character lost "为旗" (measured on the tune halves).
                spans[-1] += token
        for span in spans:
            for i in range(len(span) - 1):
                pair = span[i : i + 2]
                heard = None if pair in joins else sound(pair)
                if heard and heard not in asked:
                    out.append(heard)
    return list(dict.fromkeys(out))


def typed_sounds(text: str) -> list[str]:
    """Chinese typed in pinyin inside a Chinese query, as :func:`sound` writes it:
    runs of two or more syllables ("那个 gang qin 课" → ``gangqin``; "hu shi zhang" →
    ``hushizhang``, ``hushi``, ``shizhang``) and a word of two or more run together
    ("我的weijing" → ``weijing``). Nothing for a query without Chinese: there an
    English word that happens to be a syllable ("he", "long") is English."""
    norm = normalize(text)
    if not PINYIN or not _CJK_CHAR.search(norm):
        return []
    known = _syllables()
    out: list[str] = []
    for part in _CJK_RUN.split(norm):
        run: list[str] = []
        for word in [*_WORD.findall(part), ""]:
            if word in known:
                run.append(word)
                continue
            out.extend(
                "".join(run[i:j])
                for i in range(len(run))
                for j in range(i + 2, min(len(run), i + 4) + 1)
                # "she can", "you a": English function words, not pinyin.
                if not all(w in EN_STOPWORDS for w in run[i:j])
            )
            run = []
            if word.isascii() and word.isalpha() and _splits(word):
                out.append(word)
    return list(dict.fromkeys(out))


@lru_cache(maxsize=1)
def _t2s_table() -> dict[int, int]:
    """Traditional to simplified Chinese, character by character (``data/zh_t2s.tsv``,
    generated from OpenCC's t2s tables: about 4,100 characters, no dependency)."""
    table: dict[int, int] = {}
    text = resources.files("memory_pg").joinpath("data/zh_t2s.tsv").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line and not line.startswith("#"):
            traditional, simplified = line.split("\t")
            table[ord(traditional)] = ord(simplified)
    return table


def normalize(text: str) -> str:
    """NFKC-fold, lower-case and fold traditional Chinese characters to simplified:
    full-width letters and digits become ASCII, and "記得喝咖啡" meets "记得喝咖啡".

    Character by character, not phrase by phrase: enough for two texts to meet, not
    a translation (乾 folds to 干 on both sides, as in OpenCC).
    """
    return fold_traditional(unicodedata.normalize("NFKC", text).lower())


def fold_traditional(text: str) -> str:
    """``text`` with traditional Chinese characters folded to simplified ones."""
    if TRADITIONAL_FOLDING and _CJK_CHAR.search(text):
        return text.translate(_t2s_table())
    return text


@lru_cache(maxsize=2048)
def segment(text: str) -> Segments:
    """Cut ``text`` into words for indexing or querying.

    Cached: a batch write cuts each new text several times (its index words, and
    word agreement with its candidates, which come back batch after batch); jieba
    is the cost. A word added to jieba's dictionary at run time does not reach
    texts already cut.
    """
    norm = normalize(text)
    words: list[str] = []
    cjk: list[str] = []
    pos = 0
    for match in _CJK_RUN.finditer(norm):
        words.extend(_WORD.findall(norm[pos : match.start()]))
        cjk.extend(_cut(match.group()))
        pos = match.end()
    words.extend(_WORD.findall(norm[pos:]))
    return Segments(tuple(w for w in words if len(w) < 64), tuple(cjk))


def _cut(run: str) -> Iterable[str]:
    jieba = _jieba()
    known = jieba.dt.FREQ  # type: ignore[attr-defined]
    for token in jieba.cut_for_search(run):  # type: ignore[attr-defined]
        token = token.strip()
        if not token:
            continue
        pieces = [token]
        # A word jieba guessed (not in its dictionary) is often a name ("林晓雨") or
        # a wrong join ("我读"): its pieces go with it, so "晓雨" and "读" still meet.
        if OOV_PIECES and len(token) > 1 and token not in known and _CJK_CHAR.match(token):
            if len(token) == 2:
                pieces.extend(token)
            else:
                pieces.extend(token[i : i + 2] for i in range(len(token) - 1))
        for piece in pieces:
            if piece in _ZH_STOPWORDS or (QUESTION_STOPWORDS and piece in _ZH_QUESTION_WORDS):
                continue
            # A lone character is kept only if it is a Han ideograph (e.g. 猫), not kana.
            if len(piece) == 1 and not _CJK_CHAR.match(piece):
                continue
            yield piece


def _or_query(tokens: Iterable[str]) -> str:
    seen: dict[str, None] = {}
    for token in tokens:
        seen.setdefault(token, None)
    # Each token is quoted as a tsquery lexeme; quotes and backslashes are escaped, so
    # nothing in the user's text can act as tsquery syntax.
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in seen)


def query_terms(text: str) -> tuple[str, str]:
    """The OR-queries for ``to_tsquery('english', ...)`` and ``to_tsquery('simple', ...)``."""
    seg = segment(text)
    return _or_query(seg.words), _or_query(seg.cjk)


def _quote(token: str, weight: str = "") -> str:
    # A tsquery lexeme in quotes with quotes and backslashes escaped: nothing in the
    # user's text can act as tsquery syntax.
    quoted = "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"
    return f"{quoted}:{weight}" if weight else quoted


def term_queries(text: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """Each query word as its own tsquery text, for per-term weighting (BM25).

    Returns ``(english_any, english_own, cjk_any, cjk_own)``: a word as it may match
    anywhere in a memory's ``search_tsv``, and as it must match in the memory's own
    text (weight ``D`` for words, ``B`` for sounds; a memory's context is indexed
    with weight ``C``). A Chinese word of two characters or more matches by its
    characters or its sound, one term ("'游勇' | 'youyong'"); pinyin typed in a
    Chinese query is a term of its own (:func:`typed_sounds`). Words are
    deduplicated in order; stop words are left to PostgreSQL, which drops them.
    """
    seg = segment(text)
    cjk_any: list[str] = []
    cjk_own: list[str] = []
    #: Sounds asked so far, and the query's words of two characters asked by none
    #: (wrong joins, "课是": no pair sound either).
    asked: set[str] = set()
    joins: set[str] = set()
    for word in dict.fromkeys(seg.cjk):
        heard = _heard(word)
        if heard:
            asked.add(heard)
            cjk_any.append(_quote(word) + " | " + _quote(heard))
            cjk_own.append(_quote(word, "D") + " | " + _quote(heard, "B"))
        else:
            cjk_any.append(_quote(word))
            cjk_own.append(_quote(word, "D"))
            if len(word) > 1:
                joins.add(word)
    for heard in typed_sounds(text):
        if heard in asked:
            continue  # the sound of a word the query also writes in characters
        asked.add(heard)
        # Its letters stay an English word too ("Alice", "Nike": a name, a brand, or
        # pinyin): this term meets them only as a sound (weights B, C), so it is never
        # the English term's twin.
        cjk_any.append(_quote(heard, "BC"))
        cjk_own.append(_quote(heard, "B"))
    for heard in _pair_sounds(text, asked, joins):
        cjk_any.append(_quote(heard))
        cjk_own.append(_quote(heard, "B"))
    if CHARS and PINYIN:
        # Each character of the query's words, unless it is a word of the query too.
        alone = set(seg.cjk)
        for char in _chars(seg.cjk):
            if char not in alone and _telling(char):
                cjk_any.append(_quote(char))
                cjk_own.append(_quote(char, "BD"))
    words = list(dict.fromkeys(seg.words))
    return (
        [_quote(w) for w in words],
        [_quote(w, "D") for w in words],
        cjk_any,
        cjk_own,
    )


def ordered_words(text: str) -> list[str]:
    """The words of ``text`` in order: Latin words case-folded, Chinese cut by jieba's
    precise mode, every word kept (no stop words: "我/在/北京/工作")."""
    out: list[str] = []
    for latin, han in _ORDERED.findall(normalize(text)):
        if latin:
            out.append(latin.casefold())
        else:
            out.extend(w for w in _jieba().cut(han) if w.strip())  # type: ignore[attr-defined]
    return out


_ORDERED = re.compile(r"([A-Za-z0-9]+(?:['.+#-][A-Za-z0-9]+)*)|([\u4e00-\u9fff]+)")

__all__ = [
    "EN_STOPWORDS",
    "Segments",
    "fold_traditional",
    "in_dictionary",
    "normalize",
    "ordered_words",
    "query_terms",
    "segment",
    "sound",
    "term_queries",
    "typed_sounds",
    "whole_words",
]
