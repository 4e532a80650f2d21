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
    DEFAULT_FEATURES,
    Calibrator,
    absent_share,
    fit_logistic,
    sentence_features,
    tokens,
)
from guardrail.checks.faithfulness import FaithfulnessCheck, FaithfulnessConfig
from guardrail.errors import InputError
from guardrail.scorers.nli import NLIScorer
from guardrail.stats import auroc, balanced_accuracy, best_threshold


def load_rows(
    paths: Sequence[Path], exclude: Iterable[str] = (), only: Iterable[str] = (), limit_per_file: int | None = None
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path in paths:
        if not path.is_file():
            raise InputError(f"{path}: no such file; --bench takes labelled JSONL(.gz) files in the common format")
        start = len(rows)
        opener = gzip.open if path.suffix == ".gz" else open
        try:
            with opener(path, "rt", encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InputError(f"{path}:{n}: not a JSON object ({exc.msg}); one JSON object a line") from exc
                    _check_row(row, f"{path}:{n}")
                    if any(row.get(f) for f in exclude) or not all(row.get(f) for f in only):
                        continue
                    if limit_per_file is not None and len(rows) - start >= limit_per_file:
                        break
                    rows.append(row)
        except (OSError, UnicodeDecodeError, EOFError) as exc:
            raise InputError(f"{path}: cannot be read ({exc}); expected UTF-8 JSONL, optionally gzipped") from exc
    return rows


def _check_row(row: Any, where: str) -> None:
    if not isinstance(row, dict):
        raise InputError(f"{where}: expected a JSON object with contexts, response and label")
    missing = [k for k in ("contexts", "response", "label") if k not in row]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}; each row needs contexts (list of strings), "
                         "response and label (1 = unsupported, 0 = faithful)")
    if row["label"] not in (0, 1, "0", "1", True, False):
        raise InputError(f"{where}: label must be 0 (faithful) or 1 (unsupported), got {row['label']!r}")
    if not isinstance(row["contexts"], list) or not all(isinstance(c, str) for c in row["contexts"]):
        raise InputError(f"{where}: contexts must be a list of strings")


def calibrate(model_dir: Path, rows: Sequence[dict[str, Any]], *, mode: str = "candidates", l2: float = 1.0,
              contradiction_cap: float | None = 0.5) -> dict[str, Any]:
    """Fit and write the calibration. ``contradiction_cap`` keeps a sentence the model reads as contradicted from
    passing on lexical signals (see guardrail.checks.calibration); None turns that guarantee off."""
    nli = NLIScorer(model_dir)
    check = FaithfulnessCheck(nli, FaithfulnessConfig(mode=mode, threshold=0.5), calibrator=None)  # type: ignore[arg-type]
    x: list[list[float]] = []
    y: list[int] = []
    per_row: list[tuple[list[tuple[dict[str, float], float, float | None]], int]] = []
    for row in rows:
        res = check.run(row.get("question", ""), row["contexts"], row["response"])
        ctx = set(tokens(" ".join(row["contexts"])))
        feats = [
            (sentence_features(s.entailment or 0.0, s.contradiction, s.coverage or 0.0, s.context_coverage or 0.0,
                               bool(s.unsupported_terms), absent_share(s.text, ctx), len(s.text),
                               res.context_sentences),
             s.entailment or 0.0, s.contradiction)
            for s in res.sentences if s.checked
        ]
        supported = 0 if int(row["label"]) == 1 else 1
        per_row.append((feats, supported))
        if len(feats) == 1:
            x.append([feats[0][0][f] for f in DEFAULT_FEATURES])
            y.append(supported)
    if len(set(y)) < 2:
        n_sup, n_uns = sum(y), len(y) - sum(y)
        raise InputError(
            f"calibration needs rows of both labels among the answers of one checked sentence: found {n_sup} "
            f"faithful (label 0) and {n_uns} unsupported (label 1) of {len(rows)} rows; add labelled rows of the "
            "missing kind (a few hundred of each is a good start)"
        )
    weights, bias = fit_logistic(x, y, l2=l2)
    cal = Calibrator(DEFAULT_FEATURES, tuple(weights), bias, contradiction_cap)
    scores = np.array([np.mean([cal(f, e, c) for f, e, c in feats]) if feats else 1.0 for feats, _ in per_row])
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
