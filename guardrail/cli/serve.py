"""``guardrail serve``: the guarded OpenAI-compatible gateway (uvicorn, one or several worker processes)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from guardrail.cli.env import env, env_threads, nli_model
from guardrail.errors import InputError

__all__ = ["cmd_serve"]


def _check_upstream(url: str | None, demo: bool) -> None:
    if bool(url) == bool(demo):
        raise InputError("give either --upstream URL (an OpenAI-compatible base URL ending in /v1) or --demo")
    if url:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise InputError(f"--upstream {url!r} is not an http(s) URL; give the model server's "
                             "OpenAI-compatible base URL, e.g. http://127.0.0.1:8001/v1")


def _config(args: argparse.Namespace) -> Any:
    from guardrail.server import ServeConfig

    return ServeConfig(
        upstream=args.upstream, demo=args.demo, policy_file=args.policy, action=args.action, on_error=args.on_error,
        nli_model=nli_model(args.nli_model), backend=args.backend, route_name=args.route_name,
        model_label=args.model_label, timeout=args.timeout, threads=env_threads(),
        upstream_api_key=env("GUARDRAIL_UPSTREAM_API_KEY"), multiprocess=args.workers > 1,
        judge_model=args.judge_model, judge_base_url=args.judge_base_url,
        judge_api_key=env("GUARDRAIL_JUDGE_API_KEY"),
        judge_metrics=tuple(m.strip() for m in args.judge_metrics.split(",") if m.strip()), judge_rate=args.judge_rate,
    )


def cmd_serve(args: argparse.Namespace) -> int:
    import dataclasses
    import tempfile

    _check_upstream(args.upstream, args.demo)
    import uvicorn

    from guardrail.server import CONFIG_ENV, build_app

    cfg = _config(args)
    target = "the built-in demo upstream" if args.demo else args.upstream
    print(f"guardrail gateway on http://{args.host}:{args.port}/v1 -> {target} ({args.workers} worker(s)); "
          "metrics at /metrics", file=sys.stderr)
    if args.workers == 1:
        uvicorn.run(build_app(cfg), host=args.host, port=args.port, log_level="warning")
        return 0
    # several processes: prometheus_client multiprocess mode needs its directory before the workers import it
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="guardrail-metrics-")
    os.environ[CONFIG_ENV] = json.dumps(dataclasses.asdict(cfg))
    uvicorn.run("guardrail.server:app_from_env", factory=True, workers=args.workers, host=args.host, port=args.port,
                log_level="warning")
    return 0
