"""Sentence assembly for streams: text in, complete sentences out.

The cost is linear in the answer's length however it is chunked: only the text not yet released is re-split, only
when a chunk may have ended a sentence, and a run longer than ``max_sentence_chars`` without a boundary comes out as
one piece. Text held long (sentences kept back for one that follows) is re-split as it grows; the stream bounds that
(:data:`guardrail.stream.check._REREAD`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from guardrail.render.blocks import table_regions
from guardrail.render.markup import code_blocks, hidden_regions, struck_regions
from guardrail.render.structured import json_regions
from guardrail.text import Span, split_sentences

#: characters that may end a sentence: only a chunk holding one (or the few characters after one) re-splits the tail
_TERMINATOR = re.compile(r"[.!?…:;\n。！？]")
#: a line followed by a definition line (": ..."), as :func:`~guardrail.render.blocks.definition_lists` reads them
_DEFINES = re.compile(r"(?m)^[ \t]{0,3}[^\s:|#>\-*+][^\n:]{0,80}?[ \t]*\n(?:[ \t]*\n)?[ \t]{0,3}:")
#: characters after a terminator within which the splitter may still place a boundary there
_SETTLE = 8


@dataclass(frozen=True, slots=True)
class Sentence:
    """One complete sentence of a streamed answer."""

    #: the sentence as split (what is checked)
    text: str
    #: its first character's offset in the answer
    start: int
    #: the offset just after it: releasing it releases the answer up to here
    end: int


#: marks that may open a region read whole (code, a table, markup): a blank line inside one ends no sentence
_REGION_MARKS = re.compile(r"[<`~|\[\\&$]|^(?: {4}|\t)", re.M)
#: only whitespace with a blank line in it: what follows a paragraph's last sentence
_PARAGRAPH_END = re.compile(r"[ \t\r]*\n[ \t\r]*\n\s*")


class SentenceAssembler:
    """Text in (:meth:`feed`), complete sentences out (:meth:`sentences`), released text out (:meth:`release`).

    It holds the text not yet released; :meth:`sentences` does not consume it (a sentence that fails is never
    released), :meth:`release` does.
    """

    def __init__(self, max_sentence_chars: int = 2000) -> None:
        self.max_sentence_chars = max_sentence_chars
        self._tail = ""  # fed and not yet released
        self._tail_start = 0  # its offset in the answer
        self._since_terminator: int | None = None  # characters fed since the last terminator
        #: text up to this offset of the answer is one sentence however its raw lines read (an echoed prompt's last
        #: sentence, finished by the answer, as the rendered text reads it: :meth:`join_until`)
        self._joined_until = 0

    def join_until(self, end: int) -> None:
        """Read the text from the start of what is held up to offset ``end`` as one sentence."""
        self._joined_until = max(self._joined_until, end)

    @property
    def end(self) -> int:
        """Characters fed so far."""
        return self._tail_start + len(self._tail)

    @property
    def held(self) -> int:
        """Characters fed and not yet released: what :meth:`sentences` splits."""
        return len(self._tail)

    def feed(self, chunk: str) -> bool:
        """Add text; True when a sentence may have ended, so :meth:`sentences` may find a new one (cheap: fine on an
        event loop)."""
        self._tail += chunk
        last = max((m.end() for m in _TERMINATOR.finditer(chunk)), default=None)
        if last is not None:
            self._since_terminator = len(chunk) - last
        elif self._since_terminator is not None:
            self._since_terminator += len(chunk)
            if self._since_terminator > _SETTLE + len(chunk):
                self._since_terminator = None  # the splitter has seen enough after it: no boundary there
        return self._since_terminator is not None or len(self._tail) > self.max_sentence_chars

    def sentences(self, *, final: bool = False) -> list[Sentence]:
        """The complete sentences of the text not yet released (``final``: the end of the answer, so all of them)."""
        tail = self._tail
        spans = split_sentences(tail)
        opens_json = self._tail_start == 0 and tail.lstrip()[:1] in ("{", "[")
        defines = ":" in tail and bool(_DEFINES.search(tail))
        joined = self._joined_until - self._tail_start
        pending = False  # a region (a code block, a table, hidden or struck text) that has not closed yet
        if "<" in tail or "~" in tail or "    " in tail or "\t" in tail or "|" in tail or "![" in tail or opens_json \
                or defines or joined > 0:
            # struck text, hidden HTML, code blocks and tables are read whole, as in the whole answer (a code block from
            # its indentation: alone, "<del>x</del>" of an indented block would read as struck, where a reader sees it
            # as written; a table's header line alone reads as a claim it is not)
            n = len(tail)
            regions: list[tuple[int, int | None]] = [*struck_regions(tail)]
            # a comment or a hidden element splits nothing: a client that renders HTML reads the sentence around it
            # as one ("Gift cards can<!-- not. Yes, --> be returned."); one not closed yet may hide the rest
            regions += [(a, b) for a, b in hidden_regions(tail) if b is not None or not final]
            regions += [(a, n if b is None and final else b) for a, b in table_regions(tail)]  # at the end: it ended
            regions += [(a, b if final or b < n else None) for a, b in code_blocks(tail)]
            if defines:  # a definition list's term and its definition read as one ("Gift cards: Cannot be returned.")
                regions += [(m.start(), m.end()) for m in _DEFINES.finditer(tail)]
            if opens_json:  # an answer that is a JSON document is read by its values once it closes
                regions += [(a, n if b is None and final else b) for a, b in json_regions(tail)]
            if joined > 0:
                regions.append((0, min(joined, n) if joined <= n or final else None))
            pending = any(b is None for _, b in regions)
            spans = _bridged(spans, sorted(regions, key=lambda r: r[0]), n, final)
        complete = spans if final else spans[:-1]
        if not final and not pending and spans and _PARAGRAPH_END.fullmatch(tail, spans[-1].end) and \
                not _REGION_MARKS.search(tail) and not opens_json and not defines and joined <= 0:
            # a blank line after it: the paragraph, and so the sentence, ended (released now, not when the next
            # sentence starts: round 53 saw a passed sentence wait out a 2 s pause of the model)
            complete = spans
        if not complete and not final and len(tail) > self.max_sentence_chars:
            cut = tail.rfind(" ", 0, self.max_sentence_chars)
            complete = [Span(0, cut if cut > 0 else self.max_sentence_chars)]
        base = self._tail_start
        return [Sentence(tail[s.start : s.end], base + s.start, base + s.end) for s in complete]

    def past_space(self, end: int) -> int:
        """Offset ``end`` moved past the whitespace that follows it in the text fed so far (a passed sentence goes
        out with its trailing space or line break, not with the next sentence); the indentation of the line after a
        line break stays with that line (it may make it a code block)."""
        tail, i = self._tail, end - self._tail_start
        if i < 0:
            return end
        line_start = -1
        while i < len(tail) and tail[i].isspace():
            i += 1
            if tail[i - 1] == "\n":
                line_start = i
        if line_start >= 0 and i < len(tail):
            i = line_start  # the next line's indentation stays with it (four spaces make a code block)
        return self._tail_start + i

    def release(self, end: int) -> str:
        """Hand out the text up to offset ``end`` of the answer (the end of a passed sentence, or :attr:`end`)."""
        n = max(0, min(end, self.end) - self._tail_start)
        out, self._tail = self._tail[:n], self._tail[n:]
        self._tail_start += n
        return out


def _bridged(spans: list[Span], regions: list[tuple[int, int | None]], length: int, final: bool) -> list[Span]:
    """Sentences joined over each region (struck text, a code block), from the region's start: "Gift cards
    <s>cannot be returned. Items</s> can be returned." reads as one sentence once rendered ("Gift cards can be
    returned."), so it is checked as one, as the whole answer would be; after a region opened and not closed yet the
    rest is one pending sentence (it may still be withdrawn, or the block go on), except at the end of the answer
    (``final``), where an unclosed strike is text."""
    for start, end in regions:
        if end is None:
            if final:
                continue
            first = next((i for i, s in enumerate(spans) if s.end > start), None)
            if first is not None:
                spans = spans[:first] + [Span(min(spans[first].start, start), length)]
            break
        inside = [i for i, s in enumerate(spans) if s.start < end and s.end > start]
        if inside:
            i, j = inside[0], inside[-1]
            spans = spans[:i] + [Span(min(spans[i].start, start), spans[j].end)] + spans[j + 1 :]
    return spans
