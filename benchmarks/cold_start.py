"""Cold start: a fresh Python process imports guardrail, builds a Guard on the default models and checks one request.

Each run is a new interpreter (so nothing is warm but the OS file cache, as after a deploy's first request).
Phases, medians over the runs:
  import   `from guardrail import Guard, Evaluator, ...`
  build    NLIScorer + EmbeddingScorer + Evaluator + Guard (reads the NLI model's threshold: loads the NLI model)
  first    the first guard.check (loads the embedder; first runs of both sessions)
  total    import + build + first: the "cold first check" figure
  second   a second check in the same process, for scale

    python benchmarks/cold_start.py [--data ../shared/data/bench] [-n 9]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import rag_requests  # noqa: E402

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("../shared/data/bench"))
    ap.add_argument("-n", type=int, default=9)
    args = ap.parse_args()
    requests = rag_requests(args.data, 2)
    runs = []
    for _ in range(args.n):
        out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(requests)], capture_output=True, text=True, check=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(f"cold start, reference RAG request (5 chunks, 4-sentence answer), {args.n} fresh processes, medians:")
    for phase in ("import", "build", "first", "total", "second"):
        xs = [r[phase] * 1000 for r in runs]
        print(f"  {phase:<7} {statistics.median(xs):7.1f} ms   (min {min(xs):.1f}, max {max(xs):.1f})")
    print(f"  actions: {sorted({r['action'] for r in runs})}")


if __name__ == "__main__":
    main()
