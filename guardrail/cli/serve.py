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


def _check_scorer_url(url: str | None) -> None:
    if url:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise InputError(f"--scorer-url {url!r} is not an http(s) URL; give the scorer pool's base URL, e.g. "
                             "http://127.0.0.1:8100 (guardrail serve-scorer)")


#: (option, attribute, lowest, highest): every numeric option of `guardrail serve`, validated before anything starts
_RANGES: tuple[tuple[str, str, float, float], ...] = (
    ("--port", "port", 1, 65535),
    ("--workers", "workers", 1, 64),
    ("--timeout", "timeout", 0.1, 3600),
    ("--upstream-deadline", "upstream_deadline", 0.1, 86400),
    ("--upstream-connections", "upstream_connections", 1, 100_000),
    ("--upstream-retries", "upstream_retries", 0, 10),
    ("--judge-rate", "judge_rate", 0.0, 1.0),
    ("--max-response-chars", "max_response_chars", 1, 10_000_000),
    ("--max-contexts", "max_contexts", 1, 10_000),
    ("--max-context-chars", "max_context_chars", 1, 100_000_000),
    ("--max-body-bytes", "max_body_bytes", 1024, 1024**3),
    ("--max-stream-events", "max_stream_events", 1, 100_000_000),
    ("--scorer-timeout", "scorer_timeout", 0.01, 3600),
    ("--scorer-retries", "scorer_retries", 0, 10),
)


def _check_options(args: argparse.Namespace) -> None:
    """Every option in its range, with a one-line error that gives the range (never a traceback)."""
    for flag, name, low, high in _RANGES:
        value = getattr(args, name)
        if not low <= value <= high:
            kind = "a whole number" if isinstance(value, int) else "a number"
            raise InputError(f"{flag} {value} is out of range: give {kind} from {low:g} to {high:g}")


def _check_bind(host: str, port: int) -> None:
    """Fail before the banner and before the models load when the address cannot be listened on."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise InputError(f"--host {host!r} cannot be resolved ({exc}); give an address such as 127.0.0.1 or 0.0.0.0") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as exc:
            raise InputError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); pick another --port or stop "
                             "the process that holds it") from None


def _config(args: argparse.Namespace) -> Any:
    from guardrail.server import ServeConfig

    return ServeConfig(
        upstream=args.upstream, demo=args.demo, policy_file=args.policy, action=args.action, on_error=args.on_error,
        nli_model=nli_model(args.nli_model), backend=args.backend, route_name=args.route_name,
        model_label=args.model_label, timeout=args.timeout, upstream_deadline=args.upstream_deadline,
        upstream_connections=args.upstream_connections, upstream_retries=args.upstream_retries, threads=env_threads(),
        upstream_api_key=env("GUARDRAIL_UPSTREAM_API_KEY"), multiprocess=args.workers > 1,
        judge_model=args.judge_model, judge_base_url=args.judge_base_url,
        judge_api_key=env("GUARDRAIL_JUDGE_API_KEY"),
        judge_metrics=tuple(m.strip() for m in args.judge_metrics.split(",") if m.strip()), judge_rate=args.judge_rate,
        max_response_chars=args.max_response_chars, max_contexts=args.max_contexts,
        max_context_chars=args.max_context_chars, max_body_bytes=args.max_body_bytes,
        max_stream_events=args.max_stream_events,
        log_level=args.log_level, log_format=args.log_format,
        scorer_url=args.scorer_url, scorer_timeout=args.scorer_timeout, scorer_retries=args.scorer_retries,
    )


def cmd_serve(args: argparse.Namespace) -> int:
    import dataclasses
    import tempfile

    _check_upstream(args.upstream, args.demo)
    _check_options(args)
    _check_scorer_url(args.scorer_url)
    _check_bind(args.host, args.port)
    import uvicorn

    from guardrail.access_log import configure_logging
    from guardrail.server import CONFIG_ENV, build_app

    cfg = _config(args)
    configure_logging(cfg.log_level, cfg.log_format)
    target = "the built-in demo upstream" if args.demo else args.upstream
    if args.workers == 1:
        app = build_app(cfg)  # the models load before the banner: a model that fails to load says so first
        print(f"guardrail gateway on http://{args.host}:{args.port}/v1 -> {target}; metrics at /metrics, "
              "liveness /healthz, readiness /readyz", file=sys.stderr)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
        return 0
    print(f"guardrail gateway on http://{args.host}:{args.port}/v1 -> {target} ({args.workers} workers); "
          "metrics at /metrics, liveness /healthz, readiness /readyz", file=sys.stderr)
    # several processes: prometheus_client multiprocess mode needs its directory before the workers import it
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="guardrail-metrics-")
    os.environ[CONFIG_ENV] = json.dumps(dataclasses.asdict(cfg))
    uvicorn.run("guardrail.server:app_from_env", factory=True, workers=args.workers, host=args.host, port=args.port,
                log_level="warning")
    return 0
