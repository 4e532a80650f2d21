"""Text as a reader sees it: an answer (or a retrieved context) turned into the plain text a person reads once it is
rendered, so that the checks score what the reader reads, not the bytes that spell it.

>>> render("Gift cards ~~cannot~~ can be returned within &#51;0 days.").text
'Gift cards  can be returned within 30 days.'
>>> render("ⓖⓘⓕⓣ ⓒⓐⓡⓓⓢ, 𝐠𝐢𝐟𝐭 𝐜𝐚𝐫𝐝𝐬, ġịḟṭ, ＧＩＦＴ").text
'gift cards, gift cards, gift, GIFT'

What it does, in this order (each step is one pass; see :func:`render`):

1. **Struck text is removed**: ``~~x~~`` and ``~x~`` (GFM), ``<del>``, ``<s>``, ``<strike>``, and letters struck
   with a combining overlay (``c̶a̶n̶n̶o̶t̶``): every reader reads them as withdrawn, markdown or not.
2. **Markdown blocks**: a table is read as statements, one per row and column: the row's first cell with each other
   cell, and with its header where the cell needs it ("| Item | Return window | Fee |" / "| Shoes | 30 days of
   delivery | 5 |" -> "Shoes: 30 days of delivery. Shoes: fee: 5."; see ``_row``);
   heading, block-quote and rule marks are dropped. Fenced code is kept as it is.
3. **Inline marks**: emphasis, inline-code ticks, backslash escapes and HTML tags are dropped; a link reads as its
   text (and its title), an image as its alt text. Text that some reader may see is never dropped: HTML comments
   and hidden elements keep their text (a plain-text client shows it), only the marks go; the values of
   attributes a browser shows (``title``, ``alt``, ``aria-label``, ...) are kept.
4. **HTML entities** are decoded (``&#51;0``, ``&#x33;``, ``&amp;``, named ones), after the markup is read, as
   markdown and HTML treat them: ``&lt;del&gt;`` is text, not a tag.
5. **Right-to-left override** (U+202E ... U+202C): the characters between are reversed, as they are displayed.
6. **Unicode**: invisible characters (zero-width, bidi controls, soft hyphen, tags, variation selectors, fillers)
   are dropped; letters in decorated forms map to their base letter (NFKC: fullwidth, mathematical bold / italic /
   script, superscripts; by name: enclosed, parenthesized, circled, negative, squared, regional-indicator and
   small-capital letters, enclosed digits and numbers); combining marks are dropped where the base letter carries
   the meaning (after Latin, Greek, Cyrillic and non-letters: ``ġịḟṭ`` -> ``gift``; the uncased default model reads
   accents the same way), and kept in the scripts whose marks are vowels (Devanagari, Thai, Arabic, Hebrew, ...).
   A superscript after a digit keeps its meaning as a power (``10²`` -> ``10^2``).

Case is kept (sentence splitting and names need it; words are lower-cased where they are compared).

Offsets: :class:`Rendered` maps any span of the rendered text back to the span of the source it came from
(:meth:`Rendered.to_source`), so evidence computed on the rendered text points into the original.

Bounds: rendering is linear in the text (no pattern scans ahead for a closing mark: delimiters are paired with a
bounded stack, as CommonMark does); the statements a table becomes repeat its first cells and headers, and once the
added words would make the text more than twice as long (plus 4096 characters), further rows are read as their cells
once each.

Text layer: this module imports nothing of guardrail.
"""

from __future__ import annotations

import bisect
import functools
import html
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["Rendered", "render"]


# --------------------------------------------------------------------------- offsets
@dataclass(frozen=True, slots=True)
class _Map:
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


class _Out:
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

    def done(self) -> tuple[str, _Map | None]:
        text = "".join(self.parts)
        if text == self.src:
            return text, None
        return text, _Map(self.starts, self.s, self.e, self.exact, len(text), self.src)


@dataclass(frozen=True, slots=True)
class Rendered:
    """A text as rendered (``text``) with its ``source`` and the way back from one to the other."""

    source: str
    text: str
    _maps: tuple[_Map, ...] = field(default=(), repr=False)

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


# --------------------------------------------------------------------------- passes
_Pass = Callable[[str], "tuple[str, _Map | None]"]

_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)


def _outside_fences(text: str, out: _Out, each: Callable[[int, int], None]) -> None:
    """Call ``each(start, end)`` on the stretches outside fenced code; fenced code is copied as it is."""
    pos = 0
    if "```" in text or "~~~" in text:
        for m in _FENCE.finditer(text):
            each(pos, m.start())
            out.copy(m.start(), m.end())
            pos = m.end()
    each(pos, len(text))


def _lines(text: str, a: int, b: int) -> list[tuple[int, int]]:
    out = []
    while a < b:
        nl = text.find("\n", a, b)
        end = b if nl == -1 else nl + 1
        out.append((a, end))
        a = end
    return out


# -- 1. struck HTML elements (may span lines)
_STRUCK_TAG = re.compile(r"<(/?)(del|s|strike)(?:\s[^<>]{0,1000})?>", re.I)


def _struck_html(text: str) -> tuple[str, _Map | None]:
    if "<" not in text:
        return text, None
    out = _Out(text)

    def each(a: int, b: int) -> None:
        """Each element from its opening tag to the matching closing tag is dropped (nesting counted, linear); an
        element never closed is kept: its text is read."""
        pos, opened, name, depth = a, -1, "", 0
        code = [(c[0], c[3]) for line in _lines(text, a, b) for c in _code_spans(text, *line)]
        k = 0
        for m in _STRUCK_TAG.finditer(text, a, b):
            while k < len(code) and code[k][1] <= m.start():
                k += 1
            if k < len(code) and code[k][0] <= m.start():
                continue  # `<s>` in inline code is shown as written
            tag = m.group(2).lower()
            if not m.group(1):
                if opened < 0:
                    opened, name, depth = m.start(), tag, 1
                elif tag == name:
                    depth += 1
            elif opened >= 0 and tag == name:
                depth -= 1
                if depth == 0:
                    out.copy(pos, opened)
                    pos, opened = m.end(), -1
        out.copy(pos, b)

    _outside_fences(text, out, each)
    return out.done()


# -- 2. markdown blocks
_DELIM_CELL = re.compile(r"\s*:?-+:?\s*")
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]+|$)")
_CLOSING_HASHES = re.compile(r"[ \t]+#+[ \t]*$")
_QUOTE = re.compile(r"(?:[ \t]{0,3}>[ \t]?)+")
_RULE = re.compile(r"[ \t]{0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|=+[ \t]*)$")
_PIPE = re.compile(r"(?<!\\)\|")


def _cells(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The cells of a table row ``text[a:b]`` as trimmed spans (the outer pipes are optional)."""
    while a < b and text[a] in " \t":
        a += 1
    while b > a and text[b - 1] in " \t\r":
        b -= 1
    if a < b and text[a] == "|":
        a += 1
    if b > a and text[b - 1] == "|" and (b - 2 < a or text[b - 2] != "\\"):
        b -= 1
    cells = []
    pos = a
    for m in _PIPE.finditer(text, a, b):
        cells.append((pos, m.start()))
        pos = m.end()
    cells.append((pos, b))
    out = []
    for s, e in cells:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        out.append((s, e))
    return out


def _is_delimiter_row(line: str) -> bool:
    if "-" not in line or not set(line.strip()) <= set("|-: \t"):
        return False
    stripped = line.strip().strip("|")
    return all(_DELIM_CELL.fullmatch(c) for c in stripped.split("|"))


_YES = frozenset({"yes", "y", "true", "✓", "✔", "☑", "✅"})
_NO = frozenset({"no", "n", "false", "✗", "✘", "❌", "☒"})
_EMPTY = frozenset({"", "-", "–", "—", "n/a"})


def _header_words(header: str) -> str:
    """A header as it reads inside a sentence: lower-cased unless it is an acronym ("SKU")."""
    header = header.strip().rstrip(":").strip()
    if len(header) > 1 and header.isupper():
        return header
    return header[:1].lower() + header[1:]


def _row(out: _Out, text: str, row: tuple[int, int], headers: list[str], budget: list[int]) -> None:
    """Emit one body row as statements, one per cell after the first (the row's subject):

    - a yes / no cell (``yes``, ``no``, ``✓``, ``✗``, ...): "{subject}: {header}." / "{subject}: not {header}.";
    - a cell of two or more words, which says what it is ("30 days of delivery"): "{subject}: {cell}.";
    - an empty cell ("", "-", "n/a"): nothing;
    - a number or a single word, which needs its header: "{subject}: {header}: {cell}.".

    Measured with the shipped model: header words the context does not use lower a faithful row's score (0.76 for
    "Items: 30 days of delivery." vs 0.36 with "return window:" before it) while wrong values score low either way
    (at most 0.02), so a header is added where the cell means nothing without it. Added words point at the row."""
    a, b = row
    cells = _cells(text, a, b)
    filled = [(i, c) for i, c in enumerate(cells) if text[c[0] : c[1]].strip().lower() not in _EMPTY]
    if not filled:
        return
    subject = cells[0] if filled[0][0] == 0 else None
    rest = [(i, c) for i, c in filled if i > 0] if subject is not None else filled

    def glue(s: str) -> None:
        out.emit(s, a, b)
        budget[0] -= len(s)

    def cell(c: tuple[int, int]) -> None:
        e = c[1]
        while e > c[0] and text[e - 1] in ".;,":
            e -= 1
        out.copy(c[0], e)

    if budget[0] <= 0 or (subject is not None and not rest):  # over the bound: the cells once each, no headers
        for k, (_, c) in enumerate(filled):
            if k:
                glue(", ")
            cell(c)
        glue(". ")
        return
    for i, c in rest:
        if subject is not None and i > 1:
            budget[0] -= subject[1] - subject[0]  # the subject, repeated
        header = _header_words(headers[i]) if i < len(headers) else ""
        value = text[c[0] : c[1]].strip().strip(".").strip()
        if subject is not None:
            cell(subject)
            glue(": ")
        if header and value.lower() in _YES:
            glue(header)
        elif header and value.lower() in _NO:
            glue("not " + header)
        elif header and (subject is None or len(value.split()) < 2 or not re.search(r"[^\W\d_]", value)):
            glue(header + ": ")
            cell(c)
        else:
            cell(c)
        glue(". ")


def _blocks(text: str) -> tuple[str, _Map | None]:
    if not any(ch in text for ch in "|#>-*_="):
        return text, None
    out = _Out(text)
    budget = [len(text) + 4096]  # characters of repeated headers a table may add

    def each(a: int, b: int) -> None:
        lines: list[tuple[int, int]] = []
        pos = a
        while pos < b:
            nl = text.find("\n", pos, b)
            end = b if nl == -1 else nl
            lines.append((pos, end))
            pos = end + 1
        i = 0
        while i < len(lines):
            s, e = lines[i]
            line = text[s:e]
            nxt = lines[i + 1] if i + 1 < len(lines) else None
            if "|" in line and nxt is not None and _is_delimiter_row(text[nxt[0] : nxt[1]]):
                headers_spans = _cells(text, s, e)
                if len(headers_spans) == len(_cells(text, nxt[0], nxt[1])):
                    headers = [text[hs:he] for hs, he in headers_spans]  # rendered with the rest later
                    j = i + 2
                    while j < len(lines) and "|" in text[lines[j][0] : lines[j][1]] and text[lines[j][0] : lines[j][1]].strip():
                        _row(out, text, lines[j], headers, budget)
                        out.copy(lines[j][1], min(lines[j][1] + 1, b))  # the row's newline
                        j += 1
                    i = j
                    continue
            m = _RULE.match(line)
            if m and line.strip():  # a rule or a setext underline: the line goes, newline and all
                i += 1
                continue
            start = s
            q = _QUOTE.match(text, s, e)
            if q and q.end() > s:
                start = q.end()
            h = _HEADING.match(text, start, e)
            if h:
                start = h.end()
                c = _CLOSING_HASHES.search(text, start, e)
                out.copy(start, c.start() if c else e)
                out.copy(e, min(e + 1, b))
            else:
                out.copy(start, min(e + 1, b))
            i += 1

    _outside_fences(text, out, each)
    return out.done()


# -- 3. inline marks (and single-line struck text)
# Every pattern here is linear: no lazy scan to a closing mark (a line of unclosed "~~a " would make one quadratic);
# delimiters are paired with a bounded stack instead, as CommonMark does.
_TICKS = re.compile(r"`+")
_CONSTRUCT = re.compile(
    r"(?P<esc>\\[!-/:-@\[-`{-~])"
    r"|(?P<image>!\[(?P<alt>[^\[\]\n]*)\]\((?P<imgurl>[^()\s]*)(?:\s+(?P<imgtitle>\"[^\"\n]{0,300}\"|'[^'\n]{0,300}'))?\s*\))"
    r"|(?P<link>\[(?P<ltext>[^\[\]\n]*)\]\((?P<url>[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)"
    r"(?:\s+(?P<ltitle>\"[^\"\n]{0,300}\"|'[^'\n]{0,300}'))?\s*\))"
    r"|(?P<ref>\[(?P<rtext>[^\[\]\n]+)\]\[[^\[\]\n]*\])"
    r"|(?P<auto><(?P<autourl>[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*)>)"
    r"|(?P<comment><!--|-->)"
    r"|(?P<tag></?(?P<tagname>[A-Za-z][A-Za-z0-9-]{0,30})"
    r"(?P<attrs>(?:\s+[^\s\"'<>/=]+(?:\s*=\s*(?:\"[^\"]{0,1000}\"|'[^']{0,1000}'|[^\s\"'=<>`]+))?){0,50})\s*/?>)"
    r"|(?P<delim>~+|\*+|_+)"
)
_ATTR = re.compile(r"([^\s\"'<>/=]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'=<>`]+)))?")
#: attributes whose value a browser shows (tooltip, alt text, labels, field values)
_SHOWN_ATTRS = frozenset({"title", "alt", "aria-label", "label", "placeholder", "value", "summary", "content"})
_BLOCK_TAGS = frozenset({"br", "p", "div", "li", "tr", "ul", "ol", "table", "blockquote", "hr", "h1", "h2", "h3", "h4",
                         "h5", "h6", "section", "article", "header", "footer", "pre", "dl", "dt", "dd"})
_CELL_TAGS = frozenset({"td", "th"})
#: how far back a closing delimiter looks for its opener
_OPENERS_SEARCHED = 16

#: an edit of a line: source [start, end) becomes the parts (a str: text added there; a pair: a copy of the source)
_Edit = tuple[int, int, list]


def _code_spans(text: str, a: int, b: int) -> list[tuple[int, int, int, int]]:
    """Code spans in ``text[a:b]`` as (start, content start, content end, end): a backtick string up to the next one
    of the same length (linear: each run knows the next run of its length)."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(text, a, b)]
    following: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for k in range(len(runs) - 1, -1, -1):
        n = runs[k][1] - runs[k][0]
        following[k] = last.get(n)
        last[n] = k
    spans = []
    k = 0
    while k < len(runs):
        j = following[k]
        if j is None:
            k += 1
            continue
        spans.append((runs[k][0], runs[k][1], runs[j][0], runs[j][1]))
        k = j + 1
    return spans


def _scan(text: str, a: int, b: int, edits: list[_Edit], depth: int = 0) -> None:
    """The edits of ``text[a:b]`` (no code spans in it): constructs, then paired delimiters."""
    delims: list[tuple[int, int]] = []
    for m in _CONSTRUCT.finditer(text, a, b):
        kind = m.lastgroup
        s, e = m.start(), m.end()
        if kind == "delim":
            delims.append((s, e))
        elif kind == "esc":
            edits.append((s, e, [text[s + 1]]))
        elif kind == "image":
            edits.append((s, e, [(m.start("alt"), m.end("alt")), *_title(m, "imgtitle")]))
        elif kind == "link" or kind == "ref":
            inner = "ltext" if kind == "link" else "rtext"
            edits.append((s, s + 1, []))
            if depth < 4:
                _scan(text, m.start(inner), m.end(inner), edits, depth + 1)
            edits.append((m.end(inner), e, _title(m, "ltitle") if kind == "link" else []))
        elif kind == "auto":
            edits.append((s, e, [(m.start("autourl"), m.end("autourl"))]))
        elif kind == "comment":
            edits.append((s, e, [" "]))  # the comment's text stays: a plain-text reader sees it
        elif kind == "tag":
            name = m.group("tagname").lower()
            parts: list = ["\n"] if name in _BLOCK_TAGS else [" "] if name in _CELL_TAGS else []
            for am in _ATTR.finditer(m.group("attrs") or ""):
                group = next((g for g in (2, 3, 4) if am.group(g) is not None), None)
                if group is not None and am.group(1).lower() in _SHOWN_ATTRS and am.group(group).strip():
                    off = m.start("attrs")
                    parts += [" (", (off + am.start(group), off + am.end(group)), ") "]
            edits.append((s, e, parts))
    edits.extend(_pair(text, delims))


def _pair(text: str, delims: list[tuple[int, int]]) -> list[_Edit]:
    """Pair delimiter runs (``~``/``~~`` strike through, ``*``/``_`` runs of up to three emphasize) as CommonMark and
    GFM do, simplified: an opener is followed by a non-space, a closer preceded by one, ``_`` does not open or close
    inside a word, and a closer pairs with the nearest open run of the same character and length."""
    edits: list[_Edit] = []
    stack: list[tuple[int, int]] = []
    for s, e in delims:
        ch, n = text[s], e - s
        if n > (2 if ch == "~" else 3):
            continue  # read as text
        before = text[s - 1] if s > 0 else " "
        after = text[e] if e < len(text) else " "
        can_open, can_close = not after.isspace(), not before.isspace()
        if ch == "_":
            can_open = can_open and not before.isalnum()
            can_close = can_close and not after.isalnum()
        if can_close:
            for k in range(len(stack) - 1, max(-1, len(stack) - 1 - _OPENERS_SEARCHED), -1):
                os_, oe = stack[k]
                if text[os_] == ch and oe - os_ == n:
                    if ch == "~":
                        edits.append((os_, e, []))  # struck: withdrawn, with what it holds
                    else:
                        edits.append((os_, oe, []))
                        edits.append((s, e, []))
                    del stack[k:]
                    break
            else:
                if can_open:
                    stack.append((s, e))
                continue
            continue
        if can_open:
            stack.append((s, e))
    return edits


def _title(m: re.Match[str], group: str) -> list:
    if not m.group(group):
        return []
    return [" (", (m.start(group) + 1, m.end(group) - 1), ")"]


def _inline_line(text: str, a: int, b: int, out: _Out) -> None:
    edits: list[_Edit] = []
    pos = a
    for start, cstart, cend, end in _code_spans(text, a, b):
        _scan(text, pos, start, edits)
        edits.append((start, end, [(cstart, cend)]))
        pos = end
    _scan(text, pos, b, edits)
    edits.sort(key=lambda ed: (ed[0], -ed[1]))
    pos = a
    for start, end, parts in edits:
        if start < pos:
            continue  # inside struck text already dropped
        out.copy(pos, start)
        for part in parts:
            if isinstance(part, str):
                out.emit(part, start, end)
            else:
                out.copy(*part)
        pos = end
    out.copy(pos, b)


_INLINE_TRIGGER = re.compile(r"[\\`~\[<*_]")


def _inline(text: str) -> tuple[str, _Map | None]:
    if not _INLINE_TRIGGER.search(text):
        return text, None
    out = _Out(text)

    def each(a: int, b: int) -> None:
        for pos, end in _lines(text, a, b):  # marks do not span lines here (struck HTML elements were read before)
            if _INLINE_TRIGGER.search(text, pos, end):
                _inline_line(text, pos, end, out)
            else:
                out.copy(pos, end)

    _outside_fences(text, out, each)
    return out.done()


# -- 4. entities
_ENTITY = re.compile(r"&(?:#[0-9]{1,10};?|#[xX][0-9a-fA-F]{1,8};?|[A-Za-z][A-Za-z0-9]{1,31};?)")


def _entities(text: str) -> tuple[str, _Map | None]:
    if "&" not in text:
        return text, None
    out = _Out(text)

    def each(a: int, b: int) -> None:
        pos = a
        for m in _ENTITY.finditer(text, a, b):
            decoded = html.unescape(m.group())
            if decoded == m.group():
                continue
            out.copy(pos, m.start())
            out.emit(decoded, m.start(), m.end())
            pos = m.end()
        out.copy(pos, b)

    _outside_fences(text, out, each)  # code shows entities as written
    return out.done()


# -- 5. right-to-left override
_RLO = re.compile("\u202e([^\u202c\n]*)\u202c?")


def _overrides(text: str) -> tuple[str, _Map | None]:
    if "\u202e" not in text:
        return text, None
    out = _Out(text)
    pos = 0
    for m in _RLO.finditer(text):
        out.copy(pos, m.start())
        out.emit(m.group(1)[::-1], m.start(), m.end())
        pos = m.end()
    out.copy(pos, len(text))
    return out.done()


# -- 6. unicode
_SPECIAL = re.compile(r"[^\t\n\r\x20-\x7e]+")
#: combining overlays that strike a letter through
_STRIKE = frozenset("\u0334\u0335\u0336\u0337\u0338")
#: invisible characters that are no format characters (Cf) by category
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0\u2800\u180b\u180c\u180d\u180f")
_SUPERSCRIPT_DIGITS = frozenset("⁰¹²³⁴⁵⁶⁷⁸⁹")
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "ZERO ONE TWO THREE FOUR FIVE SIX SEVEN EIGHT NINE TEN ELEVEN TWELVE THIRTEEN FOURTEEN FIFTEEN SIXTEEN SEVENTEEN "
    "EIGHTEEN NINETEEN TWENTY".split())}
_TENS = {"TWENTY": 20, "THIRTY": 30, "FORTY": 40, "FIFTY": 50}
_LETTER_NAME = re.compile(r"\b(SMALL|CAPITAL) LETTER ([A-Z])$|LETTER SMALL CAPITAL ([A-Z])$|SYMBOL LETTER ([A-Z])$|"
                          r"\bLETTER ([A-Z])$")
_NUMBER_NAME = re.compile(r"\b(?:DIGIT|NUMBER) ([A-Z]+(?: [A-Z]+)?)(?: FULL STOP| COMMA)?$")
#: blocks whose letters and digits are decorated forms of ASCII ones (enclosed, parenthesized, circled, negative,
#: squared, regional indicators, dingbat digits), and the small capitals of the phonetic blocks
_DECORATED_BLOCKS = ((0x2460, 0x2500), (0x2776, 0x2794), (0x3248, 0x3260), (0x1F100, 0x1F200))
_SMALL_CAPITAL_BLOCKS = ((0x0250, 0x02B0), (0x1D00, 0x1DC0), (0xA720, 0xA800), (0x10780, 0x107C0))


def _number(words: str) -> int | None:
    parts = words.split()
    if len(parts) == 1:
        return _NUMBER_WORDS.get(parts[0], _TENS.get(parts[0]))
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _NUMBER_WORDS and _NUMBER_WORDS[parts[1]] < 10:
        return _TENS[parts[0]] + _NUMBER_WORDS[parts[1]]
    return None


@functools.cache
def _decorated() -> dict[str, str]:
    """Decorated letter or number -> its plain form, read from the characters' Unicode names."""
    table: dict[str, str] = {}
    for lo, hi in _DECORATED_BLOCKS:
        for cp in range(lo, hi):
            ch = chr(cp)
            name = unicodedata.name(ch, "")
            m = _LETTER_NAME.search(name)
            if m:
                small = m.group(1) == "SMALL" or m.group(3) is not None
                letter = next(g for g in m.groups()[1:] if g)
                table[ch] = letter.lower() if small else letter
                continue
            n = _NUMBER_NAME.search(name)
            if n and _number(n.group(1)) is not None:
                table[ch] = str(_number(n.group(1)))
    for lo, hi in _SMALL_CAPITAL_BLOCKS:
        for cp in range(lo, hi):
            m = re.search(r"LATIN LETTER SMALL CAPITAL ([A-Z])$", unicodedata.name(chr(cp), ""))
            if m:
                table[chr(cp)] = m.group(1).lower()
    return table


@functools.lru_cache(maxsize=4096)
def _keeps_marks(ch: str) -> bool:
    """True for a letter of a script whose combining marks carry meaning (vowel signs, viramas, ...)."""
    if not ch.isalpha() or ord(ch) < 0x250:
        return False
    return not unicodedata.name(ch, "").startswith(("LATIN", "GREEK", "CYRILLIC", "MODIFIER", "MATHEMATICAL"))


def _run(run: str, prev: str) -> str:
    table = _decorated()
    out: list[str] = []
    keep = _keeps_marks(prev) if prev else False
    after_digit = prev.isdigit() and prev.isascii()
    for ch in run:
        if ch in _SUPERSCRIPT_DIGITS:
            if after_digit:
                out.append("^")
            out.append(unicodedata.normalize("NFKD", ch))
            after_digit, keep = False, False
            continue
        plain = table.get(ch)
        if plain is not None:
            out.append(plain)
            keep, after_digit = False, False
            continue
        cat = unicodedata.category(ch)
        if cat == "Cf" or ch in _INVISIBLE or (cat == "Cc" and ch not in "\t\n\r\x85"):
            continue
        if cat in ("Zl", "Zp") or ch == "\x85":
            out.append("\n")
            continue
        for c in unicodedata.normalize("NFKD", ch):
            cc = unicodedata.category(c)
            if cc in ("Mn", "Me"):
                if c in _STRIKE:
                    if out and not out[-1].isspace():
                        out.pop()  # the struck letter
                elif keep and not ("\ufe00" <= c <= "\ufe0f" or "\U000e0100" <= c <= "\U000e01ef"):
                    out.append(c)
                continue
            out.append(c)
            keep = _keeps_marks(c)
        after_digit = False
    return unicodedata.normalize("NFC", "".join(out))


def _unicode(text: str) -> tuple[str, _Map | None]:
    if text.isascii() and not _SPECIAL.search(text):
        return text, None
    out = _Out(text)
    pos = 0
    for m in _SPECIAL.finditer(text):
        s, e = m.start(), m.end()
        if s > pos and unicodedata.category(text[s]).startswith("M"):
            s -= 1  # the base letter the marks sit on
        out.copy(pos, s)
        run = text[s:e]
        prev = text[s - 1] if s > 0 else ""
        if (_is_plain(run)):
            out.copy(s, e)
        else:
            out.emit(_run(run, prev), s, e)
        pos = e
    out.copy(pos, len(text))
    return out.done()


def _is_plain(run: str) -> bool:
    """A run that rendering leaves as it is (most text in other scripts): nothing to decompose, drop or map."""
    if not unicodedata.is_normalized("NFKD", run):
        return False
    table = _decorated()
    for ch in run:
        cat = unicodedata.category(ch)
        if cat[0] in "MC" or cat in ("Zl", "Zp") or ch in table or ch in _INVISIBLE or ch in _SUPERSCRIPT_DIGITS:
            return False
    return True


_PASSES: tuple[_Pass, ...] = (_struck_html, _blocks, _inline, _entities, _overrides, _unicode)


def render(text: str) -> Rendered:
    """``text`` as a reader sees it (see the module docs), with the map back to ``text``."""
    if not isinstance(text, str):
        raise TypeError(f"render() takes a string, got {type(text).__name__}")
    maps: list[_Map] = []
    current = text
    for step in _PASSES:
        current, m = step(current)
        if m is not None:
            maps.append(m)
    return Rendered(text, current, tuple(maps))
