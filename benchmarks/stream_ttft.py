"""Streaming block mode: time to first token through the gateway vs straight from the upstream (issue 10).

The upstream (the tests' local OpenAI-compatible server) streams the reference answer in 5-character chunks; the
gateway holds each sentence until it passed, so its first content byte waits for sentence 1 to be generated and
checked (and for the retrieval check). NLI cache off (a new answer every time); the 5 chunks repeat, so their
embeddings are cached after the first request, as in a RAG app. Medians over N sequential requests.

    python benchmarks/stream_ttft.py [-n 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import httpx
from prometheus_client import CollectorRegistry

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import llm_server  # noqa: E402
from load import ANSWER, CONTEXTS  # noqa: E402
from middleware_overhead import served  # noqa: E402

from guardrail import Evaluator, Guard, NLIScorer, Policy, Telemetry, default_nli_model  # noqa: E402
from guardrail.scorers.embedding import EmbeddingScorer  # noqa: E402
from guardrail.server import create_gateway  # noqa: E402


def first_content(url: str, i: int) -> tuple[float, float]:
    body = {"model": "m", "stream": True, "answer": ANSWER, "contexts": CONTEXTS,
            "messages": [{"role": "user", "content": f"How do returns and refunds work? (ticket {i})"}]}
    t0 = time.perf_counter()
    first = None
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=60) as r:
        for line in r.iter_lines():
            if first is None and '"content":"' in line.replace(" ", "") and '"content":""' not in line.replace(" ", ""):
                first = time.perf_counter() - t0
    return first or float("nan"), time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=20)
    args = ap.parse_args()
    policy = Policy(action="block")
    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model(), cache_size=0), embedder=EmbeddingScorer(),
                            checks=policy.checks), policy)
    telemetry = Telemetry(CollectorRegistry(), route="bench", model="m")
    with served(llm_server.app) as upstream, served(create_gateway(upstream + "/v1", guard, telemetry),
                                                    lifespan="on") as gw:
        first_content(gw, -1)  # warm up: models loaded, chunks embedded
        rows = {}
        for label, url in (("upstream directly", upstream), ("gateway, block mode", gw)):
            runs = [first_content(url, i) for i in range(args.n)]
            rows[label] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
    base = rows["upstream directly"]
    print(f"{args.n} sequential streams of the reference answer (5-character chunks), medians:")
    for label, (ttft, total) in rows.items():
        print(f"  {label:<22} first content {ttft * 1000:7.1f} ms   total {total * 1000:7.1f} ms   "
              f"added to the first token {(ttft - base[0]) * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
