"""Export a Hugging Face encoder to ONNX (fp32) and quantize it to int8 with onnxruntime.

``guardrail export MODEL_DIR [--task feature-extraction] [--int8]`` writes ``model.onnx`` (and
``model.int8.onnx``) plus the tokenizer and config into the output directory, which then loads
with the default onnx backend, no torch needed.
"""

from __future__ import annotations

import inspect
import shutil
import warnings
from pathlib import Path
from typing import Literal

from guardrail.errors import MissingDependencyError

Task = Literal["sequence-classification", "feature-extraction"]
_COPY = (
    "config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
    "sentence_bert_config.json", "guardrail.json",
)


def export_onnx(model_dir: Path, out_dir: Path, task: Task = "sequence-classification", *, opset: int = 17) -> Path:
    try:
        import torch
        from transformers import (
            AutoModel,
            AutoModelForSequenceClassification,
            AutoTokenizer,
        )
    except ImportError as exc:
        raise MissingDependencyError("exporting needs torch and transformers: pip install 'rag-guardrail[torch]'") from exc
    out_dir.mkdir(parents=True, exist_ok=True)
    cls = AutoModelForSequenceClassification if task == "sequence-classification" else AutoModel
    # eager attention traces to plain ops that keep the padding mask for any batch shape
    model = cls.from_pretrained(str(model_dir), attn_implementation="eager").eval()
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    sample = tok(["a premise sentence", "b"], ["a hypothesis", "c d e"], return_tensors="pt", padding=True)
    # MPNet and RoBERTa-style encoders take no token_type_ids: export the inputs this model's forward accepts
    accepted = inspect.signature(model.forward).parameters
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in accepted]
    output = "logits" if task == "sequence-classification" else "last_hidden_state"

    class _Wrapper(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs):  # type: ignore[no-untyped-def]
            out = self.inner(**dict(zip(names, inputs)))
            return out.logits if task == "sequence-classification" else out.last_hidden_state

    path = out_dir / "model.onnx"
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes[output] = {0: "batch"} if task == "sequence-classification" else {0: "batch", 1: "sequence"}
    # the TorchScript exporter on purpose: eager attention traces to plain ops that keep the padding mask for any
    # batch shape, and it needs no onnxscript; its deprecation and tracing notices are expected, not news
    with torch.no_grad(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*legacy TorchScript-based ONNX export.*", category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*feature will be removed.*", category=DeprecationWarning)
        warnings.filterwarnings("ignore", message=".*might cause the trace to be incorrect.*")
        warnings.filterwarnings("ignore", message=".*aten::index.*", category=UserWarning)
        torch.onnx.export(
            _Wrapper(model),
            tuple(sample[n] for n in names),
            str(path),
            input_names=names,
            output_names=[output],
            dynamic_axes=axes,
            opset_version=opset,
            dynamo=False,
        )
    tok.save_pretrained(str(out_dir))  # writes tokenizer.json for fast tokenizers
    for name in _COPY:
        src = model_dir / name
        if src.exists() and not (out_dir / name).exists():
            shutil.copy(src, out_dir / name)
    if not (out_dir / "config.json").exists():
        model.config.to_json_file(str(out_dir / "config.json"))
    return path


def quantize_int8(onnx_path: Path, out_path: Path | None = None) -> Path:
    """Dynamic int8 quantization of the weights (activations stay float): ~4x smaller, faster on CPU."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = out_path or onnx_path.with_name("model.int8.onnx")
    quantize_dynamic(str(onnx_path), str(out), weight_type=QuantType.QInt8, per_channel=True)
    return optimize_for_loading(out)


#: pairs the int8 model is compared with the fp32 one on (entailed, contradicted, unrelated; short and long)
_CHECK_PAIRS = (
    ("Gift cards cannot be returned.", "Gift cards can be returned."),
    ("Items can be returned within 30 days of delivery.", "Items can be returned within 30 days."),
    ("The Pro plan costs $20 per month and includes priority support.", "The Pro plan includes priority support."),
    ("The museum opens at 9 am on weekdays and at 10 am on weekends.", "The museum is closed on Mondays."),
    ("A man is playing a guitar on stage.", "A woman is reading a book."),
    ("Refunds are issued to the original payment method within 5 business days.", "Refunds take two weeks."),
)
#: the largest change of any output probability (or of an embedding's cosine) that int8 may make on those pairs:
#: the shipped MiniLM moves by under 0.05; an MPNet fine-tune moved from 0.10 to 0.57 (broken)
INT8_TOLERANCE = 0.15


def int8_drift(fp32_path: Path, int8_path: Path, task: Task = "sequence-classification") -> float:
    """How far the int8 model's outputs are from the fp32 one's on :data:`_CHECK_PAIRS`: the largest difference of a
    class probability (sequence classification), or 1 - the lowest cosine of the pooled embeddings (feature
    extraction)."""
    import numpy as np
    import onnxruntime as ort

    from guardrail.scorers.tokenizer import Tokenizer

    tok = Tokenizer(fp32_path.parent)
    first, second = [p for p, _ in _CHECK_PAIRS], [h for _, h in _CHECK_PAIRS]
    enc = tok.encode(first, second) if task == "sequence-classification" else tok.encode(first + second)
    outs = []
    for path in (fp32_path, int8_path):
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        wanted = {i.name for i in session.get_inputs()}
        outs.append(np.asarray(session.run(None, {k: v for k, v in enc.items() if k in wanted})[0], dtype=np.float64))
    a, b = outs
    if task == "sequence-classification":
        pa, pb = (np.exp(x - x.max(-1, keepdims=True)) for x in (a, b))
        pa, pb = pa / pa.sum(-1, keepdims=True), pb / pb.sum(-1, keepdims=True)
        return float(np.abs(pa - pb).max())
    mask = enc["attention_mask"][..., None]
    ma, mb = ((x * mask).sum(1) / mask.sum(1) for x in (a, b))
    cos = (ma * mb).sum(-1) / (np.linalg.norm(ma, axis=-1) * np.linalg.norm(mb, axis=-1))
    return float(1.0 - cos.min())


def optimize_for_loading(onnx_path: Path) -> Path:
    """Rewrite ``onnx_path`` as the graph onnxruntime runs (fused attention, layer norms, quantized matmuls), so a
    session loads it without redoing that work: ~200 ms -> ~60 ms per MiniLM on 2 cores. Outputs are bit-for-bit
    those of the input graph. The level is EXTENDED, whose fusions are portable contrib ops; the hardware-specific
    layout pass of level ALL is left to load time (which still runs at ALL, finding nothing left to fuse).
    """
    import onnxruntime as ort

    tmp = onnx_path.with_name(onnx_path.name + ".opt.tmp")
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    opts.optimized_model_filepath = str(tmp)
    ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
    tmp.replace(onnx_path)
    return onnx_path
