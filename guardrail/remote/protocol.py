"""The scorers over the Open Inference Protocol v2 (KServe / Triton / MLServer "V2" REST shape): names and codecs.

Two models, texts in as ``BYTES`` tensors, scores out as ``FP32`` tensors (``data`` flattened in row-major order):

| model | inputs | outputs | metadata ``parameters`` |
|---|---|---|---|
| ``nli`` | ``premise`` BYTES [n], ``hypothesis`` BYTES [n] | ``probabilities`` FP32 [n, num_labels] | ``labels`` (id2label order), ``max_length``, ``guardrail`` (threshold, calibration), ``tokenizer_sha256`` |
| ``embedding`` | ``text`` BYTES [n] | ``embedding`` FP32 [n, dim] (L2-normalised) | ``max_length``, ``tokenizer_sha256`` |

Request: ``POST /v2/models/{name}/infer`` ``{"inputs": [{"name", "shape", "datatype", "data"}]}``; response
``{"model_name", "outputs": [{"name", "shape", "datatype", "data"}], "parameters": {"tokens": int}}``; errors are
``{"error": "..."}`` with a 4xx/5xx status. Health: ``GET /v2/health/live``, ``/v2/health/ready``,
``/v2/models/{name}/ready``; metadata: ``GET /v2/models/{name}``.

Sans-IO: this module knows JSON-shaped dicts and numpy only. A float32 written as a JSON number and read back is the
same float32 (the double of a float32 is exact and JSON keeps doubles), so remote scores are bit-identical.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "EMBEDDING",
    "NLI",
    "MODELS",
    "ProtocolError",
    "infer_request",
    "infer_response",
    "model_metadata",
    "read_inputs",
    "read_output",
    "tokenizer_sha256",
]

NLI = "nli"
EMBEDDING = "embedding"
#: model name -> (input names, output name)
MODELS: dict[str, tuple[tuple[str, ...], str]] = {
    NLI: (("premise", "hypothesis"), "probabilities"),
    EMBEDDING: (("text",), "embedding"),
}
PLATFORM = "guardrail-onnxruntime"


class ProtocolError(ValueError):
    """A request or response does not have the expected OIP v2 shape (the message says what is wrong)."""


def tokenizer_sha256(model_dir: Path) -> str | None:
    """Fingerprint of a model's ``tokenizer.json`` (client and server must split text into the same tokens)."""
    path = model_dir / "tokenizer.json"
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def _bytes_tensor(name: str, texts: Sequence[str]) -> dict[str, Any]:
    return {"name": name, "shape": [len(texts)], "datatype": "BYTES", "data": list(texts)}


def infer_request(model: str, *columns: Sequence[str]) -> dict[str, Any]:
    """The inference request body of ``model`` for its input columns, in the order of :data:`MODELS`."""
    names, _ = MODELS[model]
    if len(columns) != len(names):
        raise ProtocolError(f"model {model!r} takes {len(names)} inputs ({', '.join(names)}), got {len(columns)}")
    return {"inputs": [_bytes_tensor(n, c) for n, c in zip(names, columns)]}


def read_inputs(model: str, body: Any) -> list[list[str]]:
    """The text columns of an inference request (server side), validated: names, BYTES, shape [n], equal n."""
    if model not in MODELS:
        raise ProtocolError(f"unknown model {model!r}; this server has {', '.join(MODELS)}")
    names, _ = MODELS[model]
    if not isinstance(body, Mapping) or not isinstance(body.get("inputs"), list):
        raise ProtocolError("the request body must be a JSON object with an 'inputs' list")
    given: dict[str, list[str]] = {}
    for tensor in body["inputs"]:
        if not isinstance(tensor, Mapping) or not isinstance(tensor.get("name"), str):
            raise ProtocolError("every input must be an object with a 'name'")
        name = tensor["name"]
        if name not in names:
            raise ProtocolError(f"model {model!r} has no input {name!r}; its inputs are {', '.join(names)}")
        if tensor.get("datatype") != "BYTES":
            raise ProtocolError(f"input {name!r} must have datatype BYTES, not {tensor.get('datatype')!r}")
        data = tensor.get("data")
        shape = tensor.get("shape")
        if not isinstance(data, list) or not all(isinstance(t, str) for t in data):
            raise ProtocolError(f"input {name!r}: 'data' must be a list of strings")
        if shape != [len(data)]:
            raise ProtocolError(f"input {name!r}: shape {shape!r} does not match {len(data)} strings")
        given[name] = data
    missing = [n for n in names if n not in given]
    if missing:
        raise ProtocolError(f"model {model!r} needs the inputs {', '.join(missing)}")
    columns = [given[n] for n in names]
    if len({len(c) for c in columns}) > 1:
        raise ProtocolError(f"inputs {', '.join(names)} have different lengths {[len(c) for c in columns]}")
    return columns


def infer_response(model: str, values: np.ndarray, *, tokens: int = 0, request_id: str | None = None) -> dict[str, Any]:
    """The inference response of ``model``: its one FP32 output, ``values`` of shape [n, k] flattened row-major."""
    _, output = MODELS[model]
    values = np.asarray(values, dtype=np.float32)
    body: dict[str, Any] = {
        "model_name": model,
        "outputs": [{"name": output, "shape": list(values.shape), "datatype": "FP32",
                     "data": values.reshape(-1).tolist()}],
        "parameters": {"tokens": int(tokens)},
    }
    if request_id is not None:
        body["id"] = request_id
    return body


def read_output(model: str, body: Any, rows: int, width: int | None = None) -> tuple[np.ndarray, int]:
    """The FP32 output of an inference response (client side) as ``(rows, k)`` float32, and the tokens it reports.
    Raises :class:`ProtocolError` for any other shape: a missing output, a wrong datatype, row count or width, a
    value that is not a finite number."""
    _, output = MODELS[model]
    if not isinstance(body, Mapping) or not isinstance(body.get("outputs"), list):
        raise ProtocolError("the response is not an OIP v2 inference response (no 'outputs' list)")
    tensors = [t for t in body["outputs"] if isinstance(t, Mapping) and t.get("name") == output]
    if len(tensors) != 1:
        raise ProtocolError(f"the response has no single output {output!r}")
    tensor = tensors[0]
    if tensor.get("datatype") not in ("FP32", "FP64"):
        raise ProtocolError(f"output {output!r} has datatype {tensor.get('datatype')!r}, expected FP32")
    shape = tensor.get("shape")
    if (not isinstance(shape, list) or len(shape) != 2 or not all(isinstance(d, int) for d in shape)
            or shape[0] != rows or shape[1] < 1 or (width is not None and shape[1] != width)):
        want = f"[{rows}, {width if width is not None else 'k'}]"
        raise ProtocolError(f"output {output!r} has shape {shape!r}, expected {want}")
    data = tensor.get("data")
    if not isinstance(data, list) or len(data) != shape[0] * shape[1]:
        got = len(data) if isinstance(data, list) else type(data).__name__
        raise ProtocolError(f"output {output!r} has {got} values for shape {shape}")
    if not all(type(v) is float or type(v) is int for v in data):  # noqa: E721 - bool and str are not scores
        raise ProtocolError(f"output {output!r} has values that are not numbers")
    values = np.asarray(data, dtype=np.float32).reshape(shape[0], shape[1])
    if not np.isfinite(values).all():
        raise ProtocolError(f"output {output!r} has values that are not finite numbers")
    params = body.get("parameters")
    tokens = params.get("tokens", 0) if isinstance(params, Mapping) else 0
    return values, tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else 0


def model_metadata(model: str, *, width: int | None, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The model metadata response (``GET /v2/models/{name}``)."""
    names, output = MODELS[model]
    return {
        "name": model,
        "versions": ["1"],
        "platform": PLATFORM,
        "inputs": [{"name": n, "datatype": "BYTES", "shape": [-1]} for n in names],
        "outputs": [{"name": output, "datatype": "FP32", "shape": [-1, width if width is not None else -1]}],
        "parameters": dict(parameters),
    }
