"""An answer that is a JSON document (structured output: ``response_format`` json_object or json_schema, or a model
that answers in JSON unasked) read as a program that parses it shows it: each value on a line of its own.

Read as text, ``{"answer": "Items can be returned within 30 days.", "details": ["Gift cards cannot be returned.",
"Shipping fees are refunded as well."]}`` is one run-on sentence: the copied values drown the one that no passage
supports (round 23 B1: delivered at 0.52), and a pretty-printed document's lines (``"details": [``) read as claims of
their own (F1). Read by its values:

- a string of more than one word is a line of its own (``Shipping fees are refunded as well.``), under any key;
- a number, a boolean or a one-word string under a key that names a fact reads as a label reply, as a table's row
  does: ``{"return_window_days": 30}`` -> "Return window days: 30.", ``{"gift_cards_returnable": false}`` -> "Gift
  cards returnable: no." (measured: "Not gift cards returnable." on a line of its own was read as a fragment of the
  line before it);
- under a key that is the answer itself (``answer``, ``response``, ``summary``...) a value reads alone ("No", "30"),
  and is read with the question as a short answer;
- a key that is prose (``{"Gift cards can be returned.": true}``) is a line of its own; ``null`` reads as nothing.

Only a whole answer that parses as a JSON object or array is read this way (a document inside prose or a code fence
is read as written, line by line). A stream holds such a document until it closes
(:func:`json_regions`), as a table.
"""

from __future__ import annotations

import json
import re

from guardrail.render.offsets import PassMap, PassOutput

#: head words (a key's last word) of keys whose value is the answer itself: read alone, as a short answer
STATEMENT_WORDS = frozenset("""
answer answers response responses reply text content message messages summary statement statements claim claims fact
facts explanation conclusion conclusions finding findings verdict output result results
""".split())
#: a key that names a field (``return_window_days``, ``answer``): read through its words, not as a line
IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.\-]{0,63}")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+|\s+', re.S)
_REPLY = re.compile(r"(?i)(?:yes|no|yeah|yep|nope|true|false|correct|incorrect)[.!]?")


def humanize(key: str) -> str:
    """``return_window_days`` / ``returnWindowDays`` -> ``return window days``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key)
    return re.sub(r"[\s_\-.]+", " ", spaced).strip().lower()


def _document(text: str) -> tuple[int, int] | None:
    """The span of ``text`` that is a JSON object or array, when the whole text (but its surrounding blanks) is one."""
    a = len(text) - len(text.lstrip())
    b = len(text.rstrip())
    if b - a < 2 or text[a] not in "{[" or text[b - 1] != {"{": "}", "[": "]"}[text[a]]:
        return None
    try:
        value = json.loads(text[a:b])
    except ValueError:
        return None
    return (a, b) if isinstance(value, (dict, list)) and value else None


def json_document(text: str) -> tuple[str, PassMap | None]:
    """The pass: a whole-answer JSON document read by its values (see the module docs); any other text unchanged."""
    span = _document(text)
    if span is None:
        return text, None
    out = PassOutput(text)
    stack: list[list[object]] = []  # per open container: [kind "o"/"a", the current key (text, start, end) or None]
    expect_key = False
    first = True

    def line_break(a: int, b: int) -> None:
        nonlocal first
        if not first:
            out.emit("\n", a, b)
        first = False

    def keys() -> list[tuple[str, int, int]]:
        return [k for _, k in stack if isinstance(k, tuple)]

    def value(kind: str, raw: str, a: int, b: int) -> None:
        named = keys()
        key = named[-1] if named else None
        under_answer = any(humanize(k[0]).rpartition(" ")[2] in STATEMENT_WORDS for k in named if IDENTIFIER.fullmatch(k[0]))
        if kind == "s":
            decoded = json.loads(raw)
            if not decoded.strip():
                return
            several = len(decoded.split()) > 1
            if several or key is None or under_answer or not IDENTIFIER.fullmatch(key[0]):
                line_break(a, b)
                if "\\" in raw:
                    out.emit(decoded, a, b)
                else:
                    out.copy(a + 1, b - 1)
                return
            if _REPLY.fullmatch(decoded):
                literal = "true" if decoded.lower().rstrip(".!") in ("yes", "yeah", "yep", "true", "correct") else "false"
                statement(key, literal, a, b)
                return
            statement(key, decoded if "\\" in raw else None, a, b)
            return
        if raw == "null":
            return
        if key is None or under_answer:
            line_break(a, b)
            out.copy(a, b)
        elif IDENTIFIER.fullmatch(key[0]):
            statement(key, raw, a, b)  # a number, true or false as written
        # under a prose key the key itself was read: that is the claim

    def statement(key: tuple[str, int, int], literal: str | None, a: int, b: int) -> None:
        """"Return window days: 30." / "Gift cards returnable: yes." / "Gift cards returnable: no." (a label reply, as
        a table's row reads). ``literal``:
        "true", "false", a number as written, a decoded string; None: the string token at ``a:b`` as written."""
        label = humanize(key[0])
        line_break(key[1], key[2])
        out.emit(f"{label[:1].upper()}{label[1:]}: ", key[1], key[2])
        if literal in ("true", "false"):
            out.emit("yes." if literal == "true" else "no.", a, b)
        else:
            if literal is None:
                out.copy(a + 1, b - 1)
            else:
                out.emit(literal, a, b)
            out.emit(".", a, b)

    start, end = span
    for m in _TOKEN.finditer(text, start, end):
        tok, a, b = m.group(), m.start(), m.end()
        if tok.isspace():
            continue
        if tok in "{[":
            stack.append(["o" if tok == "{" else "a", None])
            expect_key = tok == "{"
        elif tok in "}]":
            stack.pop()
            expect_key = False
        elif tok == ":":
            expect_key = False
        elif tok == ",":
            expect_key = bool(stack) and stack[-1][0] == "o"
        elif tok.startswith('"') and expect_key and stack and stack[-1][0] == "o":
            key = json.loads(tok)
            stack[-1][1] = (key, a, b)
            if key.strip() and not IDENTIFIER.fullmatch(key):  # a prose key: a reader of the document sees it
                line_break(a, b)
                out.emit(key, a, b) if "\\" in tok else out.copy(a + 1, b - 1)
        else:
            value("s" if tok.startswith('"') else "x", tok, a, b)
    return out.done()  # no value read (all null, all blank): nothing a reader sees but the marks


def json_regions(text: str) -> list[tuple[int, int | None]]:
    """A JSON document that opens the text, as (start, end) or (start, None) while it is still open: a stream reads it
    whole once it closes (its values are read by :func:`json_document`; cut short, its parts read as run-on text).
    The text must open as a JSON document does (``{"``, ``{}``, ``[{``, ``["``, ``[1``...). Linear: strings and
    brackets are scanned once."""
    a = len(text) - len(text.lstrip())
    if a >= len(text) or text[a] not in "{[":
        return []
    nxt = text[a + 1 :].lstrip()[:1]
    if nxt and (nxt not in '"}' if text[a] == "{" else nxt not in '"{[]-0123456789tfn'):
        return []
    depth = 0
    in_string = escape = False
    for i in range(a, len(text)):
        ch = text[i]
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return [(a, i + 1)]
    return [(a, None)]
