"""Tool-call arguments read as the text of their string values (``{"answer": "..."}`` is checked as "..."): whole
(:func:`arguments_text`) or streamed in pieces (:class:`ArgumentsReader`)."""

from __future__ import annotations

import re


def arguments_text(arguments: str) -> str:
    """The text a tool call's arguments carry (see :class:`ArgumentsReader`, which reads it the same way in pieces)."""
    return ArgumentsReader().feed(arguments)


def _humanize(key: str) -> str:
    """``return_window_days`` / ``returnWindowDays`` -> ``return window days``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key)
    return re.sub(r"[\s_\-.]+", " ", spaced).strip().lower()


#: a key that names a field (``return_window_days``, ``answer``): not read as text itself
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.\-]{0,63}")
_NUMBERISH = re.compile(r"[-+.0-9eE]+")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class ArgumentsReader:
    """The text of a tool call's arguments, fed as a JSON document in pieces (as streamed) or whole: every string
    value's decoded characters as they arrive; a number or boolean as a ``key: value`` line under its key, spelled as
    words (``{"return_window_days": 90}`` reads "return window days: 90", a structured claim a program shows); a key
    that is prose rather than an identifier as a line of its own (``{"Gift cards can be returned.": true}``). Values
    are separated by a newline. Text that is not JSON (or stops being JSON) is returned as it is, so it is still
    checked."""

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
        self.keys: list[str | None] = []  # per open container: the object's current key (None in an array)
        self.key_chars: list[str] = []  # the key being read

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
            self.key_chars.append(text)
            return
        if self.fresh:
            if self.emitted:
                out.append("\n")
            self.fresh = False
        out.append(text)
        self.emitted = True

    def _line(self, text: str, out: list[str]) -> None:
        """A whole line of text (a prose key, a ``key: value`` scalar)."""
        if self.emitted:
            out.append("\n")
        out.append(text)
        self.emitted = True

    def _key_done(self, out: list[str]) -> None:
        key = "".join(self.key_chars)
        self.key_chars = []
        if self.keys:
            self.keys[-1] = key
        if key.strip() and not _IDENTIFIER.fullmatch(key):
            self._line(key, out)  # a key that is prose: a reader of the JSON sees it

    def _scalar(self, literal: str, out: list[str]) -> None:
        """A number or boolean value as a statement under the nearest key: ``{"return_window_days": 90}`` reads "The
    return window days is 90.", ``true`` "Return window open.", ``false`` "Not return window open." (the shapes the
    NLI model reads best among those measured)."""
        if literal == "null":
            return
        key = next((k for k in reversed(self.keys) if k), None)
        if key is None:
            self._line(literal, out)
        elif _IDENTIFIER.fullmatch(key):
            label = _humanize(key)
            if literal == "true":
                self._line(f"{label[:1].upper()}{label[1:]}.", out)
            elif literal == "false":
                self._line(f"Not {label}.", out)
            else:
                self._line(f"The {label} is {literal}.", out)
        # under a prose key the key itself was read: that is the claim

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
            if not self.is_value:
                self._key_done(out)
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
            literal, self.literal = self.literal, ""
            self._scalar(literal, out)
        if self.done and not ch.isspace():
            self._broken(ch, out)  # more after the document: not JSON
            return
        if ch == '"':
            self.in_string = True
            self.is_value = not (self.stack and self.stack[-1] == "o" and self.expect_key)
            self.fresh = True
        elif ch == "{":
            self.stack.append("o")
            self.keys.append(None)
            self.expect_key = True
        elif ch == "[":
            self.stack.append("a")
            self.keys.append(None)
        elif ch in "}]":
            if not self.stack or self.stack[-1] != ("o" if ch == "}" else "a"):
                self._broken(ch, out)
                return
            self.stack.pop()
            self.keys.pop()
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
