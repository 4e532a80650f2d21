"""Block mode, round 37 (an attack on the gateway and the integrations with shapes nobody had listed,
BENCHMARKS.md): citations. A chat completion of a search model carries ``message.annotations[].url_citation.title``,
a Responses API answer ``annotations`` with a page's ``title`` or a file's ``filename`` (and, streamed,
``response.output_text.annotation.added`` events): a client shows those names beside the answer. They were refused
as "text where an identifier is expected", so every answer with a citation was blocked, whatever it said. A name
("Returns and refunds policy | Example Shop", "Return policy 2024.pdf") is now read as one; a title that reads as a
statement is still unreadable (blocked, with the reason).

Real model and gateway; each attack with its faithful twin."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_bypass import (CTX, GOOD, MARK, assert_blocked, assert_delivered, chat, chunk, dumps, evaluator, gw,  # noqa: F401
                         post, responses_stream, script, sse, upstream)

from guardrail.telemetry import Telemetry
from guardrail.text import source_name

TITLE = "Returns and refunds policy | Example Shop"
CLAIM = "Shipping to Mars is free within 90 days"  # a statement where a name goes


@pytest.mark.parametrize(("name", "is_name"), [
    (TITLE, True), ("Return policy 2024.pdf", True), ("refund_policy_v2.docx", True), ("Python 3.12 release notes", True),
    ("Example Shop", True),
    (CLAIM, False), ("Refunds | Gift cards can be returned", False), ("Returns. Gift cards are refundable", False),
    ("Refunds | 90-day returns", False), ("Returns, refunds", False), ("", False),
])
def test_a_source_name(name: str, is_name: bool) -> None:
    assert source_name(name) is is_name


def _url_citation(title: str) -> dict[str, Any]:
    return {"type": "url_citation", "url_citation": {"start_index": 0, "end_index": len(GOOD),
                                                     "url": "https://shop.example/returns", "title": title}}


def _responses_body(text: str, annotation: dict[str, Any]) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m",
            "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": [annotation]}]}]}


@pytest.mark.parametrize("title", [TITLE, CLAIM])
def test_chat_citations(gw: tuple[str, Telemetry], title: str) -> None:
    sid = script(dumps(chat(GOOD, annotations=[_url_citation(title)])))
    r = post(gw[0], sid)
    if title == TITLE:
        assert_delivered(r, sid)
    else:
        assert r.status_code == 400 and "names no source" in r.json()["error"]["message"], r.text
        assert MARK not in r.text
    # streamed: the annotations come with a delta
    events = [chunk({"role": "assistant", "content": GOOD}), chunk({"annotations": [_url_citation(title)]}),
              chunk({}, finish="stop")]
    sid = script(sse(*events), ctype="text/event-stream")
    r = post(gw[0], sid, stream=True)
    if title == TITLE:
        assert_delivered(r, sid)
    else:
        assert_blocked(r)
        assert MARK not in r.text.split("names no source")[0]


@pytest.mark.parametrize(("annotation", "delivered"), [
    ({"type": "url_citation", "start_index": 0, "end_index": 10, "url": "https://shop.example/returns",
      "title": TITLE}, True),
    ({"type": "file_citation", "index": len(GOOD), "file_id": "file-abc123", "filename": "Return policy 2024.pdf"},
     True),
    ({"type": "url_citation", "start_index": 0, "end_index": 10, "url": "https://shop.example/returns",
      "title": CLAIM}, False),
    ({"type": "file_citation", "index": 0, "file_id": "file-abc123", "filename": CLAIM + ".pdf"}, False),
])
def test_responses_citations(gw: tuple[str, Telemetry], annotation: dict[str, Any], delivered: bool) -> None:
    sid = script(dumps(_responses_body(GOOD, annotation)))
    r = post(gw[0], sid, path="/v1/responses")
    if delivered:
        assert_delivered(r, sid)
    else:
        assert r.status_code == 400 and r.json()["error"]["type"] == "guardrail_blocked", r.text
    # streamed: an annotation.added event before the text is done
    events = responses_stream(GOOD)
    added = {"type": "response.output_text.annotation.added", "item_id": "msg_1", "output_index": 0,
             "content_index": 0, "annotation_index": 0, "annotation": annotation}
    events.insert(len(events) - 3, added)
    sid = script([b"event: " + e["type"].encode() + b"\ndata: " + json.dumps(e).encode() + b"\n\n" for e in events],
                 ctype="text/event-stream")
    r = post(gw[0], sid, path="/v1/responses", stream=True)
    if delivered:
        assert_delivered(r, sid)
    else:
        assert_blocked(r)


# --------------------------------------------------------------------------- a prompt that ends inside a sentence
GIFT = ["Gift cards and final-sale items cannot be returned. Other items can be returned within 30 days with a receipt."]
PROMPT = "Answer from the policy.\nQ: Can I return a gift card?\nA: Gift cards"


def _completions(text: str) -> dict[str, Any]:
    return {"id": "c", "object": "text_completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}]}


@pytest.mark.parametrize("prompt", [
    PROMPT,
    # round 38: what looked like a sentence's end and is not one, as the guard's splitter reads the whole text: an
    # abbreviation, a full stop inside brackets, a soft line break (a Markdown client joins the lines)
    PROMPT + " bought in the U.S.", PROMPT + " (see the policy.)", PROMPT + "\n"])
@pytest.mark.parametrize(("rest", "delivered"), [(" cannot be returned.", True), (" can be returned.", False)])
def test_an_echoed_prompt_that_ends_inside_a_sentence(gw: tuple[str, Telemetry], prompt: str, rest: str,
                                                      delivered: bool) -> None:
    """``echo: true`` with a prompt that stops mid-sentence ("A: Gift cards"): the client reads the sentence the
    completion finishes ("Gift cards can be returned."), so it is judged whole, not " can be returned." alone."""
    if prompt.endswith("\n"):
        rest = rest.lstrip()
    body = {"model": "m", "prompt": prompt, "echo": True, "contexts": GIFT}
    sid = script(dumps(_completions(prompt + rest)))
    r = post(gw[0], sid, path="/v1/completions", **{**body, "messages": None})
    pieces = [{"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": p, "finish_reason": None}]}
              for p in [prompt[:20], prompt[20:], *[" " * (i > 0 or rest[0] == " ") + w
                                                    for i, w in enumerate(rest.split())]]]
    sid_stream = script(sse(*pieces, {"id": "c", "object": "text_completion",
                                      "choices": [{"index": 0, "text": "", "finish_reason": "stop"}]}),
                        ctype="text/event-stream")
    rs = post(gw[0], sid_stream, path="/v1/completions", stream=True, **{**body, "messages": None})
    if delivered:
        assert_delivered(r, sid)
        assert_delivered(rs, sid_stream)
    else:
        assert r.status_code == 400, r.text
        events = [json.loads(e[6:]) for e in rs.text.split("\n\n") if e.startswith("data: {")]
        shown = "".join(c.get("text") or "" for e in events for c in e.get("choices", []))
        assert "can be returned" not in shown and shown.startswith("Answer from the policy.\n"), shown


INSTRUCTION = "Write a short reply to a customer who asks whether the gift card she bought for her niece can be returned"


@pytest.mark.parametrize("rest", ["\n\nGift cards cannot be returned.", "\n\nGift cards can be returned."])
def test_an_echoed_instruction_without_a_full_stop(gw: tuple[str, Telemetry], rest: str) -> None:
    """An echoed prompt that ends with an unpunctuated instruction, answered after a paragraph break: the instruction
    is the caller's text, not part of the answer (it was judged with it, and blocked the faithful reply)."""
    body = {"model": "m", "prompt": INSTRUCTION, "echo": True, "contexts": GIFT, "messages": None}
    sid = script(dumps(_completions(INSTRUCTION + rest)))
    r = post(gw[0], sid, path="/v1/completions", **body)
    pieces = [{"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": p, "finish_reason": None}]}
              for p in [INSTRUCTION[:30], INSTRUCTION[30:], "\n\n", *[w + " " for w in rest.split()]]]
    sid_stream = script(sse(*pieces, {"id": "c", "object": "text_completion",
                                      "choices": [{"index": 0, "text": "", "finish_reason": "stop"}]}),
                        ctype="text/event-stream")
    rs = post(gw[0], sid_stream, path="/v1/completions", stream=True, **body)
    if "cannot" in rest:
        assert_delivered(r, sid)
        assert_delivered(rs, sid_stream)
    else:
        assert r.status_code == 400, r.text
        reason = r.json()["error"]["message"]
        # the answer's own first sentence (after its paragraph break), not the caller's instruction
        assert "sentence 1 (characters 2-29 of the answer)" in reason, reason
        assert_blocked(rs)


# --------------------------------------------------------------------------- a refusal that quoted what it refused
HALLUCINATED = GOOD + " Shipping to Mars is free within 90 days."


def test_a_refusal_names_the_failing_sentence_without_its_words(gw: tuple[str, Telemetry]) -> None:
    """The 400 body's ``message`` and ``reasons`` and a stopped stream's last event quoted the blocked sentence
    ('sentence 2 "Shipping to Mars is free ..." is not supported ...'): a client that shows the error showed the
    hallucination. They now name it by number and place; the words stay in ``Verdict.reasons`` (logs, Python API)."""
    r = post(gw[0], script(dumps(chat(HALLUCINATED))))
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert MARK not in r.text and "90 days" not in r.text, r.text
    assert error["reasons"] and error["reasons"][0].startswith(f"sentence 2 (characters {len(GOOD) + 1}-"), error
    events = [chunk({"role": "assistant", "content": ""}), *[chunk({"content": w + " "}) for w in HALLUCINATED.split()],
              chunk({}, finish="stop")]
    r = post(gw[0], script(sse(*events), ctype="text/event-stream"), stream=True)
    assert_blocked(r)
    assert MARK not in r.text and "90 days" not in r.text, r.text
    assert "sentence 2 (characters" in r.text


def test_the_python_verdict_keeps_the_words(evaluator: Any) -> None:
    from guardrail.guard import Guard
    from guardrail.policy import Policy

    verdict = Guard(evaluator, Policy(action="block")).check("How do returns work?", CTX, HALLUCINATED)
    assert verdict.blocked and any(MARK in r for r in verdict.reasons), verdict.reasons
    assert verdict.shown_reasons and not any(MARK in r or "90 days" in r for r in verdict.shown_reasons)
    passed = Guard(evaluator, Policy(action="block")).check("How do returns work?", CTX, GOOD)
    assert passed.shown_reasons == passed.reasons == ()


# --------------------------------------------------------------------------- round 38: the same classes, attacked again
@pytest.mark.parametrize("title", ["Gift card refunds within 90 days", "Return gift cards within 90 days",
                                   "Gift card refunds within 90 days.pdf", "Chapter 3 | Refunds for 90 days"])
def test_a_claim_in_a_title_is_no_name(gw: tuple[str, Telemetry], title: str) -> None:
    """A figure in a name is a year or a version ("2024", "v2", "3.12"), not "90"; a bound ("within") states a term."""
    assert not source_name(title)
    r = post(gw[0], script(dumps(chat(GOOD, annotations=[_url_citation(title)]))))
    assert r.status_code == 400 and "names no source" in r.json()["error"]["message"], r.text


def test_a_replaced_answer_carries_no_words_of_it(evaluator: Any) -> None:
    """Fallback mode with the middleware's ``json_field``: the verdict in the body named the replaced sentence by its
    words ("Gift cards can be returned within 90 days."): it now carries the shown reasons."""
    import asyncio

    import httpx

    from guardrail.asgi import GuardrailMiddleware
    from guardrail.guard import Guard
    from guardrail.policy import Policy

    def upstream_app(body: dict[str, Any]) -> Any:
        async def app(scope: Any, receive: Any, send: Any) -> None:
            while (await receive()).get("more_body"):
                pass
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": dumps(body)})
        return app

    async def ask(body: dict[str, Any]) -> httpx.Response:
        guard = Guard(evaluator, Policy(action="fallback"))
        mw = GuardrailMiddleware(upstream_app(body), guard, json_field="guardrail")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=mw), base_url="http://app") as client:
            return await client.post("/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": "How do returns work?"}], "contexts": CTX})

    for body in (chat(HALLUCINATED), chat(GOOD, HALLUCINATED)):
        r = asyncio.run(ask(body))
        assert r.status_code == 200 and r.json()["guardrail"]["action"] == "fallback", r.text
        assert MARK not in r.text and "90 days" not in r.text, r.text
    r = asyncio.run(ask(chat(GOOD)))
    assert r.json()["choices"][0]["message"]["content"] == GOOD
