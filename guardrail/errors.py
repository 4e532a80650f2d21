"""The exception hierarchy: one root, every message says what happened and what to do."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guardrail.verdict import Verdict


class GuardrailError(Exception):
    """Root of every error raised by guardrail. ``shown``: the message as a client of the gateway or the middleware may
    read it with a refusal, for a message that quotes the answer (the words the guard could not judge would reach the
    client inside the refusal); None: the message names nothing of the answer."""

    def __init__(self, *args: object, shown: str | None = None) -> None:
        super().__init__(*args)
        self.shown = shown


class ConfigurationError(GuardrailError, ValueError):
    """A setting, argument or model directory is not usable as given."""


class ModelLoadError(ConfigurationError):
    """A model could not be found or loaded, or its config does not fit the scorer."""


class MissingDependencyError(GuardrailError, ImportError):
    """An optional dependency is needed; the message names the exact pip install line."""


class InputError(GuardrailError, ValueError):
    """Caller input is malformed or over a documented limit."""


class UncheckableError(InputError):
    """Text the model cannot judge (a script it was not trained on, broken Unicode, over a limit).

    Never read as "supported": the guard applies the policy's ``on_error`` to it (block mode blocks by default).
    """


class UnreadableError(UncheckableError):
    """An answer guardrail cannot read (unknown shape, content type or encoding, broken bytes): never delivered as
    checked; the policy's ``on_error`` decides."""


class CheckAbandoned(GuardrailError):
    """A check stopped part-way because nobody waits for its verdict any more (the client went away, or the latency
    budget ran out): raised in the worker thread, where no caller reads it."""


class OverloadedError(GuardrailError):
    """The guard is at its bound of pending checks (``Guard(max_pending=...)``): the answer is refused at once instead
    of queueing without limit. Gateways answer 503 with ``Retry-After``; the policy's ``on_error`` applies otherwise."""


class RemoteScorerError(GuardrailError):
    """A remote scorer (``--scorer-url``) could not score: down, slow, refusing or answering garbage. The message names
    the URL, the model and what went wrong; ``reason`` is one of connect, timeout, status, protocol. The guard counts
    it as ``reason="scorer"`` and applies the policy's ``on_error`` (block mode: the answer is blocked)."""

    def __init__(self, message: str, *, url: str, model: str, reason: str) -> None:
        super().__init__(message)
        self.url = url
        self.model = model
        self.reason = reason


class GuardrailBlocked(GuardrailError):
    """The answer failed the guard and the policy blocks it; ``verdict`` says why."""

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        reasons = "; ".join(verdict.reasons) or verdict.outcome
        super().__init__(f"answer blocked by guardrail: {reasons}")
