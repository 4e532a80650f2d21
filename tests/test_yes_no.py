"""Yes/no and short answers are judged as the statements they make, with the shipped model, in the gateway (real
uvicorn server, real openai SDK) and in ``guardrail check`` (issue 19)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import llm_server
import openai
import pytest
from prometheus_client import CollectorRegistry

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.server import create_gateway
from guardrail.telemetry import Telemetry

CTX = ["Gift cards and final-sale items cannot be returned. Other items can be returned within 30 days of delivery "
       "for a full refund."]
QUESTION = "Can gift cards be returned?"
UNFAITHFUL = ["Yes.", "Yes, they can.", "Sure!"]
FAITHFUL = ["No, they cannot.", "No, gift cards cannot be returned.", "Nope."]


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator(nli=NLIScorer(default_nli_model()))


@pytest.fixture(scope="module")
def gateway_url(evaluator: Evaluator) -> Iterator[str]:
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="fake")
    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None), observer=telemetry)
    with llm_server.serve() as upstream:
        app = create_gateway(upstream + "/v1", guard, telemetry, timeout=httpx.Timeout(60.0, connect=2.0))
        with llm_server.serve(app, lifespan="on") as url:
            yield url


def test_evidence_shows_the_statement_checked(evaluator: Evaluator) -> None:
    guard = Guard(evaluator, Policy(action="block", retrieval_relevance=None))
    no = guard.check(QUESTION, CTX, "No, they cannot.")
    yes = guard.check(QUESTION, CTX, "Yes, they can.")
    assert no.action == "pass" and yes.action == "block"
    assert no.evaluation.faithfulness.sentences[0].hypothesis == "Gift cards cannot be returned."
    assert yes.evaluation.faithfulness.sentences[0].hypothesis == "Gift cards can be returned."
    assert "Gift cards can be returned." in yes.reasons[0] or "Yes, they can." in yes.reasons[0]


@pytest.mark.parametrize("answer", UNFAITHFUL + FAITHFUL)
def test_gateway_reads_yes_no_with_the_question(gateway_url: str, answer: str) -> None:
    client = openai.OpenAI(base_url=gateway_url + "/v1", api_key="k", max_retries=0)
    messages = [{"role": "user", "content": QUESTION}]
    if answer in UNFAITHFUL:
        with pytest.raises(openai.BadRequestError, match="blocked by guardrail"):
            client.chat.completions.create(model="fake", messages=messages,
                                           extra_body={"contexts": CTX, "answer": answer})
    else:
        reply = client.chat.completions.create(model="fake", messages=messages,
                                               extra_body={"contexts": CTX, "answer": answer})
        assert reply.choices[0].message.content == answer


def test_check_cli_reads_yes_no_with_the_question(tmp_path: Path) -> None:
    rows = [{"id": f"r{i}", "question": QUESTION, "contexts": CTX, "response": a}
            for i, a in enumerate(UNFAITHFUL + FAITHFUL)]
    data = tmp_path / "yes_no.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = subprocess.run([sys.executable, "-m", "guardrail", "check", str(data), "--checks", "faithfulness",
                          "--format", "jsonl"], capture_output=True, text=True, timeout=300)
    out = [json.loads(line) for line in run.stdout.splitlines() if line.strip().startswith("{")]
    outcome = {r["id"]: r["outcome"] for r in out}
    assert outcome == {f"r{i}": ("failed" if a in UNFAITHFUL else "passed") for i, a in enumerate(UNFAITHFUL + FAITHFUL)}
    assert run.returncode == 1  # the unfaithful rows fail the gate
