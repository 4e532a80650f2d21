"""`guardrail train --corpus` end to end with a tiny model and a tiny corpus, and the synthetic pairs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import build_tiny_nli

from guardrail.cli import main
from guardrail.scorers.nli import NLIScorer
from guardrail.training.data import LABELS, is_held_out
from guardrail.training.synthetic import corpus_pairs

DOCS = [
    "Acme Corp was founded in 1990 by Jane Doe in Denver. It employs 4,500 people across 12 countries. "
    "The company makes industrial pumps (mostly for mining), and it sells them worldwide.",
    "The Riverside Library opened in 1965. It holds 230,000 books and lends about 900 items a day. "
    "Maria Lopez has been its director since 2011, after working in Madrid for ten years.",
    "Mount Brava is 2,310 metres high. Climbers usually start from the village of Sella in June. "
    "The summit hut was rebuilt in 2004, and it sleeps 40 people.",
]


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for i, doc in enumerate(DOCS):
        (folder / f"doc{i}.txt").write_text(doc, encoding="utf-8")
    return folder


def test_corpus_pairs_are_labelled_perturbations(corpus: Path) -> None:
    pairs = corpus_pairs(corpus, 120, seed=3)
    assert len(pairs) == 120
    assert {p.label for p in pairs} == {0, 1, 2}
    for p in pairs:
        if p.label == 0:  # entailed: every word of the hypothesis is in the premise
            assert set(re.findall(r"\w+", p.hypothesis)) <= set(re.findall(r"\w+", p.premise))
        else:  # perturbed: the hypothesis is not a span of the premise
            assert p.hypothesis not in p.premise
    contradictions = [p for p in pairs if p.label == 2]
    assert any(" not " in p.hypothesis for p in contradictions)
    assert any(re.search(r"\d", p.hypothesis) and not set(re.findall(r"\d[\d,]*", p.hypothesis)) <= set(re.findall(r"\d[\d,]*", p.premise)) for p in contradictions)


def test_corpus_needs_text_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no .txt or .md files"):
        corpus_pairs(tmp_path, 10)


def test_held_out_split_is_stable() -> None:
    ids = [str(i) for i in range(2000)]
    first = [is_held_out("mnli", i, 5.0) for i in ids]
    assert first == [is_held_out("mnli", i, 5.0) for i in ids]
    assert 0.03 < sum(first) / len(first) < 0.07


def test_train_on_a_corpus_then_export(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = build_tiny_nli(tmp_path / "base", dict(enumerate(LABELS)), export=False)
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({
        "base_model": str(base), "datasets": {}, "batch_size": 8, "epochs": 2, "eval_every": 5,
        "held_out_percent": 20, "corpus_pairs": 80, "max_length": 64, "threads": 1, "lr": 1e-3,
    }))
    out = tmp_path / "run"
    assert main(["train", "--config", str(config), "--out", str(out), "--corpus", str(corpus)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["history"] and all("entailment_auroc" in h for h in metrics["history"])
    assert (out / "held_out_ids.txt").read_text().strip()

    import torch
    from transformers import AutoModelForSequenceClassification

    before = AutoModelForSequenceClassification.from_pretrained(base).state_dict()
    after = AutoModelForSequenceClassification.from_pretrained(out / "best").state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)  # it trained

    assert main(["export", str(out / "best"), "--out", str(tmp_path / "onnx"), "--int8"]) == 0
    for name in ("model.onnx", "model.int8.onnx", "tokenizer.json", "config.json"):
        assert (tmp_path / "onnx" / name).exists()
    fp32 = NLIScorer(tmp_path / "onnx", onnx_file="model.onnx").predict(["Acme has 4,500 staff."], ["Acme has staff."])
    ref = NLIScorer(out / "best", backend="torch").predict(["Acme has 4,500 staff."], ["Acme has staff."])
    np.testing.assert_allclose(fp32.entailment, ref.entailment, atol=1e-5)
    exported = NLIScorer(tmp_path / "onnx")
    assert exported.labels.entailment == 0
    # trained on pairs of at most 64 tokens: the scorer windows to that, not to the model's 128 positions
    assert exported.max_length == 64


def test_trainer_encodes_a_hypothesis_longer_than_max_length(tmp_path: Path) -> None:
    """only_first truncation cannot fit a very long hypothesis; the trainer falls back instead of crashing."""
    from guardrail.training.data import Pair
    from guardrail.training.train import TrainConfig, Trainer

    base = build_tiny_nli(tmp_path / "base", dict(enumerate(LABELS)), export=False)
    trainer = Trainer(TrainConfig(base_model=str(base), max_length=32), tmp_path / "run")
    enc = trainer.encode([Pair("short premise", "word " * 80, 1, False, "x", "1")])
    assert enc["input_ids"].shape[1] == 32
