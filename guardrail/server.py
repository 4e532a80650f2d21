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
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

from guardrail.asgi import GUARDED_ROUTES, GuardrailMiddleware, openai_request, record
from guardrail.errors import ConfigurationError, InputError
from guardrail.guard import Guard
from guardrail.telemetry import Telemetry, metrics_app

ROUTES = GUARDED_ROUTES
#: headers of the upstream answer that are passed on (the body is passed on decoded: no content-encoding)
PASS_HEADERS = ("content-type", "x-request-id", "openai-processing-ms", "retry-after")
#: nesting deeper than this in a request is refused (400), not parsed into a RecursionError
MAX_REQUEST_DEPTH = 64

Retriever = Callable[[str], list[str]]


def _error(status: int, message: str, kind: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": kind}}, status_code=status)


def _depth(raw: bytes) -> int:
    """Deepest bracket nesting of a JSON text (brackets inside strings counted too: an upper bound, cheap)."""
    depth = best = 0
    for b in raw.translate(None, b"\"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ,:.-_\n\t\r\\"):
        if b in (0x5B, 0x7B):
            depth += 1
            best = max(best, depth)
        elif b in (0x5D, 0x7D):
            depth -= 1
    return best


def validate_request(raw: bytes) -> dict[str, Any]:
    """The request as a dict, or InputError saying what is wrong (a 400, never a 500)."""
    if _depth(raw) > MAX_REQUEST_DEPTH:
        raise InputError(f"the request JSON is nested deeper than {MAX_REQUEST_DEPTH} levels")
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
    ) -> None:
        self.base = upstream.rstrip("/")
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
                Route("/v1/{path:path}", self.proxy, methods=["GET", "POST"]),
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

    async def proxy(self, request: Request) -> Response:
        if self.client is None:  # served without lifespan (e.g. some test clients)
            await self.startup()
        path = "/" + "/".join(p for p in request.url.path.split("/") if p)
        if not self.app.guards(path) or request.method != "POST":
            return await self._forward_unguarded(request, path)
        try:
            payload = validate_request(await request.body())
        except InputError as exc:
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
        return await self._send(request, "POST", path, headers, json.dumps(payload, ensure_ascii=False).encode())

    async def _forward_unguarded(self, request: Request, path: str) -> Response:
        """Other ``/v1/*`` routes (``/v1/models``, embeddings, ...) go to the upstream unchanged."""
        headers = self._headers(request, {})
        if request.headers.get("content-type"):
            headers["content-type"] = request.headers["content-type"]
        body = await request.body() if request.method == "POST" else None
        return await self._send(request, request.method, path, headers, body)

    def _headers(self, request: Request, base: dict[str, str]) -> dict[str, str]:
        headers = {**base, "accept": request.headers.get("accept", "application/json")}
        auth = request.headers.get("authorization")
        if auth:
            headers["authorization"] = auth
        elif self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    async def _send(self, request: Request, method: str, path: str, headers: dict[str, str], body: bytes | None) -> Response:
        client = self.client
        assert client is not None
        url = self.base + path[len("/v1"):]
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
        if response.status_code >= 400 or "text/event-stream" not in ctype:
            try:
                content = await response.aread()  # decoded by httpx: gzip/deflate/br/zstd
            except httpx.HTTPError as exc:
                self.telemetry.upstream_error("timeout" if isinstance(exc, httpx.TimeoutException) else "stream")
                return _error(502, f"the upstream answer broke off or could not be decoded ({type(exc).__name__})",
                              "upstream_error")
            finally:
                await response.aclose()
            if response.status_code >= 400:
                self.telemetry.upstream_error("status")
            return Response(content, status_code=response.status_code, headers=passed)
        return StreamingResponse(self._relay(response), status_code=response.status_code, headers=passed)

    async def _relay(self, response: httpx.Response) -> AsyncIterator[bytes]:
        try:
            async for chunk in response.aiter_bytes():  # decoded
                yield chunk
        except httpx.HTTPError as exc:
            self.telemetry.upstream_error("timeout" if isinstance(exc, httpx.TimeoutException) else "stream")
            event = {"error": {"message": f"the upstream stream broke off ({type(exc).__name__})", "type": "upstream_error"}}
            yield f"\n\ndata: {json.dumps(event)}\n\n".encode()
        finally:
            await response.aclose()  # also on client disconnect: the upstream request is closed, not leaked


def create_gateway(upstream: str, guard: Guard, telemetry: Telemetry, **options: Any) -> GuardrailMiddleware:
    """The gateway's ASGI app: ``Gateway(upstream, guard, telemetry, **options).app`` (see :class:`Gateway` for the
    options: api_key, timeout, transport, retriever, multiprocess, shadow)."""
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

    if bool(cfg.upstream) == cfg.demo:
        raise ConfigurationError("give either an upstream URL (an OpenAI-compatible base URL ending in /v1) or demo")
    policy = Policy.from_file(cfg.policy_file) if cfg.policy_file else Policy(action=cfg.action)  # type: ignore[arg-type]
    if cfg.on_error is not None:
        policy = dataclasses.replace(policy, on_error=cfg.on_error)  # type: ignore[arg-type]
    nli = None
    if "faithfulness" in policy.checks:
        nli = NLIScorer(cfg.nli_model or default_nli_model(), backend=cfg.backend, threads=cfg.threads)
    embedder = EmbeddingScorer(threads=cfg.threads)
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
