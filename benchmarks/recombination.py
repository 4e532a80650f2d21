"""Recombination probes (not a test): hallucinations made of the context's own words, one sentence's subject joined to
another's predicate ("The battery has a two-year warranty." against "The laptop has a two-year warranty. The battery is
covered for one year."), each beside a faithful answer over the same context. Word overlap cannot tell them apart; an
NLI model that reads premises as bags of phrases passes them. Hand-written, 12 pairs, not used for training or
calibration: a sanity check of the class, too small for a rate with a useful interval.

    python benchmarks/recombination.py [--nli-model DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from guardrail import Evaluator, Guard, Policy
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.scorers.nli import NLIScorer, default_nli_model

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nli-model", default=None, help="NLI model directory (default: the shipped model)")
    ap.add_argument("--file", type=Path, default=HERE / "data" / "recombination_probes.jsonl")
    args = ap.parse_args(argv)
    nli = NLIScorer(args.nli_model or default_nli_model())
    guard = Guard(Evaluator(nli=nli, embedder=EmbeddingScorer()), Policy(action="block", retrieval_relevance=None))
    rows = [json.loads(line) for line in args.file.read_text().splitlines() if line.strip()]
    right = {0: 0, 1: 0}
    for row in rows:
        v = guard.check(row["question"], row["contexts"], row["response"])
        blocked = v.action == "block"
        right[row["label"]] += int(blocked == bool(row["label"]))
        print(f"{row['id']:<12} {'hallucinated' if row['label'] else 'faithful':<12} "
              f"{v.scores.faithfulness:.3f} {'BLOCK' if blocked else 'pass'}  {row['response']}")
    n1 = sum(r["label"] for r in rows)
    n0 = len(rows) - n1
    print(f"hallucinations blocked {right[1]}/{n1}, faithful answers passed {right[0]}/{n0} "
          f"(threshold {guard.policy.faithfulness:.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
