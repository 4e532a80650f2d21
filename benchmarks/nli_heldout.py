"""The exported NLI model on the trainer's held-out split (by dataset and id), fp32 vs int8.

Rebuilds the held-out pairs from the training config (same seed, same hash split), scores them with
each ONNX file and prints entailment AUROC, 3-way accuracy, per-dataset AUROC, and how closely int8
follows fp32 (Pearson r of entailment, mean |diff|, same argmax).

    python benchmarks/nli_heldout.py --config configs/nli-minilm-l6.json --model runs/nli-onnx
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from guardrail.scorers.nli import NLIScorer
from guardrail.stats import auroc, bootstrap_ci
from guardrail.training.data import build_mix


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", type=Path, default=Path("configs/nli-minilm-l6.json"))
    ap.add_argument("--model", type=Path, required=True, help="directory with model.onnx and/or model.int8.onnx")
    args = ap.parse_args()
    cfg = json.loads(args.config.read_text())
    mix = build_mix(Path(cfg["data_dir"]), cfg["datasets"], held_out_percent=cfg["held_out_percent"],
                    held_out_max_per_dataset=cfg["held_out_max_per_dataset"], seed=cfg["seed"])
    pairs = mix.held_out
    print(f"held-out: {len(pairs)} pairs from {len({p.dataset for p in pairs})} datasets")
    y_ent = np.array([p.label == 0 for p in pairs])
    results = {}
    for name in ("model.onnx", "model.int8.onnx"):
        if not (args.model / name).exists():
            continue
        nli = NLIScorer(args.model, onnx_file=name, max_length=cfg.get("max_length", 256))
        prem, hyp = [], []
        for p in pairs:  # the trainer truncated premises to max_length; do the same for a like-for-like figure
            ids = nli.tokenizer.offsets(p.premise)
            budget = cfg.get("max_length", 256) - nli.tokenizer.count(p.hypothesis) - 3
            prem.append(p.premise if len(ids) <= budget else p.premise[: ids[max(0, budget - 1)][1]])
            hyp.append(p.hypothesis)
        t0 = time.perf_counter()
        pred = nli.predict(prem, hyp)
        dt = time.perf_counter() - t0
        a = auroc(pred.entailment, y_ent)
        ent = pred.entailment
        lo, hi = bootstrap_ci(lambda i, ent=ent: auroc(ent[i], y_ent[i]), len(pairs), rounds=500)
        results[name] = pred
        print(f"{name:<16} entailment AUROC {a:.3f} [{lo:.3f}, {hi:.3f}]  ({len(pairs) / dt:.0f} pairs/s)")
        by_ds: dict[str, list[int]] = defaultdict(list)
        for i, p in enumerate(pairs):
            by_ds[p.dataset].append(i)
        cells = []
        for ds, idx in sorted(by_ds.items()):
            ix = np.array(idx)
            cells.append(f"{ds} {auroc(pred.entailment[ix], y_ent[ix]):.2f}")
        print("   per dataset: " + ", ".join(cells))
    if len(results) == 2:
        a, b = results["model.onnx"].entailment, results["model.int8.onnx"].entailment
        print(f"int8 vs fp32: Pearson r {np.corrcoef(a, b)[0, 1]:.4f}, mean |diff| {np.abs(a - b).mean():.4f}, "
              f"same side of 0.5 {np.mean((a >= 0.5) == (b >= 0.5)):.4f}")


if __name__ == "__main__":
    main()
