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


__all__ = ["TRIM", "is_question"]
