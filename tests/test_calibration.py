from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from guardrail.checks.calibration import (
    DEFAULT_FEATURES,
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
    assert stored["threshold"] == meta["threshold"] and stored["calibration"]["features"] == list(DEFAULT_FEATURES)
    assert "absent" not in DEFAULT_FEATURES and stored["calibration"]["contradiction_cap"] == 0.5
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


def test_contradicted_sentence_never_passes_on_lexical_signals() -> None:
    # weights that trust word overlap a lot: without the cap a contradicted copy-with-a-flip scores high
    cal = Calibrator(FEATURES[:7], (0.1, -0.1, 1.0, 4.0, -2.0, -2.5, 0.0), -1.0)  # the per-sentence features
    feats = sentence_features(0.07, 0.93, 1.0, 1.0, False, 0.0, 27)
    assert cal(feats) > 0.9
    capped = Calibrator(cal.features, cal.weights, cal.bias, contradiction_cap=0.5)
    assert capped(feats, 0.07, 0.93) == pytest.approx(0.07 * 0.07)
    # whatever the two probabilities, a sentence read as contradicted (>= cap, above entailment) stays <= 0.25
    for ent, con in [(0.49, 0.51), (0.3, 0.5), (0.0, 1.0), (0.45, 0.55)]:
        assert capped(sentence_features(ent, con, 1.0, 1.0, False), ent, con) <= 0.25
    # below the cap, or entailed more than contradicted, or a 2-label model: the fitted score is kept
    for ent, con in [(0.55, 0.45), (0.2, 0.4), (0.5, None)]:
        f = sentence_features(ent, con, 1.0, 1.0, False)
        assert capped(f, ent, con) == cal(f)
    assert Calibrator.from_dict(capped.to_dict()) == capped
    with pytest.raises(ModelLoadError, match="contradiction_cap"):
        Calibrator.from_dict({**cal.to_dict(), "contradiction_cap": 2})


def test_shipped_calibration_blocks_contradictions_and_keeps_verbatim_copies() -> None:
    from guardrail import default_nli_model

    check = FaithfulnessCheck(NLIScorer(default_nli_model()))
    assert check.calibrator is not None and check.calibrator.contradiction_cap is not None
    ctx = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned. "
           "Refunds are issued to the original payment method within 5 business days."]
    flipped = check.run("Can gift cards be returned?", ctx, "Gift cards can be returned.").sentences[0]
    # read as contradicted by the premise that entails it most, or by the single sentence it is about (when single
    # sentences are read: "Items can be returned within 30 days." may entail it more than its own sentence does)
    assert max(flipped.contradiction or 0.0, flipped.top_sentence_contradiction or 0.0) > 0.5
    assert not flipped.supported and flipped.score is not None and flipped.score <= 0.25
    # a word-for-word copy of a context sentence is supported even where the passage's negation sways the model
    copy = check.run("How are refunds paid?", ctx,
                     "refunds are issued to the original payment method  within 5 business days").sentences[0]
    assert copy.verbatim and copy.supported and copy.score == 1.0
    # a copy of only part of a sentence, or with a word changed, is not verbatim
    part = check.run("How are refunds paid?", ctx, "Refunds are issued within 5 business days.").sentences[0]
    assert not part.verbatim


def test_context_sentences_feature_counts_from_the_floor() -> None:
    """``log_context_sentences``: contexts of up to SHORT_CONTEXT_SENTENCES sentences read alike, longer ones by count."""
    import math

    from guardrail.checks.calibration import SHORT_CONTEXT_SENTENCES

    def feature(n: int) -> float:
        return sentence_features(0.5, 0.1, 1.0, 1.0, False, 0.0, 20, n)["log_context_sentences"]

    assert feature(0) == feature(3) == feature(SHORT_CONTEXT_SENTENCES) == math.log1p(SHORT_CONTEXT_SENTENCES)
    assert feature(30) == math.log1p(30) > feature(SHORT_CONTEXT_SENTENCES)
    assert "log_context_sentences" in FEATURES and "log_context_sentences" not in DEFAULT_FEATURES

