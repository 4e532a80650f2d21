"""What the faithfulness check costs as the answer and the contexts grow (one core, fresh caches, faithfulness only):
the rules compare each answer sentence with the contexts, so the cost per answer character grows with the contexts.

    python benchmarks/rule_cost.py

Prints, for three sizes, the best of a few runs and the cost per answer character; see BENCHMARKS.md (session 20)
for the figures before and after premise ranking moved to arrays.
"""

from __future__ import annotations

import statistics
import time

from guardrail.checks.evaluator import Evaluator
from guardrail.scorers.nli import NLIScorer, default_nli_model

COLORS = ["red", "blue", "green", "black", "white", "silver"]
SENTENCES = [f"The model {i} lamp comes in {COLORS[i % 6]} and weighs {i % 17 + 2} kilograms." for i in range(1700)]


def chunks() -> list[str]:
    out, cur = [], ""
    for s in SENTENCES:
        if len(cur) + len(s) > 2000:
            out.append(cur)
            cur = ""
        cur += s + " "
    return [*out, cur]


def main() -> None:
    nli = NLIScorer(default_nli_model())
    ctx = chunks()
    Evaluator(nli=nli).evaluate("Tell me about the lamps.", ctx[:3], "The model 1 lamp comes in blue.")  # warm up
    small = [" ".join(SENTENCES[i:i + 25]) for i in range(0, 125, 25)]
    times = []
    for _ in range(15):
        ev = Evaluator(nli=nli)
        t = time.perf_counter()
        ev.evaluate("Tell me about the lamps.", small, " ".join(SENTENCES[3:9]), checks=("faithfulness",))
        times.append(time.perf_counter() - t)
    print(f"6-sentence answer, 5 chunks: median {statistics.median(times) * 1000:.1f} ms of 15 runs")
    for n, c in ((10, 5), (60, 50), (150, len(ctx))):
        answer, contexts = " ".join(SENTENCES[:n]), ctx[:c]
        best = float("inf")
        for _ in range(2 if n < 150 else 1):
            ev = Evaluator(nli=nli)  # fresh caches
            t = time.perf_counter()
            ev.evaluate("Tell me about the lamps.", contexts, answer, checks=("faithfulness",))
            best = min(best, time.perf_counter() - t)
        print(f"answer {len(answer):,} chars, contexts {sum(map(len, contexts)):,} chars: {best:.2f} s "
              f"({1000 * best / len(answer):.2f} ms per answer character)")


if __name__ == "__main__":
    main()
