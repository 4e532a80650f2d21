"""``guardrail serve-scorer``: the NLI and embedding scorers over the Open Inference Protocol v2, for gateways and
``guardrail check`` to call by URL (``--scorer-url``). In one process (uvicorn, the forward passes on a pool of
``GUARDRAIL_THREADS`` workers) or, with ``--ray``, as a Ray Serve application (one deployment per model, replicas
autoscaled on ongoing requests)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from guardrail.cli.env import env_threads, nli_model
from guardrail.errors import InputError, MissingDependencyError

__all__ = ["cmd_serve_scorer", "serve_scorer_parser"]


def serve_scorer_parser(sub: Any) -> None:
    """Add the ``serve-scorer`` subcommand to the subparsers ``sub`` of ``guardrail``."""
    sc = sub.add_parser(
        "serve-scorer", help="serve the NLI and embedding scorers over the Open Inference Protocol v2 (a shared "
                             "scorer pool for `serve --scorer-url`); --ray: on Ray Serve",
        description="Models: nli (inputs premise, hypothesis: BYTES [n]; output probabilities: FP32 [n, labels]) and "
                    "embedding (input text: BYTES [n]; output embedding: FP32 [n, dim]). POST "
                    "/v2/models/{name}/infer, GET /v2/models/{name}, /v2/health/ready.")
    sc.add_argument("--host", default="127.0.0.1")
    sc.add_argument("--port", type=int, default=8100)
    sc.add_argument("--nli-model", help="NLI model directory or hub id (default: $GUARDRAIL_NLI_MODEL, then the shipped model)")
    sc.add_argument("--embedding-model", help="embedding model directory or hub id (default: shipped all-MiniLM-L6-v2)")
    ray = sc.add_argument_group("Ray Serve (--ray; needs guardrail[ray])")
    ray.add_argument("--ray", action="store_true", help="deploy on Ray Serve instead of serving in this process")
    ray.add_argument("--ray-address", help="the Ray cluster to deploy on (auto, ray://HOST:PORT; default: "
                                           "$RAY_ADDRESS, else a local Ray started for the server)")
    ray.add_argument("--ray-config", metavar="FILE", help="JSON or TOML: per-model replicas and resources, batching "
                                                        "(see guardrail.remote.ray_serve); the flags below override it")
    ray.add_argument("--replicas", type=int, help="replicas of each model (the minimum with --max-replicas)")
    ray.add_argument("--max-replicas", type=int, help="autoscale each model up to this many replicas")
    ray.add_argument("--num-cpus", type=float, help="CPUs reserved per model replica (default 1)")
    ray.add_argument("--target-ongoing-requests", type=float,
                     help="autoscaling target: ongoing requests per replica (default 2)")
    ray.add_argument("--max-batch-size", type=int, help="concurrent requests gathered by @serve.batch (default 16)")
    sc.set_defaults(func=cmd_serve_scorer)


def _ray_config(args: argparse.Namespace) -> Any:
    try:
        from guardrail.remote.ray_serve import ModelOptions, RayScorerConfig
    except ImportError as exc:
        raise MissingDependencyError("serve-scorer --ray needs Ray Serve: pip install 'rag-guardrail[ray]'") from exc
    base = RayScorerConfig.from_file(args.ray_config) if args.ray_config else RayScorerConfig()
    per_model: dict[str, Any] = {}
    for name in ("nli", "embedding"):
        opts: ModelOptions = getattr(base, name)
        low = args.replicas if args.replicas is not None else opts.min_replicas
        if args.max_replicas is not None:
            high = args.max_replicas
        else:  # --replicas alone: a fixed count; neither: the file's range
            high = low if args.replicas is not None else max(low, opts.max_replicas)
        changes = {"min_replicas": low, "max_replicas": high}
        if args.num_cpus is not None:
            changes["num_cpus"] = args.num_cpus
        if args.target_ongoing_requests is not None:
            changes["target_ongoing_requests"] = args.target_ongoing_requests
        per_model[name] = ModelOptions(**{**opts.__dict__, **changes})
    import dataclasses

    return dataclasses.replace(
        base, nli=per_model["nli"], embedding=per_model["embedding"], host=args.host, port=args.port,
        nli_model=nli_model(args.nli_model) or base.nli_model, embedding_model=args.embedding_model or base.embedding_model,
        max_batch_size=args.max_batch_size or base.max_batch_size)


def _serve_ray(args: argparse.Namespace) -> int:
    cfg = _ray_config(args)
    import os

    import ray
    from ray import serve

    from guardrail.remote.ray_serve import deploy

    address = args.ray_address or os.environ.get("RAY_ADDRESS") or "local"
    ray.init(address=address, include_dashboard=False if address == "local" else None)
    url = deploy(cfg)
    print(f"guardrail scorer pool on Ray Serve at {url} (models nli, embedding; OIP v2 /v2/models/{{name}}/infer); "
          "Ctrl-C stops it", file=sys.stderr)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        serve.shutdown()  # type: ignore[no-untyped-call]
        ray.shutdown()
    return 0


def cmd_serve_scorer(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        raise InputError(f"--port {args.port} is out of range: give a whole number from 1 to 65535")
    if args.ray:
        return _serve_ray(args)
    ray_only = [f for f, v in (("--ray-address", args.ray_address), ("--ray-config", args.ray_config),
                               ("--replicas", args.replicas), ("--max-replicas", args.max_replicas),
                               ("--num-cpus", args.num_cpus), ("--max-batch-size", args.max_batch_size),
                               ("--target-ongoing-requests", args.target_ongoing_requests)) if v is not None]
    if ray_only:
        raise InputError(f"{', '.join(ray_only)}: only with --ray")
    from guardrail.cli.serve import _check_bind

    _check_bind(args.host, args.port)
    import uvicorn

    from guardrail.remote.models import EmbeddingModel, NLIModel
    from guardrail.remote.server import create_scorer_app
    from guardrail.scorers.embedding import EmbeddingScorer
    from guardrail.scorers.nli import NLIScorer, default_nli_model
    from guardrail.scorers.pool import ForwardPool

    pool = ForwardPool(env_threads())  # each text in a pass of its own, passes side by side: in-process scores
    app = create_scorer_app([NLIModel(NLIScorer(nli_model(args.nli_model) or default_nli_model(), pool=pool)),
                             EmbeddingModel(EmbeddingScorer(args.embedding_model, pool=pool))])
    print(f"guardrail scorer pool on http://{args.host}:{args.port} (models nli, embedding; OIP v2 "
          "/v2/models/{name}/infer, readiness /v2/health/ready)", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    pool.close()
    return 0
