"""Block mode, classes found by an attacker's probe of round 6 (real gateway, real model, scripted upstream): a
reasoning trace streamed ahead of an answer that never comes (or shows nothing) ... Each hallucination is blocked, and
its faithful twin is delivered byte for byte. The gateway, upstream and helpers are ``tests/test_bypass.py``'s."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from test_bypass import (  # noqa: F401 - fixtures
    assert_blocked,
    assert_delivered,
    chunk,
    evaluator,
    gw,
    script,
    sse,
    upstream,
)
from test_bypass_round5 import CTX, P, send

from guardrail.telemetry import Telemetry

TRACE = "Gift cards can be returned within 90 days."


def pieces(text: str) -> list[str]:
    out = [w + " " for w in text.split(" ")]
    out[-1] = out[-1].rstrip()
    return out


def traced_stream(answer: str, field: str = "reasoning_content") -> list[bytes]:
    """A reasoning model's stream: the trace word by word, then the answer word by word (none when empty)."""
    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({field: p}) for p in pieces(TRACE)]
    if answer:
        events += [chunk({"content": p}) for p in pieces(answer)]
    return sse(*events, chunk({}, finish="length" if not answer else "stop"))


def responses_traced_stream(answer: str) -> list[bytes]:
    ev: list[dict[str, Any]] = [{"type": "response.created", "sequence_number": 0,
                                 "response": {"id": "r1", "object": "response", "status": "in_progress", "output": []}}]
    ev += [{"type": "response.reasoning_summary_text.delta", "item_id": "rs1", "output_index": 0, "summary_index": 0,
            "delta": p} for p in pieces(TRACE)]
    ev += [{"type": "response.output_text.delta", "item_id": "m1", "output_index": 1, "content_index": 0, "delta": p}
           for p in (pieces(answer) if answer else [])]
    return sse(*ev, done=False)


def delivered(r: httpx.Response) -> str:
    """Every text the events of a stream hand a client (deltas of any field, Responses event texts); not the
    guardrail's own verdict, which quotes what it blocked."""
    out = []
    for event in r.text.replace("\r\n", "\n").split("\n\n"):
        if not event.startswith("data: {"):
            continue
        payload = json.loads(event[6:])
        payload.pop("guardrail", None)
        payload.get("response", {}).pop("guardrail", None) if isinstance(payload.get("response"), dict) else None
        out.append(json.dumps(payload))
    return "\n".join(out)


# --------------------------------------------------------------------------- a streamed reasoning trace
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("answer", ["", "\u200b", "**"])
def test_a_streamed_trace_with_no_answer_is_not_delivered(gw: tuple[str, Telemetry], field: str, answer: str) -> None:
    """A stream that ends after its reasoning trace (max_tokens reached while reasoning) would show the trace as the
    answer: in block mode the trace is held until the answer shows something, and blocked when it never does."""
    url, tel = gw
    r = send(url, script(traced_stream(answer, field)), stream=True)
    assert_blocked(r)
    assert "90" not in delivered(r), r.text
    assert "reasoning" in r.headers.get("x-guardrail-reason", "") or "reasoning" in r.text


def test_a_trace_ahead_of_a_hallucinated_answer_is_not_delivered(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    answer = "Gift cards can be returned within 90 days of delivery."
    r = send(url, script(traced_stream(answer)), stream=True)
    assert_blocked(r)
    assert "90" not in delivered(r), r.text


def test_a_trace_ahead_of_a_faithful_answer_is_delivered_intact(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    sid = script(traced_stream(P))
    assert_delivered(send(url, sid, stream=True), sid)


def test_a_responses_stream_of_a_reasoning_summary_alone_is_not_delivered(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    body = {"model": "m", "input": "Can gift cards be returned?", "contexts": CTX, "stream": True}
    r = httpx.post(url + "/v1/responses", json={**body, "script": script(responses_traced_stream(""))}, timeout=60)
    assert r.status_code == 200, r.text
    assert "90" not in delivered(r) and "response.incomplete" in r.text, r.text
    sid = script(responses_traced_stream(P))
    assert_delivered(httpx.post(url + "/v1/responses", json={**body, "script": sid}, timeout=60), sid)
