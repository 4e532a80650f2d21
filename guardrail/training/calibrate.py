"""Fit the calibrated faithfulness score and the decision threshold on held-out labelled rows.

``guardrail calibrate MODEL_DIR --bench FILE.jsonl.gz --exclude length_matched`` runs the faithfulness
check without calibration, takes the rows whose response is one checked sentence (so the row label is
that sentence's label), fits a logistic model of P(supported) on the sentence features
(guardrail.checks.calibration.FEATURES), picks the threshold on the response score that maximises
balanced accuracy on the same rows, and writes both to MODEL_DIR/guardrail.json.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.checks.calibration import (
    FEATURES,
    Calibrator,
    absent_share,
    fit_logistic,
    sentence_features,
    tokens,
)
from guardrail.checks.faithfulness import FaithfulnessCheck, FaithfulnessConfig
from guardrail.scorers.nli import NLIScorer
from guardrail.stats import auroc, balanced_accuracy, best_threshold


def load_rows(
    paths: Sequence[Path], exclude: Iterable[str] = (), only: Iterable[str] = (), limit_per_file: int | None = None
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        start = len(rows)
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    if any(row.get(f) for f in exclude) or not all(row.get(f) for f in only):
                        continue
                    if limit_per_file is not None and len(rows) - start >= limit_per_file:
                        break
                    rows.append(row)
    return rows


def calibrate(model_dir: Path, rows: Sequence[dict[str, Any]], *, mode: str = "candidates", l2: float = 1.0) -> dict[str, Any]:
    nli = NLIScorer(model_dir)
    check = FaithfulnessCheck(nli, FaithfulnessConfig(mode=mode, threshold=0.5), calibrator=None)  # type: ignore[arg-type]
    x: list[list[float]] = []
    y: list[int] = []
    per_row: list[tuple[list[dict[str, float]], int]] = []
    for row in rows:
        res = check.run(row.get("question", ""), row["contexts"], row["response"])
        ctx = set(tokens(" ".join(row["contexts"])))
        feats = [
            sentence_features(s.entailment or 0.0, s.contradiction, s.coverage or 0.0, s.context_coverage or 0.0,
                              bool(s.unsupported_terms), absent_share(s.text, ctx), len(s.text))
            for s in res.sentences if s.checked
        ]
        supported = 0 if int(row["label"]) == 1 else 1
        per_row.append((feats, supported))
        if len(feats) == 1:
            x.append([feats[0][f] for f in FEATURES])
            y.append(supported)
    if len(set(y)) < 2:
        raise ValueError("calibration needs single-sentence rows of both labels")
    weights, bias = fit_logistic(x, y, l2=l2)
    cal = Calibrator(FEATURES, tuple(weights), bias)
    scores = np.array([np.mean([cal(f) for f in feats]) if feats else 1.0 for feats, _ in per_row])
    is_supported = np.array([s == 1 for _, s in per_row])
    threshold = best_threshold(scores, is_supported)
    meta = {
        "threshold": round(float(threshold), 4),
        "calibration": cal.to_dict(),
        "calibration_fit": {
            "rows": len(per_row),
            "single_sentence_rows": len(y),
            "mode": mode,
            "auroc_on_fit_rows": auroc(scores, is_supported),
            "balanced_accuracy_on_fit_rows": balanced_accuracy(scores >= threshold, is_supported),
        },
    }
    path = model_dir / "guardrail.json"
    existing = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    existing.update(meta)
    path.write_text(json.dumps(existing, indent=2) + "\n", encoding="utf-8")
    return meta
