"""Kept for imports written before :mod:`guardrail.stream` (the package that holds the code now)."""

from __future__ import annotations

from guardrail.stream import (
    AsyncGatedStream,
    ChunkAdapter,
    GatedStream,
    Reading,
    ReleaseGate,
    ReleaseState,
    StreamEnd,
    StreamGuard,
)

__all__ = ["AsyncGatedStream", "ChunkAdapter", "GatedStream", "Reading", "ReleaseGate", "ReleaseState", "StreamEnd",
           "StreamGuard"]
