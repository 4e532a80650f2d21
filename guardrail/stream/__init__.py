"""Guarded streams: a sentence assembler, a per-choice checker and one releaser for every integration.

- :mod:`~guardrail.stream.assembler`: text in, complete sentences out (incremental, linear in the answer's length);
- :mod:`~guardrail.stream.check`: :class:`StreamGuard`, one choice's checker (each sentence scored once; the
  stream's verdict from :mod:`guardrail.decision`), reaching the guard through the :class:`StreamChecker` protocol;
- :mod:`~guardrail.stream.release`: :class:`ReleaseGate` (which items may go out, with an explicit
  :class:`ReleaseState`) and the drivers :class:`GatedStream` / :class:`AsyncGatedStream`; integrations plug in
  through a :class:`ChunkAdapter`.
"""

from __future__ import annotations

from guardrail.stream.assembler import Sentence, SentenceAssembler
from guardrail.stream.check import StreamChecker, StreamEnd, StreamGuard
from guardrail.stream.release import AsyncGatedStream, ChunkAdapter, GatedStream, Reading, ReleaseGate
from guardrail.stream.state import ReleaseState

__all__ = [
    "AsyncGatedStream",
    "ChunkAdapter",
    "GatedStream",
    "Reading",
    "ReleaseGate",
    "ReleaseState",
    "Sentence",
    "SentenceAssembler",
    "StreamChecker",
    "StreamEnd",
    "StreamGuard",
]
