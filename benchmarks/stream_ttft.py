"""Streaming: time to first token through the gateway (block mode, or --action flag) vs straight from the upstream.

The upstream (the tests' local OpenAI-compatible server) streams the reference answer in 5-character chunks; the
gateway holds each sentence until it passed, so its first content byte waits for sentence 1 to be generated and
checked. NLI cache off (a new answer every time); the 5 chunks repeat, so their embeddings are cached after the
first request, as in a RAG app, unless --new-chunks gives every request chunks of its own (the retrieval check then
embeds them: it starts when the stream opens and runs while the model writes sentence 1). --chunk-delay makes the
upstream wait that long before each 5-character chunk (0.02 s ~ 60 tokens/s, a typical hosted model); the default 0
writes the whole answer at once. Medians over N sequential requests.

The models run in a forward-pass pool as in `guardrail serve` (--no-pool: the figures before 2026-11-25).

    python benchmarks/stream_ttft.py [-n 20] [--chunk-delay 0.02] [--new-chunks] [--action flag] [--no-pool]
"""

from __future__ import annotations

import argparse
import json
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
from guardrail.scorers.pool import ForwardPool  # noqa: E402
from guardrail.server import create_gateway  # noqa: E402

FIRST_SENTENCE = ANSWER[: ANSWER.index(". ") + 1]


def first_content(url: str, i: int, delay: float = 0.0, new_chunks: bool = False) -> tuple[float, float, float]:
    """(first content byte, end of the first sentence, whole stream) in seconds from the request."""
    contexts = [f"{c} (Policy reference {i}-{k}.)" for k, c in enumerate(CONTEXTS)] if new_chunks else CONTEXTS
    body = {"model": "m", "stream": True, "answer": ANSWER, "contexts": contexts, "delay": delay,
            "messages": [{"role": "user", "content": f"How do returns and refunds work? (ticket {i})"}]}
    t0 = time.perf_counter()
    first = sentence = None
    text = ""
    with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=60) as r:
        for line in r.iter_lines():
            if not line.startswith("data: {"):
                continue
            for choice in json.loads(line[6:]).get("choices", []):
                text += (choice.get("delta") or {}).get("content") or ""
            if first is None and text:
                first = time.perf_counter() - t0
            if sentence is None and len(text) >= len(FIRST_SENTENCE):
                sentence = time.perf_counter() - t0
    end = time.perf_counter() - t0
    return first or float("nan"), sentence or float("nan"), end


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--chunk-delay", type=float, default=0.0, help="upstream seconds before each 5-character chunk")
    ap.add_argument("--new-chunks", action="store_true", help="every request has chunks never seen before")
    ap.add_argument("--gap", type=float, default=0.0,
                    help="seconds between requests (flag mode checks after the last byte: back to back, that check "
                         "shares the CPU with the next request's first token)")
    ap.add_argument("--action", default="block", choices=["block", "flag"],
                    help="flag: the text is delivered as it comes and checked after the last chunk")
    ap.add_argument("--no-pool", action="store_true", help="no forward-pass pool (the figures before 2026-11-25)")
    args = ap.parse_args()
    policy = Policy(action=args.action)
    mode = f"gateway, {args.action} mode"
    pool = None if args.no_pool else ForwardPool()  # as `guardrail serve` runs its models
    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model(), cache_size=0, pool=pool),
                            embedder=EmbeddingScorer(pool=pool), checks=policy.checks), policy)
    telemetry = Telemetry(CollectorRegistry(), route="bench", model="m")
    with served(llm_server.app) as upstream, served(create_gateway(upstream + "/v1", guard, telemetry),
                                                    lifespan="on") as gw:
        first_content(gw, -1)  # warm up: models loaded, chunks embedded
        rows = {}
        for label, url in (("upstream directly", upstream), (mode, gw)):
            runs = []
            for i in range(args.n):
                time.sleep(args.gap)
                runs.append(first_content(url, i, args.chunk_delay, args.new_chunks))
            rows[label] = tuple(statistics.median(r[k] for r in runs) for k in range(3))
    base = rows["upstream directly"]
    print(f"{args.n} sequential streams of the reference answer (5-character chunks, {args.chunk_delay * 1000:.0f} ms "
          f"before each), {'new chunks in every request' if args.new_chunks else 'the same chunks'}, "
          f"{args.gap * 1000:.0f} ms between requests, medians:")
    for label, (ttft, sentence, total) in rows.items():
        print(f"  {label:<22} first content {ttft * 1000:7.1f} ms   sentence 1 complete {sentence * 1000:7.1f} ms   "
              f"total {total * 1000:7.1f} ms")
    gw = rows[mode]
    if args.action == "flag":
        print(f"  flag mode's first token comes {(gw[0] - base[0]) * 1000:.1f} ms after the upstream's")
        return
    print(f"  block mode's first token comes {(gw[0] - base[0]) * 1000:.1f} ms after the upstream's; of that, "
          f"{(base[1] - base[0]) * 1000:.1f} ms is the upstream writing sentence 1 (held until checked) and "
          f"{(gw[0] - base[1]) * 1000:.1f} ms the guard")


if __name__ == "__main__":
    main()
