"""Recover a trainable checkpoint from a shipped dynamic-int8 ONNX model. Needs ``guardrail[train]``.

The package ships only ``model.int8.onnx``; training runs live outside the checkout and are gone with the machine
they ran on. To train the next version *from* the shipped one, this rebuilds a ``BertForSequenceClassification``
checkpoint: every int8 matrix is dequantized (``(q - zero_point) * scale``, per output column), biases and
LayerNorms are copied as they are (the export keeps them in fp32), and the word-embedding matrix, which our recipes
keep frozen at the base model's values, is taken exactly from the base model when it is available.

Run: ``python -m guardrail.training.recover guardrail/models/nli-minilm-l6 ~/runs/v2.1-recovered``
(prints the largest probability difference between the recovered fp32 model and the int8 ONNX on probe pairs).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np


def _dequantize(init: dict[str, np.ndarray], prefix: str) -> np.ndarray:
    q = init[f"{prefix}_quantized"].astype(np.float32)
    zp = init[f"{prefix}_zero_point"].astype(np.float32)
    scale = init[f"{prefix}_scale"].astype(np.float32)
    return (q - zp) * scale


def recover_state_dict(onnx_path: Path) -> dict[str, np.ndarray]:
    """The fp32 state dict (HF BERT names, Linear weights as [out, in]) encoded by an int8 ONNX export."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(onnx_path))
    init = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    state: dict[str, np.ndarray] = {}
    for name, value in init.items():
        if name.startswith("inner.") and not re.search(r"_(quantized|scale|zero_point)$", name):
            state[name[len("inner."):]] = value.astype(np.float32)
    for part in ("word", "position", "token_type"):
        state[f"bert.embeddings.{part}_embeddings.weight"] = _dequantize(init, f"inner.bert.embeddings.{part}_embeddings.weight")
    for node in model.graph.node:
        if node.op_type not in ("DynamicQuantizeMatMul", "MatMulIntegerToFloat"):
            continue
        weight_q = node.input[1]
        match = re.match(r"/inner/(.*)/(MatMul|Gemm_MatMul)_quant$", node.name)
        if not match:
            raise ValueError(f"unexpected quantized node {node.name!r}: not an export of guardrail's NLI model")
        module = match.group(1).replace("/", ".")
        if node.op_type == "MatMulIntegerToFloat":
            scale, zp = node.input[3], node.input[5]
        else:
            scale, zp = node.input[2], node.input[3]
        w = (init[weight_q].astype(np.float32) - init[zp].astype(np.float32)) * init[scale].astype(np.float32)
        state[f"{module}.weight"] = w.T.copy()  # ONNX MatMul holds [in, out]
    return state


def recover(model_dir: Path, out_dir: Path, base_model: str | None = "minilm") -> float:
    """Write a transformers checkpoint rebuilt from ``model_dir/model.int8.onnx`` into ``out_dir``.

    Returns the largest absolute difference in class probabilities between the rebuilt model (fp32, torch) and the
    int8 ONNX model on a few probe pairs: it should be of the order of int8 noise (a few hundredths)."""
    import onnxruntime as ort
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    config = BertConfig.from_pretrained(model_dir)
    model = BertForSequenceClassification(config)
    state = recover_state_dict(model_dir / "model.int8.onnx")
    if base_model:
        from transformers import AutoModel

        from guardrail.training.train import resolve_base_model

        base = AutoModel.from_pretrained(resolve_base_model(base_model))
        exact = base.embeddings.word_embeddings.weight.detach().numpy()
        approx = state["bert.embeddings.word_embeddings.weight"]
        # the recipes freeze word embeddings: use the base model's exact values when they are what was shipped
        if exact.shape == approx.shape and float(np.abs(exact - approx).max()) <= float(np.abs(approx).max()) / 100:
            state["bert.embeddings.word_embeddings.weight"] = exact
    missing = set(model.state_dict()) - set(state) - {"bert.embeddings.position_ids"}
    if missing:
        raise ValueError(f"the ONNX model lacks weights for {sorted(missing)}")
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()}, strict=False)
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    meta = json.loads((model_dir / "guardrail.json").read_text(encoding="utf-8")) if (model_dir / "guardrail.json").exists() else {}
    (out_dir / "guardrail.json").write_text(json.dumps({"max_length": meta.get("max_length", 256),
                                                        "recovered_from": str(model_dir)}, indent=2) + "\n")
    probes = [
        ("Gift cards and final-sale items cannot be returned.", "Gift cards can be returned."),
        ("Gift cards and final-sale items cannot be returned.", "Gift cards cannot be returned."),
        ("The Eiffel Tower is in Paris and was completed in 1889.", "The tower was finished in 1889."),
        ("Refunds are issued within 30 days.", "The store sells bicycles."),
    ]
    enc = tokenizer([p for p, _ in probes], [h for _, h in probes], padding=True, return_tensors="np")
    session = ort.InferenceSession(str(model_dir / "model.int8.onnx"), providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    feeds = {k: v.astype(np.int64) for k, v in enc.items() if k in names}
    onnx_logits = session.run(None, feeds)[0]
    with torch.no_grad():
        torch_logits = model(**{k: torch.from_numpy(v) for k, v in enc.items()}).logits.numpy()

    def softmax(x: np.ndarray) -> np.ndarray:
        e: np.ndarray = np.exp(x - x.max(-1, keepdims=True))
        return np.asarray(e / e.sum(-1, keepdims=True))

    return float(np.abs(softmax(onnx_logits) - softmax(torch_logits)).max())


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python -m guardrail.training.recover MODEL_DIR OUT_DIR")
    diff = recover(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"max |p_onnx_int8 - p_recovered_fp32| on probes: {diff:.4f}")
