"""Regular expressions that open with a lazy subject group, searched only where they can match."""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["LAZY_SUBJECT", "Prefiltered"]

#: The opening of a pattern that reaches back for its subject: from the text's start,
#: or lazily from anywhere.
LAZY_SUBJECT = "(?P<subj>^|.*?)"


class Prefiltered:
    """A pattern that opens with :data:`LAZY_SUBJECT`, searched only where its rest is found.

    Searched as it is, the lazy ``.*?`` is tried from every position of the text to
    its end: a kilobyte with no change verb in it cost 15-30 ms a pattern (issue 38:
    3.4 s of a batch of 60 memories of 1 KB, in the service's event loop, stalling
    every other request). Every match of the whole pattern holds a match of its rest,
    so a text where the rest finds nothing gives no match, as before, at once.
    """

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        rest = pattern.pattern.removeprefix(LAZY_SUBJECT)
        self.needle = re.compile(rest, pattern.flags) if rest != pattern.pattern else None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """:meth:`re.Pattern.finditer`, skipped where the pattern's rest is absent."""
        if self.needle is not None and self.needle.search(text) is None:
            return iter(())
        return self.pattern.finditer(text)
