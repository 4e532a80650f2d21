"""``guardrail serve-scorer --ray``: the scorers as a Ray Serve application, same OIP v2 routes as the uvicorn server.

Three deployments: ``NLI`` and ``Embedding`` (one per model, each replica a scorer on its own
:class:`~guardrail.scorers.pool.ForwardPool`) and a light ``OIPIngress`` (no CPU reserved) that reads the HTTP request
and calls the model's deployment handle. ``@serve.batch`` gathers the requests a replica receives at the same time and
hands their rows to the replica's pool together, oldest first; each text (or pair) still runs in a forward pass of
its own, so a request's scores are a function of that request alone (the shipped int8 models quantize activations
per batch tensor: rows sharing a pass would move each other's scores). Replicas autoscale on ongoing requests
(``target_ongoing_requests``) between ``min_replicas`` and ``max_replicas``, each with ``num_cpus`` CPUs.

A replica that dies mid-request makes the ingress answer 503; the client retries (bounded) on another replica, and
when none answers in time the guard applies ``on_error`` (block mode: the answer is blocked).

Options (:class:`RayScorerConfig`) come from flags or a JSON/TOML file::

    max_batch_size = 16
    batch_wait_timeout_s = 0.002
    [nli]
    min_replicas = 1
    max_replicas = 4
    num_cpus = 1
    threads = 1              # forward passes side by side in a replica (one intra-op thread each)
    target_ongoing_requests = 2
    [embedding]
    min_replicas = 1
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ray import serve
from ray.serve.handle import DeploymentHandle
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from guardrail.errors import ConfigurationError
from guardrail.remote.protocol import EMBEDDING, MODELS, NLI
from guardrail.remote.server import MAX_BODY_BYTES, ScorerService, read_body

__all__ = ["APP_NAME", "ModelOptions", "RayScorerConfig", "app_builder", "build_application", "deploy"]

APP_NAME = "guardrail-scorer"


@dataclass(frozen=True)
class ModelOptions:
    """Replicas and resources of one model's deployment."""

    min_replicas: int = 1
    max_replicas: int = 1
    num_cpus: float = 1.0
    #: forward passes side by side in a replica (its ForwardPool), one intra-op thread each
    threads: int = 1
    #: autoscaling target: ongoing requests per replica
    target_ongoing_requests: float = 2.0
    max_ongoing_requests: int = 16

    def __post_init__(self) -> None:
        if not 0 <= self.min_replicas <= self.max_replicas or self.max_replicas < 1:
            raise ConfigurationError(f"replicas: give 0 <= min_replicas <= max_replicas, max_replicas >= 1 "
                                     f"(got {self.min_replicas}, {self.max_replicas})")
        if self.num_cpus < 0 or self.threads < 1 or self.target_ongoing_requests <= 0 or self.max_ongoing_requests < 1:
            raise ConfigurationError("num_cpus must be >= 0, threads >= 1, target_ongoing_requests > 0, "
                                     "max_ongoing_requests >= 1")

    def deployment_options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"ray_actor_options": {"num_cpus": self.num_cpus},
                                "max_ongoing_requests": self.max_ongoing_requests}
        if self.max_replicas == self.min_replicas:
            opts["num_replicas"] = self.min_replicas
        else:
            opts["autoscaling_config"] = {"min_replicas": self.min_replicas, "max_replicas": self.max_replicas,
                                          "target_ongoing_requests": self.target_ongoing_requests}
        return opts


@dataclass(frozen=True)
class RayScorerConfig:
    """The Ray Serve application: the models' deployments, the batching of concurrent requests, the HTTP address."""

    nli: ModelOptions = field(default_factory=ModelOptions)
    embedding: ModelOptions = field(default_factory=ModelOptions)
    #: NLI model directory or hub id (None: the shipped model)
    nli_model: str | None = None
    embedding_model: str | None = None
    max_batch_size: int = 16
    batch_wait_timeout_s: float = 0.002
    host: str = "127.0.0.1"
    port: int = 8100
    ingress_replicas: int = 1

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> RayScorerConfig:
        """Read a JSON or TOML file (keys as the fields; ``nli`` and ``embedding`` tables of :class:`ModelOptions`);
        ``overrides`` (not None) win."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
            if p.suffix == ".toml":
                if sys.version_info >= (3, 11):
                    import tomllib
                else:  # pragma: no cover
                    import tomli as tomllib
                raw: Any = tomllib.loads(text)
            else:
                raw = json.loads(text)
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"cannot read the Ray scorer config {p}: {exc}") from None
        if not isinstance(raw, dict):
            raise ConfigurationError(f"{p}: the Ray scorer config must be a table/object")
        return cls.from_dict(raw, str(p), **overrides)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], source: str = "config", **overrides: Any) -> RayScorerConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(raw) - known
        if unknown:
            raise ConfigurationError(f"{source}: unknown keys {sorted(unknown)}; known: {sorted(known)}")
        values = dict(raw)
        model_keys = {f.name for f in dataclasses.fields(ModelOptions)}
        for name in ("nli", "embedding"):
            table = values.get(name, {})
            if not isinstance(table, dict) or set(table) - model_keys:
                raise ConfigurationError(f"{source}: [{name}] takes {sorted(model_keys)}")
            values[name] = ModelOptions(**table)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


class ModelReplica:
    """One replica of one model (``NLI`` or ``Embedding``): loads the scorer once, answers infer and metadata."""

    def __init__(self, kind: str, model_ref: str | None, threads: int, max_batch_size: int, batch_wait_s: float) -> None:
        from guardrail.remote.models import EmbeddingModel, NLIModel
        from guardrail.scorers.embedding import EmbeddingScorer
        from guardrail.scorers.nli import NLIScorer, default_nli_model
        from guardrail.scorers.pool import ForwardPool

        pool = ForwardPool(threads)
        if kind == NLI:
            model: NLIModel | EmbeddingModel = NLIModel(NLIScorer(model_ref or default_nli_model(), pool=pool))
        else:
            model = EmbeddingModel(EmbeddingScorer(model_ref, pool=pool))
        self.service = ScorerService([model])
        self.service.load()
        self.kind = kind
        batched: Any = self.infer_batch  # serve.batch's wrapper, typed as the plain method
        batched.set_max_batch_size(max_batch_size)
        batched.set_batch_wait_timeout_s(batch_wait_s)

    async def infer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        result: tuple[int, dict[str, Any]] = await self.infer_batch(body)
        return result

    @serve.batch(max_batch_size=16, batch_wait_timeout_s=0.002)
    async def infer_batch(self, bodies: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
        # the requests gathered by serve.batch run side by side: their rows share the replica's ForwardPool (oldest
        # first), each row in a pass of its own; a bad request fails alone
        return list(await asyncio.gather(*(asyncio.to_thread(self.service.infer, self.kind, b) for b in bodies)))

    def metadata(self) -> tuple[int, dict[str, Any]]:
        return self.service.metadata(self.kind)


class OIPIngress:
    """The HTTP side: OIP v2 routes, each model's requests to its deployment's handle."""

    def __init__(self, nli: DeploymentHandle[Any], embedding: DeploymentHandle[Any]) -> None:
        self.handles = {NLI: nli, EMBEDDING: embedding}

    async def __call__(self, request: Request) -> Response:
        parts = [p for p in request.url.path.split("/") if p]
        method = request.method
        if parts[:1] != ["v2"]:
            return JSONResponse({"error": "not found"}, status_code=404)
        rest = parts[1:]
        if method == "GET" and rest in ([], ["health", "live"], ["health", "ready"]):
            if not rest:
                return JSONResponse({"name": APP_NAME, "extensions": [], "models": list(MODELS)})
            return JSONResponse({"live": True} if rest[1] == "live" else {"ready": True})
        if len(rest) < 2 or rest[0] != "models":
            return JSONResponse({"error": "not found"}, status_code=404)
        name, tail = rest[1], rest[2:]
        if len(tail) >= 2 and tail[0] == "versions":
            tail = tail[2:]
        handle = self.handles.get(name)
        if handle is None:
            return JSONResponse({"error": f"unknown model {name!r}; this server has {', '.join(MODELS)}"}, status_code=404)
        try:
            if method == "GET" and not tail:
                status, out = await handle.metadata.remote()
            elif method == "GET" and tail == ["ready"]:
                status, out = 200, {"name": name, "ready": True}
            elif method == "POST" and tail == ["infer"]:
                raw = await read_body(request)
                if raw is None:
                    return JSONResponse({"error": f"request body over {MAX_BODY_BYTES} bytes"}, status_code=413)
                try:
                    body = json.loads(raw)
                except (ValueError, UnicodeDecodeError) as exc:
                    return JSONResponse({"error": f"the request body is not JSON ({exc})"}, status_code=400)
                if not isinstance(body, dict):
                    return JSONResponse({"error": "the request body must be a JSON object"}, status_code=400)
                status, out = await handle.infer.remote(body)
            else:
                return JSONResponse({"error": "not found"}, status_code=404)
        except Exception as exc:  # noqa: BLE001 - a replica died or is unreachable: the client may retry
            return JSONResponse({"error": f"model {name!r} replica failed: {type(exc).__name__}: {exc}"},
                                status_code=503)
        return JSONResponse(out, status_code=status)


def build_application(cfg: RayScorerConfig) -> Any:
    """The Ray Serve application (bound deployments) of ``cfg``."""
    replica: Any = serve.deployment(ModelReplica)  # a Deployment (typed as the decorator factory)
    nli = replica.options(name="NLI", **cfg.nli.deployment_options()).bind(
        NLI, cfg.nli_model, cfg.nli.threads, cfg.max_batch_size, cfg.batch_wait_timeout_s)
    emb = replica.options(name="Embedding", **cfg.embedding.deployment_options()).bind(
        EMBEDDING, cfg.embedding_model, cfg.embedding.threads, cfg.max_batch_size, cfg.batch_wait_timeout_s)
    ingress_deployment: Any = serve.deployment(OIPIngress)
    ingress = ingress_deployment.options(
        name="OIPIngress", num_replicas=cfg.ingress_replicas, ray_actor_options={"num_cpus": 0},
        max_ongoing_requests=1024)
    return ingress.bind(nli, emb)


def app_builder(args: dict[str, Any]) -> Any:
    """The application builder of a Serve config file or a KubeRay RayService
    (``import_path: guardrail.remote.ray_serve:app_builder``): ``args`` are the fields of :class:`RayScorerConfig`
    (as in ``serve-scorer --ray-config FILE``; ``host`` and ``port`` are the config's ``http_options`` there)."""
    return build_application(RayScorerConfig.from_dict(dict(args), "the application args"))


def deploy(cfg: RayScorerConfig) -> str:
    """Start Serve's HTTP proxy on ``cfg.host:cfg.port`` (on the Ray cluster this process is connected to; a local one
    is started when none is) and deploy the application; its base URL."""
    serve.start(http_options={"host": cfg.host, "port": cfg.port})
    serve.run(build_application(cfg), name=APP_NAME, route_prefix="/")
    return f"http://{cfg.host}:{cfg.port}"
