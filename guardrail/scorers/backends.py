"""Inference backends behind one interface: ``Backend.run(inputs) -> np.ndarray``.

onnxruntime is the default (no torch at run time); torch/transformers is the alternative for
models without an ONNX export, or for GPUs.
"""

from __future__ import annotations

import inspect
import threading
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from guardrail.errors import ConfigurationError, MissingDependencyError, ModelLoadError

BackendName = Literal["onnx", "torch"]
Task = Literal["sequence-classification", "feature-extraction"]
BACKENDS: tuple[BackendName, ...] = ("onnx", "torch")

#: ONNX file names looked for in a model directory, in order of preference
ONNX_FILES = ("model.int8.onnx", "model_quantized.onnx", "model.onnx", "onnx/model_quantized.onnx", "onnx/model.onnx")


class Backend(Protocol):
    def run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """Logits (classification) or last hidden state (feature extraction), float32."""
        ...


def find_onnx(model_dir: Path, onnx_file: str | None = None) -> Path:
    if onnx_file is not None:
        path = model_dir / onnx_file
        if not path.exists():
            raise ModelLoadError(f"ONNX file {path} not found")
        return path
    for name in ONNX_FILES:
        if (model_dir / name).exists():
            return model_dir / name
    raise ModelLoadError(
        f"no ONNX model in {model_dir} (looked for {', '.join(ONNX_FILES)}). Export one with "
        f"`guardrail export {model_dir}` (needs guardrail[torch]) or load it with backend='torch'"
    )


class OnnxBackend:
    def __init__(self, model_dir: Path, *, onnx_file: str | None = None, threads: int | None = None) -> None:
        try:
            import onnxruntime as ort
        except ImportError as exc:  # pragma: no cover - a runtime dependency
            raise MissingDependencyError("the onnx backend needs onnxruntime: pip install onnxruntime") from exc
        self.path = find_onnx(model_dir, onnx_file)
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        try:
            self._session = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise ModelLoadError(f"onnxruntime could not load {self.path}: {exc}") from exc
        self._inputs = {i.name for i in self._session.get_inputs()}

    def run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        feed = {k: v for k, v in inputs.items() if k in self._inputs}
        return np.asarray(self._session.run(None, feed)[0], dtype=np.float32)


class TorchBackend:
    def __init__(self, model_ref: str, task: Task, *, device: str = "cpu", threads: int | None = None) -> None:
        try:
            import torch
            from transformers import AutoModel, AutoModelForSequenceClassification
        except ImportError as exc:
            raise MissingDependencyError(
                "backend='torch' needs torch and transformers: pip install 'rag-guardrail[torch]'"
            ) from exc
        if threads:
            torch.set_num_threads(threads)
        cls = AutoModelForSequenceClassification if task == "sequence-classification" else AutoModel
        try:
            self._model = cls.from_pretrained(model_ref).to(device).eval()
        except OSError as exc:
            raise ModelLoadError(f"transformers could not load {model_ref!r}: {exc}") from exc
        self._torch = torch
        # MPNet and RoBERTa-style encoders take no token_type_ids: feed only what forward accepts
        self._inputs = set(inspect.signature(self._model.forward).parameters)
        self._device = device
        self._task = task
        self._lock = threading.Lock()

    def run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        torch = self._torch
        feed = {k: torch.from_numpy(v).to(self._device) for k, v in inputs.items() if k in self._inputs}
        with torch.inference_mode():
            out = self._model(**feed)
        tensor = out.logits if self._task == "sequence-classification" else out.last_hidden_state
        return np.asarray(tensor.float().cpu().numpy())  # the same array, typed (torch is imported lazily)


def make_backend(
    backend: str, model_dir: Path, task: Task, *, onnx_file: str | None = None, threads: int | None = None
) -> Backend:
    if backend == "onnx":
        return OnnxBackend(model_dir, onnx_file=onnx_file, threads=threads)
    if backend == "torch":
        return TorchBackend(str(model_dir), task, threads=threads)
    raise ConfigurationError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
