"""Recover the JSON object from what LLMs really answer: fences, prose, Chinese quotes, slips."""

from __future__ import annotations

import json
import re
from typing import Any

from memory_pg.errors import LLMResponseUnparseable

# A fenced block, any language tag; an unclosed fence (a reply cut at max_tokens) runs to the end.
_FENCE = re.compile(r"```[ \t]*[\w+.-]*[ \t]*\r?\n?(.*?)(?:```|\Z)", re.DOTALL)
_INVISIBLE = dict.fromkeys(map(ord, "\ufeff\u200b\u200c\u200d\u2060"), None)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?\Z")
_LITERALS = {
    "true": "true",
    "false": "false",
    "null": "null",
    "True": "true",
    "False": "false",
    "None": "null",
    "NaN": "null",
    "undefined": "null",
}
# Full-width punctuation that models write as JSON syntax (outside strings only).
_FULL_WIDTH = dict(zip("，：｛｝［］【】", ",:{}[][]", strict=True))
# Each opening quote and the quotes that may close it.
_QUOTES = {
    '"': '"”',
    "“": "”“",
    "”": "”“",
    "„": "”“",
    "'": "'",
    "‘": "’‘",
    "’": "’‘",
    "「": "」",
    "『": "』",
    "＂": "＂",
}
_ASCII_STRUCTURAL = set(",:}]")
_STRUCTURAL = _ASCII_STRUCTURAL | set("，：｝］】")
_BAREWORD_END = _STRUCTURAL | set("{[｛［【") | {"\n"}
_VALID_ESCAPES = set('"\\/bfnrtu')
_MAX_STARTS = 8


def parse_llm_json(text: str) -> dict[str, Any]:
    """Return the JSON object in an LLM reply, repairing what models commonly get wrong.

    Repaired: Markdown fences with any language tag, prose before and after the
    object, Chinese and curly quotes (“ ” ‘ ’ 「 」) used as JSON quotes, full-width
    ``，：｛｝`` used as JSON syntax, trailing and missing commas, single-quoted
    strings, Python's ``True``/``False``/``None``, unquoted keys and words, raw
    newlines in strings, ``//`` comments, a byte-order mark, and a reply cut off
    before its closing brackets. Quotes of any kind *inside* a string value are
    kept as text where the reply makes that decidable.

    Args:
        text: the reply text.

    Returns:
        The first JSON object that could be recovered.

    Raises:
        LLMResponseUnparseable: no JSON object could be recovered. The message
            gives the reply's length, never its text (it may hold users' words).

    Example:
        >>> parse_llm_json('好的：\\n```json\\n{“todos”：[“上线”,],}\\n```')
        {'todos': ['上线']}
    """
    cleaned = text.translate(_INVISIBLE).strip()
    candidates = [m.group(1) for m in _FENCE.finditer(cleaned)]
    candidates.append(cleaned)
    for candidate in candidates:
        parsed = _strict(candidate.strip())
        if parsed is not None:
            return parsed
        starts = [i for i, ch in enumerate(candidate) if ch in "{｛"][:_MAX_STARTS]
        for start in starts:
            parsed = _strict(_repair(candidate, start))
            if parsed is not None:
                return parsed
    raise LLMResponseUnparseable(
        f"no JSON object could be recovered from the LLM reply ({len(text)} characters)"
    )


def _strict(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, str) and value.lstrip().startswith("{"):
        # A JSON object sent as a JSON string: decode once more.
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _next_significant(text: str, i: int) -> tuple[str, bool]:
    """The next non-blank character at or after ``i`` ('' at the end), and whether a newline
    came first."""
    newline = False
    while i < len(text):
        ch = text[i]
        if ch == "\n":
            newline = True
        elif not ch.isspace():
            return ch, newline
        i += 1
    return "", newline


def _closes_string(text: str, i: int, *, full_width: bool = True) -> bool:
    """Whether the quote at ``i`` ends the string: it is followed by JSON syntax, the end,
    or (a missing comma) a new line that opens another string."""
    nxt, newline = _next_significant(text, i + 1)
    syntax = _STRUCTURAL if full_width else _ASCII_STRUCTURAL
    return nxt == "" or nxt in syntax or (newline and nxt in _QUOTES)


def _repair(text: str, start: int) -> str:
    """Rewrite ``text[start:]`` as strict JSON, up to the end of the object opened at ``start``."""
    out: list[str] = []
    stack: list[str] = []
    i = start
    n = len(text)

    def last_significant() -> str:
        for piece in reversed(out):
            stripped = piece.rstrip()
            if stripped:
                return stripped[-1]
        return ""

    def comma_if_missing() -> None:
        prev = last_significant()
        if stack and (prev in '"}]' or prev.isalnum()):
            out.append(",")

    def close_bracket(closer: str) -> None:
        while out and (not out[-1].strip() or out[-1].strip() == ","):
            out.pop()  # trailing comma before } or ]
        out.append(closer)

    while i < n:
        ch = _FULL_WIDTH.get(text[i], text[i])
        if ch.isspace():
            out.append(ch)
            i += 1
        elif ch in "{[":
            comma_if_missing()
            stack.append("}" if ch == "{" else "]")
            out.append(ch)
            i += 1
        elif ch in "}]":
            if stack:
                stack.pop()
            close_bracket(ch)
            i += 1
            if not stack:
                return "".join(out)
        elif ch in ",:":
            out.append(ch)
            i += 1
        elif ch in _QUOTES:
            comma_if_missing()
            i = _read_string(text, i, out)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        else:
            comma_if_missing()
            i = _read_bareword(text, i, out)
    # Cut off mid-object: close what is open.
    while out and out[-1].strip() in ("", ","):
        out.pop()
    if last_significant() == ":":
        out.append("null")
    out.extend(reversed(stack))
    return "".join(out)


def _read_string(text: str, i: int, out: list[str]) -> int:
    """Copy the string opening at ``text[i]`` to ``out`` as a JSON string; return the next index."""
    closers = _QUOTES[text[i]]
    ascii_double = text[i] == '"'
    out.append('"')
    i += 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt in _VALID_ESCAPES:
                out.append(ch + nxt)
            elif nxt == "'":
                out.append("'")
            else:
                out.append("\\\\" + nxt)
            i += 2
            continue
        # In a string opened by '"', a '”' closes only before ASCII syntax: Chinese prose
        # puts "，" after a closing ” all the time.
        if ch in closers and _closes_string(text, i, full_width=not (ascii_double and ch != '"')):
            out.append('"')
            return i + 1
        if ch == '"' and not (ascii_double and _closes_string(text, i)):
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
        i += 1
    out.append('"')  # the reply ended inside the string
    return i


def _read_bareword(text: str, i: int, out: list[str]) -> int:
    """Copy an unquoted token: a number or literal as is, anything else as a string."""
    j = i
    while j < len(text) and text[j] not in _BAREWORD_END and text[j] not in _QUOTES:
        j += 1
    word = text[i:j].strip()
    if j == i:  # a character that fits nowhere: drop it
        return i + 1
    if word in _LITERALS:
        out.append(_LITERALS[word])
    elif _NUMBER.match(word):
        out.append(word)
    else:
        out.append(json.dumps(word, ensure_ascii=False))
    out.append(text[i:j][len(text[i:j].rstrip()) :])  # keep the trailing blanks
    return j


__all__ = ["parse_llm_json"]
