"""The gateway's upstream: a request forwarded with the caller's credentials, its answer passed on decoded under the
size cap (a body read whole, a stream relayed as it comes), and its failures turned into clear answers and counted
(``guardrail_upstream_errors_total``): see :mod:`guardrail.server`.

Every upstream answer has a total deadline (``deadline`` seconds from the moment the request is sent: the headers and
the whole body or stream), on top of the client's per-read timeout: an upstream that trickles a byte just inside each
read timeout cannot hold a request (and its connection, memory and checks) for ever. A body not read in time is a 504
``upstream_timeout``; a stream ends with the gateway's signed error event, as a stream that breaks off does."""

from __future__ import annotations

import asyncio
import json
from typing import Any, TypeVar
from collections.abc import AsyncIterator, Awaitable

import anyio
import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.types import Receive, Scope, Send

from guardrail import wire
from guardrail.errors import UnreadableError
from guardrail.telemetry import Telemetry

#: headers of the upstream answer that are passed on (the body is passed on decoded: no content-encoding)
PASS_HEADERS = ("content-type", "x-request-id", "openai-processing-ms", "retry-after")
#: the default total deadline of one upstream answer, in seconds (``guardrail serve --upstream-deadline``)
UPSTREAM_DEADLINE_S = 600.0
#: requests open to the upstream at once, per gateway process (httpx's pool size)
UPSTREAM_CONNECTIONS = 100
#: times a request is sent again when the upstream's connection failed before any byte of its answer
UPSTREAM_RETRIES = 2
#: seconds before the n-th retry: n times this
RETRY_BACKOFF_S = 0.05
#: failures with no byte of an answer received, after which the request is sent again
RETRIED_ERRORS = (httpx.ConnectError, httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError)

T = TypeVar("T")


class DeadlineExceeded(Exception):
    """The upstream answer was not complete within its total deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"did not finish within the gateway's {seconds:g} s deadline")
        self.seconds = seconds


class Deadline:
    """A total deadline on the event loop's clock; ``None`` seconds: no deadline."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.end = None if seconds is None else asyncio.get_running_loop().time() + seconds

    async def run(self, step: Awaitable[T]) -> T:
        """``await step`` within what is left of the deadline (DeadlineExceeded after it; the step is cancelled)."""
        if self.end is None or self.seconds is None:
            return await step
        left = self.end - asyncio.get_running_loop().time()
        try:
            return await asyncio.wait_for(step, max(left, 0.0))
        except asyncio.TimeoutError:
            raise DeadlineExceeded(self.seconds) from None


def error_response(status: int, message: str, kind: str) -> JSONResponse:
    """An OpenAI-style error answer of the gateway."""
    return JSONResponse({"error": {"message": message, "type": kind, "code": kind}}, status_code=status)


def upstream_headers(request: Request, base: dict[str, str], api_key: str | None) -> dict[str, str]:
    """The headers of the upstream request: ``base``, the caller's ``accept``, the encodings the gateway decodes and
    the caller's ``authorization`` (else ``api_key``)."""
    # encodings the gateway decodes incrementally under its cap (guardrail.wire.Decoder)
    headers = {**base, "accept": request.headers.get("accept", "application/json"), "accept-encoding": "gzip, deflate"}
    auth = request.headers.get("authorization")
    if auth:
        headers["authorization"] = auth
    elif api_key:
        headers["authorization"] = f"Bearer {api_key}"
    return headers


async def forward(client: httpx.AsyncClient, base: str, method: str, url: str, headers: dict[str, str],
                  body: bytes | None, *, telemetry: Telemetry, max_bytes: int, origin: str | None = None,
                  deadline: float | None = UPSTREAM_DEADLINE_S, retries: int = UPSTREAM_RETRIES) -> Response:
    """Send one request to the upstream at ``base``; its answer as a response (a stream relayed as it comes), or the
    error that says why there is none (502 unreachable or unreadable, 504 timeout). ``deadline``: seconds for the
    whole answer, headers and body or stream (None: none). ``retries``: times the request is sent again when it
    failed before any byte of an answer came back (refused, reset or closed connection; never after a timeout, and
    never once an answer has begun), within the same deadline."""
    timer = Deadline(deadline)
    attempt = 0
    while True:
        try:
            if attempt:
                await timer.run(asyncio.sleep(RETRY_BACKOFF_S * attempt))
            response = await timer.run(client.send(client.build_request(method, url, content=body, headers=headers),
                                                   stream=True))
            break
        except DeadlineExceeded as exc:
            telemetry.upstream_error("timeout")
            return error_response(504, f"the upstream at {base} {exc}", "upstream_timeout")
        except httpx.TimeoutException as exc:
            telemetry.upstream_error("timeout")
            return error_response(504, f"the upstream at {base} did not answer in time ({type(exc).__name__})",
                                  "upstream_timeout")
        except RETRIED_ERRORS as exc:
            # no byte of an answer came back: the connection was refused, or closed or reset under the request (a
            # kept-alive connection the upstream closed as it was reused). Sent again on a new connection, as the
            # OpenAI SDKs do with connection errors; the last failure is the caller's 502
            if attempt < retries:
                attempt += 1
                telemetry.upstream_error("retried")
                continue
            telemetry.upstream_error("connect")
            tries = f" after {attempt + 1} attempts" if attempt else ""
            return error_response(502, f"the upstream at {base} is unreachable{tries} ({type(exc).__name__}: {exc})",
                                  "upstream_unreachable")
        except httpx.TransportError as exc:
            telemetry.upstream_error("connect")
            return error_response(502, f"the upstream at {base} is unreachable ({type(exc).__name__}: {exc})",
                                  "upstream_unreachable")
    if not 100 <= response.status_code <= 599:
        # RFC 9110 section 15: a status is three digits, 100-599; a server (uvicorn's) has no status line for
        # another, and passed on, the client's connection would drop with no answer
        await response.aclose()
        telemetry.upstream_error("status")
        return error_response(502, f"the upstream at {base} answered with status {response.status_code}, which is no "
                                   "HTTP status (100-599)", "upstream_error")
    passed = {k: v for k, v in response.headers.items() if k.lower() in PASS_HEADERS}
    ctype = response.headers.get("content-type", "")
    try:
        decoder = wire.Decoder(response.headers.get("content-encoding"), limit=max_bytes)
    except UnreadableError as exc:
        await response.aclose()
        telemetry.upstream_error("stream")
        return error_response(502, f"the upstream answer cannot be read: {exc}", "upstream_error")
    if response.status_code >= 400 or "text/event-stream" not in ctype:
        return await _whole(response, decoder, passed, telemetry, timer, base)
    return RelayedStream(response, relay(response, decoder, telemetry, origin, timer), passed)


class RelayedStream(StreamingResponse):
    """The upstream's stream relayed to the client; when the relay ends for any reason (the answer's end, a block
    that cuts it mid-way, the client going away, a cancellation), the upstream request is closed before the ASGI call
    returns, shielded from cancellation: its connection goes back to the pool at once, never left to the garbage
    collector."""

    def __init__(self, upstream: httpx.Response, body: AsyncIterator[bytes], headers: dict[str, str]) -> None:
        super().__init__(body, status_code=upstream.status_code, headers=headers)
        self.upstream = upstream
        self.relayed = body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                close = getattr(self.relayed, "aclose", None)
                if close is not None:
                    await close()
                await self.upstream.aclose()


async def _raw_within(response: httpx.Response, timer: Deadline) -> AsyncIterator[bytes]:
    """The answer's raw bytes as they come, each read bounded by what is left of ``timer`` (raises
    :class:`DeadlineExceeded` past it)."""
    pieces = response.aiter_raw()
    while True:
        try:
            raw = await timer.run(pieces.__anext__())
        except StopAsyncIteration:
            return
        yield raw


async def _whole(response: httpx.Response, decoder: wire.Decoder, passed: dict[str, str],
                 telemetry: Telemetry, timer: Deadline | None = None, base: str = "") -> Response:
    """An answer that is no stream (or an error status), read whole and passed on decoded."""
    parts = []
    timer = timer or Deadline(None)
    try:
        # decoded incrementally under the cap: a small compressed body never inflates whole
        async for raw in _raw_within(response, timer):
            parts.append(decoder.decode(raw))
        parts.append(decoder.flush())
    except DeadlineExceeded as exc:
        telemetry.upstream_error("timeout")
        return error_response(504, f"the upstream answer {exc}" + (f" (upstream {base})" if base else ""),
                              "upstream_timeout")
    except httpx.TimeoutException as exc:  # a read that waited past --timeout mid-body: a timeout, as before the headers
        telemetry.upstream_error("timeout")
        return error_response(504, f"the upstream answer stalled mid-body ({type(exc).__name__}: no byte within the "
                                   "read timeout)" + (f" (upstream {base})" if base else ""), "upstream_timeout")
    except httpx.HTTPError as exc:
        telemetry.upstream_error("stream")
        return error_response(502, f"the upstream answer broke off ({type(exc).__name__})", "upstream_error")
    except UnreadableError as exc:
        telemetry.upstream_error("stream")
        return error_response(502, f"the upstream answer cannot be read: {exc}", "upstream_error")
    finally:
        await response.aclose()
    if response.status_code >= 400:
        telemetry.upstream_error("status")
    return Response(b"".join(parts), status_code=response.status_code, headers=passed)


async def relay(response: httpx.Response, decoder: wire.Decoder, telemetry: Telemetry,
                origin: str | None = None, timer: Deadline | None = None) -> AsyncIterator[bytes]:
    """The upstream's event stream, decoded; a stream that breaks off, cannot be read or is not over by the deadline
    (``timer``) ends with an error event (signed with ``origin``, the middleware's secret, so that its message
    reaches the client: an upstream's own error messages inside a guarded stream are withheld)."""
    timer = timer or Deadline(None)
    try:
        async for raw in _raw_within(response, timer):
            chunk = decoder.decode(raw)
            if chunk:
                yield chunk
        tail = decoder.flush()
        if tail:
            yield tail
    except (httpx.HTTPError, UnreadableError, DeadlineExceeded) as exc:
        timeout = isinstance(exc, (httpx.TimeoutException, DeadlineExceeded))
        telemetry.upstream_error("timeout" if timeout else "stream")
        what = str(exc) if isinstance(exc, (UnreadableError, DeadlineExceeded)) else f"broke off ({type(exc).__name__})"
        event: dict[str, Any] = {"error": {"message": f"the upstream stream {what}", "type": "upstream_error"}}
        if origin is not None:
            event["error"][wire.ORIGIN_KEY] = origin
        yield f"\n\ndata: {json.dumps(event)}\n\n".encode()
    finally:
        await response.aclose()  # also on client disconnect: the upstream request is closed, not leaked
