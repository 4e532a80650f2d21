"""``GuardrailMiddleware``: guard the answers of any ASGI app (Starlette, FastAPI, ...).

>>> app = GuardrailMiddleware(app, guard, routes=["/v1/chat/completions", "/ask"])      # doctest: +SKIP

For each POST to a configured route it needs the question, the contexts and the answer:

- question and contexts: recorded by the endpoint during the request with :func:`record` (real RAG apps
  retrieve inside the endpoint), else read from the JSON request body by ``request_extractor`` (default:
  the last user message of OpenAI ``messages``, ``input`` or ``prompt``, and a ``contexts`` or ``documents`` list);
- the answer: every choice and every assistant-visible text field of a JSON body or an SSE stream, read by
  :mod:`guardrail.wire` (chat completions, completions, Responses API), or by a custom ``response_extractor``.

The response path has one strategy per kind of answer (as starlette's GZip responders): a **stream**
(``text/event-stream``) is parsed incrementally and checked sentence by sentence; any other **2xx** answer is
buffered (bounded), decoded, and read as JSON, or as an event stream when that is what it holds whatever its
label; everything else (**non-2xx**, unguarded routes, other methods, websockets, lifespan) passes through
untouched, so upstream errors reach the caller.

Actions (from the guard's policy):

- pass/flag: the body goes out byte for byte, with ``x-guardrail-action``, ``x-guardrail-outcome`` and
  ``x-guardrail-<score>`` headers on JSON answers (optionally the verdict as a JSON field). Flag-mode
  streams are forwarded as they arrive (no delay to the first token) and checked at the end.
- block: a JSON answer is replaced by status ``block_status`` (400) with an OpenAI-style error body
  ``{"error": {"type": "guardrail_blocked", "code": "content_filter", "message", "reasons", "scores"}}``;
  a stream releases each sentence once it passed and, at the first failing one, ends with a final
  chunk ``finish_reason: "content_filter"`` (plus a ``guardrail`` field with the reasons) and ``[DONE]``.
- fallback: the failing choices' text is replaced by the policy's fallback message (``finish_reason:
  "content_filter"``).

An answer the guard cannot read (unknown shape or content type, invalid UTF-8 or JSON, an unsupported or corrupt
``Content-Encoding``, over 32 MB) is never passed as checked: it follows the policy's ``on_error`` (blocked by
default in block mode, delivered with ``x-guardrail-outcome: unchecked`` in flag mode), and is logged and counted
(``guardrail_check_errors_total{reason="unreadable"}``). Compressed answers (gzip, deflate) are decoded to be
checked and go out decoded (without ``Content-Encoding``).
"""

from __future__ import annotations

import asyncio
import json
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from guardrail import wire
from guardrail.errors import UnreadableError
from guardrail.guard import Guard
from guardrail.streaming import StreamGuard
from guardrail.verdict import Timings, Verdict

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

RequestExtractor = Callable[[Any], tuple[str | None, list[str] | None]]
ResponseExtractor = Callable[[Any], str | None]

MAX_REQUEST_BYTES = 10 * 1024 * 1024
GUARDED_ROUTES = ("/v1/chat/completions", "/v1/completions", "/v1/responses")


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
        if not isinstance(query, str):
            raise TypeError("guardrail.record(query=...) takes a string")
        rec.query = query
    if contexts is not None:
        if isinstance(contexts, str) or not all(isinstance(c, str) for c in contexts):
            raise TypeError("guardrail.record(contexts=...) takes a list of strings")
        rec.contexts = list(contexts)
    return True


# --------------------------------------------------------------------------- OpenAI requests
def _text_of(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") in ("text", "input_text")]
        return " ".join(p for p in parts if isinstance(p, str))
    return None


def openai_request(body: Any) -> tuple[str | None, list[str] | None]:
    """Question: the last user message (chat ``messages``, Responses ``input``) or ``prompt``; contexts:
    ``contexts`` or ``documents`` (strings, or objects with ``text``/``content``). Never raises."""
    if not isinstance(body, dict):
        return None, None
    question: str | None = None
    messages = body.get("messages")
    if not isinstance(messages, list):
        messages = body.get("input") if isinstance(body.get("input"), list) else []
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "user":
            question = _text_of(m.get("content"))
            break
    if question is None:
        for key in ("prompt", "input"):
            if isinstance(body.get(key), str):
                question = body[key]
                break
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
    """The first choice's text (kept for custom callers; the middleware reads every choice with
    :func:`guardrail.wire.read_answers`)."""
    try:
        return wire.read_answers(body)[0].text
    except UnreadableError:
        return None


# --------------------------------------------------------------------------- helpers
def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    for k, v in headers:
        if k.lower() == name:
            return v.decode("latin-1")
    return None


def _without(headers: Iterable[tuple[bytes, bytes]], *names: bytes) -> list[tuple[bytes, bytes]]:
    return [(k, v) for k, v in headers if k.lower() not in names]


def _verdict_headers(verdict: Verdict) -> list[tuple[bytes, bytes]]:
    out = [(b"x-guardrail-action", verdict.action.encode()), (b"x-guardrail-outcome", verdict.outcome.encode())]
    for name, value in (("faithfulness", verdict.scores.faithfulness),
                        ("retrieval-relevance", verdict.scores.retrieval_relevance),
                        ("response-relevance", verdict.scores.response_relevance)):
        if value is not None:
            out.append((f"x-guardrail-{name}".encode(), f"{value:.4f}".encode()))
    return out


def _json_messages(status: int, payload: Any, extra: list[tuple[bytes, bytes]] = ()) -> tuple[Message, Message]:  # type: ignore[assignment]
    body = json.dumps(payload, ensure_ascii=False).encode()
    start = {"type": "http.response.start", "status": status,
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]}
    return start, {"type": "http.response.body", "body": body, "more_body": False}


_SEVERITY = {"pass": 0, "flag": 1, "fallback": 2, "block": 3}
_OUTCOME = {"passed": 0, "error": 1, "failed": 2}


def worst(verdicts: list[Verdict]) -> Verdict:
    """The verdict that decides a multi-choice answer: the strongest action, then the worst outcome."""
    return max(verdicts, key=lambda v: (_SEVERITY[v.action], _OUTCOME[v.outcome]))


def _info(verdict: Verdict) -> dict[str, Any]:
    return {"action": verdict.action, "outcome": verdict.outcome, "reasons": list(verdict.reasons)}


# --------------------------------------------------------------------------- middleware
class GuardrailMiddleware:
    """Pure ASGI middleware; per-request state lives in a per-request object, never on ``self``."""

    def __init__(
        self,
        app: ASGIApp,
        guard: Guard,
        *,
        routes: Iterable[str] = GUARDED_ROUTES,
        request_extractor: RequestExtractor = openai_request,
        response_extractor: ResponseExtractor | None = None,
        block_status: int = 400,
        json_field: str | None = None,
    ) -> None:
        self.app = app
        self.guard = guard
        self.routes = frozenset(r.rstrip("/") or "/" for r in routes)
        self.request_extractor = request_extractor
        self.response_extractor = response_extractor
        self.block_status = block_status
        self.json_field = json_field
        # flag-mode stream checks that run after the last byte went out (tracked, never orphaned)
        self._background: set[asyncio.Task[Any]] = set()

    def guards(self, path: str) -> bool:
        """True for a guarded route (trailing and doubled slashes do not walk around it)."""
        norm = "/" + "/".join(p for p in path.split("/") if p)
        return norm in self.routes

    async def drain(self) -> None:
        """Wait for the flag-mode checks still running (e.g. at shutdown or in tests)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or not self.guards(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        await _Exchange(self, scope, receive, send).run()


class _Exchange:
    """One guarded request: reads the request, then hands the response to the responder its kind needs."""

    def __init__(self, mw: GuardrailMiddleware, scope: Scope, receive: Receive, send: Send) -> None:
        self.mw = mw
        self.guard = mw.guard
        self.scope = scope
        self.receive = receive
        self.send = send
        self.recording = _Recording()
        self.body = b""
        self.body_replayed = False
        self.closed = False  # the answer was answered for: the rest of the app's output is dropped
        self.responder: _Responder | None = None
        self.started = time.perf_counter()
        self.first_byte: float | None = None

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
                start, body = _json_messages(413, {"error": {
                    "message": f"request body over {MAX_REQUEST_BYTES} bytes", "type": "invalid_request_error"}})
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
        if self.closed:
            return {"type": "http.disconnect"}
        return await self.receive()

    def question_contexts(self) -> tuple[str, list[str]]:
        q, c = self.recording.query, self.recording.contexts
        if q is None or c is None:
            try:
                parsed = wire.loads(self.body) if self.body else None
            except UnreadableError:
                parsed = None
            rq, rc = self.mw.request_extractor(parsed)
            q = q if q is not None else rq
            c = c if c is not None else rc
        return q or "", c or []

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    async def _send(self, message: Message) -> None:
        if self.closed:
            return
        if message["type"] == "http.response.start":
            self.responder = self._choose(message)
            await self.responder.start(message)
        elif message["type"] == "http.response.body":
            if self.first_byte is None and message.get("body"):
                self.first_byte = self.elapsed()
            assert self.responder is not None, "http.response.body before http.response.start"
            await self.responder.body(message.get("body", b""), message.get("more_body", False))
        else:
            await self.send(message)

    def _choose(self, message: Message) -> _Responder:
        status = int(message["status"])
        if not 200 <= status < 300 or status in (204, 205):
            return _Passthrough(self)  # errors (and empty answers) reach the client untouched
        ctype = (_header(message.get("headers", []), b"content-type") or "").lower()
        if "text/event-stream" in ctype:
            return _Stream(self)
        return _Buffered(self)  # JSON, or anything else that must be read before it can go out

    # -- the on_error treatment of an answer the guard cannot read or judge
    async def unreadable(self, exc: Exception, start: Message, raw: bytes) -> None:
        """Apply ``on_error`` to an unreadable answer: block (or fallback), or deliver it marked unchecked."""
        verdict = self.guard.report(self.guard.error_verdict(exc, "", timings=Timings(0.0, self.first_byte, self.elapsed())))
        self.closed = True
        if verdict.action == "pass":  # fail_open: delivered as received, marked
            headers = list(start.get("headers", [])) + [(b"x-guardrail-outcome", b"unchecked")]
            await self.send({**start, "headers": headers})
            await self.send({"type": "http.response.body", "body": raw, "more_body": False})
            return
        await self.refuse(verdict)

    async def refuse(self, verdict: Verdict) -> None:
        """Send the block (error body, ``code`` "content_filter", or "unchecked" when it could not be checked) or the
        fallback answer."""
        self.closed = True
        code = "unchecked" if verdict.outcome == "error" else "content_filter"
        if verdict.action == "fallback":
            payload = {"id": "guardrail", "object": "chat.completion", "created": int(time.time()), "model": "",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": self.guard.policy.fallback_message},
                                    "finish_reason": "content_filter"}], "guardrail": _info(verdict)}
            start, body = _json_messages(200, payload, _verdict_headers(verdict))
        elif verdict.error_reason == "overload":  # at capacity: refused at once, the client may retry
            start, body = _json_messages(503, {"error": {
                "message": "guardrail is at capacity and did not check the answer: " + (verdict.error or ""),
                "type": "guardrail_overloaded", "code": "overloaded"}}, [*_verdict_headers(verdict), (b"retry-after", b"1")])
        else:
            start, body = _json_messages(self.mw.block_status, {"error": {
                "message": "the answer was blocked by guardrail: " + "; ".join(verdict.reasons),
                "type": "guardrail_blocked", "code": code,
                "reasons": list(verdict.reasons), "scores": verdict.to_dict(evidence=False)["scores"]}},
                _verdict_headers(verdict))
        await self.send(start)
        await self.send(body)


class _Responder(ABC):
    """One strategy per kind of answer: what to do with the response start and each body piece."""

    def __init__(self, ex: _Exchange) -> None:
        self.ex = ex

    @abstractmethod
    async def start(self, message: Message) -> None:
        """The app's ``http.response.start``."""

    @abstractmethod
    async def body(self, data: bytes, more: bool) -> None:
        """One ``http.response.body`` piece (``more``: not the last)."""


class _Passthrough(_Responder):
    async def start(self, message: Message) -> None:
        await self.ex.send(message)

    async def body(self, data: bytes, more: bool) -> None:
        await self.ex.send({"type": "http.response.body", "body": data, "more_body": more})


class _Buffered(_Responder):
    """A complete 2xx answer: buffered (bounded), decoded, read (JSON, or SSE whatever its label), checked."""

    def __init__(self, ex: _Exchange) -> None:
        super().__init__(ex)
        self.start_msg: Message = {}
        self.chunks: list[bytes] = []
        self.size = 0

    async def start(self, message: Message) -> None:
        self.start_msg = message

    async def body(self, data: bytes, more: bool) -> None:
        self.chunks.append(data)
        self.size += len(data)
        if self.size > wire.MAX_BODY_BYTES:
            await self.ex.unreadable(UnreadableError(f"the answer is over {wire.MAX_BODY_BYTES:,} bytes"),
                                     self.start_msg, b"".join(self.chunks))
            return
        if more:
            return
        raw = b"".join(self.chunks)
        headers = list(self.start_msg.get("headers", []))
        try:
            decoder = wire.Decoder(_header(headers, b"content-encoding"))
            decoded = decoder.decode(raw) + decoder.flush()
            kind = wire.sniff(decoded[:64])
            if kind == "sse":
                await self._as_stream(decoded)
                return
            body = wire.loads(decoded)
            texts = self._texts(body)
        except UnreadableError as exc:
            await self.ex.unreadable(exc, self.start_msg, raw)
            return
        ex = self.ex
        question, contexts = ex.question_contexts()
        generation = ex.elapsed()
        verdicts = list(await asyncio.gather(*(
            ex.guard.acheck(question, contexts, text, time_to_first_token=ex.first_byte, generation=generation)
            for _, text in texts)))
        verdict = worst(verdicts)
        if verdict.action == "block" or (verdict.action == "fallback" and not isinstance(body, dict)):
            await ex.refuse(verdict)
            return
        headers = _without(headers, b"content-encoding", b"content-length")
        out = decoded
        rewrite = verdict.action == "fallback" or ex.mw.json_field is not None
        if rewrite:
            if verdict.action == "fallback":
                failed = {i for (i, _), v in zip(texts, verdicts) if v.action == "fallback"}
                wire.replace_answers(body, failed, ex.guard.policy.fallback_message)
            if ex.mw.json_field is not None:
                body[ex.mw.json_field] = verdict.to_dict(evidence=False)
            out = json.dumps(body, ensure_ascii=False).encode()
        headers.append((b"content-length", str(len(out)).encode()))
        ex.closed = True
        await ex.send({**self.start_msg, "headers": headers + _verdict_headers(verdict)})
        await ex.send({"type": "http.response.body", "body": out, "more_body": False})

    def _texts(self, body: Any) -> list[tuple[int, str]]:
        custom = self.ex.mw.response_extractor
        if custom is not None:
            text = custom(body)
            if not isinstance(text, str):
                raise UnreadableError("the response_extractor found no answer text in the body")
            return [(0, text)]
        return list(wire.iter_texts(wire.read_answers(body)))

    async def _as_stream(self, decoded: bytes) -> None:
        """An event stream sent with another label: checked as a stream, sent as one body."""
        headers = _without(self.start_msg.get("headers", []), b"content-encoding", b"content-length", b"content-type")
        stream = _Stream(self.ex, buffered=True)
        await stream.start({**self.start_msg, "headers": [*headers, (b"content-type", b"text/event-stream")]},
                           decoded=True)
        await stream.body(decoded, False)


class _Stream(_Responder):
    """An SSE answer. Hold mode (block/fallback): events go out once all their text passed, in order; the end of
    each choice only when the whole answer passed. Flag/pass mode: forwarded at once, checked after the last byte."""

    def __init__(self, ex: _Exchange, *, buffered: bool = False) -> None:
        super().__init__(ex)
        self.hold = ex.guard.policy.action in ("block", "fallback")
        self.buffered = buffered  # send everything in one body at the end
        self.parser = wire.SSEParser()
        self.deltas = wire.DeltaReader()
        self.decoder: wire.Decoder | None = None
        self.decode_error: UnreadableError | None = None
        self.streams: dict[int, StreamGuard] = {}
        self.budget: dict[int, int] = {}
        self.pending: deque[tuple[wire.SSEEvent, list[wire.Delta]]] = deque()
        self.template: Any = None
        self.out: list[bytes] = []
        self.ttft: float | None = None
        self.checking = 0.0
        self.unreadable: UnreadableError | None = None
        self.question, self.contexts = ex.question_contexts()

    async def start(self, message: Message, decoded: bool = False) -> None:
        headers = list(message.get("headers", []))
        if not decoded:
            try:
                self.decoder = wire.Decoder(_header(headers, b"content-encoding"))
            except UnreadableError as exc:
                self.decode_error = exc
        if self.hold:
            if self.decode_error is not None:
                # nothing is sent yet: the answer is refused as a whole
                self.ex.closed = True
                await self.ex.unreadable(self.decode_error, message, b"")
                return
            headers = _without(headers, b"content-length", b"content-encoding")  # decoded events go out
        elif self.decode_error is not None:
            self.ex.guard.report(self.ex.guard.error_verdict(self.decode_error, "", timings=Timings(0.0)))
            headers.append((b"x-guardrail-outcome", b"unchecked"))
        if not self.buffered:
            await self.ex.send({**message, "headers": headers})
        else:
            self.start_msg = {**message, "headers": headers}

    def _stream(self, index: int) -> StreamGuard:
        s = self.streams.get(index)
        if s is None:
            s = self.streams[index] = self.ex.guard.stream(self.question, self.contexts)
            self.budget[index] = 0
        return s

    def _parse(self, data: bytes, more: bool) -> list[wire.SSEEvent]:
        if self.decoder is not None:
            data = self.decoder.decode(data)
            if not more:
                data += self.decoder.flush()
        events = self.parser.feed(data)
        if not more:
            events += self.parser.close()
        return events

    async def body(self, data: bytes, more: bool) -> None:
        if not self.hold:
            await self._flag(data, more)
            return
        try:
            events = self._parse(data, more)
        except UnreadableError as exc:
            events, self.unreadable = [], exc
        for ev in events:
            if self.unreadable is not None:
                break
            try:
                deltas = [] if ev.empty or ev.done else self._deltas(ev)
            except UnreadableError as exc:
                if self.ex.guard.policy.on_error == "fail_closed":
                    self.unreadable = exc
                    break
                # fail_open: delivered unchecked, logged and counted
                self.ex.guard.error_verdict(exc, "", timings=Timings(0.0))
                deltas = []
            self.pending.append((ev, deltas))
            for d in deltas:
                if not d.text:
                    continue
                if self.ttft is None:
                    self.ttft = self.ex.elapsed() - self.checking
                s = self._stream(d.index)
                if s.add(d.text):
                    t0 = time.perf_counter()
                    self.budget[d.index] += len(await asyncio.to_thread(s.release))
                    self.checking += time.perf_counter() - t0
            if any(s.stopped for s in self.streams.values()):
                break
        stopped = [i for i, s in self.streams.items() if s.stopped]
        if self.unreadable is not None:
            await self._stop_unreadable(self.unreadable)
        elif stopped:
            await self._stop(stopped[0])
        elif not more:
            await self._end()
        else:
            await self._emit(self._drain(final=False), final=False)

    def _deltas(self, ev: wire.SSEEvent) -> list[wire.Delta]:
        if ev.malformed is not None:
            raise UnreadableError(f"the stream sent an event that guardrail cannot read: {ev.malformed}")
        try:
            deltas = self.deltas.read(ev.payload)
        except UnreadableError as exc:
            raise UnreadableError(f"the stream sent an event that guardrail cannot read: {exc}") from None
        self.template = ev.payload
        return deltas

    def _drain(self, final: bool, split: bool = False) -> list[bytes]:
        out: list[bytes] = []
        while self.pending:
            ev, deltas = self.pending[0]
            if not final and (ev.done or any(d.finish is not None for d in deltas)):
                break  # the end of the answer goes out only once the whole answer passed
            if all(len(d.text) <= self.budget.get(d.index, 0) for d in deltas if d.text):
                for d in deltas:
                    if d.text:
                        self.budget[d.index] -= len(d.text)
                out.append(ev.raw)
                self.pending.popleft()
                continue
            if split and len(deltas) == 1 and wire.only_content(ev.payload):
                d = deltas[0]
                if self.budget.get(d.index, 0) > 0:
                    out.append(wire.with_text(ev.payload, d.text[: self.budget[d.index]]))
                    self.budget[d.index] = 0
            break
        return out

    def _timings(self) -> dict[str, float | None]:
        return {"time_to_first_token": self.ttft, "generation": self.ex.elapsed() - self.checking}

    async def _end(self) -> None:
        ends = [await s.afinish(**self._timings()) for s in self.streams.values()]
        for i, end in zip(self.streams, ends):
            self.budget[i] += len(end.text)
        if any(s.stopped for s in self.streams.values()):
            await self._stop([i for i, s in self.streams.items() if s.stopped][0], ended=ends)
            return
        await self._emit(self._drain(final=True), final=True)

    async def _stop(self, index: int, ended: list[Any] | None = None) -> None:
        stream = self.streams[index]
        verdict = (await stream.afinish(**self._timings())).verdict
        text = self.ex.guard.policy.fallback_message if verdict.action == "fallback" else None
        out = self._drain(final=False, split=True)
        out.append(wire.stop_events(self.template, sorted(self.streams) or [0], text, _info(verdict)))
        await self._emit(out, final=True)

    async def _stop_unreadable(self, exc: UnreadableError) -> None:
        ex = self.ex
        verdict = ex.guard.report(ex.guard.error_verdict(exc, "", timings=Timings(self.checking, self.ttft, ex.elapsed())))
        out = self._drain(final=False)
        text = ex.guard.policy.fallback_message if verdict.action == "fallback" else None
        out.append(wire.stop_events(self.template, sorted(self.streams) or [0], text, _info(verdict)))
        await self._emit(out, final=True)

    async def _emit(self, chunks: list[bytes], final: bool) -> None:
        if final:
            self.ex.closed = True
        if self.buffered:
            self.out.extend(chunks)
            if final:
                body = b"".join(self.out)
                headers = list(self.start_msg["headers"]) + [(b"content-length", str(len(body)).encode())]
                await self.ex.send({**self.start_msg, "headers": headers})
                await self.ex.send({"type": "http.response.body", "body": body, "more_body": False})
            return
        body = b"".join(chunks)
        if body or final:
            await self.ex.send({"type": "http.response.body", "body": body, "more_body": not final})

    # -- flag / pass mode: forward first, read after
    async def _flag(self, data: bytes, more: bool) -> None:
        ex = self.ex
        if self.buffered:
            await self._emit([data], final=not more)
        else:
            await ex.send({"type": "http.response.body", "body": data, "more_body": more})
        if self.decode_error is None and self.unreadable is None:
            try:
                for ev in self._parse(data, more):
                    for d in [] if ev.empty or ev.done else self._deltas(ev):
                        if d.text:
                            self._stream(d.index).add(d.text)
            except UnreadableError as exc:
                self.unreadable = exc
                ex.guard.report(ex.guard.error_verdict(exc, "", timings=Timings(0.0)))
        if more:
            return
        if not self.buffered:
            ex.closed = True
        if self.unreadable is None and self.decode_error is None:
            # the client already has every byte: check in the background, so the connection is free for
            # its next request instead of waiting for this verdict (recorded by the guard's observer)
            timings = {"time_to_first_token": ex.first_byte, "generation": ex.elapsed()}
            for s in self.streams.values():
                ex.mw._spawn(s.afinish(**timings))
