"""Offsets of rendered text: each rendering pass records where its output came from (:class:`PassMap`), and
:class:`Rendered` chains the maps back from the rendered text to the source."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field

@dataclass(frozen=True, slots=True)
class PassMap:
    """One pass: rendered piece ``i`` spans ``[starts[i], starts[i+1])`` of the output and came from
    ``[src_start[i], src_end[i])`` of the input; an exact piece is a character-for-character copy."""

    starts: list[int]
    src_start: list[int]
    src_end: list[int]
    exact: list[bool]
    length: int
    #: this pass's input
    src: str

    def span(self, start: int, end: int) -> tuple[int, int]:
        if not self.starts:
            return 0, 0
        if end <= start:
            p = self._point(start)
            return p, p
        i = bisect.bisect_right(self.starts, start) - 1
        j = bisect.bisect_right(self.starts, end - 1) - 1
        s = self.src_start[i] + (start - self.starts[i]) if self.exact[i] else self.src_start[i]
        e = self.src_start[j] + (end - self.starts[j]) if self.exact[j] else self.src_end[j]
        # marks removed right at the edges of the span and glued to it ("**" of "**Gift cards**") belong to it
        if start == self.starts[i]:
            before = self.src_end[i - 1] if i > 0 else 0
            if before < s and not any(c.isspace() for c in self.src[before:s]):
                s = before
        piece_end = self.starts[j + 1] if j + 1 < len(self.starts) else self.length
        if end == piece_end:
            after = self.src_start[j + 1] if j + 1 < len(self.starts) else len(self.src)
            if e < after and not any(c.isspace() for c in self.src[e:after]):
                e = after
        return s, max(s, e)

    def _point(self, pos: int) -> int:
        if pos >= self.length:
            return self.src_end[-1]
        i = bisect.bisect_right(self.starts, pos) - 1
        return self.src_start[i] + (pos - self.starts[i]) if self.exact[i] else self.src_start[i]


class PassOutput:
    """Builds one pass's output and its map."""

    __slots__ = ("src", "parts", "starts", "s", "e", "exact", "n")

    def __init__(self, src: str) -> None:
        self.src = src
        self.parts: list[str] = []
        self.starts: list[int] = []
        self.s: list[int] = []
        self.e: list[int] = []
        self.exact: list[bool] = []
        self.n = 0

    def copy(self, a: int, b: int) -> None:
        if a >= b:
            return
        if self.exact and self.exact[-1] and self.e[-1] == a:
            self.e[-1] = b
        else:
            self.starts.append(self.n)
            self.s.append(a)
            self.e.append(b)
            self.exact.append(True)
        self.parts.append(self.src[a:b])
        self.n += b - a

    def emit(self, text: str, a: int, b: int) -> None:
        if not text:
            return
        if b - a == len(text) and self.src[a:b] == text:
            self.copy(a, b)
            return
        self.starts.append(self.n)
        self.s.append(a)
        self.e.append(b)
        self.exact.append(False)
        self.parts.append(text)
        self.n += len(text)

    def done(self) -> tuple[str, PassMap | None]:
        text = "".join(self.parts)
        if text == self.src:
            return text, None
        return text, PassMap(self.starts, self.s, self.e, self.exact, len(text), self.src)


@dataclass(frozen=True, slots=True)
class Rendered:
    """A text as rendered (``text``) with its ``source`` and the way back from one to the other."""

    source: str
    text: str
    _maps: tuple[PassMap, ...] = field(default=(), repr=False)

    @property
    def changed(self) -> bool:
        return self.text != self.source

    def to_source(self, start: int, end: int) -> tuple[int, int]:
        """The span of ``source`` that the rendered span ``[start, end)`` came from (a removed piece inside it is
        covered too; text added for a table row points at the row)."""
        start = min(max(start, 0), len(self.text))
        end = min(max(end, start), len(self.text))
        for m in reversed(self._maps):
            start, end = m.span(start, end)
        return start, end


#: one rendering pass: its output, and its map (None: the output is the input)
Pass = Callable[[str], "tuple[str, PassMap | None]"]
