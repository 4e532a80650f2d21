"""Bi-encoder embeddings (mean pooling, L2-normalised) for query/chunk and query/response relevance."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from guardrail.errors import ConfigurationError
from guardrail.scorers.backends import BACKENDS, Backend
from guardrail.scorers.batching import scorer_backend
from guardrail.scorers.cache import RowCache, text_key
from guardrail.scorers.hub import resolve_model_dir
from guardrail.scorers.pool import ForwardPool
from guardrail.scorers.tokenizer import Tokenizer, length_batches
from guardrail.text import token_windows

#: all-MiniLM-L6-v2 exported to ONNX (int8), shipped inside the package
DEFAULT_EMBEDDING_MODEL = Path(__file__).resolve().parent.parent / "models" / "minilm-l6-embed"


class EmbeddingScorer:
    """Sentence embeddings, by default all-MiniLM-L6-v2 shipped as ONNX inside the package.

    >>> emb = EmbeddingScorer()
    >>> v = emb.embed(["Where is the Eiffel Tower?", "The Eiffel Tower is in Paris."])
    >>> bool(v[0] @ v[1] > 0.5)
    True

    A text longer than ``max_length`` tokens is split into overlapping token windows whose
    embeddings are averaged (then re-normalised), so nothing is truncated.
    ``batch_size=1`` (the default) embeds each text in its own forward pass, so its vector is a function of the text
    alone (see :class:`guardrail.scorers.nli.NLIScorer`): the same question and chunks get the same retrieval relevance
    whatever the answer, the other checks or the concurrent requests are.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        backend: str = "onnx",
        batch_size: int = 1,
        max_length: int | None = None,
        threads: int | None = None,
        onnx_file: str | None = None,
        micro_batch: bool = False,
        cache_size: int = 8192,
        pool: ForwardPool | None = None,
    ) -> None:
        if backend not in BACKENDS:
            raise ConfigurationError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        if pool is not None and micro_batch:
            raise ConfigurationError("pass either pool= (passes side by side, one thread each) or micro_batch=True "
                                     "(passes merged on one runner), not both")
        #: the forward-pass workers this scorer shares with others (None: passes run in the caller's thread)
        self.pool = pool
        self.model_ref = model if model is not None else DEFAULT_EMBEDDING_MODEL
        self.backend_name = backend
        self.batch_size = batch_size
        self._max_length = max_length
        self._threads = threads
        self._onnx_file = onnx_file
        #: merge concurrent calls into shared forward passes (one runner thread; see guardrail.scorers.batching)
        self.micro_batch = micro_batch
        #: vectors of recent texts (chunks come back request after request; exact with batch_size=1 only)
        self.cache = RowCache(cache_size if batch_size == 1 else 0)
        #: model tokens run so far (cache hits cost none), for cost reporting
        self.tokens_run = 0
        self._count_lock = threading.Lock()
        self._lock = threading.Lock()
        self._loaded: tuple[Tokenizer, Backend, int] | None = None

    def _load(self) -> tuple[Tokenizer, Backend, int]:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                model_dir = resolve_model_dir(self.model_ref)
                max_length = self._max_length
                st_cfg = model_dir / "sentence_bert_config.json"
                if max_length is None and st_cfg.exists():
                    max_length = json.loads(st_cfg.read_text(encoding="utf-8")).get("max_seq_length")
                config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
                max_length = min(int(max_length or 512), int(config.get("max_position_embeddings", 512)))
                tokenizer = Tokenizer(model_dir)
                backend = scorer_backend(self.backend_name, model_dir, "feature-extraction", onnx_file=self._onnx_file,
                                         threads=self._threads, pooled=self.pool is not None,
                                         micro_batch=self.micro_batch, batch_size=self.batch_size)
                self._loaded = (tokenizer, backend, max_length)
            return self._loaded

    @property
    def max_length(self) -> int:
        return self._load()[2]

    @property
    def loaded(self) -> bool:
        """The model is in memory (it loads on first use)."""
        return self._loaded is not None

    @property
    def tokenizer(self) -> Tokenizer:
        return self._load()[0]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised embeddings, shape ``(len(texts), dim)``."""
        tokenizer, backend, max_length = self._load()
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        keys = [text_key(t) for t in texts] if self.cache.size else []
        cached = [self.cache.get(k) for k in keys] if keys else [None] * len(texts)
        todo = [i for i, v in enumerate(cached) if v is None]
        if not todo:
            return np.stack(cached)  # type: ignore[arg-type]
        fresh = self._embed_texts(tokenizer, backend, max_length, [texts[i] for i in todo])
        out = np.empty((len(texts), fresh.shape[1]), dtype=np.float32)
        for j, i in enumerate(todo):
            out[i] = fresh[j]
            if keys:
                self.cache.put(keys[i], fresh[j])
        for i, v in enumerate(cached):
            if v is not None:
                out[i] = v
        return out

    def _embed_texts(self, tokenizer: Tokenizer, backend: Backend, max_length: int, texts: Sequence[str]) -> np.ndarray:
        body = max_length - tokenizer.special_tokens(pair=False)
        pieces: list[str] = []
        owner: list[int] = []
        for i, text in enumerate(texts):
            if tokenizer.count(text) <= body:
                pieces.append(text)
                owner.append(i)
                continue
            for w in token_windows(text, tokenizer.offsets, body, max(1, body * 3 // 4)):
                pieces.append(w.of(text))
                owner.append(i)
        vecs = self._embed_pieces(tokenizer, backend, pieces)
        out = np.zeros((len(texts), vecs.shape[1]), dtype=np.float32)
        np.add.at(out, np.asarray(owner), vecs)
        return _normalise(out)

    def _embed_pieces(self, tokenizer: Tokenizer, backend: Backend, pieces: Sequence[str]) -> np.ndarray:
        encs = tokenizer.encode_raw(pieces)
        tokens = sum(len(e.ids) for e in encs)
        with self._count_lock:  # concurrent checks share the scorer: a bare += loses counts
            self.tokens_run += tokens
        result: np.ndarray | None = None
        batches = [np.asarray(batch) for batch in length_batches([len(e.ids) for e in encs], self.batch_size)]
        feeds = [tokenizer.pad([encs[i] for i in idx]) for idx in batches]
        outputs = self.pool.run_all(backend, feeds) if self.pool is not None else [backend.run(f) for f in feeds]
        for idx, inputs, hidden in zip(batches, feeds, outputs):
            mask = inputs["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            if result is None:
                result = np.empty((len(pieces), pooled.shape[1]), dtype=np.float32)
            result[idx] = pooled
        assert result is not None
        return _normalise(result)

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        """Cosine similarity matrix ``(len(a), len(b))``."""
        if not a or not b:
            return np.zeros((len(a), len(b)), dtype=np.float32)
        vecs = self.embed(list(a) + list(b))
        sims: np.ndarray = vecs[: len(a)] @ vecs[len(a) :].T
        return sims


def _normalise(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    out: np.ndarray = x / np.clip(norms, 1e-12, None)
    return out
