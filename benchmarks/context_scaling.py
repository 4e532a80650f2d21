"""Check cost against context length (issue 10: 100k characters must cost <= 12x the time of 10k).

Contexts of 10k, 30k and 100k characters built from TREC-DL passages, either as one single-paragraph chunk (the
issue's worst case for the sentence splitter) or as chunks of ~1,000 characters; the answer is 4 sentences, two
taken from the contexts and two not. Every run uses texts never seen before (no cache hit). Medians of --rounds
runs of `Evaluator.evaluate` with the guard's checks (faithfulness, retrieval and response relevance), and of the
faithfulness check alone, with its NLI tokens.

    python benchmarks/context_scaling.py [--data ../shared/data/bench] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from pathlib import Path

from guardrail import EmbeddingScorer, Evaluator, NLIScorer, default_nli_model

SIZES = (10_000, 30_000, 100_000)


def passages(data: Path, chars: int) -> list[str]:
    out, total = [], 0
    with gzip.open(data / "retrieval_trecdl19" / "corpus.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            text = json.loads(line)["text"].replace("\n", " ").strip()
            out.append(text)
            total += len(text) + 1
            if total >= chars:
                return out
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("../shared/data/bench"))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    pool = passages(args.data, max(SIZES) + 5_000)
    ev = Evaluator(nli=NLIScorer(default_nli_model(), cache_size=0), embedder=EmbeddingScorer(cache_size=0),
                   checks=["faithfulness", "retrieval_relevance", "response_relevance"])
    ev.evaluate("warm up", [pool[0]], pool[0])
    print(f"{'layout':<22} {'chars':>7} {'checks p50':>11} {'x 10k':>6} | {'faithfulness p50':>16} {'x 10k':>6} "
          f"{'NLI tokens':>10}")
    for layout in ("one paragraph", "chunks of ~1k chars"):
        base = base_f = None
        for size in SIZES:
            text = ""
            for p in pool:
                if len(text) >= size:
                    break
                text += p + " "
            text = text[:size]
            answer = (f"{pool[1].split('. ')[0]}. {pool[3].split('. ')[0]}. The service is free for students. "
                      f"It opened in 1987.")
            totals, faith, tokens = [], [], []
            for r in range(args.rounds):
                body = f"(Edition {r}.) " + text  # new text every round: nothing cached
                if layout == "one paragraph":
                    contexts = [body]
                else:
                    contexts = [body[i : i + 1000] for i in range(0, len(body), 1000)]
                t0 = time.perf_counter()
                res = ev.evaluate(f"What does the service offer? ({r})", contexts, answer, context_relevancy=False)
                totals.append(time.perf_counter() - t0)
                faith.append(res.timings.faithfulness)
                tokens.append(res.faithfulness.model_tokens if res.faithfulness else 0)
            t, f = statistics.median(totals), statistics.median(faith)
            base, base_f = base or t, base_f or f
            print(f"{layout:<22} {size:>7,} {t * 1000:9.0f}ms {t / base:6.2f} | {f * 1000:14.0f}ms {f / base_f:6.2f} "
                  f"{statistics.median(tokens):10.0f}")


if __name__ == "__main__":
    main()
