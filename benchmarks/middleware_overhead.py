"""Overhead of GuardrailMiddleware against the bare app: both served by uvicorn on 127.0.0.1, measured
with a streaming httpx client (real first-byte times; httpx's in-process ASGI transport buffers whole bodies).

- unguarded route: a JSON endpoint the middleware does not guard (pure pass-through cost);
- flag-mode stream: an OpenAI SSE stream of 40 chunks on a guarded route in flag mode, back to back (the
  check that runs after each stream's last byte competes for the CPU with the next request) and with 50 ms
  gaps between requests (the middleware's own cost on the way to the first byte).

Prints medians over N requests and the ratios to the bare app.

    python benchmarks/middleware_overhead.py [-n 200] [--nli-model DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import threading
import time
from contextlib import contextmanager

import httpx
import uvicorn
from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from guardrail.asgi import GuardrailMiddleware, record
from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.telemetry import Telemetry

DOCS = ["Items can be returned within 30 days of delivery. Refunds are issued to the original payment method."]
ANSWER = "Items can be returned within 30 days of delivery. Refunds go to the original payment method. " * 2


async def free(request: Request) -> Response:
    return JSONResponse({"ok": True, "items": list(range(50))})


async def stream(request: Request) -> Response:
    await request.body()
    record(query="How do returns work?", contexts=DOCS)

    async def events():  # type: ignore[no-untyped-def]
        for i in range(0, len(ANSWER), 5):
            chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                     "choices": [{"index": 0, "delta": {"content": ANSWER[i : i + 5]}, "finish_reason": None}]}
            yield f"data: {json.dumps(chunk)}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


@contextmanager
def served(app, lifespan: str = "off"):  # type: ignore[no-untyped-def]
    """``app`` on a real uvicorn server on a free loopback port (shared by the benchmarks)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan=lifespan))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(5)


def measure(url: str, path: str, n: int, gap: float = 0.0) -> tuple[list[float], list[float]]:
    ttfb, total = [], []
    with httpx.Client(base_url=url) as client:
        for _ in range(n):
            time.sleep(gap)
            t0 = time.perf_counter()
            with client.stream("POST", path, json={"q": "x"}) as r:
                first = None
                for _chunk in r.iter_raw():
                    if first is None:
                        first = time.perf_counter() - t0
                ttfb.append(first or 0.0)
            total.append(time.perf_counter() - t0)
    return ttfb, total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--nli-model")
    args = ap.parse_args()
    bare = Starlette(routes=[Route("/free", free, methods=["POST"]), Route("/v1/chat/completions", stream, methods=["POST"])])
    guard = Guard(Evaluator(nli=NLIScorer(args.nli_model or default_nli_model())), Policy(action="flag"),
                  observer=Telemetry(CollectorRegistry()))
    wrapped = GuardrailMiddleware(bare, guard)
    with served(bare) as bare_url, served(wrapped) as wrapped_url:
        # back to back: each stream's check (after its last byte) competes for the CPU with the next request;
        # with 50 ms gaps: the middleware's own cost on the path to the first byte
        for name, path, gap in (("unguarded route", "/free", 0.0), ("flag-mode stream", "/v1/chat/completions", 0.0),
                                ("flag stream, gaps", "/v1/chat/completions", 0.05)):
            measure(wrapped_url, path, 5)  # warm up (model load)
            b_first, b_total = measure(bare_url, path, args.n, gap)
            w_first, w_total = measure(wrapped_url, path, args.n, gap)
            report(name, b_first, b_total, w_first, w_total)
    # no network, no scheduler: the middleware's own cost on the stream path (the check after the last byte excluded)
    asyncio.run(in_process(bare, wrapped, "/v1/chat/completions", args.n))


async def _asgi_once(app, path: str) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Call the ASGI app directly: seconds to the first body message and to the end of the call."""
    scope = {"type": "http", "method": "POST", "path": path, "headers": [(b"content-type", b"application/json")],
             "query_string": b"", "http_version": "1.1", "scheme": "http", "server": ("bench", 80),
             "client": ("bench", 1), "root_path": ""}
    first: float | None = None
    calls = 0
    never = asyncio.Event()
    t0 = time.perf_counter()

    async def receive():  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        if calls == 1:
            return {"type": "http.request", "body": b'{"q": "x"}', "more_body": False}
        await never.wait()  # no disconnect

    async def send(message):  # type: ignore[no-untyped-def]
        nonlocal first
        if message["type"] == "http.response.body" and first is None:
            first = time.perf_counter() - t0

    await app(scope, receive, send)
    return first or 0.0, time.perf_counter() - t0


async def in_process(bare, wrapped: GuardrailMiddleware, path: str, n: int) -> None:  # type: ignore[no-untyped-def]
    results = {}
    for name, app in (("bare", bare), ("middleware", wrapped)):
        runs = []
        for i in range(n + 5):
            r = await _asgi_once(app, path)
            await wrapped.drain()  # the flag-mode check after the last byte is not part of the response
            if i >= 5:
                runs.append(r)
        results[name] = ([r[0] for r in runs], [r[1] for r in runs])
    report("in-process stream", *results["bare"], *results["middleware"])


def report(name: str, b_first: list[float], b_total: list[float], w_first: list[float], w_total: list[float]) -> None:
    def med(xs: list[float]) -> float:
        return statistics.median(xs) * 1000

    print(f"{name:<17} bare: first byte {med(b_first):6.2f} ms, total {med(b_total):6.2f} ms | "
          f"middleware: first byte {med(w_first):6.2f} ms, total {med(w_total):6.2f} ms | "
          f"ratio first byte {med(w_first) / med(b_first):.2f}x, total {med(w_total) / med(b_total):.2f}x")


if __name__ == "__main__":
    main()
