"""Markup a reader does not see as text: struck-through text (removed), inline marks (dropped; links, images and the
attributes a browser shows read as their text) and HTML entities (decoded); fenced code is left as written. The
markdown blocks (tables, headings, quotes, rules) are read in :mod:`guardrail.render.blocks`."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from guardrail.render.offsets import PassMap, PassOutput

_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)


def outside_fences(text: str, out: PassOutput, each: Callable[[int, int], None]) -> None:
    """Call ``each(start, end)`` on the stretches outside fenced code; fenced code is copied as it is."""
    pos = 0
    if "```" in text or "~~~" in text:
        for m in _FENCE.finditer(text):
            each(pos, m.start())
            out.copy(m.start(), m.end())
            pos = m.end()
    each(pos, len(text))


def line_spans(text: str, a: int, b: int) -> list[tuple[int, int]]:
    out = []
    while a < b:
        nl = text.find("\n", a, b)
        end = b if nl == -1 else nl + 1
        out.append((a, end))
        a = end
    return out


# -- 1. struck HTML elements (may span lines)
_STRUCK_TAG = re.compile(r"<(/?)(del|s|strike)(?:\s[^<>]{0,1000})?>", re.I)


def struck_html(text: str) -> tuple[str, PassMap | None]:
    if "<" not in text:
        return text, None
    out = PassOutput(text)

    def each(a: int, b: int) -> None:
        """Each element from its opening tag to the matching closing tag is dropped (nesting counted, linear); an
        element never closed is kept: its text is read."""
        pos, opened, name, depth = a, -1, "", 0
        code = [(c[0], c[3]) for line in line_spans(text, a, b) for c in _code_spans(text, *line)]
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

    outside_fences(text, out, each)
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
_Part = str | tuple[int, int]
_Edit = tuple[int, int, list[_Part]]


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
            parts: list[_Part] = ["\n"] if name in _BLOCK_TAGS else [" "] if name in _CELL_TAGS else []
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


def _title(m: re.Match[str], group: str) -> list[_Part]:
    if not m.group(group):
        return []
    return [" (", (m.start(group) + 1, m.end(group) - 1), ")"]


def _inline_line(text: str, a: int, b: int, out: PassOutput) -> None:
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


def inline_marks(text: str) -> tuple[str, PassMap | None]:
    if not _INLINE_TRIGGER.search(text):
        return text, None
    out = PassOutput(text)

    def each(a: int, b: int) -> None:
        for pos, end in line_spans(text, a, b):  # marks do not span lines here (struck HTML elements were read before)
            if _INLINE_TRIGGER.search(text, pos, end):
                _inline_line(text, pos, end, out)
            else:
                out.copy(pos, end)

    outside_fences(text, out, each)
    return out.done()


# -- 4. entities
_ENTITY = re.compile(r"&(?:#[0-9]{1,10};?|#[xX][0-9a-fA-F]{1,8};?|[A-Za-z][A-Za-z0-9]{1,31};?)")


def html_entities(text: str) -> tuple[str, PassMap | None]:
    if "&" not in text:
        return text, None
    out = PassOutput(text)

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

    outside_fences(text, out, each)  # code shows entities as written
    return out.done()
