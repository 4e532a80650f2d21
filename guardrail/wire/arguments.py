"""Tool-call arguments read as the text of their string values (``{"answer": "..."}`` is checked as "..."): whole
(:func:`arguments_text`) or streamed in pieces (:class:`ArgumentsReader`)."""

from __future__ import annotations

import json
import re
from typing import Any


def arguments_text(arguments: str) -> str:
    """The text a tool call's arguments carry: the string values of its JSON (or the raw string)."""
    try:
        value = json.loads(arguments)
    except (json.JSONDecodeError, RecursionError):
        return arguments
    strings: list[str] = []

    def walk(v: Any, depth: int = 0) -> None:
        if depth > 50:
            return
        if isinstance(v, str):
            strings.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x, depth + 1)
        elif isinstance(v, list):
            for x in v:
                walk(x, depth + 1)

    walk(value)
    return "\n".join(s for s in strings if s.strip())


_NUMBERISH = re.compile(r"[-+.0-9eE]+")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class ArgumentsReader:
    """Incremental :func:`arguments_text`: fed a JSON document in pieces, returns the decoded characters of its string
    values (not its keys) as they arrive, values separated by a newline. Text that is not JSON (or stops being JSON)
    is returned as it is, so it is still checked."""

    def __init__(self) -> None:
        self.mode = "start"  # start | json | raw
        self.stack: list[str] = []  # "o" object, "a" array
        self.expect_key = False
        self.in_string = False
        self.is_value = False
        self.fresh = False  # no character of the current value emitted yet
        self.escape = False
        self.hex: str | None = None
        self.high: int | None = None  # a high surrogate waiting for its pair
        self.emitted = False
        self.literal = ""  # a number, true, false or null being read
        self.done = False  # the top-level value is complete

    def feed(self, piece: str) -> str:
        out: list[str] = []
        for ch in piece:
            if self.mode == "raw":
                out.append(ch)
            elif self.mode == "start":
                if ch.isspace():
                    continue
                if ch in "{[\"":
                    self.mode = "json"
                    self._structure(ch, out)
                else:
                    self.mode = "raw"
                    out.append(ch)
            elif self.in_string:
                self._string(ch, out)
            else:
                self._structure(ch, out)
        return "".join(out)

    def _emit(self, text: str, out: list[str]) -> None:
        if not self.is_value:
            return
        if self.fresh:
            if self.emitted:
                out.append("\n")
            self.fresh = False
        out.append(text)
        self.emitted = True

    def _flush_high(self, out: list[str]) -> None:
        if self.high is not None:
            self._emit(chr(self.high), out)  # a lone surrogate: passed on, and refused as uncheckable downstream
            self.high = None

    def _string(self, ch: str, out: list[str]) -> None:
        if self.hex is not None:
            self.hex += ch
            if len(self.hex) < 4:
                return
            try:
                code = int(self.hex, 16)
            except ValueError:
                self.hex = None
                self._broken(ch, out)
                return
            self.hex = None
            if 0xD800 <= code < 0xDC00:
                self._flush_high(out)
                self.high = code
            elif 0xDC00 <= code < 0xE000 and self.high is not None:
                self._emit(chr(0x10000 + ((self.high - 0xD800) << 10) + (code - 0xDC00)), out)
                self.high = None
            else:
                self._flush_high(out)
                self._emit(chr(code), out)
            return
        if self.escape:
            self.escape = False
            if ch == "u":
                self.hex = ""
                return
            self._flush_high(out)
            if ch not in _ESCAPES:
                self._broken(ch, out)
                return
            self._emit(_ESCAPES[ch], out)
            return
        if ch == "\\":
            self.escape = True
            return
        self._flush_high(out)
        if ch == '"':
            self.in_string = False
            self.done = not self.stack
            return
        self._emit(ch, out)

    def _structure(self, ch: str, out: list[str]) -> None:
        if ch.isalnum() or ch in "+-.":
            self.literal += ch
            if not (_NUMBERISH.fullmatch(self.literal) or any(w.startswith(self.literal) for w in ("true", "false", "null"))):
                self._broken("", out)  # not a JSON literal: text, checked as it comes
            return
        if self.literal:
            if not (_NUMBER.fullmatch(self.literal) or self.literal in ("true", "false", "null")):
                self._broken("", out)
                out.append(ch)
                return
            self.literal = ""
        if self.done and not ch.isspace():
            self._broken(ch, out)  # more after the document: not JSON
            return
        if ch == '"':
            self.in_string = True
            self.is_value = not (self.stack and self.stack[-1] == "o" and self.expect_key)
            self.fresh = True
        elif ch == "{":
            self.stack.append("o")
            self.expect_key = True
        elif ch == "[":
            self.stack.append("a")
        elif ch in "}]":
            if not self.stack or self.stack[-1] != ("o" if ch == "}" else "a"):
                self._broken(ch, out)
                return
            self.stack.pop()
            self.expect_key = False
            self.done = not self.stack
        elif ch == ",":
            self.expect_key = bool(self.stack) and self.stack[-1] == "o"
        elif ch == ":":
            self.expect_key = False
        elif not ch.isspace():
            self._broken(ch, out)

    def _broken(self, ch: str, out: list[str]) -> None:
        """Not JSON after all: the rest (and a literal being read) is checked as it comes."""
        self.mode = "raw"
        self.in_string = False
        if self.emitted:
            out.append("\n")
        out.append(self.literal + ch)
        self.literal = ""
