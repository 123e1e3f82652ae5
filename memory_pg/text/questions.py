"""Whether a text asks something: a question mark, a Chinese question word that asks
(not one used as an indefinite: "什么都吃", "没什么", "有什么吃什么"), or an English
question's word order. Pure, no I/O."""

from __future__ import annotations

import re

#: What trims a sentence: blanks and the punctuation around it.
TRIM = " \t\r\n。.！!；;，,、~～…"
_QUESTION_MARK = re.compile(r"[?？]\s*[\"'”’)）]*\s*$")
_ZH_QUESTION = re.compile(
    r"(?:吗|么|呢)\s*[。！!~～]*\s*$"
    r"|什么|啥|哪里|哪儿|哪个|哪些|哪家|哪一|哪种|(?<!不)怎么(?!样都)|怎样|如何|为什么|为啥|为何"
    r"|多少|几点|几号|是否|要不要|能不能|可不可以|会不会|有没有|是不是|该不该|用不用"
    r"|行不行|对不对|好不好|需不需要|还是说"
)
_EN_AUX = (
    r"do|does|did|is|are|was|were|am|can|could|should|would|will|shall|may|might|have|has|had"
    r"|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|shouldn't|couldn't|can't|haven't|hasn't"
)
_EN_QUESTION = re.compile(
    r"^(?:(?:so|and|but|also|ok|okay|well)[,\s]+)?(?:"
    r"(?:what|which|where|when|who|whom|whose|why|how)(?:'s|\s+(?:"
    + _EN_AUX
    + r"|\w+\s+(?:"
    + _EN_AUX
    + r")))\b"
    r"|(?:" + _EN_AUX + r")\s+(?:i|we|you|they|he|she|it|there|the|this|that|my|our|your|anyone)\b"
    r")",
    re.IGNORECASE,
)
#: Chinese question words, as they also serve as indefinites.
_QUESTION_WORD = r"什么|啥|哪里|哪儿|哪个|哪些|谁|多少|怎么"
#: A question word that asks nothing: negated ("没什么", "没啥", "不怎么"), or followed
#: by 都/也 ("什么都吃", "哪儿也不去", "什么菜都行").
_INDEFINITE = re.compile(
    rf"(?:没有?|不)(?:{_QUESTION_WORD})|(?:{_QUESTION_WORD})[\u4e00-\u9fff]{{0,3}}?[都也]"
)
_CLAUSE = re.compile(r"[，,。；;！!、]")


def _asking_words(core: str) -> str:
    """``core`` less its question words that ask nothing: the indefinites above, and a
    word said twice in one clause, which pairs two open choices ("有什么吃什么",
    "该吃啥吃啥", "想去哪儿去哪儿", "谁先到谁买单")."""
    core = _INDEFINITE.sub(" ", core)
    clauses = []
    for clause in _CLAUSE.split(core):
        words = re.findall(_QUESTION_WORD, clause)
        if len(words) > len(set(words)):
            clause = re.sub(_QUESTION_WORD, " ", clause)
        clauses.append(clause)
    return "，".join(clauses)


def is_question(text: str) -> bool:
    """Whether ``text`` asks something (a question mark, a question word that asks, or
    an English question's word order)."""
    body = text.strip()
    if _QUESTION_MARK.search(body):
        return True
    core = body.strip(TRIM)
    return bool(_ZH_QUESTION.search(_asking_words(core)) or _EN_QUESTION.match(core))


#: A question about what holds in the end or now: "最后几点集合？", "改到哪天了",
#: "现在房租多少？", "where did we end up going?".
_LATEST = re.compile(
    r"最后|最终|后来|现在|目前|如今|最新|改到|改成|改在|换成|换到|推迟到|提前到|挪到"
    r"|\bnow\b|\bcurrently\b|\bthese days\b|\bfinally\b|\bin the end\b|\bend(?:ed|s)? up\b"
    r"|\blatest\b|\bmost recent(?:ly)?\b|\bcurrent\b",
    re.IGNORECASE,
)
#: …unless it asks for what was said first: "原来定的哪天？", "what was the original date?".
_FIRST = re.compile(
    r"原来|原本|本来|原先|一开始|起初|最初|当初"
    r"|\boriginal(?:ly)?\b|\bat first\b|\bused to\b|\bprevious(?:ly)?\b",
    re.IGNORECASE,
)


#: …and of those, one about what a plan came to ("最后哪天动身的？", "改到哪天了"), not
#: one about now ("现在住哪？"), whose answer is no outcome of another memory.
_OUTCOME = re.compile(
    r"最后|最终|后来|改到|改成|改在|换成|换到|推迟到|提前到|挪到"
    r"|\bfinally\b|\bin the end\b|\bend(?:ed|s)? up\b",
    re.IGNORECASE,
)


def asks_outcome(query: str) -> bool:
    """Whether ``query`` asks what something came to in the end (:func:`asks_latest`,
    less a question about now)."""
    return asks_latest(query) and _OUTCOME.search(query) is not None


def asks_latest(query: str) -> bool:
    """Whether ``query`` asks what holds now or in the end, not what was first said:
    where a newer memory changes an older one, the newer answers it."""
    return _LATEST.search(query) is not None and _FIRST.search(query) is None


__all__ = ["TRIM", "asks_latest", "asks_outcome", "is_question"]
