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
default in block mode; otherwise delivered and marked unchecked: ``x-guardrail-outcome: unchecked`` with
``x-guardrail-action`` the action taken, or, for a stream whose headers are already out, a ``guardrail`` field with the
same on its last event; flag mode never blocks: ``fail_closed`` flags it, ``fail_open`` passes it), and is logged and
counted once (``guardrail_check_errors_total{reason="unreadable"}``). Compressed answers (gzip, deflate) are decoded to be
checked and go out decoded (without ``Content-Encoding``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from guardrail import wire
from guardrail.asgi_stream import (
    Message,
    Receive,
    Responder,
    Scope,
    Send,
    StreamResponder,
    header,
    info,
    unchecked_headers,
    without,
)
from guardrail.errors import UnreadableError
from guardrail.guard import Guard
from guardrail.routes import PathError, encode_path, normalize_path, request_path
from guardrail.verdict import Timings, Verdict, worst

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
        given = body.get("input")
        messages = given if isinstance(given, list) else []
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
        self.routes = frozenset(normalize_path(r) for r in routes)
        self._route_keys = frozenset(r.casefold() for r in self.routes)
        self.request_extractor = request_extractor
        self.response_extractor = response_extractor
        self.block_status = block_status
        self.json_field = json_field
        # flag-mode stream checks that run after the last byte went out (tracked, never orphaned)
        self._background: set[asyncio.Task[Any]] = set()

    def guards(self, path: str) -> bool:
        """True when ``path`` names a guarded route in any spelling: normalized by :mod:`guardrail.routes`
        (percent-encodings, dot segments, doubled slashes, backslashes, ``;`` parameters, trailing dots and slashes)
        and compared without case (the app's router may ignore case). A path that cannot be read counts as guarded."""
        try:
            return normalize_path(path).casefold() in self._route_keys
        except PathError:
            return True

    async def drain(self) -> None:
        """Wait for the flag-mode checks still running (e.g. at shutdown or in tests)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            path = request_path(scope)  # what the client sent (raw_path), normalized once
        except PathError as exc:  # such a path may name a guarded route for some router: refused, never passed on
            await _refuse(send, exc.status, f"the request path cannot be read: {exc}", "invalid_request_error")
            return
        if path.casefold() not in self._route_keys:
            await self.app(scope, receive, send)
            return
        method = scope.get("method")
        if method == "OPTIONS":  # a CORS preflight carries no answer
            await self.app(scope, receive, send)
            return
        if method != "POST":  # a GET (stored completions, ...) would deliver text the guard never read
            await _refuse(send, 405, f"{method} is not allowed on the guarded route {path} (only POST)",
                          "method_not_allowed", [(b"allow", b"POST, OPTIONS")])
            return
        # the app sees the one spelling that was matched: what it routes is what was guarded
        scope = {**scope, "path": path, "raw_path": encode_path(path).encode("ascii")}
        await _Exchange(self, scope, receive, send).run()


async def _refuse(send: Send, status: int, message: str, code: str,
                  extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """Answer a request the middleware refuses itself (the app never sees it)."""
    start, body = _json_messages(status, {"error": {"message": message, "type": "invalid_request_error", "code": code}},
                                 list(extra))
    await send(start)
    await send(body)


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
        self.responder: Responder[Any] | None = None
        self.started = time.perf_counter()
        self.first_byte: float | None = None
        self._echo: frozenset[str] | None = None

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

    def _choose(self, message: Message) -> Responder[Any]:
        status = int(message["status"])
        if not 200 <= status < 300 or status in (204, 205):
            return _Passthrough(self)  # errors (and empty answers) reach the client untouched
        return _Sniff(self)  # the body's first bytes say what it is (a stream, or JSON to read), not its label

    def echo(self) -> frozenset[str]:
        """The strings of the request, which an answer may repeat (the Responses API echoes instructions, tools...)."""
        if self._echo is None:
            try:
                self._echo = wire.request_strings(wire.loads(self.body) if self.body else None)
            except UnreadableError:
                self._echo = frozenset()
        return self._echo

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run a check after the answer went out (tracked by the middleware, never orphaned)."""
        self.mw._spawn(coro)

    # -- the on_error treatment of an answer the guard cannot read or judge
    def unchecked(self, exc: Exception) -> Verdict:
        """The verdict on an answer the guard cannot read, per ``on_error`` (logged, counted and reported)."""
        return self.guard.report(self.guard.error_verdict(exc, "", timings=Timings(0.0, self.first_byte, self.elapsed())))

    async def unreadable(self, exc: Exception, start: Message, raw: bytes) -> None:
        """Apply ``on_error`` to an unreadable answer: block (or fallback), or deliver it as received, marked
        ``x-guardrail-outcome: unchecked`` with the action taken (``flag`` in flag mode with ``fail_closed``: flag
        mode never blocks; ``pass`` with ``fail_open``)."""
        verdict = self.unchecked(exc)
        self.closed = True
        if not verdict.blocked:
            headers = list(start.get("headers", [])) + unchecked_headers(verdict)
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
                                    "finish_reason": "content_filter"}], "guardrail": info(verdict)}
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


class _Passthrough(Responder["_Exchange"]):
    async def start(self, message: Message) -> None:
        await self.ex.send(message)

    async def body(self, data: bytes, more: bool) -> None:
        await self.ex.send({"type": "http.response.body", "body": data, "more_body": more})


class _Sniff(Responder["_Exchange"]):
    """A 2xx answer until its first bytes say what it is: an event stream labelled as one goes to
    :class:`StreamResponder`, anything else to :class:`_Buffered` (JSON is read as JSON whatever its label, an event
    stream with another label as a stream, anything else is refused); that responder then gets the start and every
    piece so far."""

    def __init__(self, ex: _Exchange) -> None:
        super().__init__(ex)
        self.start_msg: Message = {}
        self.pieces: list[tuple[bytes, bool]] = []
        self.sniffer = wire.Sniffer(None)

    async def start(self, message: Message) -> None:
        self.start_msg = message
        headers = message.get("headers", [])
        self.sniffer = wire.Sniffer(header(headers, b"content-type"), header(headers, b"content-encoding"))

    async def body(self, data: bytes, more: bool) -> None:
        self.pieces.append((data, more))
        kind = self.sniffer.feed(data, more)
        if kind is None:
            return
        ex: Any = self.ex
        responder = StreamResponder(ex) if kind == "sse" and self.sniffer.labelled_sse else _Buffered(ex)
        ex.responder = responder
        await responder.start(self.start_msg)
        for piece, more_ in self.pieces:
            if ex.closed:
                return
            await responder.body(piece, more_)


class _Buffered(Responder["_Exchange"]):
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
            decoder = wire.Decoder(header(headers, b"content-encoding"))
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
        headers = without(headers, b"content-encoding", b"content-length")
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
        return list(wire.iter_texts(wire.read_answers(body, echo=self.ex.echo())))

    async def _as_stream(self, decoded: bytes) -> None:
        """An event stream sent with another label: checked as a stream, sent as one body."""
        headers = without(self.start_msg.get("headers", []), b"content-encoding", b"content-length", b"content-type")
        stream = StreamResponder(self.ex, buffered=True)
        await stream.start({**self.start_msg, "headers": [*headers, (b"content-type", b"text/event-stream")]},
                           decoded=True)
        await stream.body(decoded, False)
