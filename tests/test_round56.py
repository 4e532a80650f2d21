"""Round 56 (an attack on the decorator, the CLI's input and HTML report, and ``guardrail eval``): a dict argument
that carried its own "contexts", ``@guarded`` over ``@classmethod``, JSON Lines strings holding U+2028, and a report
that drew a passing reading over the failing one of the same span."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from block_mode import block_guard  # noqa: F401 - fixture

from guardrail.decorator import guarded
from guardrail.errors import ConfigurationError, GuardrailBlocked
from guardrail.guard import Guard

CTX = ["Gift cards cannot be returned."]
Q = "Can I return a gift card?"


def test_a_dict_argument_is_no_source_of_contexts(block_guard: Guard) -> None:
    """Only the function's own ``**kwargs`` are looked in: a request body passed as an ordinary argument, with a
    "contexts" key of its own, must not replace the contexts the caller named."""
    @guarded(block_guard)
    def answer(body: dict[str, Any], **kwargs: Any) -> str:
        return "Gift cards can be returned within 90 days."

    with pytest.raises(GuardrailBlocked):
        answer({"contexts": ["Gift cards can be returned within 90 days."]}, question=Q, contexts=CTX)

    @guarded(block_guard)
    def faithful(body: dict[str, Any], **kwargs: Any) -> str:
        return "Gift cards cannot be returned."

    assert faithful({"contexts": ["unrelated"]}, question=Q, contexts=CTX) == "Gift cards cannot be returned."


def test_guarded_over_classmethod_says_which_order(block_guard: Guard) -> None:
    with pytest.raises(ConfigurationError, match="put @classmethod outside"):
        class Bad:
            @guarded(block_guard)  # type: ignore[arg-type]
            @classmethod
            def answer(cls, question: str, contexts: list[str]) -> str:
                return "x"

    class Good:
        @classmethod
        @guarded(block_guard)
        def answer(cls, question: str, contexts: list[str]) -> str:
            return "Gift cards cannot be returned."

    assert Good.answer(Q, CTX) == "Gift cards cannot be returned."


def test_json_lines_strings_may_hold_line_separators(tmp_path: Path) -> None:
    rows = [{"id": 1, "question": Q, "contexts": CTX, "response": "Gift cards cannot\u2028be returned."},
            {"id": 2, "question": Q, "contexts": ["Refunds take 5\u2029days.\u0085"], "response": "Refunds take 5 days."}]
    f = tmp_path / "rows.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "guardrail", "check", str(f), "--json"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert [json.loads(line)["id"] for line in done.stdout.splitlines() if line.startswith("{")] == [1, 2]


def test_the_report_draws_the_failing_reading_of_a_span(block_guard: Guard) -> None:
    from guardrail.html_report import _answer

    result = block_guard.check("What is the return policy?", ["Items can be returned within 30 days of delivery. "
                                                              "Gift cards cannot be returned."],
                               "Can gift cards be returned? Yes, items can be returned within 90 days.")
    assert result.evaluation is not None and result.action == "block"
    sentences = result.evaluation.faithfulness.sentences
    html = _answer(result.response, sentences)
    failing = [s for s in sentences if s.supported is False]
    assert failing and html.count('class="unsupported"') >= 1
