"""The guarded OpenAI-compatible gateway: ``guardrail serve --upstream URL``.

Forwards ``/v1/chat/completions``, ``/v1/completions`` and ``/v1/responses`` to an upstream OpenAI-compatible
endpoint (OpenAI, vLLM, llama.cpp, Ollama, ...) with the caller's ``Authorization`` header (or a configured key),
guards the answers with the ``contexts`` (or ``documents``) sent in the request, and serves
``/metrics`` and ``/healthz``. Point the openai SDK's ``base_url`` at it:

    client = openai.OpenAI(base_url="http://127.0.0.1:8000/v1")
    client.chat.completions.create(model=..., messages=..., extra_body={"contexts": chunks})

Upstream failures are passed on clearly and counted (``guardrail_upstream_errors_total``): an
upstream error status is relayed as is; a refused connection gives 502, a timeout 504; a stream that
breaks after it started ends with an OpenAI-style ``error`` event. Besides the per-read timeout (``timeout``, 60 s
between two reads) every upstream answer has a total deadline (``upstream_deadline``, 600 s by default, from the
request sent to the answer's last byte): an upstream that trickles a byte every 59 s cannot hold a request for ever.
A body not complete by then is a 504 ``upstream_timeout``, a stream ends with the gateway's own error event (in block
mode nothing unchecked is released), and both count as ``reason="timeout"``.

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

Modules: this one builds the app and routes each request; :mod:`guardrail.server_request` holds the bounds and the
request validation, :mod:`guardrail.server_upstream` the forwarding to the upstream and the relay of its answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from guardrail.asgi import GUARDED_ROUTES, GuardrailMiddleware, client_gone, openai_request, record
from guardrail.asgi import MAX_REQUEST_BYTES as MAX_REQUEST_BYTES
from guardrail.errors import ConfigurationError, InputError
from guardrail.guard import Guard
from guardrail.routes import PathError, encode_path, match_route, request_path
from guardrail.server_request import MAX_REQUEST_DEPTH as MAX_REQUEST_DEPTH
from guardrail.access_log import configure_logging
from guardrail.server_request import RequestLimits, dumps, validate_request
from guardrail.server_request import json_depth as _depth  # noqa: F401  (its name here before the split)
from guardrail.server_upstream import PASS_HEADERS as PASS_HEADERS
from guardrail.server_upstream import error_response as _error
from guardrail.server_upstream import (
    UPSTREAM_CONNECTIONS,
    UPSTREAM_DEADLINE_S,
    UPSTREAM_RETRIES,
    forward,
    upstream_headers,
)
from guardrail.telemetry import Telemetry, metrics_app

ROUTES = GUARDED_ROUTES
#: routes forwarded to the upstream unchecked, as (method, path): their answers hold no generated text. A path
#: ending in ``/*`` covers every path below it (model ids hold slashes: ``/v1/models/meta-llama/Llama-3-8B``)
FORWARDED_ROUTES: tuple[tuple[str, str], ...] = (("GET", "/v1/models"), ("GET", "/v1/models/*"),
                                                 ("POST", "/v1/embeddings"))
#: every HTTP method the gateway answers itself (an allowed one, or a clear 405)
_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

Retriever = Callable[[str], list[str]]


class _RawASGI:
    """An ASGI app as a Route endpoint (Starlette wraps plain functions as request handlers, not instances)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


class Gateway:
    """The guarded OpenAI-compatible gateway. ``upstream`` is the base URL including ``/v1`` (e.g.
    ``http://127.0.0.1:8001/v1``). ``retriever`` fills in contexts for requests that send none (the built-in demo
    uses it); ``transport`` lets the upstream be an in-process ASGI app. ``timeout`` bounds each read from the
    upstream (its ``pool`` part: the wait for a free connection), ``upstream_deadline`` (seconds, None for none) its
    whole answer. ``upstream_connections``: requests open to the upstream at once (more wait for a connection, up to
    the pool timeout, then 504); each is released when its answer ends, is blocked or the client goes away.
    ``upstream_retries``: times a request is sent again when the upstream's connection failed before any byte of an
    answer (refused, reset, closed as it was reused; never after a timeout or once an answer began).

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
        upstream_deadline: float | None = UPSTREAM_DEADLINE_S,
        upstream_connections: int = UPSTREAM_CONNECTIONS,
        upstream_retries: int = UPSTREAM_RETRIES,
    ) -> None:
        if upstream_connections < 1:
            raise ConfigurationError(f"upstream_connections must be at least 1, got {upstream_connections}")
        if upstream_retries < 0:
            raise ConfigurationError(f"upstream_retries must be 0 or more, got {upstream_retries}")
        self.upstream_connections = upstream_connections
        self.upstream_retries = upstream_retries
        self.base = upstream.rstrip("/")
        self.upstream_deadline = upstream_deadline
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
                Route("/readyz", self.readyz, methods=["GET"]),
                Route("/metrics", _RawASGI(metrics_app(telemetry.registry, multiprocess=multiprocess))),
                Mount("/metrics", metrics_app(telemetry.registry, multiprocess=multiprocess)),
                Route("/{path:path}", self.proxy, methods=_METHODS),  # every other path: see proxy
            ],
            lifespan=self.lifespan,
        )
        self.app = GuardrailMiddleware(inner, guard, routes=ROUTES, body_timeout_s=self.limits.body_timeout_s,
                                       max_stream_events=self.limits.max_stream_events)

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
            n = self.upstream_connections
            # idle connections are dropped after 2 s, before the upstream drops them: uvicorn-based model servers
            # (vLLM...) close an idle keep-alive connection after 5 s, httpx's own default. That alone cannot close
            # the race (the upstream's timer starts when it has sent the answer, which the gateway may read seconds
            # later under load): a request on a connection closed under it is sent again (upstream_retries)
            self.client = httpx.AsyncClient(timeout=self.timeout, transport=self.transport,
                                            limits=httpx.Limits(max_connections=n, max_keepalive_connections=min(n, 20),
                                                                keepalive_expiry=2.0))

    def _scorers(self) -> list[Any]:
        evaluator = self.guard.evaluator
        faith, rel = evaluator.faithfulness_check, evaluator.relevance_check
        return [x for x in (faith.nli if faith else None, rel.embedder if rel else None) if x is not None]

    async def shutdown(self) -> None:
        await self.app.drain()  # flag-mode checks of answers already delivered
        for scorer in self._scorers():  # a remote scorer's pooled connections
            close = getattr(scorer, "close", None)
            if callable(close):
                close()
        if self.client is not None:
            await self.client.aclose()
            self.client = None
        if self.shadow is not None:
            self.shadow.close()
        self.guard.close()

    # ----------------------------------------------------------------- routes
    async def healthz(self, request: Request) -> Response:
        """Liveness: the process serves requests (it says nothing of the models or the upstream: see /readyz)."""
        return JSONResponse({"status": "ok", "upstream": self.base})

    async def readyz(self, request: Request) -> Response:
        """Readiness: the models are loaded and the upstream answers (any HTTP status counts: a 401 or 404 on
        ``GET /models`` still shows a server; a refused connection or a timeout does not). 503 until both hold."""
        evaluator = self.guard.evaluator
        scorers = [c.nli for c in (evaluator.faithfulness_check,) if c is not None]
        rel = evaluator.relevance_check
        models = all(s.loaded for s in scorers) and (rel is None or rel.embedder.loaded)
        if self.client is None:
            await self.startup()
        assert self.client is not None
        upstream: str = "reachable"
        try:
            await self.client.get(self.base + "/models", timeout=httpx.Timeout(2.0, connect=1.0),
                                  headers={"authorization": f"Bearer {self.api_key}"} if self.api_key else None)
        except httpx.HTTPError as exc:
            upstream = f"unreachable ({type(exc).__name__})"
        clients: list[Any] = [getattr(s, "client", None) for s in self._scorers()]
        pools = {id(c): c for c in clients if c is not None and hasattr(c, "ready")}
        scorer_pool = None
        if pools:  # the forward passes run on a shared scorer pool: it must answer too
            answers = await asyncio.gather(*(asyncio.to_thread(c.ready) for c in pools.values()))
            scorer_pool = "ready" if all(answers) else "not ready"
        ready = models and upstream == "reachable" and scorer_pool in (None, "ready")
        body = {"status": "ready" if ready else "not ready", "models": "loaded" if models else "not loaded",
                "upstream": upstream}
        if scorer_pool is not None:
            body["scorer_pool"] = scorer_pool
        return JSONResponse(body, status_code=200 if ready else 503)

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
        question, contexts = await asyncio.to_thread(openai_request, payload)  # CPU work: off the event loop
        # the upstream never sees our fields
        payload.pop("contexts", None)
        payload.pop("documents", None)
        if contexts is None and self.retriever is not None and question:
            contexts = self.retriever(question)
            documents = "\n".join(f"[{i + 1}] {c}" for i, c in enumerate(contexts))
            payload["messages"] = [{"role": "system", "content": f"Answer only from these documents:\n{documents}"},
                                   *payload.get("messages", [])]
        record(query=question or "", contexts=contexts or [])
        headers = upstream_headers(request, {"content-type": "application/json"}, self.api_key)
        body = await asyncio.to_thread(dumps, payload)
        return await self._send(request, "POST", path, headers, body)

    async def _forward_unguarded(self, request: Request, path: str) -> Response:
        """The allow-listed unguarded routes (``/v1/models``, embeddings) go to the upstream unchanged."""
        headers = upstream_headers(request, {}, self.api_key)
        if request.headers.get("content-type"):
            headers["content-type"] = request.headers["content-type"]
        try:
            body = await self._body(request) if request.method in ("POST", "PUT", "PATCH") else None
        except _TooLarge as exc:
            return _error(413, str(exc), "request_too_large")
        return await self._send(request, request.method, path, headers, body)

    async def _send(self, request: Request, method: str, path: str, headers: dict[str, str], body: bytes | None) -> Response:
        client = self.client
        assert client is not None
        url = self.base + encode_path(path)[len("/v1"):]
        if request.url.query:
            url += "?" + request.url.query
        work = asyncio.ensure_future(forward(client, self.base, method, url, headers, body, telemetry=self.telemetry,
                                             max_bytes=self.limits.max_upstream_bytes, origin=self.app.origin,
                                             deadline=self.upstream_deadline, retries=self.upstream_retries))
        # the client may go away while the upstream writes an answer that is no stream (read whole before anything is
        # sent): the upstream request is given up then, its connection and the model's generation released (round 57:
        # held up to the 600 s deadline); a stream's response watches for it itself once it is relayed
        gone = asyncio.ensure_future(client_gone(request.receive))
        try:
            await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not work.done():
                work.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await work
            gone.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gone
        if work.cancelled():
            return _error(499, "the client went away before the upstream answered", "client_closed_request")
        return work.result()



class _TooLarge(Exception):
    pass


def create_gateway(upstream: str, guard: Guard, telemetry: Telemetry, **options: Any) -> GuardrailMiddleware:
    """The gateway's ASGI app: ``Gateway(upstream, guard, telemetry, **options).app`` (see :class:`Gateway` for the
    options: api_key, timeout, transport, retriever, multiprocess, shadow, forward_routes, limits, upstream_deadline,
    upstream_connections, upstream_retries)."""
    return Gateway(upstream, guard, telemetry, **options).app


def create_demo_gateway(
    guard: Guard, telemetry: Telemetry, *, timeout: httpx.Timeout | None = None, multiprocess: bool = False,
    shadow: Any = None, limits: RequestLimits | None = None, upstream_deadline: float | None = UPSTREAM_DEADLINE_S,
    upstream_connections: int = UPSTREAM_CONNECTIONS,
) -> GuardrailMiddleware:
    """The gateway in front of the built-in demo upstream (in-process, offline), with its bundled documents
    retrieved for each question (see guardrail.demo)."""
    from guardrail.demo import retrieve, upstream_app

    return create_gateway("http://demo-upstream/v1", guard, telemetry, timeout=timeout, multiprocess=multiprocess,
                          transport=httpx.ASGITransport(app=upstream_app), retriever=retrieve, shadow=shadow,
                          limits=limits, upstream_deadline=upstream_deadline, upstream_connections=upstream_connections)


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
    #: total seconds for one upstream answer (headers and whole body or stream); timeout bounds each read
    upstream_deadline: float = UPSTREAM_DEADLINE_S
    #: requests open to the upstream at once (the upstream client's connection pool)
    upstream_connections: int = UPSTREAM_CONNECTIONS
    #: times a request is sent again after a connection failure with no byte of an answer
    upstream_retries: int = UPSTREAM_RETRIES
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
    #: longest answer checked (characters; a longer one is unchecked and follows on_error)
    max_response_chars: int = 100_000
    #: request bounds (RequestLimits): retrieved chunks, their characters together, the request body
    max_contexts: int = 256
    max_context_chars: int = 100_000
    max_body_bytes: int = 10 * 1024 * 1024
    #: events of an upstream stream, comments included (RequestLimits.max_stream_events)
    max_stream_events: int = 100_000
    log_level: str = "info"
    log_format: str = "json"
    #: a shared scorer pool (OIP v2, ``guardrail serve-scorer``): the forward passes run there, the tokenizers here
    scorer_url: str | None = None
    scorer_timeout: float = 10.0
    scorer_retries: int = 2


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
    telemetry = Telemetry(CollectorRegistry(), route=cfg.route_name, model=cfg.model_label)
    nli: NLIScorer | None = None
    embedder: EmbeddingScorer
    if cfg.scorer_url:  # the forward passes on a shared scorer pool; its requests timed and counted in telemetry
        from guardrail.remote.client import scorers_from_url

        remote_nli, embedder = scorers_from_url(cfg.scorer_url, nli_model=cfg.nli_model, timeout=cfg.scorer_timeout,
                                                retries=cfg.scorer_retries, observer=telemetry)
        nli = remote_nli if "faithfulness" in policy.checks else None
    else:
        # one pool of forward-pass workers for both models: passes side by side, one core each, oldest request first
        pool = ForwardPool(cfg.threads) if cfg.backend == "onnx" else None
        if "faithfulness" in policy.checks:
            nli = NLIScorer(cfg.nli_model or default_nli_model(), backend=cfg.backend, threads=cfg.threads, pool=pool)
        embedder = EmbeddingScorer(threads=cfg.threads, pool=pool)
    from guardrail.checks.faithfulness import FaithfulnessConfig

    faith_cfg = FaithfulnessConfig(max_response_chars=cfg.max_response_chars)
    evaluator = Evaluator(nli=nli, embedder=embedder, checks=policy.checks, faithfulness=faith_cfg)
    limits = RequestLimits(max_body_bytes=cfg.max_body_bytes, max_contexts=cfg.max_contexts,
                           max_context_chars=cfg.max_context_chars, max_stream_events=cfg.max_stream_events)
    evaluator.evaluate("warm up", ["Warm-up context."], "Warm-up answer.")  # load models before the first request
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
        app = create_demo_gateway(guard, telemetry, timeout=timeout, multiprocess=cfg.multiprocess, shadow=shadow,
                                  limits=limits, upstream_deadline=cfg.upstream_deadline,
                                  upstream_connections=cfg.upstream_connections)
    else:
        assert cfg.upstream is not None
        app = create_gateway(cfg.upstream, guard, telemetry, api_key=cfg.upstream_api_key, timeout=timeout, limits=limits,
                             multiprocess=cfg.multiprocess, shadow=shadow, upstream_deadline=cfg.upstream_deadline,
                             upstream_connections=cfg.upstream_connections, upstream_retries=cfg.upstream_retries)
    return app


def app_from_env() -> GuardrailMiddleware:
    """App factory for uvicorn worker processes (``uvicorn --factory guardrail.server:app_from_env``)."""
    raw = os.environ.get(CONFIG_ENV)
    if not raw:
        raise ConfigurationError(f"{CONFIG_ENV} is not set; start workers with `guardrail serve --workers N`")
    cfg = ServeConfig(**json.loads(raw))
    configure_logging(cfg.log_level, cfg.log_format)
    return build_app(cfg)
