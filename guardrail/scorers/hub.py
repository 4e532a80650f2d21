"""Resolve a model reference (local directory or Hugging Face hub id) to a local directory."""

from __future__ import annotations

from pathlib import Path

from guardrail.errors import ModelLoadError


def resolve_model_dir(ref: str | Path) -> Path:
    """A local directory is used as is; anything else is treated as a hub id and downloaded
    (cached by huggingface_hub). Offline, a hub id fails with a message saying what to do."""
    path = Path(ref).expanduser()
    if path.is_dir():
        if not (path / "config.json").exists():
            raise ModelLoadError(f"{path} has no config.json; point at a Hugging Face model directory")
        return path
    text = str(ref)
    if path.exists() or text.startswith((".", "/", "~")) or text.count("/") > 1:
        raise ModelLoadError(f"model directory {text!r} does not exist")
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:  # pragma: no cover - tokenizers depends on huggingface_hub
        raise ModelLoadError(f"{text!r} is not a directory and huggingface_hub is not installed") from exc
    try:
        return Path(snapshot_download(text, allow_patterns=["*.json", "*.txt", "*.onnx", "*.safetensors", "*.model"]))
    except Exception as exc:
        raise ModelLoadError(
            f"could not fetch {text!r} from the Hugging Face hub ({type(exc).__name__}: {exc}). "
            "Without network access pass a local model directory instead"
        ) from exc
