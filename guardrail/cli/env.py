"""The environment variables of the command line, read here and only here: ``GUARDRAIL_NLI_MODEL`` (the default NLI
model directory or hub id), ``GUARDRAIL_THREADS`` (onnxruntime threads), and the API keys of ``guardrail serve``."""

from __future__ import annotations

import os

from guardrail.errors import InputError

__all__ = ["env", "env_threads", "nli_model"]


def env(name: str) -> str | None:
    """An environment variable, None when unset or empty."""
    return os.environ.get(name) or None


def env_threads() -> int | None:
    """``GUARDRAIL_THREADS`` (onnxruntime intra-op threads), validated: a clear error, never a traceback."""
    raw = os.environ.get("GUARDRAIL_THREADS", "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"GUARDRAIL_THREADS={raw!r} is not a whole number; set it to the number of threads "
                         "(e.g. 2) or unset it") from None
    if value < 1:
        raise InputError(f"GUARDRAIL_THREADS={value} must be at least 1")
    return value


def nli_model(given: str | None) -> str | None:
    """``--nli-model``, else ``$GUARDRAIL_NLI_MODEL``, else None (the caller's default)."""
    return given or env("GUARDRAIL_NLI_MODEL")
