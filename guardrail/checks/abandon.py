"""Giving up a check that nobody waits for: its client went away, or its latency budget ran out.

A check runs in one of the guard's worker threads, where it cannot be interrupted; the guard marks the job
abandoned (:func:`abandonable` runs it with an event the caller sets) and the check stops at its next step
(:func:`give_up_if_abandoned`: between sentence groups, premises and sentences), raising :class:`CheckAbandoned`.
A client that hangs up after sending a heavy answer no longer leaves a worker thread scoring it for nobody (round 57:
16-18 s of CPU after the client left, while other clients' checks waited).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from guardrail.errors import CheckAbandoned

T = TypeVar("T")

#: the event of the job this thread runs (a context variable: set for the job's own call only)
_JOB: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("guardrail_job", default=None)


def abandonable(event: threading.Event, fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn(*args)`` as a job that gives up once ``event`` is set."""
    def job() -> T:
        _JOB.set(event)
        return fn(*args)

    return contextvars.copy_context().run(job)


def give_up_if_abandoned() -> None:
    """Raise :class:`CheckAbandoned` when the job running this call was abandoned (a no-op outside a job)."""
    event = _JOB.get()
    if event is not None and event.is_set():
        raise CheckAbandoned("the check was given up: nobody waits for its verdict any more (the client went away, "
                             "or the latency budget ran out)")
