"""Markdown blocks as read: a table as statements, one per row and column (see :func:`_row`); heading, block-quote
and rule marks dropped; fenced code kept as it is."""

from __future__ import annotations

import re
from collections.abc import Callable

from guardrail.render.markup import line_spans, outside_fences
from guardrail.render.offsets import PassMap, PassOutput
from guardrail.text import names_only

_DELIM_CELL = re.compile(r"\s*:?-+:?\s*")
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]+|$)")
_CLOSING_HASHES = re.compile(r"[ \t]+#+[ \t]*$")
_QUOTE = re.compile(r"(?:[ \t]{0,3}>[ \t]?)+")
#: the first line of a GitHub alert ("> [!NOTE]", "> [!WARNING]"): a title the renderer draws, which claims nothing
_ALERT = re.compile(r"(?i)[ \t]*\[!(?:note|tip|important|warning|caution)\][ \t]*\r?")
#: what holds a table's line in containers: block-quote marks and list items' markers in any order and nesting, with
#: their indentation (a table may sit in a quote or a list item: "> | Item | Window |", "- > | Item | Window |",
#: "- | Item | Window |" with its rows indented under it)
_CONTAINER = re.compile(r"(?:[ \t]*(?:>[ \t]?|(?:[-*+]|\d{1,9}[.)])[ \t]+(?=[ \t]*[>|])))*[ \t]*")


def _inner(text: str, s: int, e: int) -> int:
    """Where a line's content starts inside its containers (block quotes, a list item's marker)."""
    m = _CONTAINER.match(text, s, e)
    return m.end() if m else s


def _table_line(text: str, s: int, e: int) -> bool:
    return "|" in text[s:e] and bool(text[_inner(text, s, e) : e].strip())
#: an ordered list item's marker (CommonMark: up to nine digits, then "." or ")" and a space)
_ORDERED = re.compile(r"[ \t]{0,3}\d{1,9}[.)][ \t]+")
#: a numeric citation marker: [1], [1, 2], [1-3]; not a link's text or a reference definition
_CITATION = re.compile(r"[ \t]?(?<![^\W_])(?<!\])(?:\[\d{1,3}(?:[ \t]*[,\u2013-][ \t]*\d{1,3})*\])+(?![(:\[])"
                       # a footnote reference ("delivery.[^1]", "[^note]"), a definition's marker at a line's start
                       # ("[^1]: Return policy": its text stays), superscript digits after a word or a mark ("delivery.¹")
                       r"|(?<![^\n])[ \t]{0,3}\[\^[^\]\s]{1,24}\]:[ \t]*|(?:\[\^[^\]\s]{1,24}\])+(?![(:])"
                       # (not a unit's exponent: "5 m²", "cm³", "500 metres²": see citation_marks)
                       r"|(?:(?<=[A-Za-z]{3})|(?<=[.,;:!?)\]]))[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]+(?![\w])"
                       # the other markers RAG answers carry: "(1)", "^[1]" (an inline footnote), "[doc1]" / "[source 2]"
                       # (Azure "on your data" and peers), "[1](#ref1)" (a link to the reference list), "<sup>1</sup>",
                       # and the file-search marks of OpenAI's assistants ("【4:0†policy.md】")
                       r"|(?:[ \t]?(?<![^\W_])(?:\(\d{1,3}(?:[ \t]*[,\u2013-][ \t]*\d{1,3})*\)|\^\[\d{1,3}\]"
                       r"|\[(?:doc|docs|source|src|ref|cite|citation)[ \t_-]?\d{1,3}\]|\[\d{1,3}\]\(#[^()\s]{0,60}\)"
                       r"|<sup>[ \t]*\[?\d{1,3}\]?[ \t]*</sup>|\u3010[^\u3010\u3011\n]{0,40}\u2020[^\u3010\u3011\n]{0,80}\u3011"
                       r"|\u3010\d{1,3}(?::\d{1,3})?\u3011))+(?![(:])", re.I)
#: what follows a bracketed number that is part of its clause, not a citation: a lower-case word, a digit, a unit or
#: currency sign ("within [90] days", "[30] %"); a citation stands at a clause's end, before a mark or another marker
_IN_CLAUSE = re.compile(r"[ \t]*[a-z0-9%$\u20ac\u00a3]")
#: a word after which a bracketed number is the number the clause states ("within (90).", "costs [25]."), not a
#: citation (those follow a noun or a mark: "... of delivery (1).")
_TAKES_NUMBER = re.compile(r"(?i)\b(?:within|for|of|after|before|in|at|by|to|about|around|over|under|than|is|are|was"
                           r"|were|be|costs?|pay|pays|takes?|lasts?|approximately|nearly|only|just|up|least|most|every"
                           r"|per|from|until|till|and|or)[ \t]*$|[$\u20ac\u00a3#+\-][ \t]*$")
#: words after which superscript digits are an exponent, not a footnote ("500 metres²", "10 inches²")
_UNIT_WORDS = frozenset("metre metres meter meters feet foot inch inches yard yards mile miles kilometre kilometres "
                        "kilometer kilometers centimetre centimetres centimeter centimeters millimetre millimetres "
                        "millimeter millimeters seconds second units unit km cm mm sq square cubic".split())
#: a line that starts an ordered list item
_ORDERED_LINE = re.compile(r"(?m)^[ \t]{0,3}\d{1,9}[.)][ \t]")
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


#: a cell that says its row has none of what the column names
_NONE = frozenset({"none", "nil", "nothing"})


def _row(out: PassOutput, text: str, row: tuple[int, int], headers: list[str], budget: list[int],
         used: set[int], cells: list[tuple[int, int]] | None = None) -> None:
    """Emit one body row as statements, one per cell after the first (the row's subject):

    - a yes / no cell (``yes``, ``no``, ``✓``, ``✗``, ...): "{subject}: {header}." / "{subject}: not {header}.";
    - a "none" cell: "{subject}: no {header}.";
    - a cell of two or more words, which says what it is ("30 days of delivery"): "{subject}: {cell}.";
    - an empty cell ("", "-", "n/a"): nothing;
    - a number or a single word, which needs its header: "{subject}: {header}: {cell}.".

    Measured with the shipped model: header words the context does not use lower a faithful row's score (0.76 for
    "Items: 30 days of delivery." vs 0.36 with "return window:" before it) while wrong values score low either way
    (at most 0.02), so a header is added where the cell means nothing without it. Added words point at the row.
    ``used`` collects the columns whose header was read (the others are read after the rows: a reader sees them).
    ``cells``: the row's cells (an HTML table's, its spans expanded), else those of the markdown row ``row``."""
    a, b = row
    if cells is None:
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
            used.add(i)
        elif header and value.lower() in _NO:
            glue("not " + header)
            used.add(i)
        elif header and value.lower() in _NONE:  # "| Gift cards | none |" under "Return window": no return window
            glue("no " + header)
            used.add(i)
        elif header and (subject is None or len(value.split()) < 2 or not re.search(r"[^\W\d_]", value)):
            glue(header + ": ")
            used.add(i)
            cell(c)
        else:
            cell(c)
        glue(". ")


def read_table(out: PassOutput, text: str, head: tuple[int, int], headers_spans: list[tuple[int, int]],
               rows: list[tuple[tuple[int, int], list[tuple[int, int]] | None]], budget: list[int],
               after_row: Callable[[tuple[int, int]], None]) -> None:
    """Read a table (a markdown one, or an HTML one as a grid: :mod:`guardrail.render.tables`) as statements: the
    header cells no statement reads first, then each row (see :func:`_row`), or each cell with its header where the
    headers are predicates (see :func:`_category_columns`). ``head``: the header line (what added words point at);
    ``rows``: each row's span and its cells (None: the markdown row's); ``after_row``: called after each row."""
    headers = [text[hs:he] for hs, he in headers_spans]  # rendered with the rest later
    if _category_columns(text, headers, rows):
        for row, cells in rows:
            for k, (cs, ce) in enumerate(cells if cells is not None else _cells(text, *row)):
                if k < len(headers) and text[cs:ce].strip().lower() not in _EMPTY:
                    out.copy(cs, ce)
                    out.emit(": " + _predicate(headers[k]) + ". ", row[0], row[1])
            after_row(row)
        return
    # header cells no statement reads (the first column's, a header over cells that say what they are, a table
    # without rows): every reader shows them, so they are read once, before the rows
    used: set[int] = set()
    dry = [budget[0]]
    for row, cells in rows:
        _row(PassOutput(text), text, row, headers, dry, used, cells)
    rest = list(dict.fromkeys(hs for k, hs in enumerate(headers_spans) if k not in used and hs[0] < hs[1]
                              and text[hs[0] : hs[1]].strip().lower() not in _EMPTY))  # a spanning header once
    if all(names_only(text[hs:he]) for hs, he in rest):
        # "Item", "Window", "Return window": names of columns, which state nothing. As the first row's heading they
        # made it a claim no passage words ("Item, Window: Items: returnable.": blocked at entailment 0.57,
        # contradiction 0.68; round 22 F4). A header that could state something ("Lifetime warranty", "90-day
        # window", "Refunds never issued") is still read
        rest = []
    for n, (hs, he) in enumerate(rest):
        if n:
            out.emit(", ", *head)
        out.copy(hs, he)
    if rest:  # before the first statement, as its heading (alone, a header line reads as a claim)
        out.emit(": " if rows else ".\n", *head)
    for row, cells in rows:
        _row(out, text, row, headers, budget, used, cells)
        after_row(row)


#: words that make a header a predicate ("Can be returned", "Not returnable", "Eligible"): a column of a table whose
#: headers all are says what its cells are (the cells are the members it applies to)
_PREDICATE_WORDS = frozenset("can cannot can't could may must will won't is are isn't aren't not no non only allowed "
                             "accepted excluded included eligible ineligible refundable returnable exchangeable "
                             "available unavailable".split())
_MARK_YES = "✅✓✔☑"
_MARK_NO = "❌✗✘☒✖❎"


def _predicate(header: str) -> str:
    """A predicate header as it reads after its cell ("✅ Returnable" -> "returnable", "❌ Returnable" -> "not
    returnable")."""
    h = header.strip()
    negated = False
    while h and (h[0] in _MARK_YES or h[0] in _MARK_NO or h[0] in "\ufe0f "):
        negated = negated or h[0] in _MARK_NO
        h = h[1:]
    words = _header_words(h)
    return "not " + words if negated and not re.match(r"(?i)(not|non|no)\b", h) else words


def _is_predicate(header: str) -> bool:
    h = header.strip()
    if not h:
        return False
    if h[0] in _MARK_YES or h[0] in _MARK_NO:
        return True
    ws = re.findall(r"[^\W\d_]+(?:'[a-z]+)?", h.lower())
    return any(w in _PREDICATE_WORDS or w.endswith(("able", "ible")) for w in ws)


def _category_columns(text: str, headers: list[str],
                      rows: list[tuple[tuple[int, int], list[tuple[int, int]] | None]]) -> bool:
    """A table whose headers are all predicates ("| Can be returned | Cannot be returned |"), every one of them
    (the first column's too: a table whose first header names a thing, "Item", is read by rows), over cells that are
    bare noun phrases (at most four words, no digit, no yes / no, no predicate word): each cell is a member of its
    column ("Gift cards: can be returned.")."""
    if len(headers) < 2 or not rows or not all(_is_predicate(h) for h in headers):
        return False
    seen = False
    for row, cells in rows:
        for cs, ce in cells if cells is not None else _cells(text, *row):
            cell = text[cs:ce].strip()
            if cell.lower() in _EMPTY:
                continue
            if (len(cell.split()) > 4 or re.search(r"\d", cell) or cell.lower().strip(".") in _YES | _NO
                    or _is_predicate(cell)):
                return False
            seen = True
    return seen


def table_regions(text: str) -> list[tuple[int, int | None]]:
    """The tables of ``text`` (a line with ``|`` over a delimiter row, and the rows with ``|`` after it) as (start,
    end) offsets, read whole as :func:`markdown_blocks` reads them; end None for one that may still go on at the end
    of the text (its last line not ended, or a header line whose delimiter row has not come yet): a stream holds it,
    since a table's lines alone read as claims they are not ("| Item | Return window |")."""
    if "|" not in text:
        return []
    lines: list[tuple[int, int, bool]] = []  # (start, end, ended by a newline)
    pos = 0
    while pos < len(text):
        nl = text.find("\n", pos)
        lines.append((pos, len(text) if nl == -1 else nl, nl != -1))
        pos = len(text) if nl == -1 else nl + 1
    out: list[tuple[int, int | None]] = []
    i = 0
    while i < len(lines):
        s, e, ended = lines[i]
        if "|" not in text[s:e]:
            i += 1
            continue
        if i + 1 >= len(lines) or (not lines[i + 1][2] and not text[lines[i + 1][0] : lines[i + 1][1]].strip("|-: \t>")):
            out.append((s, None))  # a header line whose delimiter row may still come
            break
        ns, ne, _ = lines[i + 1]
        if not _is_delimiter_row(text[_inner(text, ns, ne) : ne]):
            i += 1
            continue
        j = i + 2
        while j < len(lines) and _table_line(text, lines[j][0], lines[j][1]):
            j += 1
        if j >= len(lines) or (j == len(lines) - 1 and not lines[j][2] and not text[lines[j][0] : lines[j][1]].strip()):
            out.append((s, None))  # the table runs to the end of the text: more rows may come
            break
        out.append((s, lines[j - 1][1]))
        i = j
    return out


def markdown_blocks(text: str) -> tuple[str, PassMap | None]:
    if not any(ch in text for ch in "|#>-*_="):
        return text, None
    out = PassOutput(text)
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
            inner = _inner(text, s, e)
            nxt_inner = _inner(text, *nxt) if nxt is not None else 0
            if "|" in line and nxt is not None and _is_delimiter_row(text[nxt_inner : nxt[1]]):
                headers_spans = _cells(text, inner, e)
                if len(headers_spans) == len(_cells(text, nxt_inner, nxt[1])):
                    rows: list[tuple[tuple[int, int], list[tuple[int, int]] | None]] = []
                    j = i + 2
                    while j < len(lines) and _table_line(text, *lines[j]):
                        rows.append(((_inner(text, *lines[j]), lines[j][1]), None))
                        j += 1
                    read_table(out, text, (s, e), headers_spans, rows, budget,
                               lambda row: out.copy(row[1], min(row[1] + 1, b)))  # the row's newline
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
                if _ALERT.fullmatch(text, start, e):  # "> [!NOTE]": a GitHub alert's kind, shown as its title
                    i += 1
                    continue
            h = _HEADING.match(text, start, e)
            if h:
                start = h.end()
                c = _CLOSING_HASHES.search(text, start, e)
                out.copy(start, c.start() if c else e)
                out.copy(e, min(e + 1, b))
            else:
                out.copy(start, min(e + 1, b))
            i += 1

    outside_fences(text, out, each)
    return out.done()


#: a numbered step label that starts a line ("Step 1:", "**Option 2 -**" once the bold is read, "- Phase 3)"): the
#: number is the list's, as in "1. ", not one the step states
_STEP = re.compile(r"[ \t]{0,3}(?:[-*+][ \t]+)?(?:step|option|part|phase|stage|tip|method)[ \t]+\d{1,2}[ \t]*"
                   r"[:.)\u2013\u2014-][ \t]*", re.I)
_STEP_LINE = re.compile(r"(?im)^[ \t]{0,3}(?:[-*+][ \t]+)?(?:step|option|part|phase|stage|tip|method)[ \t]+\d{1,2}[ \t]*"
                        r"[:.)\u2013\u2014-]")


def list_numbers(text: str) -> tuple[str, PassMap | None]:
    """Ordered list markers and numbered step labels dropped ("1. Items can be returned ...", "Step 1: Return it
    ...": the item's number is the list's, not a number the claim states), where they number a list: up to 20, or the
    number after the last one dropped. After the inline pass, so that a list item's indented paragraphs are still read as the list's."""
    if not _ORDERED_LINE.search(text) and not _STEP_LINE.search(text):
        return text, None
    out = PassOutput(text)

    last = [0]  # the number of the last marker dropped

    def each(a: int, b: int) -> None:
        pos = a
        for ls, le in line_spans(text, a, b):
            o = _ORDERED.match(text, ls, le) or _STEP.match(text, ls, le)
            if o:
                n = int(re.sub(r"\D", "", o.group(0)))
                if n > LIST_NUMBER_MAX and n != last[0] + 1:
                    continue  # "90) Days for returns" alone: a number the item states, shown by every reader
                last[0] = n
                out.copy(pos, ls)
                pos = o.end()
        out.copy(pos, b)

    outside_fences(text, out, each)
    return out.done()


#: the highest number that starts a list and is dropped as the list's; above it a marker is dropped only where it
#: continues the list before it (21 after 20)
LIST_NUMBER_MAX = 20


_SUPERSCRIPT = re.compile(r"[\u00b9\u00b2\u00b3\u2070\u2074-\u2079]")


def citation_marks(text: str) -> tuple[str, PassMap | None]:
    """Numeric citation markers ("... within 5 business days [1].", "[2][3]", "[1, 2]", "[1-3]", "(1)", "^[1]",
    "[doc1]", "[1](#ref1)", "<sup>1</sup>", "【4:0†policy.md】") dropped: a reader takes them for references to sources,
    not for numbers the answer states. Only where a citation stands (not before a word of its clause: "within [90]
    days", "option (1) or (2)" state numbers); not a link to a page ("[1](url)") or a reference definition
    ("[1]: url"), and not in code."""
    if not any(c in text for c in "[(<\u3010") and not _SUPERSCRIPT.search(text):
        return text, None
    out = PassOutput(text)

    def each(a: int, b: int) -> None:
        pos = a
        for m in _CITATION.finditer(text, a, b):
            if _SUPERSCRIPT.match(m.group()):
                before = re.findall(r"[A-Za-z]+", text[max(a, m.start() - 24) : m.start()])
                if before and before[-1].lower() in _UNIT_WORDS:
                    continue  # an exponent
            elif "]:" not in m.group() and (_IN_CLAUSE.match(text, m.end(), b) or _TAKES_NUMBER.search(
                    text, max(a, m.start() - 24), m.start())):
                # "within [90] days", "within (90).": a word of the clause follows, or the word before it takes a
                # number: the brackets hold a number the answer states
                continue
            out.copy(pos, m.start())
            if "]:" in m.group():  # a footnote's definition: what follows names a source, or says what it says
                out.emit("Source: ", m.start(), m.end())
            pos = m.end()
        out.copy(pos, b)

    outside_fences(text, out, each)
    return out.done()


#: a checklist line: a noun phrase (up to four words, no digit) with a yes / no mark after it ("- Gift cards ❌",
#: "- Items: ✅") or before it ("- ✅ Items"), in a list item or alone on its line
_MARK = f"[{_MARK_YES}{_MARK_NO}]\ufe0f?"
_PHRASE = r"(?:[*_]{1,3})?[^\W\d_][^\W\d]*(?:[ \t]+[^\W\d]+){0,3}(?:[*_]{1,3})?"
_CHECKLIST = re.compile(
    rf"(?m)^(?P<lead>[ \t]*(?:(?:[-*+\u2022]|\d{{1,9}}[.)])[ \t]+)?)"
    rf"(?:(?P<pre>{_MARK})[ \t]*(?P<body>{_PHRASE})"
    rf"|(?P<phrase>{_PHRASE})[ \t]*[:\u2013\u2014-]?[ \t]*(?P<post>{_MARK}))"
    r"[ \t]*\.?[ \t]*\r?$")


def checklist_marks(text: str) -> tuple[str, PassMap | None]:
    """A checklist's marks read as the label replies they stand for: "- Gift cards ❌" -> "- Gift cards: no", "- ✅
    Items" and "- Items: ✅" -> "- Items: yes" (the checks read "X: yes" / "X: no" as the question's statement of X,
    or its negation). Alone, a mark after a noun phrase is dropped by the model and the phrase is judged bare."""
    if not any(ch in text for ch in _MARK_YES + _MARK_NO):
        return text, None
    out = PassOutput(text)

    def each(a: int, b: int) -> None:
        pos = a
        for m in _CHECKLIST.finditer(text, a, b):
            mark = "pre" if m.group("pre") else "post"
            phrase = "body" if mark == "pre" else "phrase"
            out.copy(pos, m.end("lead"))
            out.copy(m.start(phrase), m.end(phrase))
            # the word stands for the mark (a mark before the phrase: for the item, so that the map stays in order)
            word = ": no" if m.group(mark)[0] in _MARK_NO else ": yes"
            out.emit(word, m.start(mark), max(m.end(mark), m.end(phrase)))
            pos = max(m.end(phrase), m.end(mark))
        out.copy(pos, b)

    outside_fences(text, out, each)
    return out.done()


#: a definition list's term and the line that defines it ("Gift cards\n: Cannot be returned."; PHP Markdown Extra,
#: Pandoc, many chat clients): a term alone reads as a bare noun phrase, judged as a claim
_DEFINITION = re.compile(r"(?m)^(?P<term>[ \t]{0,3}[^\s:|#>\-*+][^\n:]{0,80}?)[ \t]*\n(?:[ \t]*\n)?(?P<mark>[ \t]{0,3}:[ \t]+)(?=\S)")


def definition_lists(text: str) -> tuple[str, PassMap | None]:
    """A definition read as its term's label reply: "Gift cards\\n: Cannot be returned." -> "Gift cards: Cannot be
    returned." (as "Label: predicate" is read)."""
    if "\n:" not in text and "\n :" not in text and "\n  :" not in text and "\n   :" not in text:
        return text, None
    out = PassOutput(text)

    def each(a: int, b: int) -> None:
        pos = a
        for m in _DEFINITION.finditer(text, a, b):
            out.copy(pos, m.end("term"))
            out.emit(": ", m.end("term"), m.end("mark"))
            pos = m.end("mark")
        out.copy(pos, b)

    outside_fences(text, out, each)
    return out.done()


#: a task list item's box ("- [x] ", "- [ ] "): GitHub and most chat clients show it as a checkbox, not as text
_TASK_BOX = re.compile(r"(?m)^(?P<lead>[ \t]*(?:[-*+\u2022]|\d{1,9}[.)])[ \t]+)(?P<box>\[[ xX]\])[ \t]+(?=\S)")


def task_boxes(text: str) -> tuple[str, PassMap | None]:
    """A task list's boxes dropped: "- [x] Gift cards can be returned." reads "- Gift cards can be returned." (the box
    run into the subject hid it from the subject's own sentence; round 23 B3). Checked or not, the item is read as a
    claim."""
    if "[" not in text:
        return text, None
    out = PassOutput(text)

    def each(a: int, b: int) -> None:
        pos = a
        for m in _TASK_BOX.finditer(text, a, b):
            out.copy(pos, m.end("lead"))
            pos = m.end()
        out.copy(pos, b)

    outside_fences(text, out, each)
    return out.done()
