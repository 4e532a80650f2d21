"""Fast tokenization with the `tokenizers` library: one code path for every backend, so the ONNX
and torch backends see identical inputs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from guardrail.errors import MissingDependencyError, ModelLoadError


class Tokenizer:
    """Wraps a ``tokenizers.Tokenizer`` loaded from ``tokenizer.json`` (or converted by transformers
    when a model directory has only ``vocab.txt``). Padding and truncation are ours, never implicit."""

    def __init__(self, model_dir: Path) -> None:
        from tokenizers import Tokenizer as HFTokenizer

        path = model_dir / "tokenizer.json"
        if path.exists():
            tok = HFTokenizer.from_file(str(path))
        else:
            try:
                from transformers import AutoTokenizer
            except ImportError as exc:
                raise MissingDependencyError(
                    f"{model_dir} has no tokenizer.json; converting its tokenizer needs transformers: "
                    "pip install 'rag-guardrail[torch]'"
                ) from exc
            fast = AutoTokenizer.from_pretrained(str(model_dir), use_fast=True)
            if not getattr(fast, "is_fast", False):
                raise ModelLoadError(f"{model_dir}: no fast tokenizer available; add a tokenizer.json")
            tok = fast.backend_tokenizer
        tok.no_truncation()
        tok.no_padding()
        self._tok = tok
        self.pad_id = self._pad_id(model_dir, tok)

    @staticmethod
    def _pad_id(model_dir: Path, tok: object) -> int:
        cfg = model_dir / "config.json"
        if cfg.exists():
            pad = json.loads(cfg.read_text(encoding="utf-8")).get("pad_token_id")
            if isinstance(pad, int):
                return pad
        for token in ("[PAD]", "<pad>"):
            pid = tok.token_to_id(token)  # type: ignore[attr-defined]
            if pid is not None:
                return int(pid)
        return 0

    def count(self, text: str) -> int:
        """Tokens of ``text`` without special tokens."""
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return [tuple(o) for o in self._tok.encode(text, add_special_tokens=False).offsets]  # type: ignore[misc]

    def special_tokens(self, pair: bool) -> int:
        return int(self._tok.num_special_tokens_to_add(pair))

    def encode_raw(self, first: Sequence[str], second: Sequence[str] | None = None) -> list[Any]:
        """Unpadded encodings with special tokens (pairs when ``second`` is given)."""
        if second is None:
            return list(self._tok.encode_batch(list(first)))
        return list(self._tok.encode_batch(list(zip(first, second))))

    def encode(self, first: Sequence[str], second: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Encode a batch (pairs when ``second`` is given), padded to the longest row."""
        return self.pad(self.encode_raw(first, second))

    def pad(self, encs: Sequence[Any]) -> dict[str, np.ndarray]:
        width = max(len(e.ids) for e in encs)
        ids = np.full((len(encs), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(encs), width), dtype=np.int64)
        types = np.zeros((len(encs), width), dtype=np.int64)
        for row, e in enumerate(encs):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = 1
            types[row, :n] = e.type_ids
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def length_batches(lengths: Sequence[int], max_batch: int, max_tokens: int = 4096) -> list[list[int]]:
    """Indices grouped into batches of similar length: sorted by length, a batch closes when it holds
    ``max_batch`` rows, when its padded size (rows x longest) would pass ``max_tokens``, or when the next
    row is much longer than its shortest one. A few long inputs then do not pad many short ones.

    >>> length_batches([5, 200, 6, 7], max_batch=8, max_tokens=64)
    [[0, 2, 3], [1]]
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        longest = lengths[i]  # sorted: the newest row is the longest
        # also close when the new row would pad the batch's shortest row to over 1.5x its length (+16)
        wasteful = bool(current) and longest > 1.5 * lengths[current[0]] + 16
        if current and (wasteful or len(current) >= max_batch or (len(current) + 1) * longest > max_tokens):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches
