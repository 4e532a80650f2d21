"""Shadow judging does not delay answers (issue 11): the gateway in flag mode in front of a local upstream, with and
without shadow judging of every answer (rate 1.0) by a scripted judge that takes 0.5 s a call, bounded queue.

Prints time to first byte and total time (medians and p95 over N sequential requests, real uvicorn servers), their
ratios, and how many answers were judged and how many dropped (the queue holds 4).

    python benchmarks/shadow_ttfb.py [-n 100]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import httpx
from prometheus_client import CollectorRegistry, generate_latest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

import judge_server  # noqa: E402
import llm_server  # noqa: E402
from middleware_overhead import served  # noqa: E402

from guardrail import Evaluator, Guard, NLIScorer, Policy, Telemetry, default_nli_model  # noqa: E402
from guardrail.judge.client import Judge  # noqa: E402
from guardrail.judge.shadow import ShadowJudge  # noqa: E402
from guardrail.server import create_gateway  # noqa: E402

Q = "How long do I have to return an item?"
CTX = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned."]
ANSWER = "Items can be returned within 30 days of delivery."


def measure(url: str, n: int) -> tuple[list[float], list[float]]:
    first, total = [], []
    body = {"model": "m", "messages": [{"role": "user", "content": Q}], "contexts": CTX, "answer": ANSWER}
    with httpx.Client(base_url=url, timeout=30) as client:
        for _ in range(n):
            t0 = time.perf_counter()
            with client.stream("POST", "/v1/chat/completions", json=body) as r:
                t_first = None
                for _chunk in r.iter_raw():
                    if t_first is None:
                        t_first = time.perf_counter() - t0
                assert r.status_code == 200, r.status_code
            first.append(t_first or 0.0)
            total.append(time.perf_counter() - t0)
    return first, total


def p95(xs: list[float]) -> float:
    return sorted(xs)[int(0.95 * (len(xs) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=100)
    args = ap.parse_args()
    evaluator = Evaluator(nli=NLIScorer(default_nli_model()))
    evaluator.evaluate(Q, CTX, ANSWER)  # models loaded before timing
    judge_server.reset()
    judge_server.SETTINGS["delay_s"] = 0.5
    results = {}
    with served(llm_server.app) as upstream, served(judge_server.app) as judge_url:
        for label in ("no shadow", "shadow, rate 1.0"):
            telemetry = Telemetry(CollectorRegistry(), route="bench", model="m")
            shadow = None
            if label != "no shadow":
                shadow = ShadowJudge(Judge("judge", base_url=judge_url + "/v1", api_key="k"), ["context_adherence"],
                                     rate=1.0, workers=2, max_queue=4, on_score=telemetry.judge_score,
                                     on_drop=telemetry.judge_drop, metric_kwargs={"context_adherence": {"n": 1}})
            guard = Guard(evaluator, Policy(action="flag", retrieval_relevance=None), observer=telemetry,
                          tap=shadow.submit if shadow else None)
            app = create_gateway(upstream + "/v1", guard, telemetry, shadow=shadow)
            with served(app, lifespan="on") as url:
                measure(url, 5)  # warm-up
                results[label] = measure(url, args.n)
                time.sleep(1.2)  # let the judge finish what it holds
            if shadow is not None:
                metrics = generate_latest(telemetry.registry).decode()
                count = [line for line in metrics.splitlines() if line.startswith("guardrail_judge_score_count")]
                print(f"shadow: {shadow.judged} answers judged, {shadow.dropped} dropped (queue of 4, judge 0.5 s a "
                      f"call); /metrics: {count[0] if count else 'no judge_score series'}")
                shadow.close()
    base_first, base_total = results["no shadow"]
    print(f"{args.n} sequential requests, flag mode, JSON answers, medians (p95) in ms:")
    for label, (first, total) in results.items():
        print(f"  {label:<18} first byte {statistics.median(first) * 1e3:7.2f} ({p95(first) * 1e3:7.2f})   "
              f"total {statistics.median(total) * 1e3:7.2f} ({p95(total) * 1e3:7.2f})   ratio first byte "
              f"{statistics.median(first) / statistics.median(base_first):.2f}x, total "
              f"{statistics.median(total) / statistics.median(base_total):.2f}x")


if __name__ == "__main__":
    main()
