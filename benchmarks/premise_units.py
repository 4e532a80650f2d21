"""Premise units on the dev sets: sentence windows (the default) against single sentences, AUROC for "hallucinated".

NLI only is 1 - mean sentence entailment; "calibrated" uses the shipped calibration, which was fitted on these rows
with the default units (in-sample for the default, and not refitted for the others: a refit is part of changing the
default). Tokens are NLI tokens per row (no cache).

    python benchmarks/premise_units.py [--data ../shared/data/bench]
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

import numpy as np
from calibration_cv import group_of

from guardrail import FaithfulnessCheck, FaithfulnessConfig, NLIScorer, default_nli_model
from guardrail.stats import auroc, bootstrap_ci

CONFIGS = {
    "sentence windows (default)": FaithfulnessConfig(),
    "single sentences, top 4": FaithfulnessConfig(window=0),
    "best 2 sentences + best 2 windows": FaithfulnessConfig(top_k=2, sentences=2),
    "every sentence alone (exhaustive)": FaithfulnessConfig(mode="exhaustive"),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("../shared/data/bench"))
    args = ap.parse_args()
    sets = {"halueval length_matched": ("halueval_qa_dev.jsonl.gz", "length_matched"), "begin_dev": ("begin_dev.jsonl.gz", None)}
    for name, (file, subset) in sets.items():
        with gzip.open(args.data / file, "rt", encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh]
        rows = [r for r in rows if subset is None or r.get(subset)]
        y = np.array([int(r["label"]) == 1 for r in rows])
        groups = np.array([group_of(str(r["id"])) for r in rows])
        print(f"{name} ({len(rows)} rows):")
        for label, cfg in CONFIGS.items():
            check = FaithfulnessCheck(NLIScorer(default_nli_model(), cache_size=0), cfg)
            nli, cal, tokens = [], [], []
            for r in rows:
                res = check.run(r["question"], r["contexts"], r["response"])
                nli.append(1 - (res.nli_score if res.nli_score is not None else 1.0))
                cal.append(1 - (res.score if res.score is not None else 1.0))
                tokens.append(res.model_tokens)
            a, c = np.array(nli), np.array(cal)
            lo, hi = bootstrap_ci(lambda i: auroc(a[i], y[i]), len(y), groups=groups)  # noqa: B023
            print(f"  {label:<36} NLI only {auroc(a, y):.3f} [{lo:.3f}, {hi:.3f}]  calibrated {auroc(c, y):.3f}  "
                  f"{np.mean(tokens):6.0f} NLI tokens/row", flush=True)


if __name__ == "__main__":
    main()
