"""The state of a guarded stream: one value instead of a handful of flags."""

from __future__ import annotations

from enum import Enum


class ReleaseState(Enum):
    """Where a guarded stream (one choice's :class:`~guardrail.stream.check.StreamGuard`, or a whole
    :class:`~guardrail.stream.release.ReleaseGate`) stands.

    ``STREAMING`` text goes out as it comes (flag / pass mode; or a held stream that became unchecked with ``on_error:
    fail_open``) -> ``FINISHED``. ``HOLDING`` text goes out once its sentence passed (block / fallback mode) ->
    ``STOPPED`` (a sentence or the answer failed, or it could not be read with ``fail_closed``), ``STREAMING`` (fail
    open) or ``FINISHED``. ``STOPPED`` and ``FINISHED`` are final: nothing more is taken in; a stopped stream stays
    ``STOPPED`` after its verdict is made.
    """

    STREAMING = "streaming"
    HOLDING = "holding"
    STOPPED = "stopped"
    FINISHED = "finished"

    @property
    def open(self) -> bool:
        """Still taking text in."""
        return self in (ReleaseState.STREAMING, ReleaseState.HOLDING)
