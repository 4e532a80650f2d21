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
    # the int8 model was compared with the fp32 one before it was kept
    from guardrail.training.export import INT8_TOLERANCE, int8_drift

    onnx_dir = tmp_path / "onnx"
    assert int8_drift(onnx_dir / "model.onnx", onnx_dir / "model.int8.onnx") <= INT8_TOLERANCE
    assert int8_drift(onnx_dir / "model.onnx", onnx_dir / "model.onnx") == 0.0


def test_an_int8_model_that_drifts_from_fp32_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Dynamic int8 quantization broke an MPNet fine-tune (entailment 0.10 -> 0.57 on a contradiction, held-out
    AUROC under 0.5 through the scorer, which loads the int8 file): export compares the two and, past the
    tolerance, removes the int8 file and keeps fp32 even under --drop-fp32, with an error."""
    import guardrail.training.export as export

    base = build_tiny_nli(tmp_path / "base", dict(enumerate(LABELS)), export=False)
    monkeypatch.setattr(export, "int8_drift", lambda fp32, int8, task="sequence-classification": 0.6)
    out = tmp_path / "onnx"
    assert main(["export", str(base), "--out", str(out), "--int8", "--drop-fp32"]) == 1
    assert (out / "model.onnx").exists() and not (out / "model.int8.onnx").exists()
    assert "int8 quantization changes this model's outputs by 0.60" in capsys.readouterr().err


def test_trainer_encodes_a_hypothesis_longer_than_max_length(tmp_path: Path) -> None:
    """only_first truncation cannot fit a very long hypothesis; the trainer falls back instead of crashing."""
    from guardrail.training.data import Pair
    from guardrail.training.train import TrainConfig, Trainer

    base = build_tiny_nli(tmp_path / "base", dict(enumerate(LABELS)), export=False)
    trainer = Trainer(TrainConfig(base_model=str(base), max_length=32), tmp_path / "run")
    enc = trainer.encode([Pair("short premise", "word " * 80, 1, False, "x", "1")])
    assert enc["input_ids"].shape[1] == 32


def _tiny_run_config(tmp_path: Path, base: Path, corpus: Path) -> Path:
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({
        "base_model": str(base), "datasets": {}, "batch_size": 8, "epochs": 3, "eval_every": 4,
        "held_out_percent": 20, "corpus_pairs": 40, "max_length": 64, "threads": 1, "lr": 1e-3,
        "corpus": str(corpus), "hard_negatives": 10, "bf16": False, "freeze_word_embeddings": True,
    }))
    return config


def test_resume_continues_exactly(corpus: Path, tmp_path: Path) -> None:
    """N steps, a stop, --resume, M steps == N+M steps in one go: weights, optimizer, schedule and data order."""
    import torch

    base = build_tiny_nli(tmp_path / "base", dict(enumerate(LABELS)), export=False)
    config = _tiny_run_config(tmp_path, base, corpus)
    whole, split = tmp_path / "whole", tmp_path / "split"
    assert main(["train", "--config", str(config), "--out", str(whole), "--max-steps", "11"]) == 0
    # 7 steps crosses no epoch boundary with ~30 train pairs in batches of 8 (4 a epoch) at 7 -> epoch 1, index 3
    assert main(["train", "--config", str(config), "--out", str(split), "--max-steps", "7"]) == 0
    state = torch.load(split / "checkpoint" / "state.pt", weights_only=False)
    assert state["progress"]["step"] == 7
    # a new run into the same directory is refused instead of overwriting it
    assert main(["train", "--config", str(config), "--out", str(split)]) == 2
    assert main(["train", "--resume", str(split), "--max-steps", "11"]) == 0
    a = torch.load(whole / "checkpoint" / "state.pt", weights_only=False)
    b = torch.load(split / "checkpoint" / "state.pt", weights_only=False)
    assert a["progress"] == {**b["progress"], "elapsed_s": a["progress"]["elapsed_s"]}
    for key, tensor in a["model"].items():
        assert torch.equal(tensor, b["model"][key]), key
    exp_a, exp_b = a["optimizer"]["state"], b["optimizer"]["state"]
    assert exp_a.keys() == exp_b.keys()
    for k in exp_a:
        assert torch.equal(exp_a[k]["exp_avg_sq"], exp_b[k]["exp_avg_sq"])
    assert a["scheduler"] == b["scheduler"]
    # the frozen word embeddings did not move; everything else did
    from transformers import AutoModelForSequenceClassification

    init = AutoModelForSequenceClassification.from_pretrained(base).state_dict()
    emb = "bert.embeddings.word_embeddings.weight"
    assert torch.equal(init[emb], a["model"][emb])
    assert not torch.equal(init["classifier.weight"], a["model"]["classifier.weight"])


def test_resume_needs_a_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--resume", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_hard_negatives_flip_meaning_with_the_premise_words() -> None:
    from guardrail.training.data import Pair
    from guardrail.training.synthetic import hard_negatives, negate

    assert negate("Gift cards cannot be refunded.") == "Gift cards can be refunded."
    assert negate("Gift cards can be refunded.") == "Gift cards cannot be refunded."
    assert negate("The shop is not open on Sundays.") == "The shop is open on Sundays."
    assert negate("Returns were accepted.") == "Returns were not accepted."
    premise = ("Acme Corp was founded in 1990 by Jane Doe in Denver. Returns are accepted within 30 days. "
               "The warehouse is 12 km from the airport and employs 450 people.")
    pool = [Pair(premise, "Acme was founded by Jane Doe in 1990.", 0, False, "d", str(i)) for i in range(20)]
    made = hard_negatives(pool, 200, seed=1)
    assert len(made) >= 100
    kinds = {p.dataset for p in made}
    assert {"hard_negate", "hard_number", "hard_copy"} <= kinds
    for p in made:
        assert p.premise == premise
        if p.label == 0:
            assert p.hypothesis in premise
        else:
            assert p.hypothesis not in premise


def test_resume_can_reschedule_the_run(corpus: Path, tmp_path: Path) -> None:
    import torch

    base = build_tiny_nli(tmp_path / "base", dict(enumerate(LABELS)), export=False)
    config = _tiny_run_config(tmp_path, base, corpus)
    run_dir = tmp_path / "run"
    assert main(["train", "--config", str(config), "--out", str(run_dir), "--max-steps", "3"]) == 0
    before = torch.load(run_dir / "checkpoint" / "state.pt", weights_only=False)["total_steps"]
    assert main(["train", "--resume", str(run_dir), "--epochs", "1"]) == 0
    state = torch.load(run_dir / "checkpoint" / "state.pt", weights_only=False)
    assert state["total_steps"] < before and state["progress"]["step"] == state["total_steps"]
    assert json.loads((run_dir / "config.json").read_text())["epochs"] == 1


def test_context_swaps_take_the_replacement_from_the_premise() -> None:
    from guardrail.training.data import Pair
    from guardrail.training.synthetic import context_swaps

    premise = ("Marie Curie shared the 1903 prize with Pierre Curie and Henri Becquerel in Stockholm. "
               "Albert Einstein won in 1921 for work done in Bern, 16 years after 1905.")
    hyps = ["In 1903 Pierre Curie shared the prize.", "Albert Einstein won in 1921.", "The prize went to Stockholm."]
    pool = [Pair(premise, h, 0, False, "d", str(i)) for i, h in enumerate(hyps * 10)]
    pool.append(Pair(premise, "Einstein lost in 1921.", 2, False, "d", "neg"))  # not entailed: never a source
    made = context_swaps(pool, 90, seed=2)
    swaps = [p for p in made if p.dataset == "ctxswap"]
    keeps = [p for p in made if p.dataset == "ctxswap_keep"]
    assert len(made) == 90 and abs(len(swaps) - 2 * len(keeps)) <= 2
    premise_words = set(re.findall(r"\w+", premise))
    for p in keeps:
        assert p.hypothesis in hyps and p.label == 0
    for p in swaps:
        assert p.label == 1 and p.two_way and p.hypothesis not in hyps
        # every word is the premise's own, so only who-did-what separates a swap from its source
        assert set(re.findall(r"\w+", p.hypothesis)) <= premise_words | {"In", "The", "went", "to"}, p.hypothesis
        # no alias swaps: "Marie Curie" (a name sharing a word) never replaces "Pierre Curie"
        assert "Marie Curie" not in p.hypothesis
    assert {p.hypothesis for p in swaps} & {"In 1903 Henri Becquerel shared the prize.", "In 1921 Pierre Curie shared the prize."}
    assert not any("Einstein lost" in p.hypothesis for p in made)


def test_quantized_export_ships_the_optimised_graph(tiny_nli: Path, tmp_path: Path) -> None:
    """`guardrail export` writes the graph onnxruntime runs, so loading skips the fusion passes; outputs unchanged."""
    import shutil

    import onnx
    import onnxruntime as ort

    from guardrail.training.export import optimize_for_loading, quantize_int8

    plain = tmp_path / "plain.int8.onnx"
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(tiny_nli / "model.onnx"), str(plain), weight_type=QuantType.QInt8, per_channel=True)
    shutil.copy(tiny_nli / "model.onnx", tmp_path / "model.onnx")
    shipped = quantize_int8(tmp_path / "model.onnx")
    assert shipped == tmp_path / "model.int8.onnx"
    before, after = onnx.load(str(plain)), onnx.load(str(shipped))
    assert len(after.graph.node) < len(before.graph.node)  # fused
    assert any(n.domain == "com.microsoft" for n in after.graph.node)
    rng = np.random.default_rng(0)
    for length in (5, 37, 120):
        ids = rng.integers(1000, 30000, (2, length))
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        a = ort.InferenceSession(str(plain), providers=["CPUExecutionProvider"]).run(None, feed)[0]
        b = ort.InferenceSession(str(shipped), providers=["CPUExecutionProvider"]).run(None, feed)[0]
        assert np.array_equal(a, b)
    assert optimize_for_loading(shipped) == shipped  # idempotent, in place
    assert not list(tmp_path.glob("*.tmp"))


def test_recombinations_join_one_sentence_subject_to_another_predicate() -> None:
    from guardrail.training.data import Pair
    from guardrail.training.synthetic import recombinations

    premises = [
        "The laptop has a two-year warranty. The battery is covered for one year. It ships in a box.",
        "Our main office is in Berlin. The support center opened in Lisbon in 2021.",
        "The laptop battery is covered for one year. The laptop has a two-year warranty.",  # subjects share a word
    ]
    pool = [Pair(p, "x", 0, False, "d", str(i)) for i, p in enumerate(premises * 40)]
    made = recombinations(pool, 60, seed=3)
    recombined = {p.hypothesis for p in made if p.dataset == "recombine"}
    kept = [p for p in made if p.dataset == "recombine_keep"]
    assert all(p.label == 1 and p.two_way for p in made if p.dataset == "recombine")
    assert all(p.label == 0 and p.hypothesis in p.premise for p in kept)  # the premise's own sentence rebuilt
    assert recombined <= {"The battery has a two-year warranty.", "The laptop is covered for one year.",
                          "Our main office opened in Lisbon in 2021.", "The support center is in Berlin."}
    assert recombined  # something was made, and never from "It ..." (pronoun) or the laptop / laptop battery pair


def test_meaning_shifts_change_one_word_the_premise_does_not_allow() -> None:
    from guardrail.training.data import Pair
    from guardrail.training.synthetic import meaning_shifts

    premises = [
        "Refunds may take up to 10 days. The store is closed on Sundays.",
        "Northwind will acquire Fabrikam next year. Fabrikam is based in Oslo.",
        "Most laptops ship with chargers. The AeroBook 14 is lighter than the AeroBook 16.",
        "Take 1 or 2 tablets every 6 hours. Do not exceed 8 tablets a day.",
        "Gift cards can be returned within 30 days. The warehouse is located in Ohio.",
    ]
    pool = [Pair(p, p.split(". ")[0] + ".", 0, False, "d", str(i)) for i, p in enumerate(premises * 60)]
    made = meaning_shifts(pool, 400, seed=3)
    by_kind: dict[str, list[Pair]] = {}
    for p in made:
        by_kind.setdefault(p.dataset, []).append(p)
    shifted = {p.hypothesis for kind in ("shift_strengthen", "shift_done", "shift_comparative")
               for p in by_kind.get(kind, [])}
    # the shifts the attack rounds used, each made from the premise's own sentence
    assert "Refunds must take up to 10 days." in shifted or "Refunds will always take up to 10 days." in shifted
    assert "Refunds may take exactly 10 days." in shifted or "Refunds may take at least 10 days." in shifted
    assert "Northwind has acquired Fabrikam next year." in shifted
    assert "The AeroBook 16 is lighter than the AeroBook 14." in shifted
    assert "Take 2 tablets every 6 hours." in shifted and "All laptops ship with chargers." in shifted
    # a negated sentence is never strengthened ("Do not exceed 8" -> "must not exceed" would be a different claim)
    assert not any("exceed" in h for h in shifted)
    for p in made:
        assert p.hypothesis.lower() not in p.premise.lower() or p.label == 0, p
        if p.dataset.startswith("shift_") and not p.dataset.startswith(("shift_keep", "shift_polar")):
            assert (p.label, p.two_way) == (1, True)  # not entailed; contradiction is not claimed
    # a window holding both polarities of one predicate: each subject with the other's polarity is contradicted
    polar = [p for p in made if p.dataset == "shift_polar_other"]
    assert polar and all(p.label == 2 and p.hypothesis not in p.premise for p in polar)
    assert all(p.label == 0 and p.hypothesis in p.premise for p in made if p.dataset.startswith("shift_polar_copy"))
    causes = by_kind.get("shift_cause", [])
    assert causes and all(" because " in p.hypothesis or " since " in p.hypothesis or "which is why" in p.hypothesis
                          or "as a result" in p.hypothesis for p in causes)
    assert {p.label for p in by_kind["shift_keep"]} == {0}


def test_int8_selection_reads_the_quantized_copy(corpus: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """With ``select_on: "int8"`` every evaluation also reads a dynamic-int8 copy; a checkpoint whose int8 copy
    drifts past ``int8_max_drift`` is never kept as best, and the model itself is left unquantized."""
    base = build_tiny_nli(tmp_path / "base", dict(enumerate(LABELS)), export=False)
    config = _tiny_run_config(tmp_path, base, corpus)
    raw = json.loads(config.read_text())
    config.write_text(json.dumps({**raw, "select_on": "int8", "int8_max_drift": 0.0}))
    out = tmp_path / "run"
    assert main(["train", "--config", str(config), "--out", str(out), "--max-steps", "8"]) == 0
    history = json.loads((out / "metrics.json").read_text())["history"]
    assert len(history) == 2
    for metrics in history:
        assert 0.0 <= metrics["int8_entailment_auroc"] <= 1.0
        assert metrics["int8_drift_p99"] > 0.0  # int8 moves a random tiny model's outputs
    # no evaluation met a drift bound of 0: "best" was never written, "last" was
    assert not (out / "best").exists() and (out / "last").exists()
    state = json.loads((out / "last" / "training_state.json").read_text())
    assert state["config"]["select_on"] == "int8"
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(out / "last")
    assert all(type(m).__name__ == "Linear" for m in model.modules() if "Linear" in type(m).__name__)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**raw, "select_on": "int4"}))
    assert main(["train", "--config", str(bad), "--out", str(tmp_path / "bad")]) == 2
    assert 'select_on must be "fp32" or "int8"' in capsys.readouterr().err
