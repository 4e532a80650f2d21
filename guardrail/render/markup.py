"""Markup a reader does not see as text: struck-through text (removed), inline marks (dropped; links, images and the
attributes a browser shows read as their text) and HTML entities (decoded); fenced code is left as written. The
markdown blocks (tables, headings, quotes, rules) are read in :mod:`guardrail.render.blocks`."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from guardrail.render.offsets import PassMap, PassOutput

_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)


def code_blocks(text: str) -> list[tuple[int, int]]:
    """The code blocks of ``text`` (shown as written: nothing in them is markup), in order: fenced code, and indented
    code (lines indented by four columns or a tab after a blank line or at the start, not inside a list), as CommonMark
    reads them. Linear in the text."""
    spans: list[tuple[int, int]] = []
    pos = 0
    if "```" in text or "~~~" in text:
        for m in _FENCE.finditer(text):
            spans += _indented(text, pos, m.start())
            spans.append((m.start(), m.end()))
            pos = m.end()
    if "    " in text or "\t" in text:
        spans += _indented(text, pos, len(text))
    return spans


_LIST_ITEM = re.compile(r" {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def _indented(text: str, a: int, b: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    after_blank, in_list = True, False
    start = end = -1
    for ls, le in line_spans(text, a, b):
        line = text[ls:le].rstrip("\r\n")
        blank = not line.strip()
        indented = not blank and (line.startswith("    ") or line.lstrip(" ").startswith("\t") and
                                  len(line) - len(line.lstrip(" ")) < 4)
        if start >= 0:
            if indented:
                end = le
                continue
            if blank:
                continue
            out.append((start, end))
            start = -1
        elif indented and after_blank and not in_list:
            start, end = ls, le
            continue
        if not blank and not indented:
            in_list = bool(_LIST_ITEM.match(line)) or (in_list and not after_blank)
        after_blank = blank
    if start >= 0:
        out.append((start, end))
    return out


def outside_fences(text: str, out: PassOutput, each: Callable[[int, int], None]) -> None:
    """Call ``each(start, end)`` on the stretches outside code blocks (fenced or indented); code is copied as it is."""
    pos = 0
    for start, end in code_blocks(text):
        each(pos, start)
        out.copy(start, end)
        pos = end
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
#: an HTML tag as CommonMark reads one (attribute names start with a letter, ``_`` or ``:``; quoted values are part
#: of the tag, so a ``<del>`` inside an attribute value is no tag)
_HTML_TAG = re.compile(
    r"<(?P<close>/?)(?P<name>[A-Za-z][A-Za-z0-9-]{0,30})"
    r"(?P<attrs>(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]{0,100}(?:\s*=\s*(?:\"[^\"]{0,1000}\"|'[^']{0,1000}'|[^\s\"'=<>`]+))?){0,50})"
    r"\s*/?>")
_STRUCK_NAMES = frozenset({"del", "s", "strike"})
#: elements whose content is shown as written (RCDATA: textarea, title) or not parsed as markup (RAWTEXT, script
#: data, plaintext): a ``<del>`` inside is text
_RAW_TEXT = frozenset({"textarea", "title", "xmp", "plaintext", "script", "style", "iframe", "noembed", "noframes",
                       "noscript"})


def struck_html(text: str) -> tuple[str, PassMap | None]:
    if "<" not in text:
        return text, None
    out = PassOutput(text)

    def each(a: int, b: int) -> None:
        pos = a
        for opened, closed in _struck_elements(text, a, b)[0]:
            out.copy(pos, opened)
            pos = closed
        out.copy(pos, b)

    outside_fences(text, out, each)
    return out.done()


def _struck_elements(text: str, a: int, b: int) -> tuple[list[tuple[int, int]], int]:
    """The struck elements of ``text[a:b]`` (no code block in it), each from its opening tag to the matching closing
    tag (nesting counted, linear), and the start of one opened and not closed (-1: none; read as text). A tag is one
    only where a reader's parser sees one: not escaped with a backslash (markdown shows ``\\<del>`` as written), not
    in inline code, not inside another tag's attribute value, not inside an element whose content is shown as written
    (``<textarea>``)."""
    regions: list[tuple[int, int]] = []
    opened, name, depth = -1, "", 0
    raw = ""  # inside this raw-text element: no tags until its end tag
    code = [(c[0], c[3]) for line in line_spans(text, a, b) for c in _code_spans(text, *line)]
    k = 0
    for m in _HTML_TAG.finditer(text, a, b):
        start = m.start()
        slashes = start
        while slashes > a and text[slashes - 1] == "\\":  # each tag looks back over its own run only: linear
            slashes -= 1
        if (start - slashes) % 2:
            continue  # an escaped "<": text
        while k < len(code) and code[k][1] <= start:
            k += 1
        if k < len(code) and code[k][0] <= start:
            continue  # `<s>` in inline code is shown as written
        tag, closing = m.group("name").lower(), bool(m.group("close"))
        if raw:
            if closing and tag == raw:
                raw = ""
            continue
        if tag in _RAW_TEXT and not closing:
            raw = tag
            continue
        if tag not in _STRUCK_NAMES:
            continue
        if not closing:
            if opened < 0:
                opened, name, depth = start, tag, 1
            elif tag == name:
                depth += 1
        elif opened >= 0 and tag == name:
            depth -= 1
            if depth == 0:
                regions.append((opened, m.end()))
                opened = -1
    return regions, opened


def struck_regions(text: str) -> list[tuple[int, int | None]]:
    """Where struck text starts and ends in ``text`` (the elements :func:`struck_html` drops and the ``~``/``~~``
    pairs :func:`inline_marks` drops), in order; an end of None: opened and not closed yet at the end of ``text``, so
    the text after the opener may still turn out withdrawn (a stream waits for it, as for an open code fence)."""
    out: list[tuple[int, int | None]] = []
    pos = 0
    stretches: list[tuple[int, int]] = []
    for start, end in code_blocks(text):
        stretches.append((pos, start))
        pos = end
    stretches.append((pos, len(text)))
    for a, b in stretches:
        if a >= b:
            continue
        if "<" in text[a:b]:
            closed, pending = _struck_elements(text, a, b)
            out += closed
            if pending >= 0:
                out.append((pending, None))
        if "~" not in text[a:b]:
            continue
        for ls, le in line_spans(text, a, b):
            spans = _code_spans(text, ls, le)
            delims = [(m.start(), m.end()) for m in _TILDES.finditer(text, ls, le)
                      if not any(c[0] <= m.start() < c[3] for c in spans)]
            if not delims:
                continue
            left: list[tuple[int, int]] = []
            for os_, e, parts in _pair(text, delims, left):
                out.append((os_, e))
            if le == len(text) and not text.endswith("\n"):  # the last line may still close its opener
                out += [(os_, None) for os_, _ in left[:1]]
    return sorted(out, key=lambda r: r[0])


_TILDES = re.compile(r"~+")


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
    r"(?P<attrs>(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]{0,100}(?:\s*=\s*(?:\"[^\"]{0,1000}\"|'[^']{0,1000}'|[^\s\"'=<>`]+))?){0,50})\s*/?>)"
    r"|(?P<delim>~+|\*+|_+)"
)
_ATTR = re.compile(r"([A-Za-z_:][A-Za-z0-9_.:-]*)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s\"'=<>`]+)))?")
#: attributes whose value a browser shows (tooltip, alt text, labels, field values)
_SHOWN_ATTRS = frozenset({"title", "alt", "aria-label", "label", "placeholder", "value", "summary", "content"})
#: attributes whose value is code, a reference or layout, never shown (any other value that is prose is read: a
#: plain-text client shows the whole tag)
_CODE_ATTRS = frozenset({"style", "class", "id", "href", "src", "srcset", "rel", "target", "type", "name", "lang",
                         "dir", "width", "height", "for", "role", "action", "method", "xmlns", "d", "viewbox", "sizes",
                         "media", "charset", "http-equiv", "integrity", "crossorigin", "loading", "decoding", "colspan",
                         "rowspan", "align", "valign", "border", "cellpadding", "cellspacing", "tabindex", "slot"})
#: attributes written without a value in HTML (any other bare word in a tag is text a plain-text reader sees)
_BOOLEAN_ATTRS = frozenset({"hidden", "disabled", "checked", "selected", "open", "required", "readonly", "multiple",
                            "autofocus", "async", "defer", "controls", "loop", "muted", "autoplay", "novalidate",
                            "reversed", "nowrap", "inert", "ismap", "default", "playsinline", "allowfullscreen",
                            "formnovalidate", "itemscope", "download", "contenteditable", "draggable", "spellcheck",
                            "translate", "nomodule"})
#: element names of HTML (and the SVG / MathML names seen in answers): a tag with another name is text (a reader whose
#: client escapes HTML, or a plain-text one, sees it; a browser makes it an unknown element and hides nothing of
#: worth in its name and attributes)
_HTML_ELEMENTS = frozenset("""
a abbr address area article aside audio b base bdi bdo blockquote body br button canvas caption cite code col
colgroup data datalist dd del details dfn dialog div dl dt em embed fieldset figcaption figure footer form h1 h2 h3
h4 h5 h6 head header hgroup hr html i iframe img input ins kbd label legend li link main map mark menu meta meter nav
noscript object ol optgroup option output p param picture pre progress q rp rt ruby s samp script search section
select slot small source span strike strong style sub summary sup table tbody td template textarea tfoot th thead
time title tr track u ul var video wbr center font big tt marquee blink nobr xmp plaintext noembed noframes acronym
svg path g circle rect line text tspan math mi mn mo mrow msup msub mfrac
""".split())
_BLOCK_TAGS = frozenset({"br", "p", "div", "li", "tr", "ul", "ol", "table", "blockquote", "hr", "h1", "h2", "h3", "h4",
                         "h5", "h6", "section", "article", "header", "footer", "pre", "dl", "dt", "dd"})
_CELL_TAGS = frozenset({"td", "th"})
#: words of an attribute value (two or more: prose, read)
_WORDS = re.compile(r"[^\W\d_]{2,}")
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
            if name not in _HTML_ELEMENTS:
                continue  # no HTML element: the tag is text ("<Gift cards can be returned>")
            parts: list[_Part] = ["\n"] if name in _BLOCK_TAGS else [" "] if name in _CELL_TAGS else []
            off = m.start("attrs")
            for am in _ATTR.finditer(m.group("attrs") or ""):
                attr = am.group(1).lower()
                group = next((g for g in (2, 3, 4) if am.group(g) is not None), None)
                if group is None:
                    if attr not in _BOOLEAN_ATTRS and not attr.startswith(("data-", "aria-")):
                        parts += [" ", (off + am.start(1), off + am.end(1)), " "]  # a bare word: text
                    continue
                value = am.group(group)
                if not value.strip():
                    continue
                if attr in _SHOWN_ATTRS or (attr not in _CODE_ATTRS and not attr.startswith("on")
                                            and len(_WORDS.findall(value)) >= 2):
                    parts += [" (", (off + am.start(group), off + am.end(group)), ") "]
            edits.append((s, e, parts))
    edits.extend(_pair(text, delims))


def _pair(text: str, delims: list[tuple[int, int]], left: list[tuple[int, int]] | None = None) -> list[_Edit]:
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
    if left is not None:
        left.extend(d for d in stack if text[d[0]] == "~")  # strike openers never closed
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
