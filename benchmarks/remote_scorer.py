"""Check latency with the remote scorer (`guardrail serve-scorer` in its own process, OIP v2 over HTTP on localhost)
against the scorers in process: p50 / p95 of a whole check (faithfulness + retrieval relevance), sequential requests.

    python benchmarks/remote_scorer.py [--requests 30] [--port 8199]

Each request is distinct (nothing answered from a cache); both sides use the shipped models with one pool of
GUARDRAIL_THREADS forward-pass workers (default: the CPU count). The scorer server runs on the same machine, so the
remote figure is the in-process cost plus HTTP and JSON, not a network hop.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

import httpx

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.remote import scorers_from_url
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.scorers.pool import ForwardPool


def requests(n: int, salt: str) -> list[tuple[str, list[str], str]]:
    out = []
    for i in range(n):
        days, fee = 14 + i, 5 + i
        contexts = [
            f"Items can be returned within {days} days of delivery ({salt}). Refunds go to the original payment method.",
            f"Shipping is free for orders over {fee * 10} euros. Express delivery costs {fee} euros and takes a day.",
            f"Gift cards cannot be returned. Opened software can be exchanged within {days // 2} days but not refunded.",
        ]
        answer = (f"You can return items within {days} days. Refunds go to your original payment method. "
                  f"Express delivery costs {fee + i % 3} euros.")
        out.append((f"How do returns and delivery work ({salt} {i})?", contexts, answer))
    return out


def timed(guard: Guard, rows: list[tuple[str, list[str], str]]) -> list[float]:
    times = []
    for q, c, a in rows:
        start = time.perf_counter()
        guard.check(q, c, a)
        times.append(time.perf_counter() - start)
    return times


def summary(name: str, times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    return f"{name:<22} p50 {statistics.median(ms):7.1f} ms   p95 {ms[int(0.95 * (len(ms) - 1))]:7.1f} ms   (n={len(ms)})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=30)
    ap.add_argument("--port", type=int, default=8199)
    args = ap.parse_args()
    policy = Policy(action="block")
    threads = int(os.environ["GUARDRAIL_THREADS"]) if os.environ.get("GUARDRAIL_THREADS") else None
    pool = ForwardPool(threads)
    local = Guard(Evaluator(nli=NLIScorer(default_nli_model(), pool=pool), embedder=EmbeddingScorer(pool=pool),
                            checks=policy.checks), policy)
    local.check(*requests(1, "warm-local")[0])
    local_times = timed(local, requests(args.requests, "local"))
    pool.close()

    url = f"http://127.0.0.1:{args.port}"
    server = subprocess.Popen([sys.executable, "-m", "guardrail", "serve-scorer", "--port", str(args.port)],
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while True:
            try:
                if httpx.get(url + "/v2/health/ready").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.time() > deadline or server.poll() is not None:
                raise SystemExit("the scorer server did not start")
            time.sleep(0.2)
        nli, embedder = scorers_from_url(url)
        remote = Guard(Evaluator(nli=nli, embedder=embedder, checks=policy.checks), policy)
        remote.check(*requests(1, "warm-remote")[0])
        remote_times = timed(remote, requests(args.requests, "remote"))
        nli.close()
    finally:
        server.terminate()
        server.wait(20)
    print(f"check latency, {args.requests} sequential requests (3 chunks, 3-sentence answer), {os.cpu_count()} CPUs, "
          f"affinity {len(os.sched_getaffinity(0))} core(s)")
    print(summary("in process", local_times))
    print(summary("remote scorer (HTTP)", remote_times))
    print(f"remote / in process (p50): {statistics.median(remote_times) / statistics.median(local_times):.2f}x")


if __name__ == "__main__":
    main()
