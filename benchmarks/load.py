"""Gateway throughput and latency under concurrency, block mode, non-streaming (issue 10's reference request).

A fake upstream (uvicorn) answers every request at once with the reference 4-sentence answer; the gateway (uvicorn,
the shipped models, default block policy) checks it against 5 contexts of ~120 words. Every request has its own
question, and the NLI cache is off, so every check does the model work of a new answer; the 5 chunks are the same in
every request, as a RAG app retrieves the same chunks again (their embeddings are cached after the first request:
the case the per-text caches are for). A pool of clients keeps C requests
in flight for a fixed number of requests; printed: requests/s, p50 and p99 latency, the share of 503 overload
answers, and the ratio of throughput at C to throughput at concurrency 1.

The gateway runs in a process of its own (as `guardrail serve` does), so the load generator and the fake upstream do
not share its interpreter lock; `--in-process` puts all three in one process (the figures before 2026-11-22).

With ``--new-chunks`` every request brings chunks never seen before (each chunk gets a reference number of its own),
so the retrieval check embeds all five every time: the workload of a new question. The gateway runs its forward
passes in a :class:`~guardrail.scorers.pool.ForwardPool` as ``guardrail serve`` does (``--no-pool``: every pass on
onnxruntime's own threads in the checking thread, the figures before 2026-11-25). The raw forward pass of 2,048
tokens (32 rows x 64 tokens, the NLI model, onnxruntime's default threads) is timed in the same run and printed
beside the figures as ratios: p50 at c1 / raw pass, and requests per raw-pass time.

    python benchmarks/load.py [--requests 48] [--concurrency 1 4 16] [--new-chunks] [--no-pool] [--micro-batch]
                              [--max-pending N] [--threads N]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
from middleware_overhead import served
from prometheus_client import CollectorRegistry
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.scorers.pool import ForwardPool
from guardrail.server import create_gateway
from guardrail.telemetry import Telemetry

CONTEXTS = [
    "Acme Outfitters accepts returns within 30 days of delivery. Items must be unused and in their original packaging, "
    "with all tags attached and the receipt or order number at hand. Refunds are issued to the original payment method "
    "within 5 business days after the returned item reaches our warehouse and passes inspection. Customers who paid "
    "with a gift card receive store credit instead. Shipping costs of the original order are not refunded, except when "
    "the item arrived damaged or was not the item ordered. Return labels can be printed from the order page.",
    "Opened electronics can be returned within 14 days and are subject to a 15% restocking fee. Gift cards and "
    "final-sale items cannot be returned. Items bought during the winter clearance are final sale unless they are "
    "defective. A defective item can be exchanged for the same model within 60 days, or repaired under warranty "
    "after that. Software, downloadable content and opened personal care products are not eligible for returns.",
    "Standard shipping is free on orders over $50 and takes 3 to 5 business days. Express shipping costs $15 and "
    "arrives in 1 to 2 business days. Orders placed before noon ship the same day. We ship to all 50 states and to "
    "Canada; international orders outside Canada are not accepted at this time. Large items such as kayaks ship by "
    "freight and need a delivery appointment.",
    "Acme Outfitters stores are open from 9 am to 8 pm Monday to Saturday, and from 10 am to 6 pm on Sunday. "
    "Holiday hours are posted on each store page two weeks in advance. Returns bought online can be brought to any "
    "store, where the refund is issued at the counter. Store pickup orders are held for seven days before they are "
    "cancelled and refunded automatically.",
    "All tents and backpacks carry a two-year warranty against manufacturing defects. The warranty does not cover "
    "normal wear, misuse or accidents. To make a claim, customers send a photo of the defect and the order number to "
    "the support team, which answers within two business days. Approved claims are repaired or replaced at no cost.",
]
ANSWER = ("You can return items within 30 days of delivery if they are unused and in their original packaging. "
          "Refunds go to the original payment method within 5 business days. Opened electronics carry a 15% "
          "restocking fee. Gift cards cannot be returned.")


_counter = iter(range(10**9))


async def chat(request: Request) -> JSONResponse:
    return JSONResponse({"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}]})


def contexts_for(i: int, new_chunks: bool) -> list[str]:
    """The reference chunks, or (new_chunks) the same chunks each with a reference number never used before."""
    return [f"{c} (Policy reference {i}-{k}.)" for k, c in enumerate(CONTEXTS)] if new_chunks else CONTEXTS


def raw_forward_ms(threads: int | None = None, repeats: int = 15) -> float:
    """Median time of one forward pass of 32 x 64 tokens through the shipped NLI model (int8, onnxruntime)."""
    import numpy as np

    from guardrail.scorers.backends import OnnxBackend

    backend = OnnxBackend(default_nli_model(), threads=threads)
    rng = np.random.default_rng(0)
    feed = {"input_ids": rng.integers(1000, 20000, (32, 64)).astype(np.int64),
            "attention_mask": np.ones((32, 64), np.int64), "token_type_ids": np.zeros((32, 64), np.int64)}
    backend.run(feed)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        backend.run(feed)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def run(url: str, n: int, c: int, new_chunks: bool = False) -> tuple[float, list[float], int, int]:
    lat: list[float] = []
    codes: list[int] = []

    def one(_: Any) -> None:
        i = next(_counter)
        body = {"model": "m", "contexts": contexts_for(i, new_chunks),
                "messages": [{"role": "user", "content": f"How do returns and refunds work? (ticket #{i})"}]}
        t0 = time.perf_counter()
        r = client.post(url + "/v1/chat/completions", json=body)
        lat.append(time.perf_counter() - t0)
        codes.append(r.status_code)

    with httpx.Client(timeout=300, limits=httpx.Limits(max_connections=c + 4)) as client:
        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(c) as pool:
            list(pool.map(one, range(n)))
        wall = time.perf_counter() - t0
    return n / wall, lat, codes.count(503), codes.count(200)


def build_guard(args: argparse.Namespace) -> tuple[Guard, Telemetry, NLIScorer, EmbeddingScorer]:
    # every answer is new: its NLI pairs are never cached (cache_size=0); the chunks repeat, so their embeddings are
    pool = None if args.no_pool or args.micro_batch else ForwardPool(args.threads)
    nli = NLIScorer(default_nli_model(), threads=args.threads, micro_batch=args.micro_batch, cache_size=0, pool=pool)
    embedder = EmbeddingScorer(threads=args.threads, micro_batch=args.micro_batch, pool=pool)
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="m")
    policy = Policy(action="block")
    guard = Guard(Evaluator(nli=nli, embedder=embedder, checks=policy.checks), policy, observer=telemetry,
                  **({"max_pending": args.max_pending} if args.max_pending else {}))
    return guard, telemetry, nli, embedder


def serve_gateway(args: argparse.Namespace) -> None:
    """The child process: the gateway alone on --port, in front of --upstream."""
    import uvicorn

    guard, telemetry, _, _ = build_guard(args)
    uvicorn.run(create_gateway(args.upstream, guard, telemetry), host="127.0.0.1", port=args.port,
                log_level="warning", lifespan="on")


@contextlib.contextmanager
def gateway_process(args: argparse.Namespace, upstream: str) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, __file__, "--serve-gateway", "--upstream", upstream, "--port", str(port),
           *(["--threads", str(args.threads)] if args.threads else []), *(["--micro-batch"] if args.micro_batch else []),
           *(["--no-pool"] if args.no_pool else []),
           *(["--max-pending", str(args.max_pending)] if args.max_pending else [])]
    proc = subprocess.Popen(cmd)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url + "/healthz", timeout=1)
                break
            except httpx.TransportError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the gateway process did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=48)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--micro-batch", action="store_true", help="serialise model calls through the micro-batcher")
    ap.add_argument("--max-pending", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None, help="onnxruntime threads (default: onnxruntime's choice)")
    ap.add_argument("--new-chunks", action="store_true", help="every request brings chunks never seen before")
    ap.add_argument("--no-pool", action="store_true", help="no forward-pass pool (the figures before 2026-11-25)")
    ap.add_argument("--in-process", action="store_true", help="gateway, upstream and load generator in one process")
    ap.add_argument("--serve-gateway", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--upstream", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--json", help="also write the figures to this JSON file")
    args = ap.parse_args()
    if args.serve_gateway:
        return serve_gateway(args)
    upstream = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    pooled = not (args.no_pool or args.micro_batch)
    print(f"micro-batching {'on' if args.micro_batch else 'off'}, forward pool {'on' if pooled else 'off'}, "
          f"onnxruntime threads {args.threads or 'default'}, "
          f"gateway {'in the load process' if args.in_process else 'in its own process'}, {args.requests} requests "
          f"per level, {'new chunks in every request' if args.new_chunks else 'the same chunks in every request'}")
    raw = raw_forward_ms()
    print(f"raw forward pass, 32 x 64 tokens (NLI int8, onnxruntime default threads): {raw:.1f} ms")
    scorers: tuple[Any, ...] = ()
    with contextlib.ExitStack() as stack:
        up = stack.enter_context(served(upstream))
        if args.in_process:
            guard, telemetry, *scorers = build_guard(args)
            url = stack.enter_context(served(create_gateway(up + "/v1", guard, telemetry), lifespan="on"))
        else:
            url = stack.enter_context(gateway_process(args, up + "/v1"))
        run(url, 8, 1, args.new_chunks)  # warm up
        base = None
        rows = []
        print(f"{'concurrency':>11} {'req/s':>7} {'p50 ms':>8} {'p99 ms':>8} {'200':>5} {'503':>5} {'x c1':>6} "
              f"{'p50/raw':>8} {'req/raw':>8}")
        for c in args.concurrency:
            rps, lat, overloaded, ok = run(url, args.requests, c, args.new_chunks)
            base = base or rps
            lat.sort()
            p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
            p50 = statistics.median(lat) * 1000
            rows.append({"concurrency": c, "rps": rps, "p50_ms": p50, "p99_ms": p99 * 1000, "ok": ok,
                         "overloaded": overloaded, "x_c1": rps / base, "raw_forward_ms": raw,
                         "p50_over_raw": p50 / raw, "requests_per_raw_forward": rps * raw / 1000})
            print(f"{c:>11} {rps:7.2f} {p50:8.0f} {p99 * 1000:8.0f} {ok:>5} {overloaded:>5} {rps / base:6.2f} "
                  f"{p50 / raw:8.2f} {rps * raw / 1000:8.2f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    for scorer in scorers:
        backend = scorer._load()[1] if isinstance(scorer, EmbeddingScorer) else scorer._load()[2]
        if hasattr(backend, "forward_passes"):
            print(f"{type(scorer).__name__}: {backend.jobs} calls served by {backend.forward_passes} forward passes")


if __name__ == "__main__":
    main()
