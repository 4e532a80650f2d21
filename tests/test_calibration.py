from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from guardrail.checks.calibration import (
    FEATURES,
    Calibrator,
    fit_logistic,
    sentence_features,
)
from guardrail.checks.faithfulness import FaithfulnessCheck
from guardrail.errors import ModelLoadError
from guardrail.scorers.nli import NLIScorer
from guardrail.training.calibrate import calibrate


def test_fit_logistic_finds_the_signal() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3))
    y = (x[:, 1] - 0.5 * x[:, 2] + rng.normal(scale=0.3, size=400) > 0).astype(int)
    w, b = fit_logistic(x, y, l2=0.1)
    assert w[1] > 1.0 and w[2] < -0.3 and abs(w[0]) < 0.5
    cal = Calibrator(("a", "b", "c"), tuple(w), b)  # type: ignore[arg-type]
    assert cal.features == ("a", "b", "c")


def test_calibrator_round_trip_and_validation() -> None:
    cal = Calibrator(FEATURES, tuple(float(i) for i in range(len(FEATURES))), -1.0)
    assert Calibrator.from_dict(json.loads(json.dumps(cal.to_dict()))) == cal
    feats = sentence_features(0.9, 0.05, 1.0, 1.0, False)
    assert 0.0 <= cal(feats) <= 1.0
    with pytest.raises(ModelLoadError, match="invalid calibration"):
        Calibrator.from_dict({"features": ["coverage"]})
    with pytest.raises(ModelLoadError, match="do not match"):
        Calibrator.from_dict({"features": ["shoe_size"], "weights": [1.0], "bias": 0})


def test_calibrate_writes_model_metadata_used_by_the_check(tiny_nli: Path, tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(tiny_nli, model)
    ctx = ["The Riverside Library opened in 1965 and holds 230,000 books. Maria Lopez is its director."]
    rows = []
    for i, (resp, label) in enumerate([
        ("The library opened in 1965.", 0), ("The library opened in 1982.", 1),
        ("It holds 230,000 books.", 0), ("It holds 5 million books.", 1),
        ("Maria Lopez is the director.", 0), ("John Smith is the director.", 1),
        ("The library is in Riverside.", 0), ("The library has a swimming pool.", 1),
    ] * 3):
        rows.append({"id": str(i), "question": "", "contexts": ctx, "response": resp, "label": label})
    meta = calibrate(model, rows)
    stored = json.loads((model / "guardrail.json").read_text())
    assert stored["threshold"] == meta["threshold"] and stored["calibration"]["features"] == list(FEATURES)
    # grounding signals separate these rows even with a random NLI model
    assert meta["calibration_fit"]["auroc_on_fit_rows"] > 0.9

    check = FaithfulnessCheck(NLIScorer(model))
    assert check.calibrator is not None and check.threshold == stored["threshold"]
    good = check.run("", ctx, "The library opened in 1965.")
    bad = check.run("", ctx, "The library opened in 1982.")
    assert good.calibrated and good.score > bad.score
    assert bad.sentences[0].unsupported_terms == ("1982",)
    uncal = FaithfulnessCheck(NLIScorer(model), calibrator=None).run("", ctx, "The library opened in 1965.")
    assert not uncal.calibrated and uncal.score == uncal.nli_score == good.nli_score
