"""Command line: ``guardrail check``, ``eval``, ``serve``, ``export``, ``train``, ``calibrate``.

- :mod:`guardrail.cli.main`: the parser and :func:`main` (the ``guardrail`` console script);
- :mod:`guardrail.cli.records`: reading rows; :mod:`guardrail.cli.gate`: the policy that decides each row (through
  :mod:`guardrail.decision`); :mod:`guardrail.cli.report`: table, JSON, JUnit, markdown;
- one module a command: :mod:`~guardrail.cli.check`, :mod:`~guardrail.cli.eval`, :mod:`~guardrail.cli.serve`,
  :mod:`~guardrail.cli.model` (export, train, calibrate);
- :mod:`guardrail.cli.env`: the environment variables, read there and only there.
"""

from guardrail.cli.env import env_threads
from guardrail.cli.main import build_parser, main
from guardrail.cli.records import Record, read_records

__all__ = ["Record", "build_parser", "env_threads", "main", "read_records"]
