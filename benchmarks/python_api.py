"""Python API on issue 10's reference request (5 chunks of ~120 words, a 4-sentence answer), default Guard (block
policy defaults, the shipped models): warm p50 / p95 of `Guard.check`, then the cold start.

Warm: a new question each time and the NLI cache off (every check does a new answer's model work), once with the
same chunks in every request (their embeddings cached after the first, as in a RAG app) and once with chunks never
seen before.

Cold start: a fresh Python process imports guardrail, builds a Guard on the default models and checks one request.
Each run is a new interpreter (so nothing is warm but the OS file cache, as after a deploy's first request).
Phases, medians over the runs:
  import   `from guardrail import Guard, Evaluator, ...`
  build    NLIScorer + EmbeddingScorer + Evaluator + Guard (reads the NLI model's threshold: loads the NLI model)
  first    the first guard.check (loads the embedder; first runs of both sessions)
  total    import + build + first: the "cold first check" figure
  second   a second check in the same process, for scale

    python benchmarks/python_api.py [-n 40] [--cold 9]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load import ANSWER, CONTEXTS  # noqa: E402

from guardrail import EmbeddingScorer, Evaluator, Guard, NLIScorer, default_nli_model  # noqa: E402

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from guardrail import EmbeddingScorer, Evaluator, Guard, NLIScorer, default_nli_model
t1 = time.perf_counter()
guard = Guard(Evaluator(nli=NLIScorer(default_nli_model()), embedder=EmbeddingScorer()))
t2 = time.perf_counter()
(q, c, r), (q2, c2, r2) = json.loads(sys.argv[1])
v = guard.check(q, c, r)
t3 = time.perf_counter()
guard.check(q2, c2, r2)
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "build": t2 - t1, "first": t3 - t2, "total": t3 - t0, "second": t4 - t3,
                  "action": v.action}))
"""


def warm(n: int) -> None:
    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model(), cache_size=0), embedder=EmbeddingScorer()))
    guard.check("warm-up", CONTEXTS, ANSWER)
    for label, new_chunks in (("chunks seen before", False), ("chunks never seen", True)):
        times, actions = [], set()
        for i in range(n):
            contexts = [f"{c} (Policy reference {i}-{k}.)" for k, c in enumerate(CONTEXTS)] if new_chunks else CONTEXTS
            t0 = time.perf_counter()
            actions.add(guard.check(f"How do returns and refunds work? (ticket {i})", contexts, ANSWER).action)
            times.append(time.perf_counter() - t0)
        times.sort()
        print(f"warm Guard.check, {label}: p50 {statistics.median(times) * 1000:.1f} ms, "
              f"p95 {times[int(0.95 * (n - 1))] * 1000:.1f} ms ({n} requests; actions {sorted(actions)})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=40, help="warm requests per case")
    ap.add_argument("--cold", type=int, default=9, help="fresh processes for the cold start")
    args = ap.parse_args()
    warm(args.n)
    q = "How do returns and refunds work?"
    requests = [(q, CONTEXTS, ANSWER), (q + " (2)", CONTEXTS, ANSWER.replace("5 business", "6 business"))]
    runs = []
    for _ in range(args.cold):
        out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(requests)], capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"cold start, {args.cold} fresh processes, medians:")
    for phase in ("import", "build", "first", "total", "second"):
        xs = [r[phase] * 1000 for r in runs]
        print(f"  {phase:<7} {statistics.median(xs):7.1f} ms   (min {min(xs):.1f}, max {max(xs):.1f})")
    print(f"  actions: {sorted({r['action'] for r in runs})}")


if __name__ == "__main__":
    main()
