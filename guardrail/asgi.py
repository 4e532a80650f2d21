"""``GuardrailMiddleware``: guard the answers of any ASGI app (Starlette, FastAPI, ...).

>>> app = GuardrailMiddleware(app, guard, routes=["/v1/chat/completions", "/ask"])      # doctest: +SKIP

For each POST to a configured route it needs the question, the contexts and the answer:

- question and contexts: recorded by the endpoint during the request with :func:`record` (real RAG apps
  retrieve inside the endpoint, or inside their streaming response's generator: the guard reads them at a stream's
  first answer text, or once a complete answer arrived; a later ``record()`` raises), else read from the JSON
  request body by ``request_extractor`` (default:
  the last user message of OpenAI ``messages``, ``input`` or ``prompt``, and a ``contexts`` or ``documents`` list);
- the answer: every choice and every assistant-visible text field of a JSON body or an SSE stream, read by
  :mod:`guardrail.wire` (chat completions, completions, Responses API), or by a custom ``response_extractor``.

The response path has one strategy per kind of answer (as starlette's GZip responders): a **stream**
(``text/event-stream``) is parsed incrementally and checked sentence by sentence; any other **2xx** answer is
buffered (bounded), decoded, and read as JSON, or as an event stream when that is what it holds whatever its
label (205 included); a 3xx, 204 or 304 goes out without its body (a redirect is followed, not read); errors (4xx,
5xx) reach the caller as sent (``{"error": ...}``, a proxy's page), unless the body carries an answer (an event
stream, or JSON with ``choices``/``output``...: a client that does not look at the status reads it), which is checked
as a 2xx answer is, its status kept; unguarded routes and lifespan pass through untouched. A
guarded route takes POST, and OPTIONS only as a CORS preflight (its answer without a body); other methods get a 405,
and a WebSocket handshake is refused (close code 1008, the server answers 403: the guard reads HTTP answers only).
Routes match the path as the client sent it and, under a ``Mount`` (``root_path``), the path the app routes on. The stream strategy is in :mod:`guardrail.asgi_stream`, the
complete-body ones (and the JSON answers the middleware sends itself) in :mod:`guardrail.asgi_json`.

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
``Content-Encoding``, over 32 MB, a stream of more than ``max_stream_events`` events, 100,000 by default, comments and
empty events included) is never passed as checked: it follows the policy's ``on_error`` (blocked by
default in block mode; otherwise delivered and marked unchecked: ``x-guardrail-outcome: unchecked`` with
``x-guardrail-action`` the action taken, or, for a stream whose headers are already out, a ``guardrail`` field with the
same on its last event; flag mode never blocks: ``fail_closed`` flags it, ``fail_open`` passes it), and is logged and
counted once (``guardrail_check_errors_total{reason="unreadable"}``). Compressed answers (gzip, deflate) are decoded to be
checked and go out decoded (without ``Content-Encoding``). A body over a few hundred KB is decoded and parsed in a
worker thread: reading 30 MB of JSON takes seconds, and every other request would wait for it on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from guardrail import wire
from guardrail.access_log import log_request
from guardrail.asgi_json import Bodiless, ErrorAnswer, Passthrough, ResponseExtractor, Sniff, json_messages, refusal
from guardrail.asgi_stream import (
    costly,
    MAX_STREAM_EVENTS,
    Message,
    Receive,
    Responder,
    Scope,
    Send,
    StreamResponder,
    header,
    unchecked_headers,
    without,
)
from guardrail.checks.claims import question_in_conversation
from guardrail.errors import ConfigurationError, UnreadableError
from guardrail.guard import Guard
from guardrail.routes import PathError, encode_path, normalize_path, request_path, routed_path
from guardrail.verdict import Timings, Verdict

ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

RequestExtractor = Callable[[Any], tuple[str | None, list[str] | None]]

MAX_REQUEST_BYTES = 10 * 1024 * 1024
GUARDED_ROUTES = ("/v1/chat/completions", "/v1/completions", "/v1/responses")


# --------------------------------------------------------------------------- request-scoped recording
@dataclass
class _Recording:
    query: str | None = None
    contexts: list[str] | None = None
    #: the guard read the question and contexts (at a stream's first text, or once a complete answer arrived)
    used: bool = False


_current: ContextVar[_Recording | None] = ContextVar("guardrail_recording", default=None)


def record(*, query: str | None = None, contexts: list[str] | None = None) -> bool:
    """Tell the middleware the question and the retrieved contexts of the current request.

    Call it inside an endpoint served behind :class:`GuardrailMiddleware`, or inside its streaming response's
    generator before it yields the answer's first text (events without text, such as a role chunk, may come first):
    the guard reads the question and contexts at a stream's first text, or once a complete (JSON) answer arrived.
    Called after that, it raises :class:`~guardrail.errors.ConfigurationError` (the answer is being checked against
    what was known then: the request body's contexts if nothing was recorded). Returns False (and does nothing)
    outside a guarded request, so the same endpoint code also runs unguarded.
    """
    rec = _current.get()
    if rec is None:
        return False
    if rec.used:
        raise ConfigurationError(
            "guardrail.record() came after the guard read the question and contexts (at the answer's first text): "
            "call record() before yielding the answer's text, e.g. retrieve before the streaming response starts")
    if query is not None:
        if not isinstance(query, str):
            raise ConfigurationError(f"guardrail.record(query=...) takes a string, not {type(query).__name__}")
        rec.query = query
    if contexts is not None:
        if not isinstance(contexts, (list, tuple)) or not all(isinstance(c, str) for c in contexts):
            raise ConfigurationError("guardrail.record(contexts=...) takes a list of strings (the retrieved passages' "
                                     f"text), not {type(contexts).__name__}")
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
    """Question: the last user message (chat ``messages``, Responses ``input``) or ``prompt``; contexts: see
    :func:`request_contexts` (None when absent or unreadable: the gateway refuses those first). Never raises."""
    if not isinstance(body, dict):
        return None, None
    question: str | None = None
    messages = body.get("messages")
    if not isinstance(messages, list):
        given = body.get("input")
        messages = given if isinstance(given, list) else []
    for k in range(len(messages) - 1, -1, -1):
        m = messages[k]
        if isinstance(m, dict) and m.get("role") == "user":
            question = _text_of(m.get("content"))
            if question:  # "Can I return it?" after "I bought a gift card.": the pronoun points into the conversation
                said = [(e.get("role"), t) for e in messages[:k] if isinstance(e, dict) and (t := _text_of(e.get("content")))]
                setting = [t for r, t in said if r in ("system", "developer", "tool")]
                if isinstance(body.get("instructions"), str):
                    setting.append(body["instructions"])
                question = question_in_conversation(question, [t for r, t in said if r == "user"],
                                                    [t for r, t in said if r == "assistant"], setting)
            break
    if question is None:
        question, _ = prompt_question(body)
    contexts, _ = request_contexts(body)
    return question, contexts


def ambiguous_request(body: Any) -> str | None:
    """What makes a request's question (or its answer's start) unknowable, as a message; None when nothing does:
    the question in two fields at once (``messages`` beside ``prompt`` or ``input``: which one the model answers
    depends on the route and the server, round 55), or an answer that continues the request's own last assistant
    message (vLLM's ``continue_final_message``: a client shows that prefill and the continuation as one answer)."""
    if not isinstance(body, dict):
        return None
    given = [k for k in ("messages", "prompt", "input") if body.get(k) is not None]
    if len(given) > 1:
        return (f"the request sends the question in {' and '.join(repr(k) for k in given)}: which one the model "
                "answers depends on the route and the server, so guardrail cannot tell what the answer answers; send one")
    if body.get("continue_final_message") is True or (body.get("add_generation_prompt") is False and isinstance(
            body.get("messages"), list) and body["messages"] and isinstance(body["messages"][-1], dict)
            and body["messages"][-1].get("role") == "assistant"):
        return ("the request asks the model to continue its last assistant message (continue_final_message): a client "
                "shows that message and the continuation as one answer, which guardrail would judge only in part; "
                "send the question without a prefilled answer")
    return None


def prompt_question(body: dict[str, Any]) -> tuple[str | None, str | None]:
    """The question of a request that sends ``prompt`` (or a string ``input``), and what makes it unreadable (None:
    nothing). A list of one string is that string (LangChain's ``OpenAI`` LLM sends one); several prompts, or token
    ids, leave the question unknown: an answer such as "Yes." means something else under each, so it cannot be
    judged without it."""
    for key in ("prompt", "input"):
        given = body.get(key)
        if isinstance(given, str):
            return given, None
        if key == "prompt" and isinstance(given, list) and given:
            if len(given) == 1 and isinstance(given[0], str):
                return given[0], None
            if all(isinstance(p, str) for p in given):
                return None, (f"'prompt' holds {len(given)} prompts: guardrail judges each answer against its own "
                              "question, so send one prompt per request")
            return None, ("'prompt' is given as token ids: guardrail judges an answer against its question as text, "
                          "so send the prompt as a string")
    return None, None


#: the fields of a context object that hold its text, in the order they are looked for: ``text`` (LlamaIndex nodes,
#: most RAG APIs), ``content``, ``page_content`` (LangChain ``Document``)
CONTEXT_TEXT_FIELDS = ("text", "content", "page_content")


def request_contexts(body: dict[str, Any]) -> tuple[list[str] | None, str | None]:
    """The retrieved chunks a request sends, and what is wrong with them (None: nothing). Read from ``contexts``, or
    ``documents`` when ``contexts`` is absent or null; each chunk a string, an object with a string ``text``,
    ``content`` or ``page_content`` (a LangChain ``Document``), or a LlamaIndex ``NodeWithScore`` (``{"node": {"text":
    ...}}``). Anything else is an error (the gateway's 400), never a chunk silently dropped."""
    given = {k: body[k] for k in ("contexts", "documents") if body.get(k) is not None}
    if not given:
        return None, None
    if len(given) == 2:
        return None, "the request sends both 'contexts' and 'documents': send the retrieved chunks in one of them"
    (key, raw), = given.items()
    if not isinstance(raw, list):
        return None, f"'{key}' must be a list of strings (or objects with 'text'), got {type(raw).__name__}"
    contexts: list[str] = []
    for i, item in enumerate(raw):
        if isinstance(item, dict):
            holders = [f for f in (*CONTEXT_TEXT_FIELDS, "node") if item.get(f) is not None]
            if len(holders) > 1:
                # which one is the chunk? Reading one would judge the answer against text the caller may not mean
                return None, (f"{key}[{i}] has its text in more than one field ({', '.join(repr(f) for f in holders)}):"
                              " give each chunk's text in exactly one of 'text', 'content', 'page_content' or 'node'")
        if isinstance(item, dict) and isinstance(item.get("node"), dict) and not any(f in item for f in CONTEXT_TEXT_FIELDS):
            item = item["node"]
        text = item if isinstance(item, str) else next(
            (item[f] for f in CONTEXT_TEXT_FIELDS if isinstance(item, dict) and isinstance(item.get(f), str)), None)
        if text is None:
            what = "an object with no string " + ", ".join(f"'{f}'" for f in CONTEXT_TEXT_FIELDS) \
                if isinstance(item, dict) else f"a {type(item).__name__}"
            return None, (f"{key}[{i}] is {what}: give each chunk as a string, or an object with its text in "
                          "'text', 'content' or 'page_content'")
        contexts.append(text)
    return contexts, None


def openai_response(body: Any) -> str | None:
    """The first choice's text (kept for custom callers; the middleware reads every choice with
    :func:`guardrail.wire.read_answers`)."""
    try:
        return wire.read_answers(body)[0].text
    except UnreadableError:
        return None


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
        body_timeout_s: float = 30.0,
        max_stream_events: int = MAX_STREAM_EVENTS,
    ) -> None:
        self.app = app
        self.guard = guard
        self.routes = frozenset(normalize_path(r) for r in routes)
        self._route_keys = frozenset(r.casefold() for r in self.routes)
        self.request_extractor = request_extractor
        self.response_extractor = response_extractor
        self.block_status = block_status
        self.json_field = json_field
        #: seconds a guarded request's body may take to arrive (then 408)
        self.body_timeout_s = body_timeout_s
        if max_stream_events < 1:
            raise ConfigurationError(f"max_stream_events must be at least 1, got {max_stream_events}")
        #: events an answer's stream may send, comments and empty events included (one more: unreadable)
        self.max_stream_events = max_stream_events
        #: signs the error events the app behind writes itself (the gateway's relay): their messages are delivered
        self.origin = secrets.token_hex(16)
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
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        try:
            path = request_path(scope)  # what the client sent (raw_path), normalized once
        except PathError as exc:  # such a path may name a guarded route for some router: refused, never passed on
            if scope["type"] == "websocket":
                await _refuse_websocket(receive, send, f"the request path cannot be read: {exc}")
                return
            await _refuse(send, exc.status, f"the request path cannot be read: {exc}", "invalid_request_error")
            return
        routed = routed_path(scope, path)  # the path the app routes on, under a Mount's root_path too
        if path.casefold() not in self._route_keys and routed.casefold() not in self._route_keys:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":  # the guard reads HTTP answers only: a socket would deliver text unread
            await _refuse_websocket(receive, send, f"{path} is a guarded route: guardrail checks HTTP POST answers "
                                    "only; serve the socket on another path, or send the answer over HTTP")
            return
        method = scope.get("method")
        if method == "OPTIONS" and header(scope.get("headers", []), b"access-control-request-method") is not None:
            await self.app(scope, receive, _without_body(send))  # a CORS preflight: headers only, no answer
            return
        if method != "POST":  # a GET (stored completions, ...) would deliver text the guard never read
            await _refuse(send, 405, f"{method} is not allowed on the guarded route {path} (only POST; OPTIONS "
                          "for a CORS preflight)", "method_not_allowed", [(b"allow", b"POST, OPTIONS")])
            return
        # the app sees the one spelling that was matched: what it routes is what was guarded
        app_path = path if str(scope.get("path", "")).startswith(str(scope.get("root_path", ""))) else routed
        scope = {**scope, "path": app_path, "raw_path": encode_path(path).encode("ascii")}
        extensions = scope.get("extensions")
        if isinstance(extensions, dict) and any(e in extensions for e in _FILE_SENDS):
            # a file sent by path or descriptor would reach the server unread: the app is offered body messages only
            scope["extensions"] = {k: v for k, v in extensions.items() if k not in _FILE_SENDS}
        await _Exchange(self, scope, receive, send).run()


async def _refuse_websocket(receive: Receive, send: Send, reason: str) -> None:
    """Refuse a WebSocket handshake (the server answers 403) with close code 1008 (policy violation) and the reason."""
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    await send({"type": "websocket.close", "code": 1008, "reason": reason[:120]})


def _without_body(send: Send) -> Send:
    """``send`` with every body dropped (a preflight answer is read for its headers only)."""
    async def sender(message: Message) -> None:
        if message["type"] == "http.response.body":
            if not message.get("more_body", False):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        if message["type"] == "http.response.start":
            headers = without(message.get("headers", []), b"content-length", b"content-encoding")
            message = {**message, "headers": [*headers, (b"content-length", b"0")]}
        await send(message)
    return sender


async def _refuse(send: Send, status: int, message: str, code: str,
                  extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """Answer a request the middleware refuses itself (the app never sees it)."""
    start, body = json_messages(status, {"error": {"message": message, "type": "invalid_request_error", "code": code}},
                                 list(extra))
    await send(start)
    await send(body)


#: ASGI extensions that send a response body from a file (by path, or by descriptor) past the app's body messages
_FILE_SENDS = ("http.response.pathsend", "http.response.zerocopysend")
_FILE_PIECE = 1 << 16


def _file_pieces(message: Message) -> list[tuple[bytes, bool]]:
    """The bytes a ``pathsend`` / ``zerocopysend`` message asks the server to send, in pieces (last one marked),
    bounded by the answer limit (the responder refuses a body over it)."""
    limit = wire.MAX_BODY_BYTES + 1
    if message["type"] == "http.response.pathsend":
        with open(message["path"], "rb") as f:
            data = f.read(limit)
    else:
        fd = message["file"].fileno() if hasattr(message["file"], "fileno") else int(message["file"])
        count = message.get("count")
        offset = message.get("offset")
        want = limit if count is None else min(int(count), limit)
        data = os.pread(fd, want, int(offset)) if offset is not None else os.read(fd, want)
    pieces = [data[i:i + _FILE_PIECE] for i in range(0, len(data), _FILE_PIECE)] or [b""]
    return [(p, k == len(pieces) - 1) for k, p in enumerate(pieces)]


#: a request body over this many bytes is parsed in a worker thread (as a large answer is: asgi_json)
_PARSE_IN_THREAD = 256 * 1024


async def client_gone(receive: Receive) -> None:
    """Return when the client goes away, once the request's body was read (what comes next is its disconnect). A
    server that hands out anything else after the body (some test harnesses repeat it) says nothing of the client: the
    watch ends there, waiting until it is cancelled (a loop on it would spin on the event loop)."""
    if (await receive())["type"] != "http.disconnect":
        await asyncio.Event().wait()


class _Exchange:
    """One guarded request: reads the request, then hands the response to the responder its kind needs."""

    def __init__(self, mw: GuardrailMiddleware, scope: Scope, receive: Receive, send: Send) -> None:
        self.mw = mw
        self.guard = mw.guard
        self.scope = scope
        self.receive = receive
        self._client_send = send
        self.send: Send = self._send_out
        self.status: int | None = None  # what the client got
        self.origin = mw.origin
        self.stream_error = False  # an error event came in the answer's stream
        self.max_stream_events = mw.max_stream_events
        self.verdict: Verdict | None = None  # the answer's verdict, once made
        self.recording = _Recording()
        self.body = b""
        self.body_replayed = False
        self.closed = False  # the answer was answered for: the rest of the app's output is dropped
        self.responder: Responder[Any] | None = None
        self.started = time.perf_counter()
        self.first_byte: float | None = None
        self._echo: frozenset[str] | None = None
        #: the request body parsed once (question, contexts, echo and n all read it): a value, or the error it raised
        self._parsed: tuple[Any, UnreadableError | None] | None = None

    async def run(self) -> None:
        try:  # a body that trickles in would hold the connection (and its memory) for as long as the client likes
            body = await asyncio.wait_for(self._read(), self.mw.body_timeout_s)
        except asyncio.TimeoutError:
            body = (408, f"the request body did not arrive within {self.mw.body_timeout_s:g} s")
        if isinstance(body, tuple):
            await _refuse(self.send, body[0], body[1], "request_too_large" if body[0] == 413 else "request_timeout")
            return
        if body is None:
            return
        self.body = body
        if len(body) > _PARSE_IN_THREAD or costly(body):  # a large or value-dense request is parsed off the event loop
            # (other requests keep going), and its strings walked there too: the answer's reader needs them (the echo
            # rule), and 150,000 content parts took 0.9 s of the loop (round 51)
            await asyncio.to_thread(lambda: (self._payload(), self.echo()))
        token = _current.set(self.recording)
        try:
            await self.mw.app(self.scope, self._replay, self._send)
        finally:
            _current.reset(token)
            late = self.responder.abandoned() if isinstance(self.responder, StreamResponder) else None
            if late is None:
                self._log()
            else:  # the client left a flag-mode stream before its end: what it read is checked, then logged
                self.spawn(self._log_after(late))

    def _log(self) -> None:
        log_request(str(self.scope.get("path", "")), self.status, self.verdict, first_byte=self.first_byte,
                    total=self.elapsed(), stream_error=self.stream_error)

    async def _log_after(self, check: Awaitable[Verdict]) -> None:
        try:
            self.verdict = await check
        finally:
            self._log()

    async def _send_out(self, message: Message) -> None:
        """Everything the client gets goes through here (the status is kept for the request's log line)."""
        if message["type"] == "http.response.start":
            self.status = int(message["status"])
        await self._client_send(message)

    async def _read(self) -> bytes | tuple[int, str] | None:
        """The request body; (status, message) when it is refused; None when the client went away."""
        parts, size = [], 0
        while True:
            message = await self.receive()
            if message["type"] == "http.disconnect":
                return None
            parts.append(message.get("body", b""))
            size += len(parts[-1])
            if size > MAX_REQUEST_BYTES:
                return 413, f"request body over {MAX_REQUEST_BYTES} bytes"
            if not message.get("more_body", False):
                return b"".join(parts)

    async def _replay(self) -> Message:
        if not self.body_replayed:
            self.body_replayed = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        if self.closed:
            return {"type": "http.disconnect"}
        return await self.receive()

    async def unless_gone(self, work: asyncio.Future[Any]) -> bool:
        """Wait for ``work`` unless the client goes away first: then it is cancelled (a check's thread stops at its
        next step) and False is returned, with the request logged as closed by the client (499), not delivered."""
        gone = asyncio.ensure_future(client_gone(self.receive))
        try:
            await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gone
        if work.done():
            return True
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await work
        self.closed = True
        self.status = 499
        return False


    def question_contexts(self) -> tuple[str, list[str]]:
        """The question and contexts the answer is checked against; ``record()`` is refused from now on.
        :class:`UnreadableError` when the request's question cannot be read (several prompts, token ids) and none was
        recorded."""
        self.recording.used = True
        q, c = self.recording.query, self.recording.contexts
        if q is None or c is None:
            parsed, failed = self._payload()
            parsed = None if failed else parsed
            rq, rc = self.mw.request_extractor(parsed)
            ambiguous = ambiguous_request(parsed) if q is None and self.mw.request_extractor is openai_request else None
            if ambiguous is not None:
                raise UnreadableError(ambiguous)
            if q is None and rq is None and isinstance(parsed, dict):
                _, problem = prompt_question(parsed)
                if problem is not None:  # the answer's meaning depends on a question the guard cannot read
                    raise UnreadableError(problem)
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
        elif message["type"] in _FILE_SENDS:
            # not offered on a guarded route (see above), sent all the same: the file is read and checked as a body
            assert self.responder is not None, f"{message['type']} before http.response.start"
            more = bool(message.get("more_body", False))
            for piece, last in await asyncio.to_thread(_file_pieces, message):
                await self.responder.body(piece, more or not last)
        else:
            await self.send(message)

    def _choose(self, message: Message) -> Responder[Any]:
        status = int(message["status"])
        if status < 200 or status in (204, 304) or 300 <= status < 400:
            # no body to read: redirects are followed, not read (a body would go unchecked); a 1xx has none either
            # (an app's 103 with a body would smuggle a whole "HTTP/1.1 200" answer past the guard, round 49)
            return Bodiless(self)
        if status >= 400:
            return ErrorAnswer(self)  # errors reach the client as sent; an answer under an error status is checked
        return Sniff(self)  # every other 2xx (205 included): its first bytes say what it is, not its label

    def echo(self) -> frozenset[str]:
        """The strings of the request, which an answer may repeat (the Responses API echoes instructions, tools...)."""
        if self._echo is None:
            parsed, failed = self._payload()
            try:
                self._echo = frozenset() if failed else wire.request_strings(parsed)
            except UnreadableError:
                self._echo = frozenset()
        return self._echo

    def echoed_prompt(self) -> str | None:
        """The prompt a legacy completion repeats before its text (``echo: true`` with one string ``prompt``): the
        caller's own text, which is not the answer and is not judged, except its last sentence when the answer
        finishes it ("...\nA: Gift cards" + " can be returned." is judged whole: :func:`~guardrail.render.answer_start`);
        None otherwise."""
        payload, failed = self._payload()
        if failed is not None or not isinstance(payload, dict) or payload.get("echo") is not True:
            return None
        prompt = payload.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1:
            prompt = prompt[0]
        return (prompt or None) if isinstance(prompt, str) else None

    def _payload(self) -> tuple[Any, UnreadableError | None]:
        """The request body as JSON (None for no body), or the error reading it raised; parsed once."""
        if self._parsed is None:
            try:
                self._parsed = (wire.loads(self.body) if self.body else None, None)
            except UnreadableError as exc:
                self._parsed = (None, exc)
        return self._parsed

    def choices(self) -> int | None:
        """How many answers the request asked for: its ``n``, 1 for an OpenAI-style generation request that names
        none (``messages`` or ``prompt``); None when that is not known (an app's own request shape)."""
        payload, failed = self._payload()
        if failed is not None:
            return None
        if not isinstance(payload, dict) or not ("n" in payload or "messages" in payload or "prompt" in payload):
            return None
        n = payload.get("n", 1)
        return n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else None

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run a check after the answer went out (tracked by the middleware, never orphaned)."""
        self.mw._spawn(coro)

    # -- the on_error treatment of an answer the guard cannot read or judge
    def unchecked(self, exc: Exception) -> Verdict:
        """The verdict on an answer the guard cannot read, per ``on_error`` (logged, counted and reported)."""
        self.verdict = self.guard.report(
            self.guard.error_verdict(exc, "", timings=Timings(0.0, self.first_byte, self.elapsed())))
        return self.verdict

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
        self.verdict = verdict
        start, body = refusal(verdict, self.mw.block_status, self.guard.policy.fallback_message)
        await self.send(start)
        await self.send(body)
