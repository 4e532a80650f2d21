"""Server-Sent Events: :class:`SSEParser` reads an event stream incrementally: each byte is scanned once, lines end at
CR, LF or CRLF only (never at U+2028 inside a JSON string), and an event is bounded in size; :func:`event_bytes` and
:data:`DONE` write events."""

from __future__ import annotations

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


_LINE_END = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
_FIELDS = (b"event", b"id", b"retry")


class SSEParser:
    """Incremental Server-Sent Events parser (WHATWG rules for lines and fields: a leading BOM is skipped, ``data:``
    with or without one space, CR, LF or CRLF line ends, comments, multi-line data joined by LF).

    ``feed(bytes)`` returns the events completed by these bytes; ``close()`` the last one if the
    stream ended without a blank line. Bytes are scanned once; an event over ``max_event_bytes`` raises
    :class:`UnreadableError`.
    """

    def __init__(self, max_event_bytes: int = MAX_BODY_BYTES) -> None:
        self.max_event_bytes = max_event_bytes
        self._buf = bytearray()
        self._scan = 0  # where the search for the next line end resumes
        self._line_start = 0
        self._data: list[bytes] = []
        self._has_field = False
        self._bom_checked = False
        self._strange = False  # a line that is not a field every client reads the same way

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
            if line:
                self._field(line)
                continue
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
        if self._line_start < len(buf):
            line = bytes(buf[self._line_start :]).rstrip(b"\r")
            if line:
                self._field(line)
        raw = bytes(buf)
        if not self._data and not self._has_field:
            self._buf = bytearray()
            self._line_start = self._scan = 0
            return [SSEEvent(raw, empty=True)] if raw else []  # trailing bytes go out too: nothing is lost
        self._buf = bytearray()
        self._line_start = self._scan = 0
        return [self._dispatch(raw)]

    def _skip_bom(self) -> None:
        """One BOM at the start of the stream is not part of it (WHATWG); it stays in the first event's bytes."""
        self._bom_checked = True
        if self._buf.startswith(_BOM):
            self._line_start = self._scan = len(_BOM)

    def _field(self, line: bytes) -> None:
        self._has_field = True
        if line.startswith(b":"):
            return
        name, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self._data.append(value)
        elif name not in _FIELDS:
            # a browser ignores it, a lenient client may not (" data:", "Data:", a second BOM): not read the same way
            self._strange = True

    def _dispatch(self, raw: bytes) -> SSEEvent:
        data, self._data, self._has_field = self._data, [], False
        if self._strange:
            self._strange = False
            return SSEEvent(raw, malformed="a line of the event is not an SSE field (data, event, id, retry) or a "
                                           "comment, so clients may read the event differently")
        if not data:
            return SSEEvent(raw, empty=True)
        joined = b"\n".join(data)
        if joined.strip() == b"[DONE]":
            return SSEEvent(raw, done=True)
        try:
            payload = loads(joined)
        except UnreadableError as exc:
            return SSEEvent(raw, malformed=str(exc))
        return SSEEvent(raw, payload)


def event_bytes(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"
