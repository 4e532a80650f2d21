"""Block mode, round 53 (the acceptance list tried with shapes nobody listed): a Responses ``reasoning`` item whose
trace is in ``content`` (``reasoning_text`` parts) rather than ``summary``, and search-call items
(``web_search_call``, ``file_search_call``) that were skipped whole, whatever fields they carried.

Real model and gateway; each attack with its faithful twin."""

from __future__ import annotations

from typing import Any

import pytest
from test_bypass import (GOOD, assert_blocked, assert_delivered, dumps, evaluator, gw, post, script,  # noqa: F401
                         upstream)

from guardrail.telemetry import Telemetry

HALLUCINATION = "Items can be returned within 90 days of delivery."


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _response(*items: dict[str, Any]) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m",
            "output": list(items)}


REASONING = {"type": "reasoning", "id": "rs_1", "summary": [],
             "content": [{"type": "reasoning_text", "text": HALLUCINATION}]}


def test_a_reasoning_trace_in_content_is_a_trace(gw: tuple[str, Telemetry]) -> None:
    """Alone (or beside a courtesy that answers nothing) it is a trace with no answer: blocked; beside a faithful
    answer the answer is judged."""
    for body in (_response(REASONING), _response(REASONING, _message("Hope this helps!"))):
        assert_blocked(post(gw[0], script(dumps(body)), path="/v1/responses"))
    sid = script(dumps(_response(REASONING, _message(GOOD))))
    assert_delivered(post(gw[0], sid, path="/v1/responses"), sid)


@pytest.mark.parametrize("kind", ["web_search_call", "file_search_call"])
def test_a_search_call_is_read_by_its_fields(gw: tuple[str, Telemetry], kind: str) -> None:
    """A search call with an answer's ``content`` (or any field the reader does not know) is unreadable; one with its
    own fields (``action``, ``queries``, ``results``) is no answer and the message beside it is judged."""
    smuggled = {"type": kind, "id": "ws_1", "status": "completed",
                "content": [{"type": "output_text", "text": HALLUCINATION, "annotations": []}]}
    assert_blocked(post(gw[0], script(dumps(_response(smuggled, _message(GOOD)))), path="/v1/responses"))
    plain = {"type": kind, "id": "ws_1", "status": "completed",
             **({"action": {"type": "search", "query": "return policy"}} if kind == "web_search_call" else
                {"queries": ["return policy"], "results": None})}
    sid = script(dumps(_response(plain, _message(GOOD))))
    assert_delivered(post(gw[0], sid, path="/v1/responses"), sid)


# --------------------------------------------------------------------------- round 55: the request side
@pytest.mark.parametrize(("path", "field"), [("/v1/completions", "prompt"), ("/v1/responses", "input")])
def test_a_question_in_two_fields_is_refused(gw: tuple[str, Telemetry], path: str, field: str) -> None:
    """``messages`` beside ``prompt`` or ``input``: the upstream answers the route's own field, the guard read
    ``messages``; which one the answer answers cannot be told, so the request is refused (400), the upstream never
    asked."""
    import httpx

    sid = script(dumps({"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": "Yes."}]}))
    r = httpx.post(gw[0] + path, json={"model": "m", "messages": [{"role": "user", "content": "Can I return a jacket?"}],
                                       field: "Can I return a gift card?", "contexts": ["Gift cards cannot be returned."],
                                       "script": sid}, timeout=60)
    assert r.status_code == 400 and "question" in r.json()["error"]["message"], r.text


def test_a_continued_assistant_message_is_refused(gw: tuple[str, Telemetry]) -> None:
    """vLLM's ``continue_final_message``: a client shows the prefill and the continuation as one answer, which the
    guard would judge only in part: refused with the reason."""
    import httpx

    sid = script(dumps({"id": "c", "object": "chat.completion", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": " can be returned within 30 days."},
         "finish_reason": "stop"}]}))
    r = httpx.post(gw[0] + "/v1/chat/completions", json={
        "model": "m", "messages": [{"role": "user", "content": "Can I return a gift card?"},
                                   {"role": "assistant", "content": "Gift cards"}],
        "continue_final_message": True, "add_generation_prompt": False,
        "contexts": ["Gift cards cannot be returned."], "script": sid}, timeout=60)
    assert r.status_code == 400 and "continue" in r.json()["error"]["message"], r.text
