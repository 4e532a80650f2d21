"""OpenAI wire formats: read every assistant-visible text of an answer, and rewrite blocked ones.

One module for every integration (middleware, gateway, client wrapper, demo), so that a shape one of
them can read is a shape all of them check. It knows nothing of ours but text.

Covered, per choice (``choices[i]``; the Responses API has one answer):

- chat completions: ``message.content`` as a string or a list of parts (``{"type": "text", "text"}``),
  ``message.refusal``, ``message.tool_calls[].function.arguments``, legacy ``message.function_call.arguments``;
- legacy completions: ``text``;
- Responses API: ``output[]`` messages (``output_text`` and ``refusal`` parts), ``function_call`` arguments;
- SSE chunks of all three: ``delta.content`` (string or parts), ``delta.refusal``, ``delta.tool_calls``,
  ``delta.function_call``, completions ``text``, and the Responses ``response.*.delta`` events.

Tool-call arguments are read as the text of their string values (``{"answer": "..."}`` is checked as
"..."), streamed ones incrementally (:class:`DeltaReader`, :class:`ArgumentsReader`). A reasoning trace (``reasoning_content``) is not the answer and is not checked.

Anything else raises :class:`UnreadableError`: a reader that guesses lets an unknown shape through
unchecked. :class:`SSEParser` reads an event stream incrementally: each byte is scanned once, lines
end at CR, LF or CRLF only (never at U+2028 inside a JSON string), and an event is bounded in size.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from guardrail.errors import UnreadableError

#: an answer (or one SSE event) larger than this is not read
MAX_BODY_BYTES = 32 * 1024 * 1024


# --------------------------------------------------------------------------- JSON bodies
def loads(data: bytes) -> Any:
    """Strict JSON: UTF-8, one value, no trailing bytes, bounded nesting."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableError(f"the answer is not valid UTF-8 (byte offset {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnreadableError(f"the answer is not valid JSON ({exc.msg} at offset {exc.pos})") from None
    except RecursionError:
        raise UnreadableError("the answer's JSON is nested too deeply to read") from None


def _parts_text(parts: Any, where: str) -> str:
    if parts is None:
        return ""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        raise UnreadableError(f"{where} is a {type(parts).__name__}, not text or a list of parts")
    out = []
    for part in parts:
        if not isinstance(part, dict):
            raise UnreadableError(f"{where} holds a {type(part).__name__} part")
        kind = part.get("type")
        if kind in ("text", "output_text", "input_text") and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            out.append(part["refusal"])
        else:
            raise UnreadableError(f"{where} holds a part of type {kind!r} that guardrail cannot read")
    return "".join(out)


def _str_or_none(value: Any, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UnreadableError(f"{where} is a {type(value).__name__}, not a string")
    return value


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


def _join(pieces: list[str]) -> str:
    return "\n".join(p for p in pieces if p)


def _assistant_text(msg: Any, where: str) -> str:
    """Every assistant-visible text of a message."""
    text, _ = _message_pieces(msg, where, streamed=False)
    return text


def _message_pieces(msg: Any, where: str, *, streamed: bool) -> tuple[str, list[tuple[Any, str]]]:
    """The text of a message, or (``streamed``) of a chunk's delta plus its raw tool-call argument pieces by tool-call
    key: streamed arguments are pieces of one JSON document, read by an :class:`ArgumentsReader` per tool call."""
    if msg is None and streamed:
        return "", []
    if not isinstance(msg, dict):
        raise UnreadableError(f"{where} is a {type(msg).__name__}, not an object")
    pieces = [_parts_text(msg.get("content"), f"{where}.content"), _str_or_none(msg.get("refusal"), f"{where}.refusal")]
    raw: list[tuple[Any, str]] = []
    calls = msg.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise UnreadableError(f"{where}.tool_calls is not a list")
        for i, call in enumerate(calls):
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(call, dict) or (fn is None and not streamed):
                raise UnreadableError(f"{where}.tool_calls[{i}] is not an object with a function")
            if fn is None:
                continue
            if not isinstance(fn, dict):
                raise UnreadableError(f"{where}.tool_calls[{i}].function is not an object")
            arguments = _str_or_none(fn.get("arguments"), f"{where}.tool_calls[{i}].function.arguments")
            if streamed:
                key = call.get("index", i)
                raw.append((("tool", key if isinstance(key, int) and not isinstance(key, bool) else i), arguments))
            else:
                pieces.append(arguments_text(arguments))
    legacy = msg.get("function_call")
    if legacy is not None:
        if not isinstance(legacy, dict):
            raise UnreadableError(f"{where}.function_call is not an object")
        arguments = _str_or_none(legacy.get("arguments"), f"{where}.function_call.arguments")
        if streamed:
            raw.append((("function_call",), arguments))
        else:
            pieces.append(arguments_text(arguments))
    return ("".join(pieces), raw) if streamed else (_join(pieces), raw)


@dataclass(frozen=True, slots=True)
class Answer:
    """The assistant-visible text of one choice (``index`` is its position in ``choices``)."""

    index: int
    text: str


def read_answers(body: Any) -> list[Answer]:
    """Every choice's text of a chat completion, completion or Responses API object; UnreadableError otherwise."""
    if not isinstance(body, dict):
        raise UnreadableError(f"the answer is a JSON {type(body).__name__}, not an object")
    if body.get("object") == "response" or ("output" in body and "choices" not in body):
        return [Answer(0, _response_text(body))]
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise UnreadableError("the answer has no 'choices' list (not an OpenAI chat/completions/responses object)")
    out = []
    for i, choice in enumerate(choices):
        where = f"choices[{i}]"
        if not isinstance(choice, dict):
            raise UnreadableError(f"{where} is a {type(choice).__name__}, not an object")
        if "message" in choice:
            out.append(Answer(i, _assistant_text(choice["message"], f"{where}.message")))
        elif "text" in choice:
            out.append(Answer(i, _str_or_none(choice["text"], f"{where}.text")))
        else:
            raise UnreadableError(f"{where} has neither 'message' nor 'text'")
    return out


def _response_text(body: dict[str, Any]) -> str:
    output = body.get("output")
    if not isinstance(output, list):
        raise UnreadableError("the Responses API object has no 'output' list")
    pieces = []
    for i, item in enumerate(output):
        where = f"output[{i}]"
        if not isinstance(item, dict):
            raise UnreadableError(f"{where} is not an object")
        kind = item.get("type")
        if kind == "message":
            pieces.append(_parts_text(item.get("content"), f"{where}.content"))
        elif kind in ("function_call", "custom_tool_call"):
            pieces.append(arguments_text(_str_or_none(item.get("arguments", item.get("input")), f"{where}.arguments")))
        elif kind in ("reasoning", "web_search_call", "file_search_call"):
            continue  # not answer text
        else:
            raise UnreadableError(f"{where} has type {kind!r}, which guardrail cannot read")
    return _join(pieces)


def replace_answers(body: dict[str, Any], indices: set[int], text: str) -> dict[str, Any]:
    """Replace the text of the given choices (all of a Responses object) by ``text``, drop their tool calls,
    and mark them ``finish_reason: "content_filter"``. Returns ``body`` (changed in place)."""
    if "choices" not in body:
        body["output"] = [{"type": "message", "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": text, "annotations": []}]}]
        if "output_text" in body:
            body["output_text"] = text
        return body
    for i in indices:
        choice = body["choices"][i]
        if "message" in choice:
            msg = choice["message"]
            for key in ("tool_calls", "function_call", "refusal"):
                msg.pop(key, None)
            msg["content"] = text
        else:
            choice["text"] = text
        choice["finish_reason"] = "content_filter"
    return body


# --------------------------------------------------------------------------- SSE
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


class SSEParser:
    """Incremental Server-Sent Events parser (WHATWG rules for lines and fields).

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

    def feed(self, data: bytes) -> list[SSEEvent]:
        self._buf += data
        events: list[SSEEvent] = []
        buf = self._buf
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

    def _field(self, line: bytes) -> None:
        self._has_field = True
        if line.startswith(b":"):
            return
        name, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            self._data.append(value)

    def _dispatch(self, raw: bytes) -> SSEEvent:
        data, self._data, self._has_field = self._data, [], False
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


@dataclass(frozen=True, slots=True)
class Delta:
    """The text one SSE event adds to one choice, and whether the event ends that choice."""

    index: int
    text: str
    finish: str | None = None
    #: raw pieces of tool-call arguments (JSON text) by tool-call key; :class:`DeltaReader` turns them into text
    arguments: tuple[tuple[Any, str], ...] = ()


def read_deltas(payload: Any) -> list[Delta]:
    """The pieces of one streamed chunk (chat, completions or Responses events); UnreadableError for a shape that is
    not one of them. An ``{"error": ...}`` event carries no answer text. Tool-call arguments stay raw JSON pieces in
    ``Delta.arguments``: read a stream with :class:`DeltaReader`, which keeps their state across events."""
    if not isinstance(payload, dict):
        raise UnreadableError(f"a stream event is a JSON {type(payload).__name__}, not an object")
    kind = payload.get("type")
    if isinstance(kind, str) and kind.startswith("response."):
        if kind in ("response.output_text.delta", "response.refusal.delta", "response.custom_tool_call_input.delta"):
            return [Delta(0, _str_or_none(payload.get("delta"), f"{kind}.delta"))]
        if kind == "response.function_call_arguments.delta":
            key = ("response", payload.get("output_index", payload.get("item_id", 0)))
            return [Delta(0, "", None, ((key, _str_or_none(payload.get("delta"), f"{kind}.delta")),))]
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            return [Delta(0, "", kind)]
        return []  # created, in_progress, *.done, added...: the text came in the deltas
    if "choices" not in payload:
        if "error" in payload:
            return []
        raise UnreadableError("a stream event has no 'choices' (not an OpenAI chunk)")
    choices = payload["choices"]
    if not isinstance(choices, list):
        raise UnreadableError("a stream event's 'choices' is not a list")
    out = []
    for pos, choice in enumerate(choices):
        where = f"choices[{pos}]"
        if not isinstance(choice, dict):
            raise UnreadableError(f"{where} of a stream event is a {type(choice).__name__}, not an object")
        index = choice.get("index", pos)
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < 1024:
            raise UnreadableError(f"{where}.index is not a small integer")
        finish = choice.get("finish_reason")
        if finish is not None and not isinstance(finish, str):
            raise UnreadableError(f"{where}.finish_reason is not a string")
        raw: list[tuple[Any, str]] = []
        if "delta" in choice:
            text, raw = _message_pieces(choice["delta"], f"{where}.delta", streamed=True)
        elif "text" in choice:
            text = _str_or_none(choice["text"], f"{where}.text")
        elif "message" in choice:  # some servers send whole messages in chunks
            text = _assistant_text(choice["message"], f"{where}.message")
        else:
            text = ""
        out.append(Delta(index, text, finish, tuple(raw)))
    return out


class DeltaReader:
    """:func:`read_deltas` for one stream: tool-call arguments, streamed as raw pieces of JSON, come out as the text
    of their string values (as :func:`arguments_text` reads a whole one), each character read once."""

    def __init__(self) -> None:
        self._readers: dict[tuple[int, Any], ArgumentsReader] = {}
        self._seen: set[int] = set()  # choices that have had text

    def read(self, payload: Any) -> list[Delta]:
        out = []
        for d in read_deltas(payload):
            text = [d.text]
            for key, piece in d.arguments:
                reader = self._readers.get((d.index, key))
                if reader is None:
                    reader = self._readers[(d.index, key)] = ArgumentsReader()
                    if d.index in self._seen or d.text:
                        text.append("\n")  # a tool call's text starts on its own line
                text.append(reader.feed(piece))
            joined = "".join(text)
            if joined.strip():
                self._seen.add(d.index)
            out.append(Delta(d.index, joined, d.finish) if d.arguments else d)
        return out


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


def only_content(payload: Any) -> bool:
    """True when the event's text comes from one chat ``delta.content`` string or completions ``text`` (so it
    can be cut with :func:`with_text`)."""
    try:
        (choice,) = payload["choices"]
        if "delta" in choice:
            d = choice["delta"]
            return isinstance(d.get("content"), str) and not any(d.get(k) for k in ("refusal", "tool_calls", "function_call"))
        return isinstance(choice.get("text"), str)
    except (KeyError, TypeError, ValueError, AttributeError):
        return False


def with_text(payload: dict[str, Any], text: str) -> bytes:
    """The event with its single choice's text replaced (used to cut an event at the last passed sentence)."""
    out = json.loads(json.dumps(payload))
    choice = out["choices"][0]
    if "delta" in choice:
        choice["delta"]["content"] = text
    else:
        choice["text"] = text
    choice["finish_reason"] = None
    return event_bytes(out)


def stop_events(template: Any, indices: list[int], text: str | None, info: dict[str, Any]) -> bytes:
    """The final chunk of a stopped stream (``finish_reason: "content_filter"`` for each choice, with the optional
    fallback text and a ``guardrail`` field), then ``[DONE]``; in the shape of ``template`` (the last event)."""
    base = template if isinstance(template, dict) else {}
    if str(base.get("type", "")).startswith("response."):
        events = []
        if text:
            events.append({"type": "response.output_text.delta", "delta": text})
        events.append({"type": "response.incomplete", "response": {"status": "incomplete",
                       "incomplete_details": {"reason": "content_filter"}}, "guardrail": info})
        return b"".join(event_bytes(e) for e in events) + DONE
    first = (base.get("choices") or [{}])[0] if isinstance(base.get("choices"), list) else {}
    chat = not base or not isinstance(first, dict) or "text" not in first
    choices = []
    for i in indices or [0]:
        choice: dict[str, Any] = {"index": i, "finish_reason": "content_filter"}
        if chat:
            choice["delta"] = {"content": text} if text else {}
        else:
            choice["text"] = text or ""
        choices.append(choice)
    payload = {
        "id": base.get("id", "guardrail"),
        "object": base.get("object", "chat.completion.chunk"),
        "created": base.get("created", 0),
        "model": base.get("model", ""),
        "choices": choices,
        "guardrail": info,
    }
    return event_bytes(payload) + DONE


# --------------------------------------------------------------------------- content encodings
class Decoder:
    """Incremental ``Content-Encoding`` decoder (identity, gzip, deflate in zlib or raw form); errors raise
    :class:`UnreadableError`. Output is bounded to ``limit`` bytes (a zip bomb is unreadable, not a crash)."""

    def __init__(self, encoding: str | None, limit: int = MAX_BODY_BYTES) -> None:
        enc = (encoding or "identity").strip().lower()
        self.encoding = enc
        self.limit = limit
        self._out = 0
        self._raw_deflate = False
        self._pending = b""
        if enc == "identity":
            self._z = None
        elif enc in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(wbits=31)
        elif enc == "deflate":
            self._z = zlib.decompressobj(wbits=15)
        else:
            raise UnreadableError(f"the answer is compressed with {encoding!r}, which guardrail cannot read; "
                                  "ask the upstream for identity, gzip or deflate")

    def decode(self, data: bytes) -> bytes:
        if self._z is None or not data:
            return data
        try:
            out = self._z.decompress(data, self.limit - self._out + 1)
        except zlib.error as exc:
            if self.encoding == "deflate" and not self._raw_deflate and self._out == 0:
                # many servers send raw deflate (no zlib header) as "deflate"
                self._raw_deflate = True
                self._z = zlib.decompressobj(wbits=-15)
                return self.decode(data)
            raise UnreadableError(f"the answer's {self.encoding} data is corrupt ({exc})") from None
        self._out += len(out)
        if self._out > self.limit or self._z.unconsumed_tail:
            raise UnreadableError(f"the decompressed answer is over {self.limit:,} bytes")
        return out

    def flush(self) -> bytes:
        if self._z is None:
            return b""
        try:
            out = self._z.flush()
        except zlib.error as exc:
            raise UnreadableError(f"the answer's {self.encoding} data is corrupt ({exc})") from None
        if not self._z.eof:
            raise UnreadableError(f"the answer's {self.encoding} data is truncated")
        return out


def sniff(prefix: bytes) -> str | None:
    """'sse', 'json' or None (unknown) from the first bytes of a decoded body; '' while there are too few."""
    head = prefix.lstrip(b" \t\r\n\xef\xbb\xbf")
    if not head:
        return ""
    if head[:1] in (b"{", b"["):
        return "json"
    for field in (b"data", b"event", b"id", b"retry", b":"):
        if head.startswith(field):
            return "sse"
        if len(head) < len(field) and field.startswith(head):
            return ""
    return None


def iter_texts(answers: list[Answer]) -> Iterator[tuple[int, str]]:
    for a in answers:
        yield a.index, a.text
