"""The gateway's upstream: a request forwarded with the caller's credentials, its answer passed on decoded under the
size cap (a body read whole, a stream relayed as it comes), and its failures turned into clear answers and counted
(``guardrail_upstream_errors_total``): see :mod:`guardrail.server`."""

from __future__ import annotations

import json
from typing import Any
from collections.abc import AsyncIterator

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from guardrail import wire
from guardrail.errors import UnreadableError
from guardrail.telemetry import Telemetry

#: headers of the upstream answer that are passed on (the body is passed on decoded: no content-encoding)
PASS_HEADERS = ("content-type", "x-request-id", "openai-processing-ms", "retry-after")


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
                  body: bytes | None, *, telemetry: Telemetry, max_bytes: int, origin: str | None = None) -> Response:
    """Send one request to the upstream at ``base``; its answer as a response (a stream relayed as it comes), or the
    error that says why there is none (502 unreachable or unreadable, 504 timeout)."""
    try:
        response = await client.send(client.build_request(method, url, content=body, headers=headers), stream=True)
    except httpx.TimeoutException as exc:
        telemetry.upstream_error("timeout")
        return error_response(504, f"the upstream at {base} did not answer in time ({type(exc).__name__})", "upstream_timeout")
    except httpx.TransportError as exc:
        telemetry.upstream_error("connect")
        return error_response(502, f"the upstream at {base} is unreachable ({type(exc).__name__}: {exc})",
                              "upstream_unreachable")
    passed = {k: v for k, v in response.headers.items() if k.lower() in PASS_HEADERS}
    ctype = response.headers.get("content-type", "")
    try:
        decoder = wire.Decoder(response.headers.get("content-encoding"), limit=max_bytes)
    except UnreadableError as exc:
        await response.aclose()
        telemetry.upstream_error("stream")
        return error_response(502, f"the upstream answer cannot be read: {exc}", "upstream_error")
    if response.status_code >= 400 or "text/event-stream" not in ctype:
        return await _whole(response, decoder, passed, telemetry)
    return StreamingResponse(relay(response, decoder, telemetry, origin), status_code=response.status_code,
                             headers=passed)


async def _whole(response: httpx.Response, decoder: wire.Decoder, passed: dict[str, str],
                 telemetry: Telemetry) -> Response:
    """An answer that is no stream (or an error status), read whole and passed on decoded."""
    parts = []
    try:
        # decoded incrementally under the cap: a small compressed body never inflates whole
        async for raw in response.aiter_raw():
            parts.append(decoder.decode(raw))
        parts.append(decoder.flush())
    except httpx.HTTPError as exc:
        telemetry.upstream_error("timeout" if isinstance(exc, httpx.TimeoutException) else "stream")
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
                origin: str | None = None) -> AsyncIterator[bytes]:
    """The upstream's event stream, decoded; a stream that breaks off (or cannot be read) ends with an error event
    (signed with ``origin``, the middleware's secret, so that its message reaches the client: an upstream's own error
    messages inside a guarded stream are withheld)."""
    try:
        async for raw in response.aiter_raw():
            chunk = decoder.decode(raw)
            if chunk:
                yield chunk
        tail = decoder.flush()
        if tail:
            yield tail
    except (httpx.HTTPError, UnreadableError) as exc:
        telemetry.upstream_error("timeout" if isinstance(exc, httpx.TimeoutException) else "stream")
        what = str(exc) if isinstance(exc, UnreadableError) else f"broke off ({type(exc).__name__})"
        event: dict[str, Any] = {"error": {"message": f"the upstream stream {what}", "type": "upstream_error"}}
        if origin is not None:
            event["error"][wire.ORIGIN_KEY] = origin
        yield f"\n\ndata: {json.dumps(event)}\n\n".encode()
    finally:
        await response.aclose()  # also on client disconnect: the upstream request is closed, not leaked
