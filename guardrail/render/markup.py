"""Markup a reader does not see as text: struck-through text (removed), inline marks (dropped; links, images and the
attributes a browser shows read as their text) and HTML entities (decoded); fenced code is left as written. The
markdown blocks (tables, headings, quotes, rules) are read in :mod:`guardrail.render.blocks`."""

from __future__ import annotations

import bisect
import html
import html.entities
import re
import string
import unicodedata
from collections.abc import Callable

from guardrail.render.offsets import PassMap, PassOutput

#: a line that may open a fenced code block: container marks (block quotes, list items) before the fence; a backtick
#: fence's info string has no backtick (CommonMark). Read liberally: a fence some reader opens is code here.
_FENCE_OPEN = re.compile(r"(?P<prefix>(?:[ \t]*(?:>|(?:[-*+]|\d{1,9}[.)])(?=[ \t])))*)(?P<indent>[ \t]*)"
                         r"(?P<fence>`{3,}(?=[^`\n]*$)|~{3,})", re.M)
_QUOTES = re.compile(r"(?:[ \t]*>[ \t]?)*")


def _fences(text: str) -> list[tuple[int, int]]:
    """Fenced code blocks, from the opening line to the closing one (or the end). Closed only where every reader closes
    them: a run of the same character, at least as long, nothing after it, under as many block-quote marks, indented
    by at most three columns (in a list item: within the item's content, at most three columns into it); anything
    else goes on as code (read as written, so a fence closed early can not hide text after it)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    n = len(text)
    while pos < n:
        m = _FENCE_OPEN.search(text, pos)
        if m is None:
            break
        prefix = m.group("prefix")
        quotes = prefix.count(">")
        listed = any(ch not in "> \t" for ch in prefix)
        ls = m.start()
        width = len(m.group("fence"))
        char = m.group("fence")[0]
        column = m.start("fence") - ls
        nl = text.find("\n", m.end())
        end = n
        line = n if nl < 0 else nl + 1
        while line < n:
            nxt = text.find("\n", line)
            le = n if nxt < 0 else nxt
            body = text[line:le].rstrip("\r")
            q = _QUOTES.match(body)
            rest = body[q.end():] if q else body
            if (q is not None and q.group().count(">") == quotes) and rest.strip(" \t"):
                stripped = rest.lstrip(" ")
                indent = len(rest) - len(stripped)
                run = len(stripped) - len(stripped.lstrip(char))
                ok_indent = column <= indent <= column + 3 if listed else indent <= 3
                if ("\t" not in rest[:indent + 1] and ok_indent and run >= width
                        and not stripped[run:].strip(" \t")):
                    end = le if nxt < 0 else nxt + 1
                    break
            line = n if nxt < 0 else nxt + 1
        spans.append((ls, end))
        pos = max(end, ls + 1)
    return spans


def code_blocks(text: str) -> list[tuple[int, int]]:
    """The code blocks of ``text`` (shown as written: nothing in them is markup), in order: fenced code (see
    :func:`_fences`), and indented code (lines indented by four columns or a tab after a blank line or at the start;
    in a list, four columns past the least content indent an item may have; in block quotes, after the marks), as
    CommonMark reads them, liberally. Linear in the text."""
    spans: list[tuple[int, int]] = []
    pos = 0
    if "```" in text or "~~~" in text:
        for s, e in _fences(text):
            spans += _indented(text, pos, s)
            spans.append((s, e))
            pos = e
    if "    " in text or "\t" in text:
        spans += _indented(text, pos, len(text))
    return spans


_LIST_ITEM = re.compile(r"( {0,3})([-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def _indented(text: str, a: int, b: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    after_blank = True
    list_code = -1  # in a list: the least indent of code in it (-1: not in a list)
    start = end = -1
    for ls, le in line_spans(text, a, b):
        line = text[ls:le].rstrip("\r\n")
        q = _QUOTES.match(line)
        if q and q.end():
            line = line[q.end():]
        blank = not line.strip()
        expanded = line.expandtabs(4)
        lead = len(expanded) - len(expanded.lstrip(" "))
        need = 4 if list_code < 0 else list_code
        indented = not blank and lead >= need
        if start >= 0:
            if indented:
                end = le
                continue
            if blank:
                continue
            out.append((start, end))
            start = -1
        elif indented and after_blank:
            start, end = ls, le
            continue
        if not blank and not indented:
            item = _LIST_ITEM.match(line)
            if item:
                at = len(item.group(1)) + len(item.group(2)) + 1 + 4
                list_code = at if list_code < 0 else min(list_code, at)
            elif after_blank and lead < 2:
                list_code = -1  # a paragraph at the left margin after a blank line: the list is over
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
# Struck text is dropped only where every common reader strikes it: cmark-gfm (GitHub), markdown-it with its
# strikethrough rule, and a browser (HTML5 parser) reading what either renders. Wherever they may disagree, or the
# markup is ambiguous, the text is read (a struck text read is only checked too; a shown one dropped is a bypass).
#
#: an HTML tag as CommonMark reads one (attribute names start with a letter, ``_`` or ``:``; quoted values are part
#: of the tag, so a ``<del>`` inside an attribute value is no tag); broad: used to find what is *not* markup
_HTML_TAG = re.compile(
    r"<(?P<close>/?)(?P<name>[A-Za-z][A-Za-z0-9-]{0,30})"
    r"(?P<attrs>(?:[ \t\n\r\f\v]+[A-Za-z_:][A-Za-z0-9_.:-]{0,100}(?:[ \t\n\r\f\v]*=[ \t\n\r\f\v]*"
    r"(?:\"[^\"]{0,1000}\"|'[^']{0,1000}'|[^ \t\n\r\f\v\"'=<>`]+))?){0,50})"
    r"[ \t\n\r\f\v]*/?>")
#: a strike tag every reader takes for one: spaces and tabs only (a no-break space, a form feed or a line break in it
#: and some reader shows it as text, or parses another element), a closing tag without attributes (CommonMark)
_STRIKE_OPEN = re.compile(
    r"<(?P<name>del|s|strike)(?:[ \t]+[A-Za-z_:][A-Za-z0-9_.:-]{0,100}"
    r"(?:[ \t]*=[ \t]*(?:\"[^\"\n\r]{0,1000}\"|'[^'\n\r]{0,1000}'|[^ \t\n\r\f\v\"'=<>`]+))?){0,50}[ \t]*/?>", re.I)
_STRIKE_CLOSE = re.compile(r"</(?P<name>del|s|strike)[ \t]*>", re.I)
_STRIKE_NAMES = frozenset({"del", "s", "strike"})
#: elements whose content is shown as written (RCDATA: textarea, title) or not parsed as markup (RAWTEXT, script
#: data, plaintext): a ``<del>`` inside is text
_RAW_TEXT = frozenset({"textarea", "title", "xmp", "plaintext", "script", "style", "iframe", "noembed", "noframes",
                       "noscript"})
#: elements after which a browser parses tags otherwise (foreign content: ``<del>`` in ``<svg>`` is an SVG element;
#: ``<select>`` ignores it; a template is not shown): no strike tag after one is trusted
_OTHER_PARSING = frozenset({"svg", "math", "select", "template", "object", "frameset"})
#: text that is no markup for some reader: comments, processing instructions, CDATA, declarations (to their end, or
#: to the end of the stretch when unclosed), autolinks and any ``<...>`` without spaces, GFM's extended autolinks
_NOT_MARKUP = re.compile(r"<!--|<\?|<!\[CDATA\[|<![A-Za-z]|<[^<>\s]{1,2000}>|(?:https?://|ftp://|www\.)[^\s<]*", re.I)
_ANGLED = re.compile(r"<[^<>\s]{1,2000}>")
_NOT_MARKUP_END = {"<!--": "-->", "<?": "?>", "<![CDATA[": "]]>", "<!": ">"}
#: a link destination (and title) after ``](``
_DESTINATION = re.compile(
    r"\]\([ \t]*\n?[ \t]*(?:<[^<>\n]{0,2000}>|[^\s()]{0,2000}(?:\([^\s()]{0,2000}\)[^\s()]{0,2000}){0,10})"
    r"(?:[ \t]*\n?[ \t]*(?:\"[^\"]{0,2000}\"|'[^']{0,2000}'|\([^()]{0,2000}\)))?[ \t]*\n?[ \t]*\)")
#: a line that may start a block (or a table row) rather than continue a paragraph: a strike element does not
#: reach over it (the paragraph, and the element, end before it)
_BLOCK_START = re.compile(r"[ \t]*(?:[>#|=_*+\-`~]|\d{1,9}[.)]|<(?!/?(?:del|s|strike)[ \t/>]))", re.I)
_HEADING_LINE = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*(?=\n)")


def _chunks(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """``text[a:b]`` cut at blank lines (paragraph ends): no inline markup and no struck element spans one."""
    out = []
    pos = a
    for m in _BLANK_LINE.finditer(text, a, b):
        out.append((pos, m.start() + 1))
        pos = m.end()
    out.append((pos, b))
    return out


def _run_pairs(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Code spans from backtick runs, as (opening run, closing run) indices: a run up to the next one of the same
    length (linear: each run knows the next run of its length)."""
    following: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for k in range(len(runs) - 1, -1, -1):
        n = runs[k][1] - runs[k][0]
        following[k] = last.get(n)
        last[n] = k
    pairs = []
    k = 0
    while k < len(runs):
        j = following[k]
        if j is None:
            k += 1
            continue
        pairs.append((k, j))
        k = j + 1
    return pairs


def _backtick_pairs(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Code spans from backtick runs, as (start, end) offsets."""
    return [(runs[k][0], runs[j][1]) for k, j in _run_pairs(runs)]


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _inside(spans: list[tuple[int, int]], s: int, e: int) -> bool:
    """Whether ``[s, e)`` meets one of the merged, sorted ``spans``."""
    k = bisect.bisect_right(spans, (s, 1 << 62)) - 1
    if k >= 0 and spans[k][1] > s:
        return True
    return k + 1 < len(spans) and spans[k + 1][0] < e


def _not_markup(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """What some reader of ``text[a:b]`` (one paragraph) does not read as inline markup, merged: code spans (as
    CommonMark pairs backticks, with and without backslash escapes), raw HTML tags (the broad reading), comments,
    processing instructions, CDATA, declarations, autolinks and link destinations with their titles. Linear."""
    spans: list[tuple[int, int]] = []
    if "`" in text[a:b]:
        runs = [(m.start(), m.end()) for m in _TICKS.finditer(text, a, b)]
        spans += _backtick_pairs(runs)
        unescaped = []
        for s, e in runs:
            k = s
            while k > a and text[k - 1] == "\\":
                k -= 1
            if (s - k) % 2:
                s += 1
            if s < e:
                unescaped.append((s, e))
        spans += _backtick_pairs(unescaped)
    pos = a
    while True:
        m = _NOT_MARKUP.search(text, pos, b)
        if m is None:
            break
        opener = m.group()
        end_mark = next((v for k, v in _NOT_MARKUP_END.items() if opener.upper().startswith(k)), None)
        if end_mark is None:
            if not (_STRIKE_OPEN.fullmatch(opener) or _STRIKE_CLOSE.fullmatch(opener)):
                spans.append((m.start(), m.end()))
            pos = m.end()
            continue
        close = text.find(end_mark, m.end(), b)
        end = b if close < 0 else close + len(end_mark)
        spans.append((m.start(), end))
        pos = end
        if close < 0:
            break
    for m in _HTML_TAG.finditer(text, a, b):
        if not (_STRIKE_OPEN.fullmatch(m.group()) or _STRIKE_CLOSE.fullmatch(m.group())):
            spans.append((m.start(), m.end()))
    pos = a
    while True:
        k = text.find("](", pos, b)
        if k < 0:
            break
        m = _DESTINATION.match(text, k, b)
        if m is not None:
            end = m.end()
        else:  # no destination as written here: to the next ")" on the line, or the line's end
            nl = text.find("\n", k, b)
            line_end = b if nl < 0 else nl
            close = text.find(")", k, line_end)
            end = line_end if close < 0 else close + 1
        spans.append((k + 1, end))
        pos = max(end, k + 2)
    return _merge(spans)


def _brackets(text: str, a: int, b: int, skip: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``[...]`` pairs of ``text[a:b]`` (link text, image alt text, labels), paired as written and, separately,
    outside ``skip`` (code spans, tags): both readings, merged."""
    out: list[tuple[int, int]] = []
    if "[" not in text[a:b]:
        return out
    for honour_skip in (False, True):
        stack: list[int] = []
        for m in re.finditer(r"\\.|[\[\]]", text[a:b], re.S):
            s = a + m.start()
            ch = m.group()
            if len(ch) == 2 or (honour_skip and _inside(skip, s, s + 1)):
                continue
            if ch == "[":
                stack.append(s)
            elif stack:
                out.append((stack.pop(), s + 1))
    return _merge(out)


def _struck_elements(text: str, a: int, b: int) -> tuple[list[tuple[int, int]], int]:
    """The struck elements of ``text[a:b]`` (no code block in it), each from its opening tag to the matching closing
    tag (nesting counted, linear), and the start of one opened and not closed at the end (-1: none; read as text).

    A strike tag counts only where every reader parses one (see :data:`_STRIKE_OPEN`): not escaped, not in a code
    span, comment, CDATA, processing instruction, declaration, autolink, link destination or ``[...]`` (link text or
    alt text), not inside another tag's attribute value, not inside an element shown as written (``<textarea>``),
    not after foreign content (``<svg>``). An element is struck only within one paragraph: not over a blank line,
    not over a line that may start a block (``>``, ``#``, a list item, a table row...), not across table cells."""
    regions: list[tuple[int, int]] = []
    pending = -1
    raw = ""  # inside this raw-text element: no tags until its end tag
    other = False  # after foreign content: no strike tag trusted
    # comments (and the like) in HTML blocks run over blank lines: found over the whole stretch first
    wide = _not_markup(text, a, b) if "<" in text[a:b] else []
    for ca, cb in _chunks(text, a, b):
        if "<" not in text[ca:cb]:
            continue
        opaque = _merge(_not_markup(text, ca, cb) + [w for w in wide if w[1] > ca and w[0] < cb])
        brackets = _brackets(text, ca, cb, opaque)
        opened, name, depth = -1, "", 0
        line_end = text.find("\n", ca, cb)
        lines_ok = True
        for m in re.finditer(r"<", text[ca:cb]):
            start = ca + m.start()
            tag = _HTML_TAG.match(text, start, cb)
            if tag is None:
                continue
            tname = tag.group("name").lower()
            closing = bool(tag.group("close"))
            if raw:
                if closing and tname == raw and raw != "plaintext":
                    raw = ""
                continue
            if tname in _RAW_TEXT and not closing:
                raw = tname
                continue
            if tname in _OTHER_PARSING and not closing:
                other = True
            if tname not in _STRIKE_NAMES or other:
                continue
            strict = (_STRIKE_CLOSE if closing else _STRIKE_OPEN).fullmatch(tag.group())
            if strict is None or _inside(opaque, start, start + 1) or _inside(brackets, start, tag.end()):
                continue
            slashes = start
            while slashes > ca and text[slashes - 1] == "\\":
                slashes -= 1
            if (start - slashes) % 2:
                continue  # an escaped "<": text
            if opened >= 0 and 0 <= line_end < start:
                # the element reaches over line breaks: each line it reaches must go on with the paragraph
                while lines_ok and 0 <= line_end < start:
                    nxt = text.find("\n", line_end + 1, cb)
                    line = text[line_end + 1 : cb if nxt < 0 else nxt]
                    lines_ok = not _BLOCK_START.match(line) and "|" not in line
                    line_end = nxt
                if not lines_ok:
                    opened = -1  # closed where the paragraph ends: read
            if opened < 0:
                line_end = text.find("\n", start, cb)
                lines_ok = True
            if not closing:
                if opened < 0:
                    ls = text.rfind("\n", ca, start) + 1
                    first = text[ls : cb if line_end < 0 else line_end]
                    opened, name, depth = start, tname, 1
                    lines_ok = not (_HEADING_LINE.match(first) or ("|" in first and line_end >= 0))
                elif tname == name:
                    depth += 1
            elif opened >= 0 and tname == name:
                depth -= 1
                if depth == 0:
                    if "|" not in text[opened : tag.end()]:  # not across the cells of a table row
                        regions.append((opened, tag.end()))
                    opened = -1
        pending = opened if cb == b and opened >= 0 else -1
    return regions, pending


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


# -- 2. struck ``~~`` (GFM strikethrough, markdown-it's strikethrough rule)
_TILDES = re.compile(r"~+")
_WS_ALL = frozenset(" \t\n\r\f\v\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                    "\u202f\u205f\u3000")


def _ws_any(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) == "Zs"


def _punct_all(ch: str) -> bool:
    """Punctuation to every reader (ASCII punctuation, Unicode P*)."""
    return ch in string.punctuation or unicodedata.category(ch).startswith("P")


def _punct_any(ch: str) -> bool:
    """Punctuation to some reader (also Unicode symbols, S*, as CommonMark 0.31 and markdown-it read them)."""
    return ch in string.punctuation or unicodedata.category(ch)[0] in "PS"


def _may_open(prev: str, nxt: str) -> bool:
    """Left-flanking (CommonMark) for every reader's whitespace and punctuation."""
    return not _ws_any(nxt) and (not _punct_any(nxt) or prev in _WS_ALL or _punct_all(prev))


def _may_close(prev: str, nxt: str) -> bool:
    return not _ws_any(prev) and (not _punct_any(prev) or nxt in _WS_ALL or _punct_all(nxt))


_EMPHASIS = re.compile(r"[*_]+")
#: the first line of an HTML block (after container marks: quotes, list items): markdown is not read in one
_HTML_BLOCK_LINE = re.compile(r"(?:[ \t]*(?:>|[-*+]|\d{1,9}[.)])(?=[ \t]|$))*[ \t]*<[A-Za-z/!?]")


def _html_blocks(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """Lines of ``text[a:b]`` that may be (in) an HTML block (shown as raw HTML: ``~~`` in one strikes nothing):
    from a line starting with a tag, comment or the like to the next blank line (or the comment's end)."""
    out: list[tuple[int, int]] = []
    if "<" not in text[a:b]:
        return out
    pos = a
    while pos < b:
        nl = text.find("\n", pos, b)
        le = b if nl < 0 else nl + 1
        if _HTML_BLOCK_LINE.match(text, pos, le):
            blank = _BLANK_LINE.search(text, pos - 1 if pos > a else pos, b)
            end = b if blank is None else blank.start() + 1
            lt = text.find("<", pos, le)
            for opener, closer in (("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>"), ("<!", ">")):
                if text.startswith(opener, lt):
                    close = text.find(closer, lt + len(opener), b)
                    end = max(end, b if close < 0 else close + len(closer))
                    break
            out.append((pos, end))
            pos = max(end, le)
        else:
            pos = le
    return out


#: the start of an HTML block (CommonMark kinds 1 to 7, after container marks), as either reader starts one
_HTML_BLOCK_START = re.compile(
    r"(?:[ \t]*(?:>|[-*+]|\d{1,9}[.)])(?=[ \t]|$|>))*[ \t]*(?:"
    r"(?P<raw><(?:script|pre|style|textarea)(?=[ \t>]|$))"
    r"|(?P<comment><!--)|(?P<pi><\?)|(?P<cdata><!\[CDATA\[)|(?P<decl><![A-Za-z])"
    r"|(?P<block></?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|colgroup|dd|details|"
    r"dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|frameset|h[1-6]|head|header|hr|html|iframe|"
    r"legend|li|link|main|menu|menuitem|nav|noframes|ol|optgroup|option|p|param|search|section|source|summary|table|"
    r"tbody|td|tfoot|th|thead|title|tr|track|ul)(?=[ \t>]|/>|$))"
    r"|(?P<any>(?=</?[A-Za-z])))", re.I)
_HTML_BLOCK_END = {"raw": re.compile(r"</(?:script|pre|style|textarea)>", re.I), "comment": re.compile("-->"),
                   "pi": re.compile(r"\?>"), "cdata": re.compile(r"\]\]>"), "decl": re.compile(">")}


def html_block_spans(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The HTML blocks of ``text[a:b]`` (no code in it), as CommonMark readers find them (read liberally: a block one
    of them finds is one here), in order: markdown is not read in one (``[t](dest)`` shows as written). Kinds 1 to 5
    run to their end mark (over blank lines), the others to the next blank line; a line holding only a tag starts one
    too (kind 7). Linear."""
    out: list[tuple[int, int]] = []
    if "<" not in text[a:b]:
        return out
    pos = a
    while pos < b:
        nl = text.find("\n", pos, b)
        le = b if nl < 0 else nl + 1
        m = _HTML_BLOCK_START.match(text, pos, le)
        kind = m.lastgroup if m else None
        if m is not None and kind == "any":
            rest = text[m.end() : le].rstrip(" \t\r\n")
            tag = _HTML_TAG.match(rest)
            if tag is None or tag.end() != len(rest):
                kind = None
        if m is None or kind is None:
            pos = le
            continue
        if kind in _HTML_BLOCK_END:
            close = _HTML_BLOCK_END[kind].search(text, m.end(), b)
            if close is None:
                end = b
            else:
                nl2 = text.find("\n", close.end(), b)
                end = b if nl2 < 0 else nl2 + 1
        else:
            blank = _BLANK_LINE.search(text, le - 1 if le > pos else le, b) if nl >= 0 else None
            end = b if blank is None else blank.start() + 1
        out.append((pos, end))
        pos = max(end, le)
    return out


_REF_DEF = re.compile(r"[ ]{0,3}\[(?P<label>(?:[^\[\]\\\n]|\\[^\n]){1,999})\]:[ \t]*(?P<dest><[^<>\n]*>|[^\s()<>]+)"
                      r"(?:[ \t]+(?P<title>\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*\r?$")


def _label(label: str) -> str:
    """A reference label as every reader matches it (ASCII case and runs of spaces; any other case differs: kept)."""
    return " ".join(label.split()).translate(_ASCII_LOWER)


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _definitions(text: str) -> tuple[dict[int, tuple[int, int] | None], frozenset[str]]:
    """Reference definitions every reader takes for one, by the start of their line, with the span of their title's
    text (or None), and the labels they define. Read strictly: on one line, at the start of a paragraph (after a
    blank line or another definition), outside code and HTML blocks, not a footnote (``[^1]:``)."""
    defs: dict[int, tuple[int, int] | None] = {}
    labels: set[str] = set()
    stretches: list[tuple[int, int]] = []
    pos = 0
    for start, end in code_blocks(text):
        stretches.append((pos, start))
        pos = end
    stretches.append((pos, len(text)))
    for a, b in stretches:
        blocks = html_block_spans(text, a, b)
        para_start = True
        for ls, le in line_spans(text, a, b):
            line = text[ls:le].rstrip("\n")
            m = _REF_DEF.match(line)
            if (m and para_start and not m.group("label").startswith("^") and m.group("label").strip()
                    and not (blocks and _inside(blocks, ls, le))):
                t = m.group("title")
                defs[ls] = (ls + m.start("title") + 1, ls + m.end("title") - 1) if t else None
                labels.add(_label(m.group("label")))
                continue
            para_start = not line.strip()
    return defs, frozenset(labels)


def _tilde_strikes(text: str, ls: int, le: int, opaque: list[tuple[int, int]],
                   left: list[int] | None = None) -> list[tuple[int, int]]:
    """The ``~~...~~`` pairs of the line ``text[ls:le]`` that every reader strikes, as (start, end): runs of exactly
    two tildes (one tilde strikes in GFM only, three in markdown-it only), the opener left-flanking and the closer
    right-flanking for every reader's punctuation, outside anything some reader does not read as markup
    (``opaque``: code spans, tags, comments, link destinations, autolinks, HTML blocks), with nothing in between that
    may pair otherwise: no other tilde, no ``[`` or ``]`` unbalanced (a link's text ends there), no emphasis mark
    when there are some outside too (an emphasis pair crossing it removes the opener), no table cell border.
    ``left``: the start of an opener not closed, which a line still being written may close."""
    out: list[tuple[int, int]] = []
    line = text[ls:le].rstrip("\r\n")
    end = ls + len(line)
    if "~~" not in line:
        return out
    emphasis = [m.start() for m in _EMPHASIS.finditer(text, ls, end)]
    opener = -1
    for m in _TILDES.finditer(text, ls, end):
        s, e = m.start(), m.end()
        if e - s != 2 or _inside(opaque, s, e):
            opener = -1
            continue
        prev = text[s - 1] if s > ls else " "
        nxt = text[e] if e < end else " "
        if opener >= 0 and _may_close(prev, nxt):
            inner = text[opener + 2 : s]
            depth, balanced = 0, True
            for ch in re.sub(r"\\.", "", inner):
                depth += (ch == "[") - (ch == "]")
                balanced = balanced and depth >= 0
            within = bisect.bisect_left(emphasis, s) - bisect.bisect_left(emphasis, opener + 2)
            crossed = within > 0 and within < len(emphasis)  # marks inside and outside too
            if "~" not in inner and "|" not in inner and balanced and depth == 0 and not crossed:
                out.append((opener, e))
            opener = -1
            continue
        opener = s if _may_open(prev, nxt) else -1
    if left is not None and opener >= 0:
        left.append(opener)
    return out


def _strike_context(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """What is no markup for some reader in ``text[a:b]`` (no code block in it): see :func:`_not_markup` (per
    paragraph) and :func:`_html_blocks`, merged."""
    spans = _html_blocks(text, a, b) + html_block_spans(text, a, b)
    for ca, cb in _chunks(text, a, b):
        if any(ch in text[ca:cb] for ch in "`<]:w"):
            spans += _not_markup(text, ca, cb)
    return _merge(spans)


def struck_regions(text: str) -> list[tuple[int, int | None]]:
    """Where struck text starts and ends in ``text`` (the elements :func:`struck_html` drops and the ``~~`` pairs
    :func:`inline_marks` drops), in order; an end of None: opened and not closed yet at the end of ``text``, so
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
        if "~~" not in text[a:b]:
            continue
        opaque = _strike_context(text, a, b)
        for ls, le in line_spans(text, a, b):
            left: list[int] = []
            out += _tilde_strikes(text, ls, le, opaque, left)
            if le == len(text) and not text.endswith("\n"):  # the last line may still close its opener
                out += [(os_, None) for os_ in left[:1]]
    return sorted(out, key=lambda r: r[0])


# -- 3. inline marks (and single-line struck text)
# Every pattern here is linear: no lazy scan to a closing mark (a line of unclosed "~~a " would make one quadratic);
# delimiters are paired with a bounded stack instead, as CommonMark does.
_TICKS = re.compile(r"`+")
_CONSTRUCT = re.compile(
    r"(?P<esc>\\[!-/:-@\[-`{-~])"
    r"|(?P<image>!\[(?P<alt>[^\[\]\n]*)\]\((?P<imgurl>[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+(?P<imgtitle>\"(?:[^\"\\\n]|\\.){0,300}\"|'(?:[^'\\\n]|\\.){0,300}'|\((?:[^()\\\n]|\\.){0,300}\)))?\s*\))"
    r"|(?P<link>\[(?P<ltext>[^\[\]\n]*)\]\((?P<url>[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)"
    r"(?:\s+(?P<ltitle>\"(?:[^\"\\\n]|\\.){0,300}\"|'(?:[^'\\\n]|\\.){0,300}'|\((?:[^()\\\n]|\\.){0,300}\)))?\s*\))"
    r"|(?P<ref>\[(?P<rtext>[^\[\]\n]+)\]\[[^\[\]\n]*\])"
    r"|(?P<auto><(?P<autourl>[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]*)>)"
    r"|(?P<comment><!--|-->)"
    r"|(?P<tag></?(?P<tagname>[A-Za-z][A-Za-z0-9-]{0,30})"
    r"(?P<attrs>(?:[ \t\n\r\f\v]+[A-Za-z_:][A-Za-z0-9_.:-]{0,100}(?:[ \t\n\r\f\v]*=[ \t\n\r\f\v]*"
    r"(?:\"[^\"]{0,1000}\"|'[^']{0,1000}'|[^ \t\n\r\f\v\"'=<>`]+))?){0,50})[ \t\n\r\f\v]*/?>)"
    r"|(?P<delim>~+|\*+|_+)"
)
_ATTR = re.compile(r"([A-Za-z_:][A-Za-z0-9_.:-]*)(?:[ \t\n\r\f\v]*=[ \t\n\r\f\v]*"
                   r"(?:\"([^\"]*)\"|'([^']*)'|([^ \t\n\r\f\v\"'=<>`]+)))?")
#: tags GitHub's tag filter shows as text (``<script src="...">`` reads as written there)
_FILTERED_TAGS = frozenset({"title", "textarea", "style", "xmp", "iframe", "noembed", "noframes", "script",
                            "plaintext"})
#: attributes whose value a browser shows (tooltip, alt text, labels, field values)
_SHOWN_ATTRS = frozenset({"title", "alt", "aria-label", "label", "placeholder", "value", "summary", "content",
                          "start"})  # (an ordered list's first number: ``<ol start="90"><li>days``, "90. days")
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
svg path g circle rect line text tspan math mi mn mo mrow msup msub mfrac mphantom mtext mspace
""".split())
_BLOCK_TAGS = frozenset({"br", "p", "div", "li", "tr", "ul", "ol", "table", "blockquote", "hr", "h1", "h2", "h3", "h4",
                         "h5", "h6", "section", "article", "header", "footer", "pre", "dl", "dt", "dd", "details",
                         "summary", "figure", "figcaption", "aside", "nav", "main", "address", "fieldset", "legend",
                         "caption", "center", "hgroup", "search", "menu", "dialog", "form"})
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
    return [(runs[k][0], runs[k][1], runs[j][0], runs[j][1]) for k, j in _run_pairs(runs)]


def _crossed(text: str, m: re.Match[str], inner: str) -> bool:
    """Whether a tag, autolink or comment starting in the link ``m`` reaches past the end of its text (``inner``) or
    past its end: those bind more tightly than a link's brackets, so no reader reads a link there."""
    s, e, mid = m.start(), m.end(), m.end(inner)
    for k in range(s, e):
        if text[k] != "<":
            continue
        t = _HTML_TAG.match(text, k) or _ANGLED.match(text, k)
        end = t.end() if t else (text.find("-->", k + 4) + 3 if text.startswith("<!--", k) else -1)
        if end > 2 and ((k < mid < end) or end > e):
            return True
    return False


def _scan(text: str, a: int, b: int, edits: list[_Edit], depth: int = 0, literal: bool = False,
          labels: frozenset[str] = frozenset()) -> None:
    """The edits of ``text[a:b]`` (no code spans in it): constructs, then paired delimiters. ``literal``: the line is
    in an HTML block, where links and images are shown as written; ``labels``: the reference labels defined."""
    delims: list[tuple[int, int]] = []
    for m in _CONSTRUCT.finditer(text, a, b):
        kind = m.lastgroup
        s, e = m.start(), m.end()
        if kind in ("image", "link", "ref") and (literal or ("<" in m.group() and _crossed(
                text, m, "alt" if kind == "image" else "ltext" if kind == "link" else "rtext"))):
            continue  # shown as written: read as written
        if kind == "ref" and _label(text[m.end("rtext") + 2 : e - 1]) not in labels | {""}:
            edits.append((s, s + 1, []))  # no such reference: the reader sees both brackets' words
            if re.fullmatch(r"\d{1,3}|[a-z]?\d{1,3}|doc\d{1,3}|ref\d{1,3}", text[m.end("rtext") + 2 : e - 1].strip(), re.I):
                # but for a citation number ("[30 days of delivery][1]", its definition not yet streamed): a marker
                edits.append((m.end("rtext"), e, []))
            continue
        if kind == "delim":
            if text[s] != "~":  # ``~~`` pairs are read per line (:func:`_tilde_strikes`); a tilde is text here
                delims.append((s, e))
        elif kind == "esc":
            edits.append((s, e, [text[s + 1]]))
        elif kind == "image":
            edits.append((s, e, [(m.start("alt"), m.end("alt")), *_title(m, "imgtitle")]))
        elif kind == "link" or kind == "ref":
            inner = "ltext" if kind == "link" else "rtext"
            edits.append((s, s + 1, []))
            if depth < 4:
                _scan(text, m.start(inner), m.end(inner), edits, depth + 1, literal, labels)
            edits.append((m.end(inner), e, _title(m, "ltitle") if kind == "link" else []))
        elif kind == "auto":
            edits.append((s, e, [(m.start("autourl"), m.end("autourl"))]))
        elif kind == "comment":
            edits.append((s, e, [" "]))  # the comment's text stays: a plain-text reader sees it
        elif kind == "tag":
            name = m.group("tagname").lower()
            if name not in _HTML_ELEMENTS or name in _FILTERED_TAGS:
                continue  # no HTML element, or one GitHub shows as text: the tag is text ("<Gift cards ...>")
            parts: list[_Part] = ["\n"] if name in _BLOCK_TAGS else [" "] if name in _CELL_TAGS else []
            if name == "summary" and text.startswith("</", s):
                parts = [": "]  # a disclosure's summary is the title of what it opens: "More: Gift cards can ..."
            off = m.start("attrs")
            for am in _ATTR.finditer(m.group("attrs") or ""):
                attr = am.group(1).lower()
                group = next((g for g in (2, 3, 4) if am.group(g) is not None), None)
                if group is None:
                    if attr not in _BOOLEAN_ATTRS and not attr.startswith(("data-", "aria-")):
                        parts += [" ", (off + am.start(1), off + am.end(1)), " "]  # a bare word: text
                    continue
                value = am.group(group)
                if _read_attribute(attr, value):
                    parts += [" (", (off + am.start(group), off + am.end(group)), ") "]
            edits.append((s, e, parts))
    edits.extend(_pair(text, delims))


def _pair(text: str, delims: list[tuple[int, int]]) -> list[_Edit]:
    """Pair emphasis delimiter runs (``*``/``_`` runs of up to three) as CommonMark does, simplified: an opener is
    followed by a non-space, a closer preceded by one, ``_`` does not open or close inside a word, and a closer pairs
    with the nearest open run of the same character and length. Only marks go: nothing is dropped as struck here."""
    edits: list[_Edit] = []
    stack: list[tuple[int, int]] = []
    for s, e in delims:
        ch, n = text[s], e - s
        if n > 3:
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


def _read_attribute(attr: str, value: str) -> bool:
    """Whether the plain reading reads an attribute's value as text ("(not)"): a shown one (``title``, ``alt``,
    ``aria-label``...) or prose in one that is no code (``data-note="no, they cannot"``)."""
    return bool(value.strip()) and (attr in _SHOWN_ATTRS or (attr not in _CODE_ATTRS and not attr.startswith("on")
                                                             and len(_WORDS.findall(value)) >= 2))


def _title(m: re.Match[str], group: str) -> list[_Part]:
    if not m.group(group) or not m.group(group)[1:-1].strip():
        return []  # none, or one a browser's reading emptied (:func:`hidden_regions`)
    return [" (", (m.start(group) + 1, m.end(group) - 1), ")"]


def _inline_line(text: str, a: int, b: int, out: PassOutput, opaque: list[tuple[int, int]], literal: bool = False,
                 labels: frozenset[str] = frozenset()) -> None:
    edits: list[_Edit] = [(s, e, []) for s, e in _tilde_strikes(text, a, b, opaque)]  # struck: withdrawn
    pos = a
    for start, cstart, cend, end in _code_spans(text, a, b):
        _scan(text, pos, start, edits, 0, literal, labels)
        edits.append((start, end, [(cstart, cend)]))
        pos = end
    _scan(text, pos, b, edits, 0, literal, labels)
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
    defs, labels = _definitions(text) if "]:" in text else ({}, frozenset())

    def each(a: int, b: int) -> None:
        opaque = _strike_context(text, a, b) if "~~" in text[a:b] else []
        blocks = html_block_spans(text, a, b)
        for pos, end in line_spans(text, a, b):  # marks do not span lines here (struck HTML elements were read before)
            if pos in defs:  # a reference definition: hidden, but for its title (a tooltip where it is used)
                title = defs[pos]
                if title is not None:  # read as what it is: the name of a source ("Source: Return policy")
                    out.emit("Source: ", title[0], title[0])
                    out.copy(*title)
                nl = end if text[end - 1 : end] != "\n" else end - 1
                out.copy(nl, end)
            elif _INLINE_TRIGGER.search(text, pos, end):
                _inline_line(text, pos, end, out, opaque, _inside(blocks, pos, end) if blocks else False, labels)
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
            ent = m.group()
            if ent[1] != "#" and ent[1:] not in html.entities.html5:
                continue  # not a whole entity ("&notit;", "&notbe"): CommonMark shows it as written
            decoded = html.unescape(ent)
            if decoded == ent:
                continue
            out.copy(pos, m.start())
            out.emit(decoded, m.start(), m.end())
            pos = m.end()
        out.copy(pos, b)

    outside_fences(text, out, each)  # code shows entities as written
    return out.done()


# -- 0. text an HTML reader hides (comments, hidden elements): the reading of a client that renders HTML
#: elements whose content a browser does not show in the flow: ``display: none`` in every browser's UA stylesheet
#: (``head``, ``title``, ``script``, ``datalist``, ``rp`` in a ruby-capable browser, ...), content that is parsed but
#: not rendered (``template``, ``noscript`` with scripting on, ``noembed``, ``noframes``), the fallback content of
#: replaced elements (shown only when the media, frame or object fails: ``video``, ``audio``, ``canvas``, ``object``,
#: ``iframe``, ``picture``), SVG (text only where a ``<text>`` places it, anywhere) and ``bdo`` (shown reversed)
_HIDDEN_ELEMENTS = frozenset({"template", "noscript", "script", "style", "head", "title", "noembed", "noframes",
                              "datalist", "rp", "video", "audio", "canvas", "object", "iframe", "picture", "svg",
                              "bdo", "frameset", "progress", "meter", "mphantom"})
#: attributes whose element's content the guard cannot know to be shown: ``style`` and ``class`` (the guard does not
#: evaluate CSS: ``display:/**/none``, ``font-size:0``, ``color:transparent``, Tailwind's ``hidden`` and ``sr-only``,
#: ``text-decoration:line-through``), ``hidden`` (also ``hidden="until-found"``), ``popover`` (``display: none``
#: until opened); ``inert`` and ``aria-hidden`` take it from a screen reader's reader
_HIDING_ATTRS = frozenset({"style", "class", "hidden", "popover", "inert", "aria-hidden",
                           # MathML's presentation (``mathsize="0px"``, ``mathcolor="transparent"``, white on white)
                           # and HTML's old colour attributes hide as CSS does (round 52)
                           "mathsize", "mathcolor", "mathbackground", "color", "bgcolor"})
#: elements shown only when ``open``: a closed ``dialog`` shows nothing, a closed ``details`` only its ``summary``
_OPENABLE = frozenset({"dialog", "details"})
#: void elements that stand for something else than their attributes: an image's ``alt`` is shown only when it does
#: not load (a third reading; the plain one keeps it), an input's value in a box the guard cannot see
_REPLACED_VOID = frozenset({"img", "area", "input", "embed", "image"})
#: raw text: no element nests in one (the HTML parser reads to its end tag)
_RAW_HIDDEN = frozenset({"script", "style", "noscript", "title", "textarea", "xmp", "iframe", "noembed", "noframes",
                         "plaintext"})
#: what opens a region the HTML tokenizer may hide: a comment (``<!--``), a bogus comment (``<!...>``, CDATA in HTML
#: content, ``<?...>``, ``</`` and no letter), a tag, a markdown image (its alt text)
_HIDDEN_OPEN = re.compile(r"<!--|<!|<\?|</(?![A-Za-z])|</?[A-Za-z]|!\[")
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
                   "wbr", "param", "image", "keygen", "basefont", "bgsound", "frame"})
#: a comment that only names where the answer came from ("<!-- source: policy -->", "<!-- ref: kb-123 -->"): a label
#: a plain-text reader takes for the answer's metadata, never a claim (at most four words after the key)
_PROVENANCE = re.compile(r"<!--[ \t]*(?:source|sources|src|ref|refs|reference|references|cite|citation|citations|"
                         r"id|doc|doc[-_ ]?id|document|kb|chunk|chunk[-_ ]?id|passage|context|retrieved[-_ ]from|"
                         r"from|url|link|file|page|section)[ \t]*[:=#][ \t]*[^\s<>]+(?:[ \t]+[^\s<>]+){0,3}[ \t]*-->",
                         re.I)
#: a markdown image: inline (``![alt](url "title")``) or by reference (``![alt][ref]``, ``![alt][]``)
_MD_IMAGE = re.compile(r"!\[[^\[\]\n]*\](?:\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*(?:\s+(?:\"(?:[^\"\\\n]|\\.){0,300}\"|'(?:[^'\\\n]|\\.){0,300}'|\((?:[^()\\\n]|\\.){0,300}\)))?\s*\)"
                       r"|\[[^\[\]\n]*\])")
_TAG_SPACE = " \t\n\r\f"
_SUMMARY = re.compile(r"<summary(?=[\s/>])", re.I)
_SUMMARY_END = re.compile(r"</summary(?=[\s/>])", re.I)
_OPTION = re.compile(r"<option(?=[\s/>])", re.I)
_OPTION_END = re.compile(r"</?(?:option|optgroup|select)(?=[\s/>])", re.I)


class _Tag:
    """A tag as the HTML tokenizer reads it: its lower-cased name, whether it closes, its attributes (names
    lower-cased, values entity-decoded, None for a bare one) and where it ends."""

    __slots__ = ("attrs", "close", "end", "name")

    def __init__(self, name: str, close: bool, attrs: dict[str, str | None], end: int) -> None:
        self.name, self.close, self.attrs, self.end = name, close, attrs, end


def _tokenize_tag(text: str, s: int, b: int) -> _Tag | None:
    """The tag at ``text[s]`` (``<`` then a letter, or ``</`` then a letter) read as the HTML5 tokenizer reads it:
    the name runs to a space, ``/`` or ``>``; a ``/`` between attributes is a space (``<span/hidden>`` has the
    ``hidden`` attribute); a value is quoted or runs to a space or ``>``. None when ``text`` ends inside it (a browser
    drops such a tag and all after it; a stream waits for its end)."""
    k = s + 1
    close = text.startswith("/", k)
    if close:
        k += 1
    n = k
    while n < b and text[n] not in _TAG_SPACE and text[n] not in "/>":
        n += 1
    name = text[k:n].lower()
    attrs: dict[str, str | None] = {}
    k = n
    while True:
        while k < b and (text[k] in _TAG_SPACE or text[k] == "/"):
            k += 1
        if k >= b:
            return None
        if text[k] == ">":
            return _Tag(name, close, attrs, k + 1)
        n = k + 1  # a name may start with "=" (a parse error, read as part of the name)
        while n < b and text[n] not in _TAG_SPACE and text[n] not in "/>=":
            n += 1
        attr = text[k:n].lower()
        k = n
        while k < b and text[k] in _TAG_SPACE:
            k += 1
        value: str | None = None
        if k < b and text[k] == "=":
            k += 1
            while k < b and text[k] in _TAG_SPACE:
                k += 1
            if k < b and text[k] in "\"'":
                close_quote = text.find(text[k], k + 1, b)
                if close_quote < 0:
                    return None
                value, k = text[k + 1 : close_quote], close_quote + 1
            else:
                n = k
                while n < b and text[n] not in _TAG_SPACE and text[n] != ">":
                    n += 1
                value, k = text[k:n], n
            value = html.unescape(value)
        attrs.setdefault(attr, value)  # the first of a repeated attribute counts (HTML5)


def _hiding(tag: _Tag) -> bool:
    """Whether an opening tag's element is content a browser may not show: a hidden kind (see
    :data:`_HIDDEN_ELEMENTS`), an attribute the guard cannot read the effect of (see :data:`_HIDING_ATTRS`; any
    attribute of ``<font>``), a closed ``dialog`` or ``details``."""
    if tag.close:
        return False
    if tag.name in _HIDDEN_ELEMENTS or (tag.name in _OPENABLE and "open" not in tag.attrs):
        return True
    if tag.name in ("font", "basefont") and tag.attrs:
        return True
    for attr, value in tag.attrs.items():
        if attr in _HIDING_ATTRS and not (attr == "aria-hidden" and (value or "").strip().lower() == "false"):
            return True
    return False


def _escaped(text: str, at: int, a: int) -> bool:
    k = at
    while k > a and text[k - 1] == "\\":
        k -= 1
    return (at - k) % 2 == 1


def _comment_end(text: str, s: int, b: int) -> int | None:
    """Where the comment or bogus comment opened at ``text[s]`` ends, as the HTML5 tokenizer ends it (None: not
    before ``b``): ``<!-->`` and ``<!--->`` at once, a comment at ``-->`` or ``--!>``, a bogus comment (``<!...``,
    ``<?...``, ``</`` and no letter) at the next ``>``."""
    if text.startswith("<!--", s):
        if text.startswith(("<!-->", "<!--->"), s):
            return s + 5 if text.startswith("<!-->", s) else s + 6
        ends = [e + len(mark) for mark in ("-->", "--!>") if (e := text.find(mark, s + 4, b)) >= 0]
        return min(ends) if ends else None
    close = text.find(">", s + 2, b)
    return None if close < 0 else close + 1


def _element_end(text: str, tag: _Tag, b: int) -> int:
    """Where the element ``tag`` opens ends: after its matching end tag (same-name tags nested, counted; none in a
    raw-text element), -1 when it is not closed before ``b``."""
    depth, k = 1, tag.end
    same = re.compile(rf"<(/?){re.escape(tag.name)}(?=[{_TAG_SPACE}/>])", re.I)
    while True:
        n = same.search(text, k, b)
        if n is None:
            return -1
        close_end = text.find(">", n.end(), b)
        k = n.end() if close_end < 0 else close_end + 1
        if n.group(1):
            depth -= 1
            if depth == 0:
                return k
        elif tag.name not in _RAW_HIDDEN:
            depth += 1


def _shown_part(text: str, tag: _Tag, end: int) -> tuple[int, int] | None:
    """The part of a hidden element a browser shows all the same: a closed ``details``' ``summary``, a ``select``'s
    selected (or first) option."""
    if tag.name == "details":
        m = _SUMMARY.search(text, tag.end, end)
        inner = _tokenize_tag(text, m.start(), end) if m else None
        close = _SUMMARY_END.search(text, inner.end, end) if inner is not None else None
        return (inner.end, close.start()) if inner is not None and close is not None else None
    if tag.name == "select":
        chosen = None
        for m in _OPTION.finditer(text, tag.end, end):
            opt = _tokenize_tag(text, m.start(), end)
            if opt is not None and (chosen is None or "selected" in opt.attrs):
                chosen = opt
                if "selected" in opt.attrs:
                    break
        if chosen is None:
            return None
        stop = _OPTION_END.search(text, chosen.end, end)
        return chosen.end, stop.start() if stop else end
    return None


def _hidden_in(text: str, a: int, b: int, *, provenance_only: bool) -> list[tuple[int, int | None]]:
    """The hidden regions of ``text[a:b]`` (no code block in it), see :func:`hidden_regions`."""
    out: list[tuple[int, int | None]] = []
    ticks: list[tuple[int, int]] = []
    if "`" in text[a:b]:  # a code span shows its markup as written
        for ca, cb in _chunks(text, a, b):
            ticks += _backtick_pairs([(m.start(), m.end()) for m in _TICKS.finditer(text, ca, cb)])
        ticks = _merge(ticks)
    pos = a
    while True:
        m = _HIDDEN_OPEN.search(text, pos, b)
        if m is None:
            break
        s = m.start()
        if _escaped(text, s, a) or (ticks and _inside(ticks, s, s + 1)):
            pos = s + 1
            continue
        opener = m.group()
        if opener == "![":  # an image: its alt text is shown only when it does not load
            image = _MD_IMAGE.match(text, s, b)
            if image is None or provenance_only:
                pos = s + 2
                continue
            out.append((s, image.end()))
            pos = image.end()
            continue
        if opener in ("<!--", "<!", "<?", "</"):
            end = _comment_end(text, s, b)
            if not provenance_only or (opener == "<!--" and end is not None and _PROVENANCE.fullmatch(text, s, end)):
                out.append((s, end))
            if end is None:
                break
            pos = end
            continue
        tag = _tokenize_tag(text, s, b)
        if tag is None:  # not ended: a browser drops the tag and what follows it (a stream waits for its end)
            if not provenance_only:
                out.append((s, None))
            break
        if not provenance_only and tag.name not in _HTML_ELEMENTS:
            # an element of no HTML name ("can<not> be returned", "<never>", "</not>"): a browser shows its content
            # and not its tag, where a plain-text client shows the tag as written (render's reading)
            out.append((s, tag.end))
            pos = tag.end
            continue
        if provenance_only or tag.close or (not _hiding(tag) and tag.name not in ("select", *_REPLACED_VOID)):
            if not provenance_only and not tag.close:
                out += _attribute_text(text, s, tag.end)
            pos = tag.end
            continue
        if tag.name in _VOID:
            out.append((s, tag.end))
            pos = tag.end
            continue
        end = _element_end(text, tag, b)
        shown = _shown_part(text, tag, end) if end >= 0 else None
        if shown is not None:
            out += [(s, shown[0]), (shown[1], end)]
        else:
            out.append((s, end if end >= 0 else None))
        if end < 0:
            break
        pos = end
    if not provenance_only and ("](" in text[a:b] or "\\" in text[a:b] or "~" in text[a:b] or "[" in text[a:b]):
        out += _flow_hidden(text, a, b, ticks)
    return out


#: a markdown link's title (``[can](https://a.com "not")``): a tooltip, not shown in the flow
_MD_LINK_TITLE = re.compile(r"\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*\s+(\"(?:[^\"\\\n]|\\.){0,300}\"|'(?:[^'\\\n]|\\.){0,300}'|\((?:[^()\\\n]|\\.){0,300}\))\s*\)")
#: LaTeX commands whose argument a math renderer (KaTeX, MathJax) does not show as text: space the size of it
#: (``\phantom{\text{not}}``), a colour or a style the guard cannot know the effect of (``\color{transparent}{not}``,
#: KaTeX's ``\htmlStyle{display:none}{not}``, MathJax's ``\style``/``\class``, as it treats ``style``), or struck
#: (``\sout{not}``, ``\cancel{not}``); the argument runs to its matching brace
_MATH_HIDER = re.compile(r"\\(?:[hv]?phantom|sout|cancel|bcancel|xcancel|"
                         r"(?:text|math)?color\s*(?:\[[^\[\]\n]{0,20}\]\s*)?\{[^{}]{0,50}\}|"
                         r"colorbox\s*(?:\[[^\[\]\n]{0,20}\]\s*)?\{[^{}]{0,50}\}|"
                         r"fcolorbox\s*\{[^{}]{0,50}\}\s*\{[^{}]{0,50}\}|enclose\s*\{[^{}]{0,100}\}(?:\s*\[[^\[\]]{0,100}\])?|"
                         r"bbox\s*\[[^\[\]]{0,100}\]|"
                         r"(?:html(?:Style|Class|Id|Data)|style|class|cssId)\s*\{[^{}]{0,200}\})\s*(?=[{$]|\S)")
#: how far a hidden argument may run (linear: one scan per command, bounded)
_MATH_ARGUMENT = 2000
#: a footnote reference (``can[^not]``, GFM; ``can^[not]``, an inline note, Pandoc and markdown-it): a renderer shows
#: a number in its place (and the note at the page's end), not the label
_FOOTNOTE_REF = re.compile(r"\[\^[^\[\]\s]{1,100}\](?!:)|\^\[[^\[\]\n]{0,300}\]")


def _math_hidden(text: str, a: int, b: int) -> list[tuple[int, int | None]]:
    """What :data:`_MATH_HIDER` commands in ``text[a:b]`` keep from the reader: the command and its braced argument
    (to the matching brace); a colour with no braced argument colours the rest of its group (to the closing brace or
    ``$`` of the math)."""
    out: list[tuple[int, int | None]] = []
    pos = a
    for m in _MATH_HIDER.finditer(text, a, b):
        if m.start() < pos:
            continue
        k, depth, limit = m.end(), 0, min(b, m.end() + _MATH_ARGUMENT)
        braced = k < limit and text[k] == "{"
        while k < limit:
            ch = text[k]
            if ch == "{":
                depth += 1
            elif ch == "}":
                if depth == 0 and not braced:
                    break  # the end of the group a bare colour applies to
                depth -= 1
                if depth == 0 and braced:
                    k += 1
                    break
            elif ch == "$" and depth == 0 and not braced:
                break
            k += 1
        out.append((m.start(), k))
        pos = k
    return out


def _attribute_text(text: str, s: int, end: int) -> list[tuple[int, int | None]]:
    """The attribute values of the tag ``text[s:end]`` that :func:`render` reads as text ("(not)"): a browser shows a
    ``title`` as a tooltip at most, an ``aria-label`` to a screen reader only, prose in other attributes never."""
    out: list[tuple[int, int | None]] = []
    k = s + 1
    while k < end and text[k] not in _TAG_SPACE and text[k] not in "/>":
        k += 1
    for am in _ATTR.finditer(text, k, end - 1):
        attr = am.group(1).lower()
        group = next((g for g in (2, 3, 4) if am.group(g) is not None), None)
        if group is None:
            continue
        if _read_attribute(attr, am.group(group)) and attr != "start":  # (the list's number is shown)
            out.append((am.start(group), am.end(group)))
    return out


#: text GitHub's renderer (cmark-gfm) and remark-gfm strike where markdown-it does not: one tilde on each side
#: (``can~not~``), or two across a line break inside a paragraph (``can~~not\nbe~~``); flanking as GFM wants it
_GFM_STRIKE = re.compile(r"(?<![~\\])~(?=[^\s~])[^~\n]{0,300}?(?<=[^\s~])~(?!~)"
                         r"|(?<![~\\])~~(?=[^\s~])[^~\n]{0,300}\n[^~\n]{0,300}?(?<=[^\s~])~~(?!~)")


def _flow_hidden(text: str, a: int, b: int, ticks: list[tuple[int, int]]) -> list[tuple[int, int | None]]:
    """Markdown link titles, LaTeX phantoms and the strikes only GFM renderers make (:data:`_GFM_STRIKE`: the plain
    reading keeps them, read both ways) in ``text[a:b]`` outside code spans and escapes."""
    out: list[tuple[int, int | None]] = []
    for pattern, group in ((_MD_LINK_TITLE, 1), (_FOOTNOTE_REF, 0), (_GFM_STRIKE, 0)):
        for m in pattern.finditer(text, a, b):
            if _escaped(text, m.start(), a) or (ticks and _inside(ticks, m.start(), m.start() + 1)):
                continue
            out.append((m.start(group) + 1, m.end(group) - 1) if group else (m.start(), m.end()))
    if "\\" in text[a:b]:
        out += [(s, e) for s, e in _math_hidden(text, a, b)
                if not (_escaped(text, s, a) or (ticks and _inside(ticks, s, s + 1)))]
    return out


def _merged(regions: list[tuple[int, int | None]]) -> list[tuple[int, int | None]]:
    """Regions in order, overlapping ones joined (an end None runs to the end of the text)."""
    out: list[tuple[int, int | None]] = []
    for s, e in sorted(regions, key=lambda r: r[0]):
        if out and (out[-1][1] is None or s < out[-1][1]):
            last_s, last_e = out[-1]
            out[-1] = (last_s, None if last_e is None or e is None else max(last_e, e))
            continue
        out.append((s, e))
    return out


def hidden_regions(text: str, *, provenance_only: bool = False) -> list[tuple[int, int | None]]:
    """What a client that renders HTML may not show its reader, as (start, end) offsets in order, read as the HTML5
    tokenizer reads it: comments and bogus comments (``<!-- ... -->``, ``<!...>``, ``<![CDATA[...]]>``, ``<?...>``,
    ``</`` and no letter, to the next ``>``); elements whose content is not shown in the flow (see
    :data:`_HIDDEN_ELEMENTS`: ``<head>``, ``<title>``, ``<script>``, ``<template>``, ``<datalist>``, ``<rp>``, the
    fallback content of ``<video>``, ``<object>``, ``<iframe>``...; a closed ``<dialog>``; a closed ``<details>``
    but for its summary; a ``<select>`` but for its selected or first option); elements with an attribute whose
    effect the guard cannot know (``style``, ``class``, ``hidden`` in any spelling, ``popover``, ``inert``,
    ``aria-hidden``; see :data:`_HIDING_ATTRS`): the guard does not evaluate CSS; images (``<img>``, ``![alt](url)``:
    the alt text is not shown once the image loads); not in code (fenced, indented or a code span) and not escaped.
    End None: opened and not closed at the end of ``text`` (hidden to the end; a stream waits for its end).
    ``provenance_only``: only comments that name a source (``<!-- source: policy -->``), which no reader takes for a
    claim."""
    if "<" not in text and "![" not in text and "](" not in text and "\\" not in text and "~" not in text and \
            "[" not in text:
        return []
    out: list[tuple[int, int | None]] = []
    pos = 0
    for start, end in code_blocks(text):
        out += _hidden_in(text, pos, start, provenance_only=provenance_only)
        pos = end
    out += _hidden_in(text, pos, len(text), provenance_only=provenance_only)
    return out if provenance_only else _merged(out)


def _removed(text: str, regions: list[tuple[int, int | None]]) -> tuple[str, PassMap | None]:
    if not regions:
        return text, None
    out = PassOutput(text)
    pos = 0
    for s, e in regions:
        out.copy(pos, s)
        pos = len(text) if e is None else e
    out.copy(pos, len(text))
    return out.done()


def hidden_html(text: str) -> tuple[str, PassMap | None]:
    """The text with what an HTML reader hides removed (see :func:`hidden_regions`): the reading of a client that
    renders HTML (a browser, a chat UI, GitHub with raw HTML)."""
    return _removed(text, hidden_regions(text))


def provenance_comments(text: str) -> tuple[str, PassMap | None]:
    """The text with the comments that only name a source removed (``<!-- source: policy -->``): metadata to every
    reader, never a claim."""
    if "<!--" not in text:
        return text, None
    return _removed(text, hidden_regions(text, provenance_only=True))


#: a style sheet in the answer: ``<style>`` (its rules may hide any element, or add text with ``content:``) or a
#: linked one
#: a style sheet, or an element laid out right to left: "<math dir=rtl><mn>1</mn><mn>4</mn></math>" shows 41 in a
#: browser where the text reads 14 (round 54); the guard reads no layout
_STYLESHEET = re.compile(r"<style(?=[\s/>])|<link\b[^<>]*\bstylesheet\b|<[A-Za-z][^<>]*\sdir\s*=\s*[\"']?\s*rtl\b", re.I)


def stylesheet(text: str) -> str | None:
    """Where ``text`` holds a style sheet outside code, as a phrase ("a <style> element at offset 40"), or None. Its
    rules may hide any element of the answer ("b{display:none}" and "<b> not</b>") or add text (``content:``):
    what a browser shows then depends on CSS the guard does not evaluate, so the answer is not read (the checks
    refuse it, as they refuse terminal control sequences)."""
    if "<" not in text:
        return None
    code: list[tuple[int, int]] | None = None  # the code of the text, found once (per match, an answer with many
    # "`<style>`" code spans cost its length times their number: round 37 held the event loop for seconds)
    for m in _STYLESHEET.finditer(text):
        if code is None:
            code = _merge(code_blocks(text) + [(s, e) for s, _, _, e in _code_spans(text, 0, len(text))])
        k = bisect.bisect_right(code, (m.start(), 1 << 62)) - 1
        if (k >= 0 and code[k][1] > m.start()) or _escaped(text, m.start(), 0):
            continue
        what = "a <style> element" if m.group().lower().startswith("<style") else "a linked style sheet" if \
            m.group().lower().startswith("<link") else "an element laid out right to left (dir=rtl)"
        return f"{what} at offset {m.start()}"
    return None



#: the info strings of a fenced block that holds prose, not code ("```text", "```markdown", none)
_PROSE_INFO = frozenset({"", "text", "txt", "plain", "plaintext", "markdown", "md", "prose", "quote", "note"})
#: what makes a line code rather than prose
_CODE_LINE = re.compile(r"[{};]\s*$|^\s*(?:def|class|import|from|return|const|let|var|function|public|private|#include|"
                        r"SELECT|select|if|for|while)\b|==|=>|->|\(\)|\w\s*=\s*\S|^\s*[#/]{2}|^\s*\$ ")


def prose_fences(text: str) -> tuple[str, PassMap | None]:
    """A fenced block that holds prose (no info string or a prose one, and every line a sentence or a list item
    rather than code) read as the lines it shows: the fence lines dropped, so that each sentence is judged alone. Read
    as one block, "Items can be returned within 30 days.\\nGift cards can be returned within 30 days." in a plain fence
    was one hypothesis whose copied first line carried the second (round 25 B6)."""
    if "```" not in text and "~~~" not in text:
        return text, None
    out = PassOutput(text)
    pos = 0
    for s, e in _fences(text):
        block = text[s:e]
        first_nl = block.find("\n")
        if first_nl < 0:
            continue
        info = block[:first_nl].strip().lstrip("`~").strip().lower()
        body_end = e
        closing = block.rstrip("\n").rfind("\n")
        last = block[closing + 1:].strip() if closing > first_nl else ""
        if last and set(last) <= {"`", "~"}:
            body_end = s + closing + 1
        body = text[s + first_nl + 1: body_end]
        lines = [ln for ln in body.split("\n") if ln.strip()]
        if info not in _PROSE_INFO or not lines or any(
                _CODE_LINE.search(ln) or len(ln.split()) < 3 or not re.search(r"[.!?:)]\s*$|^\s*(?:[-*+]|\d+[.)])\s", ln)
                for ln in lines):
            continue
        out.copy(pos, s)
        out.emit("\n", s, s + first_nl + 1)
        out.copy(s + first_nl + 1, body_end)
        out.emit("\n", body_end, e) if body_end < e else None
        pos = e
    if pos == 0:
        return text, None
    out.copy(pos, len(text))
    return out.done()


#: the end of a link whose text opened before the text read (``"...within 30 days.](https://shop.example)"``: a stream
#: judges the sentences of a link's text one at a time)
_LINK_TAIL = re.compile(r"\]\((?:(?:https?://|mailto:|www\.|[/#.?])(?:[^()\s]|\([^()\s]*\))*)?(?:\s+\"[^\"\n]*\")?\)")


def dangling_link_tails(text: str) -> tuple[str, PassMap | None]:
    """A link's ``](destination)`` with no ``[`` before it in the text is markup, not text: a stream's sentence that
    ends a link opened in an earlier sentence reads as its words, as the whole answer rendered does. Only a
    destination that is an address (a URL, a path, an anchor) is dropped: "](not-true:they-can-be-returned)" shows as
    written where no link opened, and is read."""
    if "](" not in text:
        return text, None
    out = PassOutput(text)
    pos = depth = 0
    scan = 0
    for m in _LINK_TAIL.finditer(text):
        depth += text.count("[", scan, m.start()) - text.count("]", scan, m.start())
        scan = m.end()
        if depth > 0:
            depth -= 1  # the "]" of a link opened in this text: rendered by the inline marks
            continue
        out.copy(pos, m.start())
        pos, depth = m.end(), 0
    out.copy(pos, len(text))
    return out.done()

