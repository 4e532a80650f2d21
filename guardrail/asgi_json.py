"""The complete-body strategies of :class:`guardrail.asgi.GuardrailMiddleware`, and the JSON answers it sends itself.

A 2xx answer goes to :class:`Sniff` until its first bytes say what it is: an event stream labelled as one goes on to
:class:`guardrail.asgi_stream.StreamResponder`, anything else to :class:`Buffered` (buffered under a bound, decoded,
read as JSON, or as an event stream whatever its label, checked, then sent with the verdict's headers, rewritten for
fallback or ``json_field``). Other answers (non-2xx, 204, 205) go through :class:`Passthrough` untouched. The block,
fallback and overload answers are built by :func:`refusal`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from guardrail import wire
from guardrail.asgi_stream import Exchange, Message, Responder, StreamResponder, costly, header, info, without
from guardrail.errors import UnreadableError
from guardrail.render import answer_start
from guardrail.verdict import Verdict, worst

logger = logging.getLogger("guardrail")

ResponseExtractor = Callable[[Any], str | None]
T = TypeVar("T")


async def off_loop(data: bytes, encoding: str | None, fn: Callable[[], T]) -> T:
    """``fn()`` (decoding, parsing or writing a body ``data``): in a worker thread when the body is large or dense
    with JSON values (:func:`~guardrail.asgi_stream.costly`) or compressed (a small gzip body may decode to 32 MB), so
    that reading one large answer (30 MB of JSON takes seconds) does not stall every other request on the event
    loop."""
    if costly(data) or (encoding or "identity").strip().lower() != "identity":
        return await asyncio.to_thread(fn)
    return fn()


# --------------------------------------------------------------------------- JSON answers
def verdict_headers(verdict: Verdict) -> list[tuple[bytes, bytes]]:
    """``x-guardrail-action``, ``x-guardrail-outcome`` and a ``x-guardrail-<score>`` header per score."""
    out = [(b"x-guardrail-action", verdict.action.encode()), (b"x-guardrail-outcome", verdict.outcome.encode())]
    for name, value in (("faithfulness", verdict.scores.faithfulness),
                        ("retrieval-relevance", verdict.scores.retrieval_relevance),
                        ("response-relevance", verdict.scores.response_relevance)):
        if value is not None:
            out.append((f"x-guardrail-{name}".encode(), f"{value:.4f}".encode()))
    return out


def json_messages(status: int, payload: Any, extra: Sequence[tuple[bytes, bytes]] = ()) -> tuple[Message, Message]:
    """The ``http.response.start`` and the one ``http.response.body`` of a JSON answer."""
    body = json.dumps(payload, ensure_ascii=False).encode()
    start = {"type": "http.response.start", "status": status,
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra]}
    return start, {"type": "http.response.body", "body": body, "more_body": False}


def refusal(verdict: Verdict, block_status: int, fallback_message: str) -> tuple[Message, Message]:
    """The answer sent in place of a blocked one: the fallback answer, a 503 when the guard is at capacity, else the
    block (status ``block_status``, ``code`` "content_filter", or "unchecked" when it could not be checked)."""
    code = "unchecked" if verdict.outcome == "error" else "content_filter"
    if verdict.action == "fallback":
        payload = {"id": "guardrail", "object": "chat.completion", "created": int(time.time()), "model": "",
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": fallback_message},
                                "finish_reason": "content_filter"}], "guardrail": info(verdict)}
        return json_messages(200, payload, verdict_headers(verdict))
    if verdict.error_reason == "overload":  # at capacity: refused at once, the client may retry
        return json_messages(503, {"error": {
            "message": "guardrail is at capacity and did not check the answer: " + (verdict.error or ""),
            "type": "guardrail_overloaded", "code": "overloaded"}}, [*verdict_headers(verdict), (b"retry-after", b"1")])
    return json_messages(block_status, {"error": {
        "message": "the answer was blocked by guardrail: " + "; ".join(verdict.shown_reasons),
        "type": "guardrail_blocked", "code": code,
        "reasons": list(verdict.shown_reasons), "scores": verdict.to_dict(evidence=False)["scores"]}},
        verdict_headers(verdict))


# --------------------------------------------------------------------------- what the strategies use
class Settings(Protocol):
    """What the complete-body strategy reads of the middleware's settings."""

    @property
    def json_field(self) -> str | None: ...

    @property
    def response_extractor(self) -> ResponseExtractor | None: ...


class BodyExchange(Exchange, Protocol):
    """What the complete-body strategies use of the request they answer (``guardrail.asgi._Exchange``)."""

    first_byte: float | None
    responder: Responder[Any] | None

    @property
    def mw(self) -> Settings: ...

    def elapsed(self) -> float: ...

    async def unreadable(self, exc: Exception, start: Message, raw: bytes) -> None: ...

    async def unless_gone(self, work: asyncio.Future[Any]) -> bool: ...


# --------------------------------------------------------------------------- the strategies
class Passthrough(Responder[BodyExchange]):
    """An answer that is not checked (an error status, an empty answer): sent as it comes."""

    async def start(self, message: Message) -> None:
        await self.ex.send(message)

    async def body(self, data: bytes, more: bool) -> None:
        await self.ex.send({"type": "http.response.body", "body": data, "more_body": more})


class Bodiless(Responder[BodyExchange]):
    """A status whose body no client should read as an answer (1xx, 204 and 304 carry none; a 3xx redirect is followed,
    and a client that reads its body instead would read text nobody checked): the status and headers go out, the body
    is dropped (``content-length: 0``)."""

    async def start(self, message: Message) -> None:
        headers = without(message.get("headers", []), b"content-length", b"content-encoding", b"transfer-encoding")
        await self.ex.send({**message, "headers": [*headers, (b"content-length", b"0")]})

    async def body(self, data: bytes, more: bool) -> None:
        if not more:
            await self.ex.send({"type": "http.response.body", "body": b"", "more_body": False})


class Sniff(Responder[BodyExchange]):
    """A 2xx answer until its first bytes say what it is: an event stream labelled as one goes to
    :class:`StreamResponder`, anything else to :class:`Buffered` (JSON is read as JSON whatever its label, an event
    stream with another label as a stream, anything else is refused); that responder then gets the start and every
    piece so far."""

    def __init__(self, ex: BodyExchange) -> None:
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
        if not more and self.sniffer.size + len(data) == 0 and self.start_msg.get("status") == 205:
            await Passthrough(self.ex).start(self.start_msg)  # 205 Reset Content, empty as it should be
            await self.ex.send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        kind = self.sniffer.feed(data, more)
        if kind is None:
            return
        ex = self.ex
        await self._hand_to(StreamResponder(ex) if kind == "sse" and self.sniffer.labelled_sse else Buffered(ex))

    async def _hand_to(self, responder: Responder[Any]) -> None:
        """``responder`` takes over: it gets the start and every piece held so far."""
        ex = self.ex
        ex.responder = responder
        await responder.start(self.start_msg)
        for piece, more_ in self.pieces:
            if ex.closed:
                return
            await responder.body(piece, more_)


#: keys that make a JSON body an answer (a client reads its text), whatever its status
_ANSWER_KEYS = ("choices", "output", "output_text")
_ANSWER_OBJECTS = ("chat.completion", "chat.completion.chunk", "text_completion", "response")


def is_answer(body: Any) -> bool:
    """A parsed JSON body that carries an answer shape (what :func:`guardrail.wire.read_answers` reads)."""
    return isinstance(body, dict) and (any(k in body for k in _ANSWER_KEYS) or body.get("object") in _ANSWER_OBJECTS)


_SSE_DATA_LINE = re.compile(rb"(?m)^[ \t]*(?:\xef\xbb\xbf)?[ \t]*data[ \t]*:")


def looks_like_answer(body: bytes) -> bool:
    """A body the guard's strict reader refuses that a lenient one may still read as an answer: JSON-like (an object
    or a list: JavaScript's JSON.parse keeps the last of duplicate keys, Python's json takes a stray byte with
    errors="replace"...) or holding an event stream's ``data:`` line."""
    head = body.lstrip(b" \t\r\n")
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:].lstrip(b" \t\r\n")
    return head[:1] in (b"{", b"[") or _SSE_DATA_LINE.search(body) is not None


class ErrorAnswer(Sniff):
    """An error status (4xx, 5xx). An upstream error reaches the client as it was sent (``{"error": {...}}``, a proxy's
    page), but a client that does not look at the status reads whatever answer the body carries: an event stream, or
    JSON holding an answer shape (``choices``, ``output``...), is read and checked as a 2xx answer is (its status
    kept when it is delivered)."""

    def __init__(self, ex: BodyExchange) -> None:
        super().__init__(ex)
        self.size = 0
        self.kind: str | None = None

    async def body(self, data: bytes, more: bool) -> None:
        self.pieces.append((data, more))
        self.size += len(data)
        if self.kind is None:
            self.kind = self.sniffer.feed(data, more)
            if self.kind == "sse" and self.sniffer.labelled_sse:
                await self._hand_to(StreamResponder(self.ex))
                return
        if more and self.size <= wire.MAX_BODY_BYTES:
            return
        raw = b"".join(p for p, _ in self.pieces)
        encoding = header(self.start_msg.get("headers", []), b"content-encoding")
        answer = await off_loop(raw, encoding, lambda: self._holds_answer(raw, encoding))
        if answer:
            await self._hand_to(Buffered(self.ex))
            return
        passthrough = Passthrough(self.ex)
        self.ex.responder = passthrough
        await passthrough.start(self.start_msg)
        await passthrough.body(raw, more)

    def _answer_to_the_app(self, body: Any) -> bool:
        """An answer shape, or a body in which the app's own ``response_extractor`` finds answer text (``{"answer":
        ...}`` under a 503 is read by the app's client as the answer it always reads)."""
        if is_answer(body):
            return True
        custom = self.ex.mw.response_extractor
        if custom is None:
            return False
        try:
            text = custom(body)
        except Exception:  # noqa: BLE001 - the app's extractor on an error body it was not written for: no answer
            return False
        return isinstance(text, str) and bool(text.strip())

    def _holds_answer(self, raw: bytes, encoding: str | None) -> bool:
        try:
            decoder = wire.Decoder(encoding)
            decoded = decoder.decode(raw) + decoder.flush()
        except UnreadableError:
            # over the limit, or compressed data the guard cannot decode (an unknown coding, a stray byte after the
            # gzip stream) that a lenient client may: read (and refused) as an answer is, never delivered unread
            return True
        try:
            return wire.sniff(decoded[:64]) == "sse" or self._answer_to_the_app(wire.loads(decoded))
        except UnreadableError:
            # not JSON to the guard's reader: a proxy's page or plain text is an error, delivered as sent; a body
            # that a more lenient reader may take for an answer (an object or list, duplicate keys, a stray
            # byte, an event stream behind a line of its own) is read as one, and so is unreadable
            return looks_like_answer(decoded)


class Buffered(Responder[BodyExchange]):
    """A complete 2xx answer: buffered (bounded), decoded, read (JSON, or SSE whatever its label), checked."""

    def __init__(self, ex: BodyExchange) -> None:
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
        encoding = header(headers, b"content-encoding")
        try:
            for k, v in headers:  # every Content-Type a client may take
                if k.lower() == b"content-type":
                    wire.check_charset(v.decode("latin-1"))
            echo = self.ex.echo() if self.ex.mw.response_extractor is None else frozenset()
            decoded, read = await off_loop(raw, encoding, lambda: self._read(raw, encoding, echo))
            if read is None:
                await self._as_stream(decoded)
                return
            body, texts = read
            self.ex.question_contexts()  # a question the guard cannot read makes the answer unreadable
        except UnreadableError as exc:
            await self.ex.unreadable(exc, self.start_msg, raw)
            return
        await self._check(headers, decoded, body, texts)

    def _read(self, raw: bytes, encoding: str | None,
              echo: frozenset[str]) -> tuple[bytes, tuple[Any, list[tuple[int, str]]] | None]:
        """The decoded body, and the parsed body with its answer texts (None: an event stream)."""
        decoder = wire.Decoder(encoding)
        decoded = decoder.decode(raw) + decoder.flush()
        if wire.sniff(decoded[:64]) == "sse":
            return decoded, None
        body = wire.loads(decoded)
        return decoded, (body, self._texts(body, echo))

    async def _check(self, headers: list[tuple[bytes, bytes]], decoded: bytes, body: Any,
                     texts: list[tuple[int, str]]) -> None:
        """Check every answer text of the body; send the block, or the body with the verdict (rewritten for a
        fallback or ``json_field``)."""
        ex = self.ex
        question, contexts = ex.question_contexts()
        generation = ex.elapsed()
        checks = asyncio.gather(*(
            ex.guard.acheck(question, contexts, text, time_to_first_token=ex.first_byte, generation=generation)
            for _, text in texts))
        if not await ex.unless_gone(checks):
            return  # the client went away: its checks were given up (nothing is sent, nothing is delivered)
        verdicts = list(checks.result())
        verdict = worst(verdicts)
        ex.verdict = verdict
        if verdict.action == "block" or (verdict.action == "fallback" and not isinstance(body, dict)):
            await ex.refuse(verdict)
            return
        headers = without(headers, b"content-encoding", b"content-length")
        out = decoded
        rewrite = verdict.action == "fallback" or ex.mw.json_field is not None
        # an answer that also carries an error ("status": "failed" with the text so far): an SDK shows the error's
        # message, which nothing checked; it is withheld, as in a stream (wire.withhold_error_messages)
        scrubbed, messages = wire.withhold_error_messages(body, ex.origin)
        if messages:
            body, rewrite = scrubbed, True
            for message in filter(None, messages):
                logger.warning("guardrail: an upstream error in a guarded answer; its message, withheld from the "
                               "client: %r", message[:2000])
        if rewrite:
            if verdict.action == "fallback":
                failed = {i for (i, _), v in zip(texts, verdicts) if v.action == "fallback"}
                wire.replace_answers(body, failed, ex.guard.policy.fallback_message)
            if ex.mw.json_field is not None:
                body[ex.mw.json_field] = verdict.to_dict(evidence=False, shown=True)
            out = await off_loop(decoded, None, lambda: json.dumps(body, ensure_ascii=False).encode())
        headers.append((b"content-length", str(len(out)).encode()))
        ex.closed = True
        await ex.send({**self.start_msg, "headers": headers + verdict_headers(verdict)})
        await ex.send({"type": "http.response.body", "body": out, "more_body": False})

    def _texts(self, body: Any, echo: frozenset[str]) -> list[tuple[int, str]]:
        custom = self.ex.mw.response_extractor
        if custom is not None:
            text = custom(body)
            if not isinstance(text, str):
                raise UnreadableError("the response_extractor found no answer text in the body")
            return [(0, text)]
        texts = list(wire.iter_texts(wire.read_answers(body, echo=echo)))
        prompt = self.ex.echoed_prompt()
        if prompt is not None:
            # "echo": true: a completion's text starts with the request's prompt, the caller's own text; what follows
            # it is the answer (delivered whole, judged alone), with the prompt's last sentence when the answer
            # finishes it. A text that does not start with the prompt is judged whole
            texts = [(i, t[answer_start(prompt, t):]) for i, t in texts]
        # the choices together are bounded as one answer is: an upstream may not set the request's CPU cost
        limit = self.ex.guard.evaluator.faithfulness_config.max_response_chars
        total = sum(len(t) for _, t in texts)
        if len(texts) > 1 and total > limit:
            raise UnreadableError(f"the answer's {len(texts)} choices hold {total:,} characters together, over the "
                                  f"limit of {limit:,} (max_response_chars)")
        return texts

    async def _as_stream(self, decoded: bytes) -> None:
        """An event stream sent with another label: checked as a stream, sent as one body."""
        headers = without(self.start_msg.get("headers", []), b"content-encoding", b"content-length", b"content-type")
        stream = StreamResponder(self.ex, buffered=True)
        await stream.start({**self.start_msg, "headers": [*headers, (b"content-type", b"text/event-stream")]},
                           decoded=True)
        await stream.body(decoded, False)
