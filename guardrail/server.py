"""The guarded OpenAI-compatible gateway: ``guardrail serve --upstream URL``.

Forwards ``/v1/chat/completions`` and ``/v1/completions`` to an upstream OpenAI-compatible endpoint
(OpenAI, vLLM, llama.cpp, Ollama, ...) with the caller's ``Authorization`` header (or a configured key),
guards the answers with the ``contexts`` (or ``documents``) sent in the request, and serves
``/metrics`` and ``/healthz``. Point the openai SDK's ``base_url`` at it:

    client = openai.OpenAI(base_url="http://127.0.0.1:8000/v1")
    client.chat.completions.create(model=..., messages=..., extra_body={"contexts": chunks})

Upstream failures are passed on clearly and counted (``guardrail_upstream_errors_total``): an
upstream error status is relayed as is; a refused connection gives 502, a timeout 504; a stream that
breaks after it started ends with an OpenAI-style ``error`` event.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

from guardrail.asgi import GuardrailMiddleware, openai_request, record
from guardrail.errors import ConfigurationError
from guardrail.guard import Guard
from guardrail.telemetry import Telemetry, metrics_app

ROUTES = ("/v1/chat/completions", "/v1/completions")
#: headers of the upstream answer that are passed on
PASS_HEADERS = ("content-type", "content-encoding", "x-request-id", "openai-processing-ms")

Retriever = Callable[[str], list[str]]


def _error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": kind}}, status_code=status)


def create_gateway(
    upstream: str,
    guard: Guard,
    telemetry: Telemetry,
    *,
    api_key: str | None = None,
    timeout: httpx.Timeout | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    retriever: Retriever | None = None,
    multiprocess: bool = False,
) -> GuardrailMiddleware:
    """The gateway as an ASGI app. ``upstream`` is the base URL including ``/v1`` (e.g.
    ``http://127.0.0.1:8001/v1``). ``retriever`` fills in contexts for requests that send none
    (the built-in demo uses it); ``transport`` lets the upstream be an in-process ASGI app."""
    base = upstream.rstrip("/")
    timeout = timeout or httpx.Timeout(60.0, connect=5.0)
    state: dict[str, httpx.AsyncClient] = {}

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with httpx.AsyncClient(timeout=timeout, transport=transport) as client:
            state["client"] = client
            yield

    async def proxy(request: Request) -> Response:
        client = state.get("client")
        if client is None:  # served without lifespan (e.g. some test clients)
            client = state["client"] = httpx.AsyncClient(timeout=timeout, transport=transport)
        try:
            payload = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the request body must be a JSON object (OpenAI chat/completions format)", "invalid_request_error")
        if not isinstance(payload, dict):
            return _error(400, "the request body must be a JSON object (OpenAI chat/completions format)", "invalid_request_error")
        question, contexts = openai_request(payload)
        # the upstream never sees our fields
        payload.pop("contexts", None)
        payload.pop("documents", None)
        if contexts is None and retriever is not None and question:
            contexts = retriever(question)
            documents = "\n".join(f"[{i + 1}] {c}" for i, c in enumerate(contexts))
            payload["messages"] = [{"role": "system", "content": f"Answer only from these documents:\n{documents}"},
                                   *payload.get("messages", [])]
        record(query=question or "", contexts=contexts or [])
        headers = {"content-type": "application/json", "accept": request.headers.get("accept", "application/json")}
        auth = request.headers.get("authorization")
        if auth:
            headers["authorization"] = auth
        elif api_key:
            headers["authorization"] = f"Bearer {api_key}"
        url = base + request.url.path[len("/v1"):]
        try:
            response = await client.send(client.build_request("POST", url, json=payload, headers=headers), stream=True)
        except httpx.TimeoutException as exc:
            telemetry.upstream_error("timeout")
            return _error(504, f"the upstream at {base} did not answer in time ({type(exc).__name__})", "upstream_timeout")
        except httpx.TransportError as exc:
            telemetry.upstream_error("connect")
            return _error(502, f"the upstream at {base} is unreachable ({type(exc).__name__}: {exc})", "upstream_unreachable")
        passed = {k: v for k, v in response.headers.items() if k.lower() in PASS_HEADERS}
        if response.status_code >= 400 or not payload.get("stream"):
            try:
                body = await response.aread()
            except httpx.HTTPError as exc:
                telemetry.upstream_error("timeout" if isinstance(exc, httpx.TimeoutException) else "stream")
                return _error(502, f"the upstream answer broke off ({type(exc).__name__})", "upstream_error")
            finally:
                await response.aclose()
            if response.status_code >= 400:
                telemetry.upstream_error("status")
            return Response(body, status_code=response.status_code, headers=passed)

        async def relay() -> AsyncIterator[bytes]:
            try:
                async for chunk in response.aiter_raw():
                    yield chunk
            except httpx.HTTPError as exc:
                telemetry.upstream_error("timeout" if isinstance(exc, httpx.TimeoutException) else "stream")
                event = {"error": {"message": f"the upstream stream broke off ({type(exc).__name__})", "type": "upstream_error"}}
                yield f"data: {json.dumps(event)}\n\n".encode()
            finally:
                await response.aclose()  # also on client disconnect: the upstream request is closed, not leaked

        return StreamingResponse(relay(), status_code=response.status_code, headers=passed)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok", "upstream": base})

    app = Starlette(
        routes=[
            *(Route(path, proxy, methods=["POST"]) for path in ROUTES),
            Route("/healthz", healthz, methods=["GET"]),
            Mount("/metrics", metrics_app(telemetry.registry, multiprocess=multiprocess)),
        ],
        lifespan=lifespan,
    )
    return GuardrailMiddleware(app, guard, routes=ROUTES)


def create_demo_gateway(
    guard: Guard, telemetry: Telemetry, *, timeout: httpx.Timeout | None = None, multiprocess: bool = False
) -> GuardrailMiddleware:
    """The gateway in front of the built-in demo upstream (in-process, offline), with its bundled documents
    retrieved for each question (see guardrail.demo)."""
    from guardrail.demo import retrieve, upstream_app

    return create_gateway("http://demo-upstream/v1", guard, telemetry, timeout=timeout, multiprocess=multiprocess,
                          transport=httpx.ASGITransport(app=upstream_app), retriever=retrieve)


@dataclass(frozen=True)
class ServeConfig:
    """Everything ``guardrail serve`` needs; JSON-serialisable so worker processes can rebuild the app."""

    upstream: str | None = None
    demo: bool = False
    policy_file: str | None = None
    action: str = "block"
    nli_model: str | None = None
    backend: str = "onnx"
    route_name: str = "gateway"
    model_label: str = "upstream"
    timeout: float = 60.0
    threads: int | None = None
    upstream_api_key: str | None = None
    multiprocess: bool = False


#: set by ``guardrail serve --workers N`` for the worker processes (see :func:`app_from_env`)
CONFIG_ENV = "GUARDRAIL_SERVE_CONFIG"


def build_app(cfg: ServeConfig) -> GuardrailMiddleware:
    """Build the gateway app: models, policy, telemetry, upstream (or the demo). Loads the models now."""
    from prometheus_client import CollectorRegistry

    from guardrail.checks.evaluator import Evaluator
    from guardrail.policy import Policy
    from guardrail.scorers.embedding import EmbeddingScorer
    from guardrail.scorers.nli import NLIScorer, default_nli_model

    if bool(cfg.upstream) == cfg.demo:
        raise ConfigurationError("give either an upstream URL (an OpenAI-compatible base URL ending in /v1) or demo")
    policy = Policy.from_file(cfg.policy_file) if cfg.policy_file else Policy(action=cfg.action)  # type: ignore[arg-type]
    nli = None
    if "faithfulness" in policy.checks:
        nli = NLIScorer(cfg.nli_model or default_nli_model(), backend=cfg.backend, threads=cfg.threads)
    evaluator = Evaluator(nli=nli, embedder=EmbeddingScorer(threads=cfg.threads), checks=policy.checks)
    evaluator.evaluate("warm up", ["Warm-up context."], "Warm-up answer.")  # load models before the first request
    telemetry = Telemetry(CollectorRegistry(), route=cfg.route_name, model=cfg.model_label)
    guard = Guard(evaluator, policy, observer=telemetry)
    timeout = httpx.Timeout(cfg.timeout, connect=5.0)
    if cfg.demo:
        return create_demo_gateway(guard, telemetry, timeout=timeout, multiprocess=cfg.multiprocess)
    assert cfg.upstream is not None
    return create_gateway(cfg.upstream, guard, telemetry, api_key=cfg.upstream_api_key, timeout=timeout,
                          multiprocess=cfg.multiprocess)


def app_from_env() -> GuardrailMiddleware:
    """App factory for uvicorn worker processes (``uvicorn --factory guardrail.server:app_from_env``)."""
    raw = os.environ.get(CONFIG_ENV)
    if not raw:
        raise ConfigurationError(f"{CONFIG_ENV} is not set; start workers with `guardrail serve --workers N`")
    return build_app(ServeConfig(**json.loads(raw)))
