"""One table of (policy, answer) cases, the shipped model, every decision path: ``Guard.check``, a streamed answer
(``guard.stream``), the middleware of the real gateway (a JSON answer and an SSE stream, through uvicorn, in front of
the local LLM stand-in) and ``guardrail check --policy FILE``. Every path must take the same action, and every stream
must deliver the same text, which is what the final decision releases.

The faithful sentences are context sentences word for word (they score 1.0 by rule) and the unsupported ones are
unrelated claims (they score near 0), so the table does not lean on model quirks; the premise is checked first.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import llm_server
import pytest
from prometheus_client import CollectorRegistry

from guardrail.checks.evaluator import Evaluator
from guardrail.cli import main
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.server import create_gateway
from guardrail.telemetry import Telemetry

Q = "How do returns work?"
CTX = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned. "
       "Refunds are issued to the original payment method within 5 business days."]
GOOD = "Items can be returned within 30 days of delivery."
GOOD2 = "Refunds are issued to the original payment method within 5 business days."
BAD = "Our headquarters moved to Lisbon in 1987."
BAD2 = "Penguins can fly faster than jets."
LIMIT = 0.5  # faithful sentences score 1.0, unsupported ones < 0.1: one of three fails "any", not the mean (>= 0.67);
# two of three fail both (mean <= 0.4)

MIXED = f"{GOOD} {BAD} {GOOD2}"  # mean 0.67: passes the mean, fails "any"
WEAK = f"{GOOD} {BAD} {BAD2}"  # mean 0.33: fails both

# id: (policy, answer, action, what a stream delivers)
CASES: dict[str, tuple[dict[str, Any], str, str, str]] = {
    # a stream releases each passed sentence with its trailing space
    "any: one unsupported sentence among faithful ones": ({"action": "block"}, MIXED, "block", GOOD + " "),
    "any: every sentence faithful": ({"action": "block"}, f"{GOOD} {GOOD2}", "pass", f"{GOOD} {GOOD2}"),
    "mean passes": ({"action": "block", "aggregate": "mean"}, MIXED, "pass", MIXED),
    "mean fails": ({"action": "block", "aggregate": "mean"}, WEAK, "block", ""),
    "flag": ({"action": "flag"}, MIXED, "flag", MIXED),
}


def policy_of(settings: dict[str, Any]) -> dict[str, Any]:
    return {"faithfulness": LIMIT, "retrieval_relevance": None, **settings}


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator(nli=NLIScorer(default_nli_model()))


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with llm_server.serve() as url:
        yield url + "/v1"


@contextmanager
def gateway(upstream: str, evaluator: Evaluator, policy: Policy) -> Iterator[tuple[str, Telemetry]]:
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="fake")
    guard = Guard(evaluator, policy, observer=telemetry)
    with llm_server.serve(create_gateway(upstream, guard, telemetry), lifespan="on") as url:
        yield url, telemetry


def test_the_premise(evaluator: Evaluator) -> None:
    check = evaluator.faithfulness_check
    assert check is not None
    for sentence in (GOOD, GOOD2):
        assert check.run(Q, CTX, sentence).score == 1.0
    for sentence in (BAD, BAD2):
        score = check.run(Q, CTX, sentence).score
        assert score is not None and score < 0.1, (sentence, score)


def stream_events(r: httpx.Response) -> tuple[str, dict[str, Any]]:
    """The answer text a client of the stream got, and the final chunk."""
    events = [e for e in r.text.split("\n\n") if e.strip()]
    assert events[-1] == "data: [DONE]", r.text[-300:]
    payloads = [json.loads(e[len("data: "):]) for e in events[:-1]]
    text = "".join(c["delta"].get("content") or "" for p in payloads for c in p["choices"])
    return text, payloads[-1]


def observed(t: Telemetry, action: str, count: int) -> float | None:
    labels = {"route": "gateway", "model": "fake", "action": action,
              "outcome": "passed" if action == "pass" else "failed"}
    deadline = time.time() + 20  # a flag-mode stream is checked after its last byte, in the background
    while t.registry.get_sample_value("guardrail_verdicts_total", labels) != count and time.time() < deadline:
        time.sleep(0.02)
    return t.registry.get_sample_value("guardrail_verdicts_total", labels)


@pytest.mark.parametrize("case", list(CASES))
def test_every_path_decides_alike(case: str, evaluator: Evaluator, upstream: str, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    settings, answer, action, streamed = CASES[case]
    policy = Policy(**policy_of(settings))
    whole = "" if action == "block" else answer  # what a non-streamed answer delivers

    # Guard.check
    guard = Guard(evaluator, policy)
    try:
        assert guard.check(Q, CTX, answer).action == action
        # guard.stream, fed in 7-character pieces
        s = guard.stream(Q, CTX)
        delivered = "".join(s.feed(answer[i:i + 7]) for i in range(0, len(answer), 7))
        end = s.finish()
        delivered += end.text
        assert (end.verdict.action, delivered) == (action, streamed)
        assert end.verdict.response == delivered  # the decision is about what went out
    finally:
        guard.close()

    # the middleware (the gateway in front of the LLM stand-in): a JSON answer and an SSE stream
    with gateway(upstream, evaluator, policy) as (url, t):
        body = {"model": "fake", "messages": [{"role": "user", "content": Q}], "contexts": CTX, "answer": answer}
        r = httpx.post(url + "/v1/chat/completions", json=body, timeout=60)
        if action == "block":
            assert r.status_code == 400 and r.json()["error"]["code"] == "content_filter"
        else:
            assert r.headers["x-guardrail-action"] == action
            assert r.json()["choices"][0]["message"]["content"] == whole
        r = httpx.post(url + "/v1/chat/completions", json={**body, "stream": True}, timeout=60)
        text, last = stream_events(r)
        assert text == streamed
        if action == "flag":  # a flag-mode stream ends with a chunk with no choices that carries the verdict
            assert last["choices"] == [] and last["guardrail"]["action"] == "flag"
        else:
            finish = last["choices"][0]["finish_reason"]
            assert finish == ("content_filter" if action == "block" else "stop")
        if action == "block":
            assert last["guardrail"]["action"] == "block"
        assert observed(t, action, 2) == 2  # the JSON answer and the stream: one verdict each, the same

    # guardrail check --policy FILE
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "r", "question": Q, "contexts": CTX, "response": answer}) + "\n")
    policy_file = tmp_path / "policy.json"
    policy_file.write_text(json.dumps(policy_of(settings)))
    code = main(["check", str(rows), "--policy", str(policy_file), "--json"])
    out, _ = capsys.readouterr()
    outcome = json.loads(out)["outcome"]
    assert outcome == ("passed" if action == "pass" else "failed")
    assert code == (0 if action == "pass" else 1)
