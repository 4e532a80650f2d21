"""Tiny models built in the test session: real BERT graphs, random weights, our real tokenizer."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from guardrail.scorers.embedding import DEFAULT_EMBEDDING_MODEL

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ray: starts a real local Ray (run by default; deselect with -m 'not ray')")


def build_tiny_nli(out: Path, id2label: dict[int, str], *, max_positions: int = 128, export: bool = True) -> Path:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from guardrail.training.export import export_onnx

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
        num_labels=len(id2label),
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    model = BertForSequenceClassification(config).eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    for name in TOKENIZER_FILES:
        shutil.copy(DEFAULT_EMBEDDING_MODEL / name, out / name)
    if export:
        export_onnx(out, out, "sequence-classification")
    return out


@pytest.fixture(scope="session")
def tiny_nli(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3-way NLI model, labels in the MNLI order of many hub models (contradiction first)."""
    return build_tiny_nli(
        tmp_path_factory.mktemp("tiny-nli3"), {0: "contradiction", 1: "entailment", 2: "neutral"}
    )


@pytest.fixture(scope="session")
def tiny_nli2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Entailment / not-entailment model."""
    return build_tiny_nli(tmp_path_factory.mktemp("tiny-nli2"), {0: "not_entailment", 1: "entailment"})


def delay_faithfulness(evaluator: object, monkeypatch: pytest.MonkeyPatch, before: object) -> None:
    """Make every faithfulness check of ``evaluator`` call ``before()`` first (wait on an event, sleep...), so a test
    can hold checks in flight."""
    check = evaluator.faithfulness_check  # type: ignore[attr-defined]
    real = check.run

    def delayed(*args, **kwargs):  # type: ignore[no-untyped-def]
        before()  # type: ignore[operator]
        return real(*args, **kwargs)

    monkeypatch.setattr(check, "run", delayed)
