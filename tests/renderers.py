"""What real Markdown renderers show (cmark-gfm as GitHub renders, markdown-it with strikethrough and tables), each
read through a browser's HTML5 parser (html5lib): the reference the guard's reading is compared with in
``tests/test_struck_renderers.py`` and ``tests/test_hidden_markup.py``. Import after ``pytest.importorskip`` of
cmarkgfm, html5lib and markdown_it (the test extra installs them)."""

from __future__ import annotations

import cmarkgfm
import html5lib
import markdown_it
from cmarkgfm.cmark import Options


def visible(html: str) -> str:
    """What a browser shows of ``html``: text outside script, style, head, comments and struck elements (``<del>``,
    ``<s>``, ``<strike>``), and the ``alt`` and ``title`` a reader may see."""
    doc = html5lib.parse(html, namespaceHTMLElements=False)
    out: list[str] = []

    def walk(el: object, hidden: bool) -> None:
        tag = el.tag if isinstance(el.tag, str) else None  # type: ignore[attr-defined]
        if tag is None:  # a comment
            return
        h = hidden or tag in ("del", "s", "strike", "script", "style", "head")
        if not h:
            for attr in ("alt", "title"):
                value = el.get(attr)  # type: ignore[attr-defined]
                if value:
                    out.append(f" {value} ")
            if el.text:  # type: ignore[attr-defined]
                out.append(el.text)  # type: ignore[attr-defined]
        for c in el:  # type: ignore[attr-defined]
            walk(c, h)
            if c.tail and not h:
                out.append(c.tail)

    walk(doc.getroot() if hasattr(doc, "getroot") else doc, False)
    return " ".join("".join(out).split())


def gfm(md: str) -> str:
    """``md`` rendered by cmark-gfm (GitHub), raw HTML kept."""
    return str(cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE))


_MDIT = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("strikethrough").enable("table")


def mdit(md: str) -> str:
    """``md`` rendered by markdown-it (CommonMark, strikethrough, tables), raw HTML kept."""
    return str(_MDIT.render(md))


def shown(md: str) -> str:
    """What either renderer shows of ``md``."""
    return visible(gfm(md)) + " \n " + visible(mdit(md))
