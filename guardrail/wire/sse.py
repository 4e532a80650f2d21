"""Server-Sent Events: :class:`SSEParser` reads an event stream incrementally: each byte is scanned once, lines end at
CR, LF or CRLF only (never at U+2028 inside a JSON string), an event is bounded in size and a stream in events;
:func:`event_bytes` and :data:`DONE` write events.

Lines end at CR, LF or CRLF for the guard, as the WHATWG rules say, but a client that splits lines as Python's
``str.splitlines`` does (httpx's ``iter_lines``, many hand-written clients) also ends them at VT, FF, FS, GS, RS, NEL,
U+2028 and U+2029 (and one that decodes the stream as Latin-1, as requests does for ``text/*``, at every 0x85 byte). Such
a character in a comment or an ``event``/``id``/``retry`` line, or in a data line before what reads as a ``data`` field,
would show such a client a data line the guard never read: the event is unreadable."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any

from guardrail.errors import UnreadableError

from .body import MAX_BODY_BYTES, loads


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One event: its exact bytes (to forward unchanged), and what it holds."""

    raw: bytes
    payload: Any = None
    done: bool = False
    #: data that is not JSON / not UTF-8 (the reason), None when readable
    malformed: str | None = None
    #: no data at all (a comment, keep-alive, or a field such as ``retry:``)
    empty: bool = False
    #: the event's type (its last ``event:`` line), None when it has none: a browser's ``onmessage`` sees only
    #: events of no type or of type "message", and the OpenAI SDK reads ``thread.*`` events as no chat chunk
    name: str | None = None
    #: False for an event the stream ended inside (no blank line after it): browsers and the OpenAI SDK drop it
    terminated: bool = True


_LINE_END = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
_FIELDS = (b"event", b"id", b"retry")
#: what a line splitter other than the WHATWG one takes for a line end: VT, FF, FS, GS, RS, NEL (0x85: a byte of its
#: own to a Latin-1 reader, the end of U+0085 in UTF-8) and U+2028 / U+2029 in UTF-8
_OTHER_BREAK = re.compile(rb"[\x0b\x0c\x1c-\x1e\x85]|\xe2\x80[\xa8\xa9]")
_BREAK_NAMES = "VT, FF, FS, GS, RS, NEL, U+2028 or U+2029"
#: a line a lenient client takes for a data field ("data:", "Data :")
_DATA_FIELD = re.compile(r"data\s*:", re.IGNORECASE)


class SSEParser:
    """Incremental Server-Sent Events parser (WHATWG rules for lines and fields: a leading BOM is skipped, ``data:``
    with or without one space, CR, LF or CRLF line ends, comments, multi-line data joined by LF).

    ``feed(bytes)`` returns the events completed by these bytes; ``close()`` the last one if the
    stream ended without a blank line. Bytes are scanned once; an event over ``max_event_bytes``, or the event after
    ``max_events`` of them (comments and empty events count: each costs a reader's work, text or not), raises
    :class:`UnreadableError` at once (the rest of the bytes fed are not scanned).
    """

    def __init__(self, max_event_bytes: int = MAX_BODY_BYTES, max_events: int | None = None) -> None:
        self.max_event_bytes = max_event_bytes
        self.max_events = max_events
        self.events = 0  # events dispatched so far
        self._buf = bytearray()
        self._scan = 0  # where the search for the next line end resumes
        self._line_start = 0
        self._data: list[bytes] = []
        self._has_field = False
        self._name: str | None = None
        self._bom_checked = False
        #: the stream began with a BOM: the OpenAI SDK reads the first line as an unknown field (it does not skip the
        #: BOM as browsers do), so it drops the first event
        self._bom_first = False
        #: what the OpenAI SDK's reader keeps between events (a non-empty last event id) and within one (a retry):
        #: with either, it dispatches an event that has no data line, and fails to parse its empty data
        self._sdk_id = False
        self._sdk_retry = False
        self._had_data = False  # an event with data was read (before it, an SDK that fails has shown nothing)
        #: why a line of the event is not read the same way by every client (None: every line is)
        self._strange: str | None = None

    @property
    def pending(self) -> int:
        """Bytes fed that no event has completed yet (the event being read)."""
        return len(self._buf)

    @property
    def pending_bytes(self) -> bytes:
        """Those bytes (a copy)."""
        return bytes(self._buf)

    def feed(self, data: bytes) -> list[SSEEvent]:
        self._buf += data
        events: list[SSEEvent] = []
        buf = self._buf
        if not self._bom_checked:
            if len(buf) < len(_BOM) and _BOM.startswith(bytes(buf)):
                return events  # maybe the first bytes of a BOM: wait
            self._skip_bom()
        while True:
            m = _LINE_END.search(buf, self._scan)
            if m is None or (m.group() == b"\r" and m.end() == len(buf)):
                # no line end yet, or a CR that may be the first half of a CRLF: wait for more bytes
                self._scan = len(buf) - 1 if m is not None else len(buf)
                break
            line = bytes(buf[self._line_start : m.start()])
            self._line_start = self._scan = m.end()
            if m.group() == b"\r" and self._strange is None:
                # browsers and the OpenAI SDK end a line there; a client that splits at LF (aiohttp's line iteration,
                # a hand-written reader) reads this line and the next as one, and drops what it cannot parse
                self._strange = ("a line ends at a bare CR: browsers and the OpenAI SDK split lines there, clients "
                                 "that split at LF do not, so they would not read the same events")
            if line:
                self._field(line)
                continue
            self._count()
            events.append(self._dispatch(bytes(buf[: m.end()])))
            del buf[: m.end()]
            self._line_start = self._scan = 0
        if len(buf) > self.max_event_bytes:
            raise UnreadableError(f"an event of the stream is over {self.max_event_bytes:,} bytes")
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: an event still open (no blank line after it) is dispatched, as browsers do not but an
        answer must not be lost."""
        buf = self._buf
        if not self._bom_checked:
            self._skip_bom()
        ended = False  # a CR at the very end ends its line (it waited for a possible LF): a blank one ends the event
        if self._line_start < len(buf):
            rest = bytes(buf[self._line_start :])
            line = rest.rstrip(b"\r")
            if line:
                self._field(line)
            else:
                ended = rest == b"\r"
        raw = bytes(buf)
        self._buf = bytearray()
        self._line_start = self._scan = 0
        if not raw:
            return []
        self._count()
        if not self._data:  # no client dispatches an event the stream ends inside that has no data
            self._data, self._has_field, self._name, self._sdk_retry, self._strange = [], False, None, False, None
            return [SSEEvent(raw, empty=True, terminated=ended)]  # trailing bytes go out too: nothing is lost
        return [dataclasses.replace(self._dispatch(raw), terminated=ended)]

    def _count(self) -> None:
        self.events += 1
        if self.max_events is not None and self.events > self.max_events:
            raise UnreadableError(f"the stream sent more than {self.max_events:,} events (comments and empty events "
                                  "included; max_stream_events)")

    def _skip_bom(self) -> None:
        """One BOM at the start of the stream is not part of it (WHATWG); it stays in the first event's bytes."""
        self._bom_checked = True
        if self._buf.startswith(_BOM):
            self._line_start = self._scan = len(_BOM)
            self._bom_first = True

    def _field(self, line: bytes) -> None:
        self._has_field = True
        name, _, value = line.partition(b":")
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            # the OpenAI SDK decodes every line, a comment's and an id's too, and fails on this one
            self._strange = ("a line of the event is not valid UTF-8: the OpenAI SDK fails on it where other "
                             "clients read on")
        if name == b"data":
            if self._data and self._strange is None:
                self._strange = ("the event's data spans several data lines: clients that read each data line as "
                                 "one chunk (an httpx iter_lines loop) read none of it, while browsers join them")
            self._data.append(value[1:] if value.startswith(b" ") else value)
            if _OTHER_BREAK.search(value) is not None and _smuggles(value):
                self._strange = (f"a data line holds a line end to some clients ({_BREAK_NAMES}) before a data field, "
                                 "so they read a data line that guardrail does not")
        elif name == b"event":
            self._name = (value[1:] if value.startswith(b" ") else value).decode("utf-8", "replace")
            if _OTHER_BREAK.search(line) is not None:
                self._strange = (f"the event's event line holds a line end to some clients ({_BREAK_NAMES}), so they "
                                 "may read a line that guardrail does not")
        elif name == b"id" and b"\0" not in value:
            self._sdk_id = bool(value[1:] if value.startswith(b" ") else value)
        elif name == b"retry":
            try:  # as the SDK reads it: Python's int() of the decoded value ("５" and " 5 " are numbers to it)
                int((value[1:] if value.startswith(b" ") else value).decode("utf-8"))
                self._sdk_retry = True
            except (UnicodeDecodeError, ValueError):
                pass
        if name and name not in _FIELDS and name != b"data":
            # a browser ignores it, a lenient client may not (" data:", "Data:", a second BOM): not read the same way
            self._strange = ("a line of the event is not an SSE field (data, event, id, retry) or a comment, so "
                             "clients may read the event differently")
        elif name != b"data" and _OTHER_BREAK.search(line) is not None:
            # a comment or an event/id/retry line carries no answer text: nothing in it needs one
            what = f"the event's {name.decode('ascii')} line" if name else "a comment of the event"
            self._strange = (f"{what} holds a line end to some clients ({_BREAK_NAMES}), so they may read a line "
                             "that guardrail does not")

    def _dispatch(self, raw: bytes) -> SSEEvent:
        data, self._data, self._has_field = self._data, [], False
        name, self._name = self._name or None, None  # an empty event line resets the type (WHATWG)
        if self._strange is not None:
            reason, self._strange = self._strange, None
            return SSEEvent(raw, malformed=reason, name=name)
        first, self._bom_first = self._bom_first, False
        retry, self._sdk_retry = self._sdk_retry, False
        if not data:
            if self._had_data and (name or self._sdk_id or retry):
                return SSEEvent(raw, name=name, malformed=(
                    "an event with no data line after an event type, an id or a retry: the OpenAI SDK reads it as an "
                    "event with empty data and fails there (after an id, any blank line does), while other clients "
                    "read on"))
            return SSEEvent(raw, empty=True, name=name)
        if first:
            return SSEEvent(raw, name=name, malformed=(
                "the stream starts with a byte order mark: browsers skip it and read the first event, the OpenAI SDK "
                "does not and drops that event, so clients would not show the same answer"))
        self._had_data = True
        joined = b"\n".join(data)
        if joined.strip() == b"[DONE]":
            return SSEEvent(raw, done=True, name=name)
        try:
            payload = loads(joined)
        except UnreadableError as exc:
            return SSEEvent(raw, malformed=str(exc), name=name)
        return SSEEvent(raw, payload, name=name)


def shown_alike(ev: SSEEvent) -> str | None:
    """Why clients would not all show ``ev`` as part of the answer, None when they would: an event with a type other
    than "message" is no message to a browser's ``onmessage`` (and a ``thread.*`` one no chat chunk to the OpenAI
    SDK), while the SDK reads the others by their data; a Responses API event whose type is not its data's ``type``
    is one thing to a client that listens by event type and another to one that reads the data. An error event
    (``event: error`` with an ``error`` object) reads as an error to both."""
    if ev.name in (None, "message") or not isinstance(ev.payload, dict):
        return None
    kind = ev.payload.get("type")
    if kind == ev.name or ev.name == "error" and "error" in ev.payload:
        return None
    what = f"the data's type {kind!r}" if isinstance(kind, str) else "data that names no type"
    return (f"an event of type {ev.name!r} carries {what}: clients that listen for messages or by event type do not "
            "show it as the SDK does, so they would not read the answer guardrail checked")


def _smuggles(value: bytes) -> bool:
    """True when a line that some client splits at :data:`_OTHER_BREAK` shows it a ``data:`` field after a split (as
    lenient clients read a line: leading whitespace and a BOM dropped, any case). A faithful answer's text may hold a
    raw U+2028 or a letter whose UTF-8 ends in 0x85 ("х", "Å"): what follows it is no data field."""
    for piece in _OTHER_BREAK.split(value)[1:]:
        for text in (piece.decode("utf-8", "replace"), piece.decode("latin-1")):
            if _DATA_FIELD.match(text.lstrip().lstrip("\ufeff\u200b").lstrip()) is not None:
                return True
    return False


def event_bytes(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"
