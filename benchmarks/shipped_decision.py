"""The block decision of the model as it ships: its stored calibration and threshold (``guardrail.json``) applied to
the features a ``dev_sets.py`` run cached, per dev set, beside the best threshold for the set. In sample: the shipped
fit saw these rows (``dev_sets.py`` prints the out-of-fold figures).

    cd benchmarks && python shipped_decision.py FEATURES.jsonl [MODEL_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import dev_sets
import numpy as np

from guardrail.checks.calibration import Calibrator
from guardrail.stats import auroc, balanced_accuracy


def main() -> None:
    cache_path = Path(sys.argv[1])
    model = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("../guardrail/models/nli-minilm-l6")
    meta = json.loads((model / "guardrail.json").read_text(encoding="utf-8"))
    cal, threshold = Calibrator.from_dict(meta["calibration"]), float(meta["threshold"])
    cache = {c["key"]: c for c in map(json.loads, cache_path.read_text(encoding="utf-8").splitlines())}
    print(f"shipped calibration and threshold {threshold} ({model / 'guardrail.json'}); features {cache_path}")
    print("set | AUROC of the shipped score | decision @ shipped (balanced acc.) | best own threshold")
    for name in dev_sets.SETS:
        rows = dev_sets.load(name)
        score = np.array([dev_sets.row_score(cal, cache[f"{name}:{r['id']}"]["features"]) for r in rows])
        supported = np.array([int(r["label"]) != 1 for r in rows])
        best, t = dev_sets.best_own(score, supported)
        print(f"{name} | {auroc(1 - score, ~supported):.3f} | {balanced_accuracy(score >= threshold, supported):.3f} | "
              f"{best:.3f} (t={t})")


if __name__ == "__main__":
    main()
