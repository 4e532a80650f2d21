"""``GuardrailMiddleware``: guard the answers of any ASGI app (Starlette, FastAPI, ...).

>>> app = GuardrailMiddleware(app, guard, routes=["/v1/chat/completions", "/ask"])      # doctest: +SKIP

For each POST to a configured route it needs the question, the contexts and the answer:

- question and contexts: recorded by the endpoint during the request with :func:`record` (real RAG apps
  retrieve inside the endpoint), else read from the JSON request body by ``request_extractor`` (default:
  the last user message of OpenAI ``messages`` or ``prompt``, and a ``contexts`` or ``documents`` list);
- the answer: a JSON body (``response_extractor``; default: OpenAI chat/completions) or a Server-Sent
  Events stream of OpenAI chunks.

Actions (from the guard's policy):

- pass/flag: the body goes out byte for byte, with ``x-guardrail-action``, ``x-guardrail-outcome`` and
  ``x-guardrail-<score>`` headers on JSON answers (optionally the verdict as a JSON field). Flag-mode
  streams are forwarded as they arrive (no delay to the first token) and checked at the end.
- block: a JSON answer is replaced by status ``block_status`` (400) with an OpenAI-style error body
  ``{"error": {"type": "guardrail_blocked", "code": "content_filter", "message", "reasons", "scores"}}``;
  a stream releases each sentence once it passed and, at the first failing one, ends with a final
  chunk ``finish_reason: "content_filter"`` (plus a ``guardrail`` field with the reasons) and ``[DONE]``.
- fallback: the answer text is replaced by the policy's fallback message (``finish_reason: "content_filter"``).

Compressed answers (``Content-Encoding: gzip``/``deflate``) are decoded to be checked; any other
encoding is refused with status 502 in block/fallback mode (never delivered unchecked) and marked
``x-guardrail-outcome: unchecked`` in flag mode. Unguarded routes, other methods, non-JSON bodies,
websockets and lifespan pass through untouched.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from guardrail.guard import Guard
from guardrail.streaming import ReleaseGate
from guardrail.verdict import Verdict

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

RequestExtractor = Callable[[Any], tuple[str | None, list[str] | None]]
ResponseExtractor = Callable[[Any], str | None]

MAX_REQUEST_BYTES = 10 * 1024 * 1024


# --------------------------------------------------------------------------- request-scoped recording
@dataclass
class _Recording:
    query: str | None = None
    contexts: list[str] | None = None


_current: ContextVar[_Recording | None] = ContextVar("guardrail_recording", default=None)


def record(*, query: str | None = None, contexts: list[str] | None = None) -> bool:
    """Tell the middleware the question and the retrieved contexts of the current request.

    Call it inside an endpoint served behind :class:`GuardrailMiddleware`. Returns False (and does
    nothing) outside a guarded request, so the same endpoint code also runs unguarded.
    """
    rec = _current.get()
    if rec is None:
        return False
    if query is not None:
        rec.query = query
    if contexts is not None:
        if isinstance(contexts, str) or not all(isinstance(c, str) for c in contexts):
            raise TypeError("guardrail.record(contexts=...) takes a list of strings")
        rec.contexts = list(contexts)
    return True


# --------------------------------------------------------------------------- OpenAI formats
def openai_request(body: Any) -> tuple[str | None, list[str] | None]:
    """Question: the last user message (or ``prompt``); contexts: ``contexts`` or ``documents``."""
    if not isinstance(body, dict):
        return None, None
    question: str | None = None
    for m in reversed(body.get("messages") or []):
        if isinstance(m, dict) and m.get("role") == "user":
            content = m.get("content")
            if isinstance(content, list):
                content = " ".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
            question = content if isinstance(content, str) else None
            break
    if question is None and isinstance(body.get("prompt"), str):
        question = body["prompt"]
    raw = body.get("contexts", body.get("documents"))
    contexts: list[str] | None = None
    if isinstance(raw, list):
        contexts = []
        for item in raw:
            if isinstance(item, str):
                contexts.append(item)
            elif isinstance(item, dict):
                text = item.get("text", item.get("content"))
                if isinstance(text, str):
                    contexts.append(text)
    return question, contexts


def openai_response(body: Any) -> str | None:
    """The answer text of an OpenAI chat completion (``message.content``) or completion (``text``)."""
    try:
        choice = body["choices"][0]
    except (KeyError, IndexError, TypeError):
        return None
    if isinstance(choice.get("message"), dict):
        content = choice["message"].get("content")
        return content if isinstance(content, str) else ""
    text = choice.get("text")
    return text if isinstance(text, str) else None


def _set_answer(body: dict[str, Any], text: str) -> None:
    choice = body["choices"][0]
    if isinstance(choice.get("message"), dict):
        choice["message"]["content"] = text
    else:
        choice["text"] = text
    choice["finish_reason"] = "content_filter"


# --------------------------------------------------------------------------- SSE
_EVENT_END = re.compile(rb"\r?\n\r?\n")


@dataclass
class SSEEvent:
    raw: bytes
    payload: dict[str, Any] | None = None
    done: bool = False
    malformed: bool = False


def parse_event(raw: bytes) -> SSEEvent:
    data_lines = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        if line.startswith("data:"):
            data_lines.append(line[5:][1:] if line[5:].startswith(" ") else line[5:])
    if not data_lines:
        return SSEEvent(raw)  # comment / keep-alive / other field: no answer text
    data = "\n".join(data_lines)
    if data.strip() == "[DONE]":
        return SSEEvent(raw, done=True)
    try:
        payload = json.loads(data)
    except json.JSONDecodeError:
        return SSEEvent(raw, malformed=True)
    return SSEEvent(raw, payload if isinstance(payload, dict) else None, malformed=not isinstance(payload, dict))


def _event_bytes(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode() + b"\n\n"


class _SSEAdapter:
    """ChunkAdapter for OpenAI SSE events (chat ``delta.content`` or completions ``text``)."""

    def content(self, ev: SSEEvent) -> str:
        try:
            choice = ev.payload["choices"][0]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return ""
        if isinstance(choice.get("delta"), dict):
            return choice["delta"].get("content") or ""
        return choice.get("text") or ""

    def finish(self, ev: SSEEvent) -> str | None:
        if ev.done:
            return "[DONE]"
        try:
            return ev.payload["choices"][0].get("finish_reason")  # type: ignore[index,no-any-return]
        except (KeyError, IndexError, TypeError, AttributeError):
            return None

    def with_content(self, ev: SSEEvent, text: str | None, finish: str | None) -> SSEEvent:
        payload = copy.deepcopy(ev.payload) or {}
        choice = payload["choices"][0]
        if isinstance(choice.get("delta"), dict):
            choice["delta"]["content"] = text
        else:
            choice["text"] = text or ""
        choice["finish_reason"] = finish
        return SSEEvent(_event_bytes(payload), payload)

    def stop_item(self, template: SSEEvent | None, text: str | None, verdict: Verdict) -> list[SSEEvent]:
        base = template.payload if template is not None and template.payload else {}
        chat = not base or isinstance((base.get("choices") or [{}])[0].get("delta"), dict)
        choice: dict[str, Any] = {"index": 0, "finish_reason": "content_filter"}
        if chat:
            choice["delta"] = {"content": text} if text else {}
        else:
            choice["text"] = text or ""
        payload = {
            "id": base.get("id", "guardrail"),
            "object": base.get("object", "chat.completion.chunk"),
            "created": base.get("created", int(time.time())),
            "model": base.get("model", ""),
            "choices": [choice],
            "guardrail": {"action": verdict.action, "outcome": verdict.outcome, "reasons": list(verdict.reasons)},
        }
        return [SSEEvent(_event_bytes(payload), payload), SSEEvent(b"data: [DONE]\n\n", done=True)]


# --------------------------------------------------------------------------- middleware
def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    for k, v in headers:
        if k.lower() == name:
            return v.decode("latin-1")
    return None


def _without(headers: Iterable[tuple[bytes, bytes]], *names: bytes) -> list[tuple[bytes, bytes]]:
    return [(k, v) for k, v in headers if k.lower() not in names]


def _decoder(encoding: str | None) -> Any:
    enc = (encoding or "identity").strip().lower()
    if enc == "identity":
        return None
    if enc in ("gzip", "x-gzip"):
        return zlib.decompressobj(wbits=31)
    if enc == "deflate":
        return zlib.decompressobj(wbits=15)
    return False  # unsupported


def _verdict_headers(verdict: Verdict) -> list[tuple[bytes, bytes]]:
    out = [(b"x-guardrail-action", verdict.action.encode()), (b"x-guardrail-outcome", verdict.outcome.encode())]
    for name, value in (("faithfulness", verdict.scores.faithfulness),
                        ("retrieval-relevance", verdict.scores.retrieval_relevance),
                        ("response-relevance", verdict.scores.response_relevance)):
        if value is not None:
            out.append((f"x-guardrail-{name}".encode(), f"{value:.4f}".encode()))
    return out


def _json_error(status: int, payload: dict[str, Any]) -> tuple[Message, Message]:
    body = json.dumps(payload).encode()
    start = {"type": "http.response.start", "status": status,
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]}
    return start, {"type": "http.response.body", "body": body, "more_body": False}


class GuardrailMiddleware:
    """Pure ASGI middleware; per-request state lives in a per-request object, never on ``self``."""

    def __init__(
        self,
        app: ASGIApp,
        guard: Guard,
        *,
        routes: Iterable[str] = ("/v1/chat/completions", "/v1/completions"),
        request_extractor: RequestExtractor = openai_request,
        response_extractor: ResponseExtractor = openai_response,
        block_status: int = 400,
        json_field: str | None = None,
    ) -> None:
        self.app = app
        self.guard = guard
        self.routes = frozenset(routes)
        self.request_extractor = request_extractor
        self.response_extractor = response_extractor
        self.block_status = block_status
        self.json_field = json_field
        # flag-mode stream checks that run after the last byte went out (tracked, never orphaned)
        self._background: set[asyncio.Task[Any]] = set()

    async def drain(self) -> None:
        """Wait for the flag-mode checks still running (e.g. at shutdown or in tests)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("path") not in self.routes:
            await self.app(scope, receive, send)
            return
        await _Exchange(self, scope, receive, send).run()


@dataclass
class _Exchange:
    mw: GuardrailMiddleware
    scope: Scope
    receive: Receive
    send: Send
    recording: _Recording = field(default_factory=_Recording)
    body: bytes = b""
    body_replayed: bool = False
    stopped: bool = False
    mode: str = "passthrough"
    start_msg: Message | None = None
    chunks: list[bytes] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    first_byte: float | None = None
    decoder: Any = None
    sse_buffer: bytes = b""
    gate: ReleaseGate[SSEEvent] | None = None
    flag_stream: Any = None

    # ------------------------------------------------------------------ request side
    async def run(self) -> None:
        parts = []
        size = 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                return
            parts.append(message.get("body", b""))
            size += len(parts[-1])
            if size > MAX_REQUEST_BYTES:
                start, body = _json_error(413, {"error": {"message": f"request body over {MAX_REQUEST_BYTES} bytes",
                                                          "type": "invalid_request_error"}})
                await self.send(start)
                await self.send(body)
                return
            if not message.get("more_body", False):
                break
        self.body = b"".join(parts)
        token = _current.set(self.recording)
        try:
            await self.mw.app(self.scope, self._replay, self._send)
        finally:
            _current.reset(token)

    async def _replay(self) -> Message:
        if not self.body_replayed:
            self.body_replayed = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        if self.stopped:
            return {"type": "http.disconnect"}
        return await self.receive()

    def _question_contexts(self) -> tuple[str, list[str]]:
        q, c = self.recording.query, self.recording.contexts
        if q is None or c is None:
            try:
                parsed = json.loads(self.body) if self.body else None
            except (json.JSONDecodeError, UnicodeDecodeError):
                parsed = None
            rq, rc = self.mw.request_extractor(parsed)
            q = q if q is not None else rq
            c = c if c is not None else rc
        return q or "", c or []

    # ------------------------------------------------------------------ response side
    async def _send(self, message: Message) -> None:
        if self.stopped:
            return  # the answer was blocked: the rest of the app's output is dropped
        kind = message["type"]
        if kind == "http.response.start":
            await self._start(message)
        elif kind == "http.response.body":
            if self.first_byte is None and message.get("body"):
                self.first_byte = time.perf_counter() - self.started
            if self.mode == "json":
                await self._json_body(message)
            elif self.mode == "sse":
                await self._sse_body(message)
            else:
                await self.send(message)
        else:
            await self.send(message)

    async def _start(self, message: Message) -> None:
        headers = list(message.get("headers", []))
        ctype = (_header(headers, b"content-type") or "").lower()
        is_json, is_sse = "json" in ctype, "text/event-stream" in ctype
        if message["status"] != 200 or not (is_json or is_sse):
            await self.send(message)  # errors and other bodies reach the client untouched
            return
        hold = self.mw.guard.policy.action in ("block", "fallback")
        self.decoder = _decoder(_header(headers, b"content-encoding"))
        if self.decoder is False:
            encoding = _header(headers, b"content-encoding")
            if self.mw.guard.observer is not None:
                self.mw.guard.observer.error("input")
            if hold:
                self.stopped = True
                start, body = _json_error(502, {"error": {
                    "message": f"the answer is compressed with {encoding!r}, which guardrail cannot check; "
                               "ask the upstream for identity, gzip or deflate",
                    "type": "guardrail_error", "code": "unsupported_content_encoding"}})
                await self.send(start)
                await self.send(body)
                return
            message = {**message, "headers": headers + [(b"x-guardrail-outcome", b"unchecked")]}
            await self.send(message)
            return
        if is_json:
            self.mode = "json"
            self.start_msg = message
            return
        self.mode = "sse"
        question, contexts = self._question_contexts()
        stream = self.mw.guard.stream(question, contexts)
        if hold:
            self.gate = ReleaseGate(stream, _SSEAdapter(), self.started)
            # decoded events are sent on, so the encoding and length headers go
            headers = _without(headers, b"content-length", b"content-encoding")
        else:
            self.flag_stream = stream
        await self.send({**message, "headers": headers})

    # JSON ---------------------------------------------------------------
    async def _json_body(self, message: Message) -> None:
        self.chunks.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        raw = b"".join(self.chunks)
        start = self.start_msg
        assert start is not None
        headers = list(start.get("headers", []))
        try:
            decoded = self.decoder.decompress(raw) + self.decoder.flush() if self.decoder else raw
            body = json.loads(decoded)
        except (zlib.error, json.JSONDecodeError, UnicodeDecodeError):
            await self.send(start)
            await self.send({"type": "http.response.body", "body": raw, "more_body": False})
            return
        text = self.mw.response_extractor(body)
        if text is None:  # not an answer we know how to read: untouched, but marked
            await self.send({**start, "headers": headers + [(b"x-guardrail-outcome", b"unchecked")]})
            await self.send({"type": "http.response.body", "body": raw, "more_body": False})
            return
        question, contexts = self._question_contexts()
        generation = time.perf_counter() - self.started
        verdict = await self.mw.guard.acheck(question, contexts, text,
                                             time_to_first_token=self.first_byte, generation=generation)
        if verdict.action == "block":
            start_msg, body_msg = _json_error(self.mw.block_status, {"error": {
                "message": "the answer was blocked by guardrail: " + "; ".join(verdict.reasons),
                "type": "guardrail_blocked", "code": "content_filter",
                "reasons": list(verdict.reasons), "scores": verdict.to_dict(evidence=False)["scores"]}})
            await self.send({**start_msg, "headers": start_msg["headers"] + _verdict_headers(verdict)})
            await self.send(body_msg)
            return
        rewrite = verdict.action == "fallback" or self.mw.json_field is not None
        if verdict.action == "fallback" and isinstance(body, dict):
            _set_answer(body, self.mw.guard.policy.fallback_message)
        if rewrite and isinstance(body, dict):
            if self.mw.json_field is not None:
                body[self.mw.json_field] = verdict.to_dict(evidence=False)
            raw = json.dumps(body, ensure_ascii=False).encode()
            headers = _without(headers, b"content-length", b"content-encoding") + [(b"content-length", str(len(raw)).encode())]
        await self.send({**start, "headers": headers + _verdict_headers(verdict)})
        await self.send({"type": "http.response.body", "body": raw, "more_body": False})

    # SSE ----------------------------------------------------------------
    async def _sse_body(self, message: Message) -> None:
        raw = message.get("body", b"")
        more = message.get("more_body", False)
        if self.gate is None:  # flag mode: forward first, then read
            await self.send(message)
        data = self.decoder.decompress(raw) if self.decoder and raw else raw
        if not more and self.decoder:
            data += self.decoder.flush()
        self.sse_buffer += data
        events = []
        while True:
            m = _EVENT_END.search(self.sse_buffer)
            if m is None:
                break
            events.append(parse_event(self.sse_buffer[: m.end()]))
            self.sse_buffer = self.sse_buffer[m.end() :]
        if not more and self.sse_buffer.strip():
            events.append(parse_event(self.sse_buffer + b"\n\n"))
            self.sse_buffer = b""
        if self.gate is None:
            await self._flag_events(events, more)
        else:
            await self._hold_events(events, more)

    async def _flag_events(self, events: list[SSEEvent], more: bool) -> None:
        stream = self.flag_stream
        adapter = _SSEAdapter()
        for ev in events:
            if ev.malformed and self.mw.guard.observer is not None:
                self.mw.guard.observer.error("input")
            text = adapter.content(ev)
            if text:
                stream.feed(text)
        if not more:
            # the client already has every byte: check in the background, so the connection is free for
            # its next request instead of waiting for this verdict (recorded by the guard's observer)
            generation = time.perf_counter() - self.started
            task = asyncio.create_task(stream.afinish(time_to_first_token=self.first_byte, generation=generation))
            self.mw._background.add(task)
            task.add_done_callback(self.mw._background.discard)

    async def _hold_events(self, events: list[SSEEvent], more: bool) -> None:
        gate = self.gate
        assert gate is not None
        out: list[SSEEvent] = []
        for ev in events:
            if ev.malformed:
                # an event that cannot be read cannot be checked: it follows on_error
                if self.mw.guard.observer is not None:
                    self.mw.guard.observer.error("input")
                if self.mw.guard.policy.on_error == "fail_closed":
                    gate.stream.stop("the upstream stream sent an event that is not valid JSON", "format")
                    break
                continue
            out.extend(await asyncio.to_thread(gate.push, ev))
            if gate.stream.stopped:
                break
        if gate.stream.stopped or not more:
            tail, _verdict = await gate.aend()
            out.extend(tail)
            await self._emit(out, final=True)
            self.stopped = True
            return
        await self._emit(out, final=False)

    async def _emit(self, events: list[SSEEvent], final: bool) -> None:
        body = b"".join(ev.raw for ev in events)
        if body or final:
            await self.send({"type": "http.response.body", "body": body, "more_body": not final})
