"""``guardrail serve-scorer``: the NLI and embedding scorers over the Open Inference Protocol v2 (REST), in process.

>>> app = create_scorer_app([NLIModel(NLIScorer(default_nli_model(), pool=pool)),       # doctest: +SKIP
...                          EmbeddingModel(EmbeddingScorer(pool=pool))])
>>> uvicorn.run(app, port=8100)                                                         # doctest: +SKIP

Routes (see :mod:`guardrail.remote.protocol` for the shapes): ``POST /v2/models/{name}/infer`` (also under
``/versions/{version}``), ``GET /v2/models/{name}``, ``GET /v2/models/{name}/ready``, ``GET /v2/health/live``,
``GET /v2/health/ready``, ``GET /v2``. Inference runs in worker threads (never on the event loop); a bad request
is a 400 ``{"error": ...}``, a failure of the model a 500.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from guardrail.errors import InputError
from guardrail.remote.models import ServedModel
from guardrail.remote.protocol import ProtocolError, infer_response, read_inputs

__all__ = ["ScorerService", "create_scorer_app"]

logger = logging.getLogger("guardrail.remote")

#: the largest request body read (texts of one check: a few hundred pairs at most)
MAX_BODY_BYTES = 32 * 1024 * 1024


class ScorerService:
    """The served models by name; the HTTP-free core of the server (also used by the Ray Serve ingress)."""

    def __init__(self, models: Sequence[ServedModel]) -> None:
        self.models = {m.name: m for m in models}
        self.ready = False

    def load(self) -> None:
        for model in self.models.values():
            model.load()
        self.ready = True

    def infer(self, name: str, body: Any) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON body) of an inference request."""
        model = self.models.get(name)
        if model is None:
            return 404, {"error": f"unknown model {name!r}; this server has {', '.join(self.models)}"}
        try:
            columns = read_inputs(name, body)
            values, tokens = model.run(columns)
        except (ProtocolError, InputError) as exc:
            return 400, {"error": str(exc)}
        except Exception as exc:  # noqa: BLE001 - the caller gets a 500 with the reason
            logger.exception("guardrail scorer: model %s failed", name)
            return 500, {"error": f"model {name!r} failed: {type(exc).__name__}: {exc}"}
        request_id = body.get("id") if isinstance(body.get("id"), str) else None
        return 200, infer_response(name, values, tokens=tokens, request_id=request_id)

    def metadata(self, name: str) -> tuple[int, dict[str, Any]]:
        model = self.models.get(name)
        if model is None:
            return 404, {"error": f"unknown model {name!r}; this server has {', '.join(self.models)}"}
        return 200, model.metadata()


async def read_body(request: Request, limit: int = MAX_BODY_BYTES) -> bytes | None:
    """The request body, read chunk by chunk, or None as soon as it is over ``limit`` bytes (a chunked body declares
    no length: read whole, 300 MB grew the process by as much before the size was compared, round 57)."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        return None
    parts: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)


def create_scorer_app(models: Sequence[ServedModel], *, load: bool = True) -> Starlette:
    """The OIP v2 app serving ``models``; with ``load`` (default) the models load now, before the first request."""
    service = ScorerService(models)
    if load:
        service.load()

    async def infer(request: Request) -> Response:
        raw = await read_body(request)
        if raw is None:
            return JSONResponse({"error": f"request body over {MAX_BODY_BYTES} bytes"}, status_code=413)
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            return JSONResponse({"error": f"the request body is not JSON ({exc})"}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "the request body must be a JSON object"}, status_code=400)
        status, out = await run_in_threadpool(service.infer, request.path_params["name"], body)
        return JSONResponse(out, status_code=status)

    async def metadata(request: Request) -> Response:
        status, out = await run_in_threadpool(service.metadata, request.path_params["name"])
        return JSONResponse(out, status_code=status)

    async def model_ready(request: Request) -> Response:
        name = request.path_params["name"]
        ok = service.ready and name in service.models
        return JSONResponse({"name": name, "ready": ok}, status_code=200 if ok else (404 if name not in service.models
                                                                                    else 503))

    async def live(request: Request) -> Response:
        return JSONResponse({"live": True})

    async def ready(request: Request) -> Response:
        return JSONResponse({"ready": service.ready}, status_code=200 if service.ready else 503)

    async def server_metadata(request: Request) -> Response:
        from guardrail import __version__

        return JSONResponse({"name": "guardrail-scorer", "version": __version__, "extensions": [],
                             "models": list(service.models)})

    app = Starlette(routes=[
        Route("/v2", server_metadata, methods=["GET"]),
        Route("/v2/health/live", live, methods=["GET"]),
        Route("/v2/health/ready", ready, methods=["GET"]),
        Route("/v2/models/{name}", metadata, methods=["GET"]),
        Route("/v2/models/{name}/versions/{version}", metadata, methods=["GET"]),
        Route("/v2/models/{name}/ready", model_ready, methods=["GET"]),
        Route("/v2/models/{name}/infer", infer, methods=["POST"]),
        Route("/v2/models/{name}/versions/{version}/infer", infer, methods=["POST"]),
    ])
    app.state.service = service
    return app
