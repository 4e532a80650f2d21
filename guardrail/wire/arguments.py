"""Tool-call arguments read as the text of their string values (``{"answer": "..."}`` is checked as "..."): whole
(:func:`arguments_text`) or streamed in pieces (:class:`ArgumentsReader`).

A tool call's arguments are the model's request to a program, not its answer to the user: what they *state* is
judged, what only *steers the call* is not. Judged: every string that is prose (more than one word), every key that
is prose, and a number, boolean or one-word string under a key that says which fact it states (a descriptive key of
two or more words, ``return_window_days``, ``gift_cards_returnable``, or a key that is the answer itself, ``answer``,
``text``, ``final_answer``..., at any depth above it), or under no key. Not judged: the parameters of the call, a
number, boolean or one-word string (a name, an identifier, a code, a date, an enum) under a one-word key (``days``,
``limit``, ``page``, ``city``) or under a key made with a control word (``max_results``, ``top_k``, ``page_size``,
``include_images``, ``order_id``: :data:`CONTROL_WORDS`), except a reply word (``yes``, ``no``, ``nope``...), which
answers a yes/no question under any key (``{"result": "yes"}``). So ``get_weather({"city": "Paris", "days": 3})``
claims nothing, while ``{"return_window_days": 90}`` reads "The return window days is 90." and ``{"answer": "Items can be
returned within 90 days."}`` is read as its sentence, under any key."""

from __future__ import annotations

import re
import unicodedata

from .fields import is_blank, reads_as_prose


def arguments_text(arguments: str) -> str:
    """The text a tool call's arguments carry (see :class:`ArgumentsReader`, which reads it the same way in pieces)."""
    reader = ArgumentsReader()
    return reader.feed(arguments) + reader.end()


def _humanize(key: str) -> str:
    """``return_window_days`` / ``returnWindowDays`` -> ``return window days``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key)
    return re.sub(r"[\s_\-.]+", " ", spaced).strip().lower()


#: a key that names a field (``return_window_days``, ``answer``): not read as text itself
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.\-]{0,63}")
#: words that make a key a parameter of the call (its value steers the call, it states nothing): limits, counts,
#: pages, sizes, identifiers, flags, formats, coordinates
CONTROL_WORDS = frozenset("""
id ids uuid guid idx index key page pages limit limits offset skip cursor count size length top k n num max min
maximum minimum per timeout retries retry temperature seed verbose debug dry force recursive include exclude enable
enabled disable disabled use allow stream async sort order asc desc lang language locale unit units format mode version
lat lng lon latitude longitude zoom radius threshold depth width height token tokens
""".split())
#: who or what a call is about: a key made of these words only (``customer_name``, ``search_query``,
#: ``user_email``) is a parameter (its value comes from the user's request); with any other word it names a fact
#: (``support_phone``, ``return_carrier_name``) and is judged
IDENTITY_WORDS = frozenset("name names email phone username query search keyword keywords sku".split())
IDENTITY_OWNERS = frozenset("customer user client account person recipient first last full display product item "
                            "search".split())
#: head words (a key's last word) of keys whose value is the answer itself: under them every value is judged
STATEMENT_WORDS = frozenset("""
answer answers response responses reply text content message messages summary statement statements claim claims fact
facts explanation conclusion conclusions finding findings verdict output
""".split())
#: the longest one-word string read as a parameter value (a longer one is judged as text)
PARAMETER_MAX = 64
#: one-word string values that are a reply, not a parameter (``{"result": "yes"}`` answers "Can gift cards be
#: returned?"): read under any key; the checks read them with the question
_REPLY_WORD = re.compile(r"(?i)(?:yes|no|yeah|yep|yup|nope|nah|sure|correct|incorrect|right|wrong|true|false|"
                         r"affirmative|negative|absolutely|definitely|certainly)[.!]?")
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
        #: the characters of a string value under a parameter key while it is one word: dropped when it ends as one
        #: word (a parameter), read as text from the first separator on (prose); None: the value is read as it comes
        self.pending: list[str] | None = None

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

    @property
    def holding(self) -> bool:
        """Characters fed are held back, not yet read as text nor dropped (a key, a one-word value under a parameter
        key, a number or literal, an escape being read): the piece that carried them must not reach a client before
        they are read (with a later piece, or by :meth:`end`)."""
        if self.mode != "json" or self.done:
            return False
        in_key = self.in_string and not self.is_value and bool(self.key_chars)
        return (in_key or bool(self.pending) or bool(self.literal) or self.escape or self.hex is not None
                or self.high is not None)

    def end(self) -> str:
        """The input ended: what was held is read as text (arguments cut off mid-document, e.g. at ``max_tokens``:
        an unfinished key, a held value, a number under its key), so nothing a client can see goes unread."""
        out: list[str] = []
        if self.mode != "json" or self.done:
            return ""
        if self.hex is not None or self.escape:
            self._emit("\\" + ("u" + self.hex if self.hex is not None else ""), out)
            self.hex, self.escape = None, False
        self._flush_high(out)
        if self.in_string and not self.is_value and self.key_chars:
            key, self.key_chars = "".join(self.key_chars), []
            self._line(key, out)  # an unfinished key: whatever it would have been, a reader sees these characters
        self._release(out)
        if self.literal:
            literal, self.literal = self.literal, ""
            if _NUMBER.fullmatch(literal) or literal in ("true", "false"):
                self._scalar(literal, out)
            elif literal != "null":
                self._line(literal, out)
        self.done = True
        return "".join(out)

    def _emit(self, text: str, out: list[str]) -> None:
        if not self.is_value:
            self.key_chars.append(text)
            return
        if self.pending is not None:
            self.pending.append(text)
            if _prose(text) or sum(map(len, self.pending)) > PARAMETER_MAX:
                self._release(out)  # not one short word: prose, read as text under any key
            return
        self._put(text, out)

    def _release(self, out: list[str]) -> None:
        """The characters held of a string value under a parameter key, read as text after all."""
        held, self.pending = self.pending, None
        if held:
            self._put("".join(held), out)

    def _parameter(self) -> bool:
        """The value being read is a parameter of the call (see the module's docstring): its nearest key is a
        one-word or control-word identifier, and no key above it is the answer itself."""
        keys = [k for k in self.keys if k]
        if not keys or not all(_IDENTIFIER.fullmatch(k) for k in keys):
            return False  # under no key, or under (or inside) a prose key: read
        if any(_humanize(k).rpartition(" ")[2] in STATEMENT_WORDS for k in keys):
            return False  # under the answer itself (``{"answer": {"days": 90}}``): every value is read
        words = _humanize(keys[-1]).split()
        if words and words[-1] in IDENTITY_WORDS and all(w in IDENTITY_OWNERS or w in IDENTITY_WORDS for w in words):
            return True
        return len(words) <= 1 or any(w in CONTROL_WORDS for w in words)

    def _put(self, text: str, out: list[str]) -> None:
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
        if literal == "null" or self._parameter():
            return  # a parameter of the call (``{"limit": 10}``, ``{"include_images": true}``): no claim
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
            held = "".join(self.pending) if self.pending is not None else ""
            if held and (_REPLY_WORD.fullmatch(held) or reads_as_prose(held)):
                # "yes" / "no" answers a question whatever key holds it; words joined by hyphens or dots into one
                # "word" ("Gift-cards-can-be-returned.") are prose: read
                self._release(out)
            self.pending = None  # a one-word value under a parameter key: a parameter, not read
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
            self.pending = [] if self.is_value and self._parameter() else None
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
        self._release(out)
        self.mode = "raw"
        self.in_string = False
        if self.emitted:
            out.append("\n")
        out.append(self.literal + ch)
        self.literal = ""


def _prose(text: str) -> bool:
    """Characters that end a one-word parameter value: whitespace, separators, control and format characters (as
    :func:`guardrail.wire.fields.is_atom`), and letters of scripts written without spaces (a sentence there is one
    "word")."""
    for ch in text:
        if ch.isspace() or unicodedata.category(ch)[0] in "ZC" or is_blank(ch):
            return True
        if ord(ch) >= 0x0E00 and ch.isalpha():
            return True
    return False
