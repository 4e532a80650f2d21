"""Batch checks on Ray Data: :func:`check_dataset` checks a Ray Dataset of (question, contexts, response) rows as
``guardrail check`` does, on a pool of actors (one model load each); ``guardrail check FILE --ray [ADDRESS]`` is the
command-line way (:mod:`guardrail.batch.ray_data`). Needs ``pip install 'rag-guardrail[ray]'``."""

from __future__ import annotations

from guardrail.batch.dataset import RESULT_COLUMNS, check_dataset

__all__ = ["RESULT_COLUMNS", "check_dataset"]
