"""One structured log line per guarded request, and the logging set-up of ``guardrail serve``.

The line goes to the ``guardrail.access`` logger at INFO: the route, the status the client got, the action and
outcome of the verdict, its scores, the check time and the upstream's time (to its first byte and in all). With
``--log-format json`` (the default of ``guardrail serve``) it is one JSON object per line, fit for a log pipeline;
``text`` gives ``key=value`` pairs. Nothing of the question, the contexts or the answer is logged (they may be
personal data); the reasons are counted, not quoted.

    {"event": "request", "route": "/v1/chat/completions", "status": 400, "action": "block", "outcome": "failed",
     "faithfulness": 0.06, "retrieval_relevance": 0.52, "response_relevance": null, "check_ms": 92.4,
     "upstream_first_byte_ms": 311.0, "total_ms": 405.2, "reasons": 1, "error_reason": null, "stream_error": false}
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from guardrail.errors import ConfigurationError
from guardrail.verdict import Verdict

__all__ = ["ACCESS_LOGGER", "LOG_FORMATS", "LOG_LEVELS", "access_record", "configure_logging", "log_request"]

ACCESS_LOGGER = "guardrail.access"
LOG_FORMATS = ("json", "text")
LOG_LEVELS = ("debug", "info", "warning", "error")


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def access_record(route: str, status: int | None, verdict: Verdict | None, *, first_byte: float | None,
                  total: float, stream_error: bool = False) -> dict[str, Any]:
    """The fields of one request's line. ``stream_error``: the answer's stream carried an error event (the
    upstream's, or the gateway's own for a stream that broke off or timed out): its outcome is the verdict on what
    came before the error, and ``stream_error`` says the answer did not end normally."""
    scores = verdict.scores if verdict is not None else None
    return {
        "event": "request",
        "route": route,
        "status": status,
        "action": verdict.action if verdict is not None else None,
        "outcome": verdict.outcome if verdict is not None else None,
        "faithfulness": scores.faithfulness if scores is not None else None,
        "retrieval_relevance": scores.retrieval_relevance if scores is not None else None,
        "response_relevance": scores.response_relevance if scores is not None else None,
        "check_ms": _ms(verdict.timings.check) if verdict is not None else None,
        "upstream_first_byte_ms": _ms(first_byte),
        "total_ms": _ms(total),
        "reasons": len(verdict.reasons) if verdict is not None else 0,
        "error_reason": verdict.error_reason if verdict is not None else None,
        "stream_error": stream_error,
    }


def log_request(route: str, status: int | None, verdict: Verdict | None, *, first_byte: float | None,
                total: float, stream_error: bool = False) -> None:
    logger = logging.getLogger(ACCESS_LOGGER)
    if logger.isEnabledFor(logging.INFO):
        logger.info("request", extra={"guardrail": access_record(route, status, verdict, first_byte=first_byte,
                                                                    total=total, stream_error=stream_error)})


class _Formatter(logging.Formatter):
    def __init__(self, fmt: str) -> None:
        super().__init__()
        self.fmt = fmt

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = dict(getattr(record, "guardrail", None) or {})
        if not fields:
            fields = {"event": "log", "message": record.getMessage()}
            if record.exc_info:
                fields["exception"] = self.formatException(record.exc_info)
        fields = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"), "level": record.levelname.lower(),
                  "logger": record.name, **fields}
        if self.fmt == "json":
            return json.dumps(fields, ensure_ascii=False, default=str)
        return " ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str) if isinstance(v, str) and (' ' in v or not v) else v}"
                        for k, v in fields.items())


def configure_logging(level: str = "info", fmt: str = "json") -> None:
    """Set up the ``guardrail`` loggers of a serving process (stderr, one line per record). For the command line and
    its worker processes: a library user configures logging their own way."""
    if level not in LOG_LEVELS:
        raise ConfigurationError(f"log level {level!r}: choose one of {', '.join(LOG_LEVELS)}")
    if fmt not in LOG_FORMATS:
        raise ConfigurationError(f"log format {fmt!r}: choose one of {', '.join(LOG_FORMATS)}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter(fmt))
    logger = logging.getLogger("guardrail")
    logger.handlers[:] = [handler]
    logger.setLevel(level.upper())
    logger.propagate = False
