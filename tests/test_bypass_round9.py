"""Block mode, classes found by the attackers' probes of round 9 (real gateway, real model, scripted upstream; the
OpenAI wrapper against a local server). Each hallucination is blocked and its faithful twin delivered byte for byte:

- a pronoun is read as what it points at: a title or a short question just before it, the subject of the claim
  before it, else what the user's question names ("Yes, they can be returned within 30 days." under "Can gift cards
  be returned?" claims that gift cards can);
- a "that"-frame that denies its claim ("It is not true that X") claims the opposite of X, never a yes/no echo;
- "It is not covered." answers a coverage question: only "... in the documents" is an honest refusal;
- an answer of bare pronouns and quantifiers ("Any of them.", "We.") is judged as the answer it is;
- a reply to a question the answer asks itself ("Gift cards? Yes.", "Can gift cards be returned? No.") claims that
  question's statement; "Same here." is a pronoun ellipsis; "Except within 30 days." after a negative claim holds its
  opposite there;
- a stream whose choices are not the ones the request asked for (an index beyond ``n``, one index twice in an event)
  is unreadable: a client that reads ``choices[0]`` of every event would show them as one answer;
- an answer under an error status that the guard's strict reader refuses but a lenient one reads (duplicate keys, a
  stray byte, an event stream behind a line of its own) is unreadable; an uncompressed answer has the decoded bound;
- the OpenAI wrapper's fallback replaces the whole choice (no trace, annotation, log-probabilities or unknown field
  of the replaced answer survives), and the verdict is not serialised with the completion.

The gateway, upstream and helpers are ``tests/test_bypass.py``'s."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from test_bypass import (  # noqa: F401 - fixtures
    Q,
    assert_blocked,
    assert_delivered,
    chat,
    chunk,
    dumps,
    evaluator,
    gw,
    script,
    sse,
    upstream,
)
from test_bypass_round5 import CTX, DOCTORS, PLANS, send
from test_bypass_round6 import assert_blocked_both, assert_delivered_both

from guardrail import wire
from guardrail.checks.claims import framed_claim, negate, question_referents, resolve_pronouns
from guardrail.checks.evaluator import Evaluator
from guardrail.errors import UnreadableError
from guardrail.guard import Guard
from guardrail.openai import guard_openai
from guardrail.policy import Policy
from guardrail.telemetry import Telemetry
from guardrail.text import is_answer_fragment, is_refusal

WARRANTY = ["The warranty covers water damage for one year."]
LOYALTY = ["Everyone can join the loyalty program for free. Members get 10% off every order."]
RETURNS = "What is the return policy?"
P30 = "Items can be returned within 30 days of delivery."


# --------------------------------------------------------------------------- pronouns
@pytest.mark.parametrize(("contexts", "question", "answer"), [
    (CTX, "Can gift cards be returned?", "Yes, they can be returned within 30 days."),
    (CTX, "Can gift cards be returned?", "They can be returned within 30 days of delivery."),
    (CTX, "Can gift cards be returned?", "No doubt they can be returned."),
    (CTX, "Tell me about gift cards.", "They can be returned within 30 days of delivery."),
    (CTX, RETURNS, "### Gift cards\n\nThey can be returned within 30 days."),
    (CTX, RETURNS, f"{P30} Gift cards? They can be returned within 30 days."),
    (PLANS, "Does the Basic plan include priority support?", "Yes, it includes priority support."),
    (DOCTORS, "Does Dr. Jones work on Mondays?", "Yes, he works on Mondays."),
])
def test_a_pronoun_is_read_as_what_it_points_at(gw: tuple[str, Telemetry], contexts: list[str], question: str,
                                                answer: str) -> None:
    """Alone, "They can be returned within 30 days." is entailed by any context about anything returnable within 30
    days: what it claims is said of what the pronoun points at."""
    assert_blocked_both(gw[0], answer, contexts, question)


@pytest.mark.parametrize(("contexts", "question", "answer"), [
    (CTX, "Can gift cards be returned?", "No, they cannot be returned."),
    (CTX, "Tell me about gift cards.", "They cannot be returned."),
    (CTX, RETURNS, "### Gift cards\n\nThey cannot be returned."),
    (CTX, RETURNS, f"{P30} Gift cards? They cannot be returned."),
    (PLANS, "Does the Basic plan include priority support?", "No, it does not include priority support."),
    (DOCTORS, "Does Dr. Jones work on Mondays?", "No, he does not work on Mondays."),
    (CTX, "Can I return a gift card?", "No, you cannot return it."),
    (CTX, Q, f"{P30} It is possible to get a refund to the original payment method."),
])
def test_a_faithful_pronoun_is_delivered(gw: tuple[str, Telemetry], contexts: list[str], question: str,
                                         answer: str) -> None:
    assert_delivered_both(gw[0], answer, contexts, question)


def test_pronoun_resolution_rules() -> None:
    assert question_referents("How much does the Basic plan cost?") == ["the Basic plan"]
    assert question_referents("Can I return a gift card?") == ["a gift card"]
    assert question_referents("What is the return policy?") == ["the return policy"]
    assert question_referents("Tell me about gift cards.") == ["gift cards"]
    assert question_referents("Which plan has phone support?") == []  # the answer names the subject
    assert question_referents("Does Dr. Smith work on Mondays?")[0] == "Dr. Smith"
    # agreement: "they" needs a plural, "it" a singular; an expletive "it" points at nothing
    assert resolve_pronouns("They cost $10.", ["the Basic plan", "gift cards"]) == "Gift cards cost $10."
    assert resolve_pronouns("It's free.", ["gift cards", "standard shipping"]) == "Standard shipping is free."
    assert resolve_pronouns("It depends on the order.", ["the plan"]) is None
    assert resolve_pronouns("It is possible to return them.", ["items"]) == "It is possible to return items."
    assert resolve_pronouns("They can be returned.", ["the plan", "gift cards"]) == "Gift cards can be returned."
    assert resolve_pronouns("They can be returned.", ["the plan"]) == "The plan can be returned."  # a singular "they"
    assert resolve_pronouns("It can be returned.", ["gift cards"]) is None  # nothing agrees: read as written...
    assert resolve_pronouns("Yes, it can be returned.", ["gift cards"], loose=True) == "Gift cards can be returned."


# --------------------------------------------------------------------------- frames, refusals, bare answers
@pytest.mark.parametrize("answer", [
    "It is not true that gift cards cannot be returned.",
    "It's not correct that gift cards cannot be returned.",
    "There is no way gift cards cannot be returned.",
])
def test_a_frame_that_denies_a_claim_claims_its_opposite(gw: tuple[str, Telemetry], answer: str) -> None:
    assert_blocked_both(gw[0], answer)


@pytest.mark.parametrize(("question", "answer"), [
    (Q, "It is not true that gift cards can be returned."),
    ("Can gift cards be returned?", "It is not true that they can be returned."),
])
def test_a_faithful_denial_is_delivered(gw: tuple[str, Telemetry], question: str, answer: str) -> None:
    assert_delivered_both(gw[0], answer, CTX, question)


def test_framed_claims() -> None:
    assert framed_claim("It isn't true that items can be returned.") == ("items can be returned.", False)
    assert framed_claim("It is true that items can be returned.") == ("items can be returned.", True)
    assert framed_claim("It is not clear.") is None
    assert negate("Gift cards cannot be returned.") == "Gift cards can be returned."
    assert negate("The plan is not free.") == "The plan is free."
    assert negate("The plan includes support.") is None  # a lexical verb: read as written


@pytest.mark.parametrize("answer", ["It is not covered.", "Sorry, that is not covered.", "This is not covered."])
def test_not_covered_answers_a_coverage_question(gw: tuple[str, Telemetry], answer: str) -> None:
    assert not is_refusal(answer)
    assert_blocked_both(gw[0], answer, WARRANTY, "Does the warranty cover water damage?")


@pytest.mark.parametrize("answer", ["Yes, it covers water damage for one year.",
                                    "Sorry, that is not covered in the documents."])
def test_a_coverage_answer_or_a_refusal_is_delivered(gw: tuple[str, Telemetry], answer: str) -> None:
    assert_delivered_both(gw[0], answer, WARRANTY, "Does the warranty cover water damage?")


@pytest.mark.parametrize(("question", "answer"), [
    ("Which items can be returned?", "Any of them."),
    ("Which payment method are refunds issued to?", "Any."),
])
def test_an_answer_of_bare_pronouns_is_judged(gw: tuple[str, Telemetry], question: str, answer: str) -> None:
    assert is_answer_fragment(answer)
    assert_blocked_both(gw[0], answer, CTX, question)


def test_a_faithful_bare_answer_is_delivered(gw: tuple[str, Telemetry]) -> None:
    assert not is_answer_fragment("Thank you!") and not is_answer_fragment("Hope it helps!")
    assert_delivered_both(gw[0], "Everyone.", LOYALTY, "Who can join the loyalty program?")


# --------------------------------------------------------------------------- replies to the answer's own questions
@pytest.mark.parametrize("answer", [
    f"{P30} Gift cards? Yes.",
    f"{P30} Gift cards? Same here.",
    f"{P30} Gift cards? Yes, within 30 days.",
    f"{P30} Can gift cards be returned? Yes.",
    "Gift cards cannot be returned. Except within 30 days of delivery.",
])
def test_a_reply_to_the_answers_own_question_is_judged(gw: tuple[str, Telemetry], answer: str) -> None:
    assert_blocked_both(gw[0], answer, CTX, RETURNS)


@pytest.mark.parametrize("answer", [
    f"{P30} Gift cards? No.",
    f"{P30} Can gift cards be returned? No.",  # the question claims nothing: its answer is judged
    f"{P30} Except gift cards.",
])
def test_a_faithful_reply_to_the_answers_own_question_is_delivered(gw: tuple[str, Telemetry], answer: str) -> None:
    assert_delivered_both(gw[0], answer, CTX, RETURNS)


# --------------------------------------------------------------------------- choices a request did not ask for
def event(*choices: tuple[int, str], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": i, "delta": {"content": t}, "finish_reason": finish} for i, t in choices]}


SPLIT_STREAMS = {
    "alternating index": [event((0, "")), event((1, "Gift cards ")), event((0, "can be returned within 90 days.")),
                          event((0, ""), finish="stop"), event((1, ""), finish="stop")],
    "reordered choices": [event((1, "Gift cards "), (0, "Items ")),
                          event((0, "can be returned within 90 days."), (1, "cannot be returned.")),
                          event((0, ""), (1, ""), finish="stop")],
    "one index twice": [event((0, "Gift cards can"), (0, "not")), event((0, " be returned within 90 days.")),
                        event((0, ""), finish="stop")],
}


@pytest.mark.parametrize("case", list(SPLIT_STREAMS))
def test_a_stream_split_over_choices_the_request_did_not_ask_for_is_unreadable(gw: tuple[str, Telemetry],
                                                                              case: str) -> None:
    """For an n=1 request, a loop over ``choices[0]`` of each event (the openai SDK's documented one) shows every
    index as one answer: text the guard read as two answers, or never as this one."""
    url, _ = gw
    r = send(url, script(sse(*SPLIT_STREAMS[case])), CTX, Q, stream=True)
    assert_blocked(r)
    shown = ""
    for line in r.text.splitlines():
        if line.startswith("data: {"):
            payload = json.loads(line[6:])
            if payload.get("choices"):
                shown += payload["choices"][0].get("delta", {}).get("content") or ""
    assert "90 days" not in shown and "Gift cards can be" not in shown


def test_choices_a_request_asked_for_are_delivered(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    sid = script(sse(event((0, "")), event((1, "")), event((0, P30)), event((1, P30)),
                     event((0, ""), finish="stop"), event((1, ""), finish="stop")))
    assert_delivered(send(url, sid, CTX, Q, stream=True, n=2), sid)
    with pytest.raises(UnreadableError, match="repeats choice 0"):
        wire.read_deltas(event((0, "a"), (0, "b")))
    reader = wire.DeltaReader(choices=1)
    with pytest.raises(UnreadableError, match="choice 1"):
        reader.read(event((1, "Gift cards ")))


# --------------------------------------------------------------------------- answers under an error status
BAD_JSON = "Gift cards can be returned within 90 days."


@pytest.mark.parametrize("case", ["duplicate key", "stray byte", "events behind a line"])
def test_an_error_body_that_a_lenient_reader_takes_for_an_answer_is_not_delivered(gw: tuple[str, Telemetry],
                                                                                  case: str) -> None:
    url, _ = gw
    good = dumps(chat(P30))[:-1]
    if case == "duplicate key":  # JavaScript's JSON.parse keeps the last "choices"
        body = good + b', "choices": ' + json.dumps(chat(BAD_JSON)["choices"]).encode() + b"}"
        sid = script(body, status=400)
    elif case == "stray byte":  # Python's json after decode(errors="replace") reads it
        body = dumps(chat(BAD_JSON)).replace(b'"c1"', b'"c\xff1"')
        sid = script(body, status=500)
    else:  # a field line no reader knows, then events: WHATWG readers skip the line
        body = b"x-note: 1\n" + b"".join(sse(chunk({"content": BAD_JSON}), chunk({}, finish="stop")))
        sid = script(body, status=500, ctype="text/event-stream")
    r = send(url, sid, CTX, Q)
    assert r.status_code >= 400 and "90 days" not in r.text, r.text


@pytest.mark.parametrize(("status", "body", "ctype"), [
    (500, b"upstream exploded", "text/plain"),
    (502, b"<html><body>Bad gateway</body></html>", "text/html"),
    (400, dumps({"error": {"message": "model not found", "type": "invalid_request_error"}}), "application/json"),
])
def test_an_upstream_error_reaches_the_caller_as_sent(gw: tuple[str, Telemetry], status: int, body: bytes,
                                                     ctype: str) -> None:
    url, _ = gw
    r = send(url, script(body, status=status, ctype=ctype), CTX, Q)
    assert r.status_code == status and r.content == body


def test_an_uncompressed_answer_has_the_decoded_bound() -> None:
    dec = wire.Decoder(None, limit=10)
    assert dec.decode(b"12345") == b"12345"
    with pytest.raises(UnreadableError, match="over 10 bytes"):
        dec.decode(b"678901")


# --------------------------------------------------------------------------- the OpenAI wrapper's fallback
HALLUCINATION = "Gift cards can be returned within 90 days of delivery."


@pytest.fixture(scope="module")
def fields_server() -> Iterator[str]:
    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        message = {"role": "assistant", "content": body.get("answer", HALLUCINATION), **body.get("message", {})}
        return JSONResponse({"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": [
            {"index": 0, "message": message, "finish_reason": "stop", **body.get("choice", {})}]})

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(Starlette(routes=[Route("/v1/chat/completions", completions,
                                                                    methods=["POST"])]),
                                           host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}/v1"
    server.should_exit = True
    thread.join(10)


@pytest.mark.parametrize("extra", [
    {"message": {"reasoning_content": HALLUCINATION}},
    {"message": {"thinking": HALLUCINATION}},
    {"message": {"annotations": [{"type": "url_citation", "url_citation": {
        "title": HALLUCINATION, "url": "https://x.example", "start_index": 0, "end_index": 1}}]}},
    {"choice": {"logprobs": {"content": [{"token": w, "logprob": 0.0, "bytes": None, "top_logprobs": []}
                                         for w in HALLUCINATION.split()]}}},
])
def test_a_fallback_replaces_the_whole_choice(fields_server: str, evaluator: Evaluator, extra: dict[str, Any]) -> None:
    guard = Guard(evaluator, Policy(action="fallback", retrieval_relevance=None, fallback_message="Sorry."))
    client = guard_openai(openai.OpenAI(base_url=fields_server, api_key="k", max_retries=0), guard)
    completion = client.chat.completions.create(model="m", messages=[{"role": "user", "content": Q}], contexts=CTX,
                                                extra_body=extra)
    assert completion.guardrail.action == "fallback"
    assert completion.choices[0].message.content == "Sorry."
    dumped = completion.model_dump_json()
    assert "90 days" not in dumped and "guardrail" not in dumped  # the verdict quotes the answer: not serialised
    faithful = client.chat.completions.create(model="m", messages=[{"role": "user", "content": Q}], contexts=CTX,
                                              extra_body={"answer": P30, "choice": {"logprobs": None}})
    assert faithful.guardrail.action == "pass" and faithful.choices[0].message.content == P30
    assert httpx.get(fields_server.replace("/v1", "/nothing")).status_code == 404  # the server is the local one


def test_a_pronoun_after_an_ellipsis_that_is_not_rebuilt(evaluator: Evaluator) -> None:
    """"Same." after a claim, under a question that is no yes/no question, is read as written; the pronoun after it
    still points at the claim before it (a dev-set row once crashed here)."""
    check = evaluator.faithfulness_check
    assert check is not None
    result = check.run(RETURNS, CTX, f"{P30} Same. They must be unused.")
    assert result.sentences[-1].hypothesis == "Items must be unused."
