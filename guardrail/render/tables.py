"""HTML tables as read: a ``<table>`` parsed into rows and cells (``colspan`` and ``rowspan`` expanded, as a browser
lays them out) and read by the same row reader as a markdown table (:func:`~guardrail.render.blocks.read_table`):
a header row (all ``<th>``, or in ``<thead>``) binds to the cells under it and is never a claim of its own."""

from __future__ import annotations

import bisect
import re

from guardrail.render.blocks import read_table
from guardrail.render.markup import outside_fences
from guardrail.render.offsets import PassMap, PassOutput

_TABLE_OPEN = re.compile(r"<table(?=[\s/>])[^<>]*>", re.I)
_TABLE_CLOSE = re.compile(r"</table\s*>", re.I)
#: the tags that shape a table; any other markup is a cell's content (read by the later passes)
_PART = re.compile(r"<(?P<close>/?)(?P<name>tr|td|th|thead|tbody|tfoot|caption|colgroup|col)(?=[\s/>])[^<>]*>", re.I)
_SPAN = {"colspan": re.compile(r"""\bcolspan\s*=\s*["']?\s*(\d{1,4})""", re.I),
         "rowspan": re.compile(r"""\browspan\s*=\s*["']?\s*(\d{1,4})""", re.I)}
#: a span a browser honours at most (HTML: colspan up to 1000, rowspan up to 65534); bounded lower here: a grid of
#: spans repeats its cells, and a table wider or longer than this is read as its cells in order
_MAX_SPAN = 32
_MAX_CELLS = 4096

_Cell = tuple[int, int]


def _span(attrs: str, which: str) -> int:
    m = _SPAN[which].search(attrs)
    return min(max(int(m.group(1)), 1), _MAX_SPAN) if m else 1


def _grid(text: str, a: int, b: int) -> tuple[list[list[_Cell | None]], list[bool], list[_Cell]] | None:
    """The table ``text[a:b]`` (its inside) as a grid of cell content spans (a spanned cell repeated over the slots
    it covers; None: a slot no cell covers), which rows are header rows, and the stray text a browser shows outside
    the cells (a caption, text between rows). None: not read as a grid (a nested table, a grid over the bound)."""
    if _TABLE_OPEN.search(text, a, b):
        return None  # a nested table: read as lines
    rows: list[list[tuple[_Cell, int, int, bool]]] = []  # per row: (content, colspan, rowspan, header cell)
    stray: list[_Cell] = []
    in_head = False
    head_rows: list[bool] = []
    cell: tuple[int, int, int, bool] | None = None  # content start, colspan, rowspan, header cell
    caption = -1
    pos = a

    def close_cell(end: int) -> None:
        nonlocal cell
        if cell is not None:
            if not rows:
                rows.append([])
                head_rows.append(in_head)
            rows[-1].append(((cell[0], end), cell[1], cell[2], cell[3]))
            cell = None

    for m in _PART.finditer(text, a, b):
        name, closing = m.group("name").lower(), bool(m.group("close"))
        if cell is None and caption < 0 and text[pos : m.start()].strip():
            stray.append((pos, m.start()))
        if name == "caption":
            if closing and caption >= 0:
                stray.append((caption, m.start()))
                caption = -1
            elif not closing:
                close_cell(m.start())
                caption = m.end()
        elif name in ("td", "th"):
            close_cell(m.start())
            if not closing:
                attrs = m.group()
                cell = (m.end(), _span(attrs, "colspan"), _span(attrs, "rowspan"), name == "th")
        elif name == "tr":
            close_cell(m.start())
            if not closing:
                rows.append([])
                head_rows.append(in_head)
        elif name in ("thead", "tbody", "tfoot"):
            close_cell(m.start())
            in_head = name == "thead" and not closing
        pos = m.end()
    close_cell(b)
    if caption >= 0:
        stray.append((caption, b))
    elif text[pos:b].strip():
        stray.append((pos, b))
    grid: list[list[_Cell | None]] = []
    pending: dict[int, tuple[_Cell, int]] = {}  # column -> (cell, rows left) of a rowspan
    headers: list[bool] = []
    slots = 0
    for row, head in zip(rows, head_rows):
        line: list[_Cell | None] = []
        heads = []
        cells = iter(row)
        col = 0
        while True:
            if col in pending:
                c, left = pending.pop(col)
                line.append(c)
                if left > 1:
                    pending[col] = (c, left - 1)
                col += 1
                continue
            nxt = next(cells, None)
            if nxt is None:
                break
            content, colspan, rowspan, th = nxt
            heads.append(th)
            for _ in range(colspan):
                line.append(content)
                if rowspan > 1:
                    pending[col] = (content, rowspan - 1)
                col += 1
        while pending and max(pending) >= col:  # rowspans that reach past this row's last cell
            if col in pending:
                c, left = pending.pop(col)
                line.append(c)
                if left > 1:
                    pending[col] = (c, left - 1)
            else:
                line.append(None)
            col += 1
        slots += len(line)
        if slots > _MAX_CELLS:
            return None
        if line:
            grid.append(line)
            headers.append(head or (bool(heads) and all(heads)))
    return grid, headers, stray


def html_tables(text: str) -> tuple[str, PassMap | None]:
    """Each ``<table>`` (outside code; not nested) read as statements, as a markdown table is: the header rows at its
    top (the lowest one's cell over each column is its header; the cells of those above it are read before the
    table), then each body row. Stray text a
    browser shows outside the cells (a caption) is read before it, on its own line."""
    if "<" not in text or not _TABLE_OPEN.search(text):
        return text, None
    out = PassOutput(text)
    budget = [len(text) + 4096]

    def each(a: int, b: int) -> None:
        pos = a
        closes = list(_TABLE_CLOSE.finditer(text, a, b))  # found once: linear in unclosed tables
        starts = [c.start() for c in closes]
        while True:
            m = _TABLE_OPEN.search(text, pos, b)
            if m is None:
                break
            k = bisect.bisect_left(starts, m.end())
            end = starts[k] if k < len(starts) else b
            parsed = _grid(text, m.end(), end) if "`" not in text[m.start() : end] else None
            if parsed is None:
                out.copy(pos, m.end())
                pos = m.end()
                continue
            grid, head_rows, stray = parsed
            out.copy(pos, m.start())
            for s, e in stray:
                out.copy(s, e)
                out.emit("\n", s, e)
            top = 0
            while top < len(grid) and head_rows[top]:
                top += 1
            width = max((len(r) for r in grid), default=0)
            # the lowest header row's cell over each column is its header; the cells of the rows above it (a
            # group's title over several columns) are shown too: read once, before the table, on their own line
            header_spans = [c if c is not None else (m.start(), m.start())
                            for c in (grid[top - 1] if top else [])]
            header_spans += [(m.start(), m.start())] * (width - len(header_spans))
            above = dict.fromkeys(c for r in grid[: max(top - 1, 0)] for c in r if c is not None and c[0] < c[1])
            for s, e in above:
                if (s, e) not in header_spans:
                    out.copy(s, e)
                    out.emit(":\n", s, e)
            rows: list[tuple[tuple[int, int], list[tuple[int, int]] | None]] = []
            for r in grid[top:]:
                cells = [c if c is not None else (m.start(), m.start()) for c in r]
                real = [c for c in r if c is not None]
                anchor = (min(c[0] for c in real), max(c[1] for c in real)) if real else (m.start(), end)
                rows.append((anchor, cells))
            read_table(out, text, (m.start(), end), header_spans, rows, budget,
                       lambda row: out.emit("\n", row[0], row[1]))
            pos = closes[k].end() if k < len(closes) else b
        out.copy(pos, b)

    outside_fences(text, out, each)
    return out.done()
