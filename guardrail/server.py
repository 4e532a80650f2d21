"""The guarded OpenAI-compatible gateway: ``guardrail serve --upstream URL``.

Forwards ``/v1/chat/completions``, ``/v1/completions`` and ``/v1/responses`` to an upstream OpenAI-compatible
endpoint (OpenAI, vLLM, llama.cpp, Ollama, ...) with the caller's ``Authorization`` header (or a configured key),
guards the answers with the ``contexts`` (or ``documents``) sent in the request, and serves
``/metrics`` and ``/healthz``. Point the openai SDK's ``base_url`` at it:

    client = openai.OpenAI(base_url="http://127.0.0.1:8000/v1")
    client.chat.completions.create(model=..., messages=..., extra_body={"contexts": chunks})

Upstream failures are passed on clearly and counted (``guardrail_upstream_errors_total``): an
upstream error status is relayed as is; a refused connection gives 502, a timeout 504; a stream that
breaks after it started ends with an OpenAI-style ``error`` event.

Routes. The request path is normalized once (:mod:`guardrail.routes`: percent-decoding, dot segments, slashes,
backslashes, ``;`` parameters) and exactly the normalized path is forwarded, so the upstream routes what the guard
matched. The gateway serves an allow-list, everything else is refused before the upstream is called:

- the guarded routes (:data:`ROUTES`): POST only (405 otherwise: ``GET /v1/chat/completions/{id}`` and the like
  would hand out stored answers nobody checked);
- :data:`FORWARDED_ROUTES`, unguarded because their answers hold no generated text: ``GET /v1/models`` (and
  ``/v1/models/{id}``), ``POST /v1/embeddings``; ``Gateway(forward_routes=...)`` changes the list;
- anything else is 404, unknown generation routes (``/v1/assistants``, ``/v1/threads/.../runs``, ...) included.
  Routes are case-sensitive, as in the OpenAI API and the common upstreams: a case variant of a guarded route
  (``/V1/Chat/Completions``) is refused with 404 naming the route it resembles, never forwarded.

Bounds (:class:`RequestLimits`), all checked before the upstream is called or any model work starts, each refused
with a clear 4xx: the request path (414 over 4096 characters), the request body (413 over 10 MB), JSON nesting
(64 levels), ``n`` (8 answers: every answer is checked), the number of contexts (256) and their total size (100,000
characters, and the evaluator's ``max_context_chars``); :class:`RequestLimits` states the CPU budget they keep. The
upstream's answer is decoded incrementally and refused (502) once it is over 32 MB decoded, so a small compressed
body cannot inflate to gigabytes; a stream is cut with an error event there. Request parsing runs off the event
loop, so ``/healthz`` answers while a large request is read.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import numpy as np
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

from guardrail import wire
from guardrail.asgi import GUARDED_ROUTES, MAX_REQUEST_BYTES, GuardrailMiddleware, openai_request, record
from guardrail.errors import ConfigurationError, InputError, UnreadableError
from guardrail.guard import Guard
from guardrail.routes import PathError, encode_path, match_route, request_path
from guardrail.telemetry import Telemetry, metrics_app

ROUTES = GUARDED_ROUTES
#: routes forwarded to the upstream unchecked, as (method, path): their answers hold no generated text. A path
#: ending in ``/*`` covers every path below it (model ids hold slashes: ``/v1/models/meta-llama/Llama-3-8B``)
FORWARDED_ROUTES: tuple[tuple[str, str], ...] = (("GET", "/v1/models"), ("GET", "/v1/models/*"),
                                                 ("POST", "/v1/embeddings"))
#: headers of the upstream answer that are passed on (the body is passed on decoded: no content-encoding)
PASS_HEADERS = ("content-type", "x-request-id", "openai-processing-ms", "retry-after")
#: nesting deeper than this in a request is refused (400), not parsed into a RecursionError
MAX_REQUEST_DEPTH = 64
#: every HTTP method the gateway answers itself (an allowed one, or a clear 405)
_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@dataclass(frozen=True)
class RequestLimits:
    """Bounds of one gateway request, checked before the upstream is called and before any model work; over a
    bound the request is refused with a 4xx that names it (an upstream answer over its bound: 502).

    CPU budget (measured with the shipped models on one core): the contexts cost about 0.1 ms per character (their
    windows are embedded for retrieval relevance and indexed for faithfulness), so the default 100,000 characters
    keep them near 10 s at worst and typical RAG requests (10-20k characters) near 1-2 s; each answer costs about
    0.3 ms per character, bounded by the evaluator (``FaithfulnessConfig.max_response_chars``), and there are at
    most ``max_choices`` answers; the question is read from its last 4,000 characters
    (``Evaluator(max_question_chars=...)``). Lower the limits for a tighter budget."""

    #: request body (413)
    max_body_bytes: int = MAX_REQUEST_BYTES
    #: JSON nesting of the request (400)
    max_depth: int = MAX_REQUEST_DEPTH
    #: ``n``: answers per request, each of them checked (400)
    max_choices: int = 8
    #: retrieved chunks per request (400)
    max_contexts: int = 256
    #: total characters of the contexts (400); the evaluator's ``max_context_chars`` applies too; None: only that
    max_context_chars: int | None = 100_000
    #: an upstream answer, decoded (a JSON body, or a whole stream) (502 / an error event)
    max_upstream_bytes: int = wire.MAX_BODY_BYTES

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_depth", "max_choices", "max_contexts", "max_upstream_bytes"):
            if getattr(self, name) < 1:
                raise ConfigurationError(f"RequestLimits.{name} must be at least 1, got {getattr(self, name)}")
        if self.max_context_chars is not None and self.max_context_chars < 1:
            raise ConfigurationError(f"RequestLimits.max_context_chars must be at least 1, got {self.max_context_chars}")

Retriever = Callable[[str], list[str]]


def _error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": kind}}, status_code=status)


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = np.zeros(256, dtype=np.int32)
_STEP[[0x5B, 0x7B]] = 1
_STEP[[0x5D, 0x7D]] = -1


def _depth(raw: bytes) -> int:
    """Deepest bracket nesting of a JSON text (brackets inside strings counted too: an upper bound). Vectorized, in
    slices of 1 MB: 10 MB of brackets take milliseconds and little memory."""
    brackets = raw.translate(None, _NOT_BRACKETS)
    best = level = 0
    for i in range(0, len(brackets), 1 << 20):
        levels = np.cumsum(_STEP[np.frombuffer(brackets[i : i + (1 << 20)], dtype=np.uint8)]) + level
        best = max(best, int(levels.max()))
        level = int(levels[-1])
    return best


def validate_request(raw: bytes, limits: RequestLimits | None = None, *, max_context_chars: int | None = None) -> dict[str, Any]:
    """The request as a dict, or InputError saying what is wrong (a 400, never a 500)."""
    limits = limits or RequestLimits()
    if _depth(raw) > limits.max_depth:
        raise InputError(f"the request JSON is nested deeper than {limits.max_depth} levels")
    try:
        payload = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise InputError("the request body must be a JSON object (OpenAI chat/completions format)") from None
    if not isinstance(payload, dict):
        raise InputError("the request body must be a JSON object (OpenAI chat/completions format)")
    messages = payload.get("messages")
    if messages is not None:
        if not isinstance(messages, list):
            raise InputError(f"'messages' must be a list of message objects, got {type(messages).__name__}")
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                raise InputError(f"messages[{i}] must be an object with a string 'role'")
            content = m.get("content")
            if content is not None and not isinstance(content, (str, list)):
                raise InputError(f"messages[{i}].content must be a string or a list of parts, got {type(content).__name__}")
    for key in ("contexts", "documents"):
        value = payload.get(key)
        if value is not None and (not isinstance(value, list) or not all(isinstance(c, (str, dict)) for c in value)):
            raise InputError(f"'{key}' must be a list of strings (or objects with 'text')")
    if "stream" in payload and not isinstance(payload["stream"], bool):
        raise InputError("'stream' must be true or false")
    n = payload.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise InputError(f"'n' must be a positive integer, got {n!r}")
    if n is not None and n > limits.max_choices:
        raise InputError(f"'n' is {n}, over the limit of {limits.max_choices} answers per request "
                         "(each answer is checked; RequestLimits.max_choices)")
    chunks = payload.get("contexts", payload.get("documents"))
    if isinstance(chunks, list):
        if len(chunks) > limits.max_contexts:
            raise InputError(f"the request has {len(chunks):,} contexts, over the limit of {limits.max_contexts:,} "
                             "(RequestLimits.max_contexts)")
        caps = [c for c in (limits.max_context_chars, max_context_chars) if c is not None]
        if caps:
            cap = min(caps)
            total = sum(len(c) if isinstance(c, str) else sum(len(v) for v in c.values() if isinstance(v, str))
                        for c in chunks)
            if total > cap:
                raise InputError(f"the contexts total {total:,} characters, over the limit of {cap:,} "
                                 "(max_context_chars); send fewer or shorter chunks (refused before the upstream is "
                                 "called)")
    try:
        json.dumps(payload, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"the request holds a lone surrogate (broken Unicode) at {exc.start}; send valid UTF-8 text") from None
    return payload


class _RawASGI:
    """An ASGI app as a Route endpoint (Starlette wraps plain functions as request handlers, not instances)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


class Gateway:
    """The guarded OpenAI-compatible gateway. ``upstream`` is the base URL including ``/v1`` (e.g.
    ``http://127.0.0.1:8001/v1``). ``retriever`` fills in contexts for requests that send none (the built-in demo
    uses it); ``transport`` lets the upstream be an in-process ASGI app.

    Lifecycle: the upstream client opens at startup; at shutdown the gateway closes it, waits for the flag-mode
    checks still running (none lost, none cut) and closes the guard. ``app`` is the ASGI application.
    """

    def __init__(
        self,
        upstream: str,
        guard: Guard,
        telemetry: Telemetry,
        *,
        api_key: str | None = None,
        timeout: httpx.Timeout | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        retriever: Retriever | None = None,
        multiprocess: bool = False,
        shadow: Any = None,
        forward_routes: tuple[tuple[str, str], ...] = FORWARDED_ROUTES,
        limits: RequestLimits | None = None,
    ) -> None:
        self.base = upstream.rstrip("/")
        self.limits = limits or RequestLimits()
        self.forward_routes = tuple((m.upper(), p) for m, p in forward_routes)
        self.shadow = shadow  # a ShadowJudge fed by the guard's tap; closed at shutdown
        self.guard = guard
        self.telemetry = telemetry
        self.api_key = api_key
        self.timeout = timeout or httpx.Timeout(60.0, connect=5.0)
        self.transport = transport
        self.retriever = retriever
        self.client: httpx.AsyncClient | None = None
        inner = Starlette(
            routes=[
                Route("/healthz", self.healthz, methods=["GET"]),
                Route("/metrics", _RawASGI(metrics_app(telemetry.registry, multiprocess=multiprocess))),
                Mount("/metrics", metrics_app(telemetry.registry, multiprocess=multiprocess)),
                Route("/{path:path}", self.proxy, methods=_METHODS),  # every other path: see proxy
            ],
            lifespan=self.lifespan,
        )
        self.app = GuardrailMiddleware(inner, guard, routes=ROUTES)

    # ----------------------------------------------------------------- lifecycle
    @asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        await self.startup()
        try:
            yield
        finally:
            await self.shutdown()

    async def startup(self) -> None:
        if self.client is None:
            self.client = httpx.AsyncClient(timeout=self.timeout, transport=self.transport)

    async def shutdown(self) -> None:
        await self.app.drain()  # flag-mode checks of answers already delivered
        if self.client is not None:
            await self.client.aclose()
            self.client = None
        if self.shadow is not None:
            self.shadow.close()
        self.guard.close()

    # ----------------------------------------------------------------- routes
    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"status": "ok", "upstream": self.base})

    def _forwarded(self, path: str) -> set[str]:
        """The methods with which ``path`` (canonical) is forwarded unguarded; empty: not forwarded."""
        methods = set()
        for method, route in self.forward_routes:
            if path == route or (route.endswith("/*") and path.startswith(route[:-1]) and len(path) > len(route) - 1):
                methods.add(method)
                if method == "GET":
                    methods.add("HEAD")
        return methods

    async def proxy(self, request: Request) -> Response:
        if self.client is None:  # served without lifespan (e.g. some test clients)
            await self.startup()
        try:
            path = request_path(request.scope)  # normalized once; exactly this path is forwarded
        except PathError as exc:
            return _error(exc.status, f"the request path cannot be read: {exc}", "invalid_request_error")
        if path in self.app.routes:
            if request.method != "POST":
                return _error(405, f"{request.method} is not allowed on the guarded route {path} (only POST)",
                              "method_not_allowed")
            return await self._guarded(request, path)
        methods = self._forwarded(path)
        if methods:
            if request.method not in methods:
                return _error(405, f"{request.method} is not allowed on {path} (allowed: {', '.join(sorted(methods))})",
                              "method_not_allowed")
            return await self._forward_unguarded(request, path)
        like = match_route(path, self.app.routes)
        if like is not None:
            return _error(404, f"the gateway does not serve {path}: routes are case-sensitive (did you mean {like}?)",
                          "not_found")
        served = ", ".join([f"POST {r}" for r in sorted(self.app.routes)] + [f"{m} {p}" for m, p in self.forward_routes])
        return _error(404, f"the gateway does not serve {request.method} {path}; it serves {served}", "not_found")

    async def _body(self, request: Request) -> bytes:
        """The request body, refused (InputError with status 413) once it is over the limit."""
        parts, size = [], 0
        async for piece in request.stream():
            size += len(piece)
            if size > self.limits.max_body_bytes:
                raise _TooLarge(f"the request body is over {self.limits.max_body_bytes:,} bytes")
            parts.append(piece)
        return b"".join(parts)

    async def _guarded(self, request: Request, path: str) -> Response:
        cfg = getattr(getattr(self.guard, "evaluator", None), "faithfulness_config", None)
        try:
            raw = await self._body(request)
            # parsing a large body is CPU work: off the event loop, so /healthz and other requests are not held up
            payload = await asyncio.to_thread(validate_request, raw, self.limits,
                                              max_context_chars=getattr(cfg, "max_context_chars", None))
        except _TooLarge as exc:
            self.telemetry.error("input")  # refused before any check: counted as an unchecked request all the same
            return _error(413, str(exc), "request_too_large")
        except InputError as exc:
            self.telemetry.error("input")
            return _error(400, str(exc), "invalid_request_error")
        question, contexts = openai_request(payload)
        # the upstream never sees our fields
        payload.pop("contexts", None)
        payload.pop("documents", None)
        if contexts is None and self.retriever is not None and question:
            contexts = self.retriever(question)
            documents = "\n".join(f"[{i + 1}] {c}" for i, c in enumerate(contexts))
            payload["messages"] = [{"role": "system", "content": f"Answer only from these documents:\n{documents}"},
                                   *payload.get("messages", [])]
        record(query=question or "", contexts=contexts or [])
        headers = self._headers(request, {"content-type": "application/json"})
        body = await asyncio.to_thread(lambda: json.dumps(payload, ensure_ascii=False).encode())
        return await self._send(request, "POST", path, headers, body)

    async def _forward_unguarded(self, request: Request, path: str) -> Response:
        """The allow-listed unguarded routes (``/v1/models``, embeddings) go to the upstream unchanged."""
        headers = self._headers(request, {})
        if request.headers.get("content-type"):
            headers["content-type"] = request.headers["content-type"]
        try:
            body = await self._body(request) if request.method in ("POST", "PUT", "PATCH") else None
        except _TooLarge as exc:
            return _error(413, str(exc), "request_too_large")
        return await self._send(request, request.method, path, headers, body)

    def _headers(self, request: Request, base: dict[str, str]) -> dict[str, str]:
        # encodings the gateway decodes incrementally under its cap (guardrail.wire.Decoder)
        headers = {**base, "accept": request.headers.get("accept", "application/json"), "accept-encoding": "gzip, deflate"}
        auth = request.headers.get("authorization")
        if auth:
            headers["authorization"] = auth
        elif self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    async def _send(self, request: Request, method: str, path: str, headers: dict[str, str], body: bytes | None) -> Response:
        client = self.client
        assert client is not None
        url = self.base + encode_path(path)[len("/v1"):]
        if request.url.query:
            url += "?" + request.url.query
        try:
            response = await client.send(client.build_request(method, url, content=body, headers=headers), stream=True)
        except httpx.TimeoutException as exc:
            self.telemetry.upstream_error("timeout")
            return _error(504, f"the upstream at {self.base} did not answer in time ({type(exc).__name__})", "upstream_timeout")
        except httpx.TransportError as exc:
            self.telemetry.upstream_error("connect")
            return _error(502, f"the upstream at {self.base} is unreachable ({type(exc).__name__}: {exc})", "upstream_unreachable")
        passed = {k: v for k, v in response.headers.items() if k.lower() in PASS_HEADERS}
        ctype = response.headers.get("content-type", "")
        try:
            decoder = wire.Decoder(response.headers.get("content-encoding"), limit=self.limits.max_upstream_bytes)
        except UnreadableError as exc:
            await response.aclose()
            self.telemetry.upstream_error("stream")
            return _error(502, f"the upstream answer cannot be read: {exc}", "upstream_error")
        if response.status_code >= 400 or "text/event-stream" not in ctype:
            parts = []
            try:
                # decoded incrementally under the cap: a small compressed body never inflates whole
                async for raw in response.aiter_raw():
                    parts.append(decoder.decode(raw))
                parts.append(decoder.flush())
            except httpx.HTTPError as exc:
                self.telemetry.upstream_error("timeout" if isinstance(exc, httpx.TimeoutException) else "stream")
                return _error(502, f"the upstream answer broke off ({type(exc).__name__})", "upstream_error")
            except UnreadableError as exc:
                self.telemetry.upstream_error("stream")
                return _error(502, f"the upstream answer cannot be read: {exc}", "upstream_error")
            finally:
                await response.aclose()
            if response.status_code >= 400:
                self.telemetry.upstream_error("status")
            return Response(b"".join(parts), status_code=response.status_code, headers=passed)
        return StreamingResponse(self._relay(response, decoder), status_code=response.status_code, headers=passed)

    async def _relay(self, response: httpx.Response, decoder: wire.Decoder) -> AsyncIterator[bytes]:
        try:
            async for raw in response.aiter_raw():
                chunk = decoder.decode(raw)
                if chunk:
                    yield chunk
            tail = decoder.flush()
            if tail:
                yield tail
        except (httpx.HTTPError, UnreadableError) as exc:
            self.telemetry.upstream_error("timeout" if isinstance(exc, httpx.TimeoutException) else "stream")
            what = str(exc) if isinstance(exc, UnreadableError) else f"broke off ({type(exc).__name__})"
            event = {"error": {"message": f"the upstream stream {what}", "type": "upstream_error"}}
            yield f"\n\ndata: {json.dumps(event)}\n\n".encode()
        finally:
            await response.aclose()  # also on client disconnect: the upstream request is closed, not leaked


class _TooLarge(Exception):
    pass


def create_gateway(upstream: str, guard: Guard, telemetry: Telemetry, **options: Any) -> GuardrailMiddleware:
    """The gateway's ASGI app: ``Gateway(upstream, guard, telemetry, **options).app`` (see :class:`Gateway` for the
    options: api_key, timeout, transport, retriever, multiprocess, shadow, forward_routes, limits)."""
    return Gateway(upstream, guard, telemetry, **options).app


def create_demo_gateway(
    guard: Guard, telemetry: Telemetry, *, timeout: httpx.Timeout | None = None, multiprocess: bool = False,
    shadow: Any = None,
) -> GuardrailMiddleware:
    """The gateway in front of the built-in demo upstream (in-process, offline), with its bundled documents
    retrieved for each question (see guardrail.demo)."""
    from guardrail.demo import retrieve, upstream_app

    return create_gateway("http://demo-upstream/v1", guard, telemetry, timeout=timeout, multiprocess=multiprocess,
                          transport=httpx.ASGITransport(app=upstream_app), retriever=retrieve, shadow=shadow)


@dataclass(frozen=True)
class ServeConfig:
    """Everything ``guardrail serve`` needs; JSON-serialisable so worker processes can rebuild the app."""

    upstream: str | None = None
    demo: bool = False
    policy_file: str | None = None
    action: str = "block"
    on_error: str | None = None
    nli_model: str | None = None
    backend: str = "onnx"
    route_name: str = "gateway"
    model_label: str = "upstream"
    timeout: float = 60.0
    threads: int | None = None
    upstream_api_key: str | None = None
    multiprocess: bool = False
    #: shadow LLM judging of a sampled share of answers (off without a judge model)
    judge_model: str | None = None
    judge_base_url: str | None = None
    #: read from $GUARDRAIL_JUDGE_API_KEY by the CLI (the environment is read there only)
    judge_api_key: str | None = None
    judge_metrics: tuple[str, ...] = ("context_adherence",)
    judge_rate: float = 0.1


#: set by ``guardrail serve --workers N`` for the worker processes (see :func:`app_from_env`)
CONFIG_ENV = "GUARDRAIL_SERVE_CONFIG"


def build_app(cfg: ServeConfig) -> GuardrailMiddleware:
    """Build the gateway app: models, policy, telemetry, upstream (or the demo). Loads the models now."""
    from prometheus_client import CollectorRegistry

    from guardrail.checks.evaluator import Evaluator
    from guardrail.policy import Policy
    from guardrail.scorers.embedding import EmbeddingScorer
    from guardrail.scorers.nli import NLIScorer, default_nli_model
    from guardrail.scorers.pool import ForwardPool

    if bool(cfg.upstream) == cfg.demo:
        raise ConfigurationError("give either an upstream URL (an OpenAI-compatible base URL ending in /v1) or demo")
    policy = Policy.from_file(cfg.policy_file) if cfg.policy_file else Policy(action=cfg.action)  # type: ignore[arg-type]
    if cfg.on_error is not None:
        policy = dataclasses.replace(policy, on_error=cfg.on_error)  # type: ignore[arg-type]
    # one pool of forward-pass workers for both models: passes side by side, one core each, oldest request first
    pool = ForwardPool(cfg.threads) if cfg.backend == "onnx" else None
    nli = None
    if "faithfulness" in policy.checks:
        nli = NLIScorer(cfg.nli_model or default_nli_model(), backend=cfg.backend, threads=cfg.threads, pool=pool)
    embedder = EmbeddingScorer(threads=cfg.threads, pool=pool)
    evaluator = Evaluator(nli=nli, embedder=embedder, checks=policy.checks)
    evaluator.evaluate("warm up", ["Warm-up context."], "Warm-up answer.")  # load models before the first request
    telemetry = Telemetry(CollectorRegistry(), route=cfg.route_name, model=cfg.model_label)
    shadow = None
    if cfg.judge_model:
        from guardrail.judge.client import Judge
        from guardrail.judge.shadow import ShadowJudge

        judge = Judge(cfg.judge_model, base_url=cfg.judge_base_url, api_key=cfg.judge_api_key)
        shadow = ShadowJudge(judge, list(cfg.judge_metrics), rate=cfg.judge_rate, embedder=embedder,
                             on_score=telemetry.judge_score, on_drop=telemetry.judge_drop, on_error=telemetry.judge_error)
    guard = Guard(evaluator, policy, observer=telemetry, tap=shadow.submit if shadow is not None else None)
    timeout = httpx.Timeout(cfg.timeout, connect=5.0)
    if cfg.demo:
        app = create_demo_gateway(guard, telemetry, timeout=timeout, multiprocess=cfg.multiprocess, shadow=shadow)
    else:
        assert cfg.upstream is not None
        app = create_gateway(cfg.upstream, guard, telemetry, api_key=cfg.upstream_api_key, timeout=timeout,
                             multiprocess=cfg.multiprocess, shadow=shadow)
    return app


def app_from_env() -> GuardrailMiddleware:
    """App factory for uvicorn worker processes (``uvicorn --factory guardrail.server:app_from_env``)."""
    raw = os.environ.get(CONFIG_ENV)
    if not raw:
        raise ConfigurationError(f"{CONFIG_ENV} is not set; start workers with `guardrail serve --workers N`")
    return build_app(ServeConfig(**json.loads(raw)))
