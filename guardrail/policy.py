"""Policy: which checks run, their thresholds, and what happens to an answer that fails.

>>> policy = Policy(action="block", faithfulness=0.5, retrieval_relevance=0.2)
>>> policy.checks
('faithfulness', 'retrieval_relevance')

Or from a file (JSON, or TOML on Python >= 3.11 / with tomli):

    action = "fallback"
    fallback_message = "Sorry, I can't answer that from our documentation."
    faithfulness = 0.5
    retrieval_relevance = 0.2
    on_error = "fail_closed"
    latency_budget_s = 0.5

Failure policy (``on_error``): an answer the guard cannot read, cannot judge (over the limits, a script the model
was not trained on, broken text) or could not score in time is *unchecked*, never "supported". By default block and
fallback modes treat it as failing (``fail_closed``: nothing unchecked reaches the user); flag and pass modes deliver
it marked ``outcome=error`` (``fail_open``). Set ``on_error`` to choose explicitly. Flag mode never blocks: there
``fail_closed`` flags the unchecked answer (``action="flag"``) and ``fail_open`` passes it (``action="pass"``); it is
delivered and marked either way. Every such case is logged and
counted (``guardrail_check_errors_total``).

Decision (``aggregate``): ``any`` (default) fails the answer when any checked sentence scores below
``faithfulness``, however many supported sentences surround it; ``mean`` compares the mean instead. The mean is
always reported as the faithfulness score.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from guardrail.errors import ConfigurationError

Action = Literal["pass", "flag", "block", "fallback"]
ACTIONS: tuple[Action, ...] = ("pass", "flag", "block", "fallback")
OnError = Literal["fail_open", "fail_closed"]
ON_ERROR: tuple[OnError, ...] = ("fail_open", "fail_closed")
Aggregate = Literal["any", "mean"]
AGGREGATES: tuple[Aggregate, ...] = ("any", "mean")

DEFAULT_FALLBACK = "I can't give a reliable answer to that from the available sources."


@dataclass(frozen=True, slots=True)
class Policy:
    """Thresholds per check (None turns a check off) and the action for an answer that fails one.

    - ``action``: ``flag`` delivers the answer and marks it; ``block`` refuses it (an exception, an
      error response, or a stream that stops before the failing sentence); ``fallback`` replaces it with
      ``fallback_message``; ``pass`` only records scores.
    - ``on_error``: when the answer cannot be read, judged or scored in time: ``fail_open`` delivers the
      answer (marked with the error), ``fail_closed`` treats it as failing. Both are counted. Default (None):
      ``fail_closed`` for block and fallback, ``fail_open`` for flag and pass.
    - ``aggregate``: ``any`` unsupported sentence fails the answer (default), or the ``mean`` must reach the threshold.
    """

    action: Action = "flag"
    #: each sentence's faithfulness score must reach this (``aggregate="mean"``: the mean); "auto" = the threshold
    #: stored with the NLI model (fitted with its calibration; 0.5 for a model without one), resolved by the Guard
    faithfulness: float | Literal["auto"] | None = "auto"
    #: the best chunk's relevance to the question must reach this
    retrieval_relevance: float | None = 0.2
    #: the response's relevance to the question must reach this (off by default: chit-chat answers are short)
    response_relevance: float | None = None
    fallback_message: str = DEFAULT_FALLBACK
    on_error: OnError | None = None
    aggregate: Aggregate = "any"
    #: an answer with no text: "pass" (nothing to check), or "fail" (the policy's action applies, reason given)
    empty_answer: Literal["pass", "fail"] = "pass"
    #: seconds the check may take before ``on_error`` applies (None: no budget)
    latency_budget_s: float | None = None

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ConfigurationError(f"action must be one of {', '.join(ACTIONS)}, got {self.action!r}")
        if self.on_error is None:  # nothing unchecked is delivered where the promise is to block
            object.__setattr__(self, "on_error", "fail_closed" if self.action in ("block", "fallback") else "fail_open")
        if self.on_error not in ON_ERROR:
            raise ConfigurationError(f"on_error must be one of {', '.join(ON_ERROR)}, got {self.on_error!r}")
        if self.empty_answer not in ("pass", "fail"):
            raise ConfigurationError(f"empty_answer must be pass or fail, got {self.empty_answer!r}")
        if self.aggregate not in AGGREGATES:
            raise ConfigurationError(f"aggregate must be one of {', '.join(AGGREGATES)}, got {self.aggregate!r}")
        for name in ("faithfulness", "retrieval_relevance", "response_relevance"):
            value = getattr(self, name)
            if name == "faithfulness" and value == "auto":
                continue
            if value is not None and (not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0):
                raise ConfigurationError(f"threshold {name} must be a number within 0..1 or null (check off), got {value!r}")
        if self.latency_budget_s is not None and not self.latency_budget_s > 0:
            raise ConfigurationError(f"latency_budget_s must be > 0 seconds or null, got {self.latency_budget_s!r}")
        if not self.checks:
            raise ConfigurationError("the policy turns every check off; set at least one threshold")

    @property
    def checks(self) -> tuple[str, ...]:
        return tuple(
            name for name in ("faithfulness", "retrieval_relevance", "response_relevance") if getattr(self, name) is not None
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "policy") -> "Policy":
        allowed = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise ConfigurationError(f"{source}: unknown keys {unknown}; allowed: {sorted(allowed)}")
        return cls(**data)

    @classmethod
    def from_file(cls, path: str | Path) -> "Policy":
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigurationError(f"cannot read policy file {path}: {exc}") from exc
        if path.suffix == ".toml":
            if sys.version_info >= (3, 11):
                import tomllib
            else:  # Python 3.10
                try:
                    import tomli as tomllib
                except ImportError as exc:
                    raise ConfigurationError("TOML policies on Python 3.10 need: pip install tomli (or use JSON)") from exc
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise ConfigurationError(f"{path}: invalid TOML ({exc})") from exc
        else:
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ConfigurationError(f"{path}: invalid JSON at line {exc.lineno} ({exc.msg})") from exc
        if not isinstance(data, dict):
            raise ConfigurationError(f"{path}: a policy is a JSON/TOML object of settings")
        return cls.from_dict(data, str(path))
