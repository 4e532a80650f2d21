"""Block mode, classes found by an attacker's probe of round 3 (real gateway, real model, scripted upstream): each
case is blocked, and its faithful twin is delivered byte for byte. The gateway, upstream and helpers are
``tests/test_bypass.py``'s."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from test_bypass import (  # noqa: F401 - fixtures
    BAD,
    SCRIPTS,
    CTX,
    GOOD,
    GOOD2,
    assert_blocked,
    assert_delivered,
    chat,
    chunk,
    dumps,
    evaluator,
    gw,
    post,
    script,
    sse,
    tool_call,
    upstream,
    words_stream,
)

from guardrail.telemetry import Telemetry

LONG_INT = "1" + "0" * 5000  # past Python's 4,300-digit limit for int(str)


# --------------------------------------------------------------------------- structured claims in tool calls
@pytest.mark.parametrize("bad, good", [
    ({BAD: True}, {GOOD2: True}),  # a claim written as a key
    ({"return_window_days": 90, "gift_cards_returnable": True}, {"return_window_days": 30}),  # as numbers
])
def test_tool_call_keys_and_numbers_are_read(gw: tuple[str, Telemetry], bad: dict[str, Any],
                                             good: dict[str, Any]) -> None:
    url, _ = gw
    assert_blocked(post(url, script(dumps(tool_call(json.dumps(bad))))))
    streamed = [chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "t1", "type": "function",
                                                             "function": {"name": "answer", "arguments": ""}}]})]
    raw = json.dumps(bad)
    streamed += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": raw[i:i + 7]}}]})
                 for i in range(0, len(raw), 7)]
    assert_blocked(post(url, script(sse(*streamed, chunk({}, finish="tool_calls")), ctype="text/event-stream"),
                        stream=True))
    twin = script(dumps(tool_call(json.dumps(good))))
    assert_delivered(post(url, twin), twin)


# --------------------------------------------------------------------------- a claim glued onto a faithful one
@pytest.mark.parametrize("glue", ["! items", "? items", ". 😀 Items", ". `~~`Items", ". $0 fee: items"])
def test_a_second_sentence_is_a_sentence_whatever_it_starts_with(gw: tuple[str, Telemetry], glue: str) -> None:
    """The splitter once cut only before a capital letter or a digit: a hallucination starting with a lower-case
    letter, an emoji, a code span or a currency sign was scored together with the faithful sentence before it, and
    the pair's averaged score passed."""
    url, _ = gw
    bad = GOOD2[:-1] + glue + " can be returned within 90 days of delivery, and shipping to Mars is free."
    assert_blocked(post(url, script(dumps(chat(bad)))))
    assert_blocked(post(url, script(sse(*words_stream(bad)), ctype="text/event-stream"), stream=True))
    twin = script(dumps(chat(GOOD2[:-1] + "! items can be returned within 30 days of delivery.")))
    assert_delivered(post(url, twin), twin)


# --------------------------------------------------------------------------- numbers Python will not parse
def test_a_number_too_long_to_parse_is_unreadable_not_a_crash(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    body = dumps(chat(GOOD))[:-1] + b', "created2": ' + LONG_INT.encode() + b"}"
    assert_blocked(post(url, script(body)))  # an upstream answer: blocked as unreadable, never a 500
    event = json.dumps(chunk({"content": "x"})).encode()[:-1] + b', "x": ' + LONG_INT.encode() + b"}"
    r = post(url, script(sse(*words_stream(GOOD)[:2], event), ctype="text/event-stream"), stream=True)
    assert_blocked(r)  # a stream: ends with content_filter and [DONE], not a dropped connection
    raw = b'{"model": "m", "n": ' + LONG_INT.encode() + b', "messages": [{"role": "user", "content": "hi"}]}'
    r = httpx.post(url + "/v1/chat/completions", content=raw, headers={"content-type": "application/json"}, timeout=30)
    assert r.status_code == 400 and "too long" in r.json()["error"]["message"]


# --------------------------------------------------------------------------- answers that say yes without a claim
def test_filler_only_answers_to_a_yes_no_question_are_judged(gw: tuple[str, Telemetry]) -> None:
    """"Of course!" to "Can I return a gift card?" says yes: it is judged as that answer, however many filler
    sentences it has. Filler beside a faithful answer, or after a question that is not yes/no, passes."""
    url, _ = gw
    q = "Can I return a gift card?"
    for answer in ("Great question! Absolutely!", "Hi! Of course!", "Sure! Sure thing."):
        assert_blocked(post(url, script(dumps(chat(answer))), question=q))
    twin = script(dumps(chat("Great question! No, gift cards cannot be returned.")))
    assert_delivered(post(url, twin, question=q), twin)
    twin = script(dumps(chat("Great question! " + GOOD + " Hope this helps!")))
    assert_delivered(post(url, twin), twin)


def test_filler_and_yes_no_words_read_the_same_in_streams(gw: tuple[str, Telemetry]) -> None:
    """A stream sees "Sure!" before it knows what follows: a bare yes/no word waits for the next sentence (a claim
    makes it a pleasantry) or the end (then it is the answer), so streams decide as whole answers do."""
    url, _ = gw
    q = "Can I return a gift card?"
    for answer in ("Great question! Absolutely!", "Of course! Happy to help!"):
        assert_blocked(post(url, script(sse(*words_stream(answer)), ctype="text/event-stream"), question=q, stream=True))
    twin = script(sse(*words_stream("Sure! Gift cards cannot be returned.")), ctype="text/event-stream")
    assert_delivered(post(url, twin, question=q, stream=True), twin)


# --------------------------------------------------------------------------- an answer that makes no claim
REFUSAL = "I could not find that in the documents."


def test_an_honest_refusal_passes_even_when_the_passages_are_off_topic(gw: tuple[str, Telemetry]) -> None:
    """Retrieval relevance gates answers that make claims: a refusal takes nothing from the (irrelevant) passages.
    A refusal followed by a claim has that claim judged, and the off-topic passages block it."""
    url, _ = gw
    q = "What is the warranty on tents?"  # the passages are about returns: retrieval relevance fails
    for sid in (script(dumps(chat(REFUSAL))), script(sse(*words_stream(REFUSAL)), ctype="text/event-stream")):
        r = post(url, sid, question=q, stream=dict(SCRIPTS[sid]["headers"])[b"content-type"] == b"text/event-stream")
        assert_delivered(r, sid)
    bad = REFUSAL + " Tents carry a two-year warranty on Mars."
    assert_blocked(post(url, script(dumps(chat(bad))), question=q))
    assert_blocked(post(url, script(sse(*words_stream(bad)), ctype="text/event-stream"), question=q, stream=True))


# --------------------------------------------------------------------------- statuses a client may read as success
@pytest.mark.parametrize("status", [205, 226])
def test_every_2xx_is_read(gw: tuple[str, Telemetry], status: int) -> None:
    url, _ = gw
    assert_blocked(post(url, script(dumps(chat(BAD)), status=status)))
    assert_blocked(post(url, script(sse(*words_stream(BAD)), status=status, ctype="text/event-stream"), stream=True))
    twin = script(dumps(chat(GOOD2)), status=status)
    r = post(url, twin)
    assert r.status_code == status
    assert_delivered(r, twin)


@pytest.mark.parametrize("status", [300, 302, 307, 399])
def test_a_redirect_goes_out_without_its_body(gw: tuple[str, Telemetry], status: int) -> None:
    """A 3xx is followed, not read; some clients read its body anyway (requests: ``r.ok`` is True): it is dropped."""
    url, _ = gw
    r = httpx.post(url + "/v1/chat/completions", timeout=30, json={
        "model": "m", "messages": [{"role": "user", "content": "How do returns work?"}], "contexts": CTX,
        "script": script(dumps(chat(BAD)), status=status, headers=[(b"location", b"/elsewhere")])})
    assert r.status_code == status and r.content == b""  # (the gateway forwards its own header list only)


# --------------------------------------------------------------------------- the upstream may not set the CPU cost
def test_more_choices_than_any_request_may_ask_for_are_unreadable(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    assert_blocked(post(url, script(dumps(chat(*[GOOD2] * 9)))))  # 9 > MAX_CHOICES: refused before any check
    long = " ".join([GOOD2] * 700)  # ~52k characters a choice: each fits the limit, together they do not
    assert_blocked(post(url, script(dumps(chat(long, long)))))
    stray = [chunk({"content": GOOD2}, index=8), chunk({}, index=8, finish="stop")]
    assert_blocked(post(url, script(sse(*stray), ctype="text/event-stream"), stream=True))
    twin = script(dumps(chat(*[GOOD2] * 8)))
    assert_delivered(post(url, twin, n=8), twin)


# --------------------------------------------------------------------------- text in error events and token lists
def test_error_messages_inside_a_stream_are_withheld(gw: tuple[str, Telemetry]) -> None:
    """An SDK raises with the message of an error event, and UIs show it: inside a guarded stream it is withheld
    (logged for the operator); the error's type and code still reach the caller."""
    url, _ = gw
    events = words_stream(GOOD2)
    events.insert(3, {"error": {"message": BAD, "type": "server_error", "code": "boom"}})
    r = post(url, script(sse(*events), ctype="text/event-stream"), stream=True)
    assert r.status_code == 200 and "Mars" not in r.text and "90 days" not in r.text
    assert '"type":"server_error"' in r.text and "withheld" in r.text
    responses = [{"type": "response.output_text.delta", "delta": "Refunds "}, {"type": "error", "message": BAD,
                                                                                "code": "boom"}]
    r = post(url, script(sse(*responses, done=False), ctype="text/event-stream"), "/v1/responses", stream=True)
    assert "Mars" not in r.text


def _logprobs(text: str) -> dict[str, Any]:
    return {"content": [{"token": w, "logprob": -0.1, "bytes": None, "top_logprobs": []}
                        for w in text.replace(" ", " \x00").split("\x00")]}


def test_logprobs_tokens_must_spell_the_answer(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    body = chat(GOOD2)
    body["choices"][0]["logprobs"] = _logprobs(BAD)  # one-word tokens that spell another answer
    assert_blocked(post(url, script(dumps(body))))
    ev = chunk({"content": GOOD2}, logprobs=_logprobs(BAD))
    assert_blocked(post(url, script(sse(ev, chunk({}, finish="stop")), ctype="text/event-stream"), stream=True))
    twin = chat(GOOD2)
    twin["choices"][0]["logprobs"] = _logprobs(GOOD2)
    sid = script(dumps(twin))
    assert_delivered(post(url, sid), sid)
    emoji = chat("Refunds are issued within 5 business days 😀")  # a character split across tokens
    emoji["choices"][0]["logprobs"] = {"content": [{"token": t, "logprob": 0.0} for t in
                                                   ["Refunds", " are", " issued", " within", " 5", " business",
                                                    " days", " \ufffd", "\ufffd"]]}
    sid = script(dumps(emoji))
    r = post(url, sid)
    assert r.status_code < 500 and "logprobs" not in r.text  # read, not refused as unreadable


def test_a_request_body_that_trickles_in_is_refused_in_time(upstream: str, evaluator: Any) -> None:
    """A client that sends its body a byte at a time would hold a connection as long as it likes: 408 at the limit."""
    import socket
    import time

    import llm_server
    from prometheus_client import CollectorRegistry

    from guardrail.guard import Guard
    from guardrail.policy import Policy
    from guardrail.server import RequestLimits, create_gateway
    from guardrail.telemetry import Telemetry as T

    telemetry = T(CollectorRegistry(), route="gateway", model="upstream")
    app = create_gateway(upstream, Guard(evaluator, Policy(action="block")), telemetry,
                         limits=RequestLimits(body_timeout_s=1.0))
    with llm_server.serve(app, lifespan="on") as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                         b"content-length: 1000\r\n\r\n{\"model\"")
            t0 = time.perf_counter()
            answer = sock.recv(4096)
            assert time.perf_counter() - t0 < 5
        assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 1 s" in answer


# --------------------------------------------------------------------------- tool calls: parameters are no claims
ORDINARY_CALLS = [
    ("get_weather", {"city": "Paris", "days": 3}),
    ("search", {"query": "refund", "limit": 10, "page": 2}),
    ("search_orders", {"order_id": "A-1234", "include_closed": False, "max_results": 5, "top_k": 3}),
    ("lookup", {"filters": {"page_size": 20, "sort": "desc", "tags": ["returns", "gifts"]}, "verbose": True}),
]


def _call(name: str, args: str) -> dict[str, Any]:
    return chat(None, tool_calls=[{"id": "t1", "type": "function", "function": {"name": name, "arguments": args}}])


def _streamed_call(name: str, args: str) -> list[bytes]:
    events = [chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "t1", "type": "function",
                                                           "function": {"name": name, "arguments": ""}}]})]
    events += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": args[i:i + 5]}}]})
               for i in range(0, len(args), 5)]
    return sse(*events, chunk({}, finish="tool_calls"))


@pytest.mark.parametrize("name, args", ORDINARY_CALLS, ids=[c[0] for c in ORDINARY_CALLS])
def test_ordinary_tool_calls_with_control_parameters_pass(gw: tuple[str, Telemetry], name: str,
                                                          args: dict[str, Any]) -> None:
    """A tool call's numbers, flags, identifiers and names under parameter keys steer the call and claim nothing:
    once "The days is 3." was judged against the passages and blocked an ordinary call."""
    url, _ = gw
    sid = script(dumps(_call(name, json.dumps(args))))
    assert_delivered(post(url, sid), sid)
    sid = script(_streamed_call(name, json.dumps(args)), ctype="text/event-stream")
    assert_delivered(post(url, sid, stream=True), sid)


@pytest.mark.parametrize("args", [
    {"city": "Paris", "days": 3, "note": BAD},  # a sentence under a parameter key is prose: judged
    {"query": BAD, "limit": 10, "page": 2},
    {"days": 3, "answer": {"days": 90, "gift_cards": True}},  # under the answer itself every value is judged
    {"limit": 10, "return_window_days": 90},  # a number under a key that names a fact
    {"page": 1, "gift_cards_returnable": "yes", "shipping_to_mars_free": True},
])
def test_a_hallucination_beside_control_parameters_is_still_blocked(gw: tuple[str, Telemetry],
                                                                   args: dict[str, Any]) -> None:
    url, _ = gw
    raw = json.dumps(args)
    assert_blocked(post(url, script(dumps(_call("search", raw)))))
    assert_blocked(post(url, script(_streamed_call("search", raw), ctype="text/event-stream"), stream=True))


TRUNCATED_ARGUMENTS = [  # a model cut off at max_tokens: the JSON never closes, what it holds is still read
    '{"Gift cards can be returned within 90 days and shipping to Mars is free',
    '{"note": "Gift-cards-returnable-within-90-days-shipping-to-Mars-free',
    '{"return_window_days": 90',
]


@pytest.mark.parametrize("raw", TRUNCATED_ARGUMENTS)
def test_tool_call_arguments_cut_off_mid_document_are_read(gw: tuple[str, Telemetry], raw: str) -> None:
    url, _ = gw
    assert_blocked(post(url, script(dumps(_call("search", raw)))))
    assert_blocked(post(url, script(_streamed_call("search", raw), ctype="text/event-stream"), stream=True))


@pytest.mark.parametrize("pieces", [
    ['{"Gift cards can be returned within 90 days and shipping to Mars is free', '": true}'],
    ['{"note": "Gift-cards-returnable-within-90-days-shipping-to-Mars-free', ' and more."}'],
])
def test_a_streamed_argument_piece_waits_while_its_text_is_held(gw: tuple[str, Telemetry], pieces: list[str]) -> None:
    """A piece that ends inside a key or a one-word value adds no text yet (it is read with the next piece): it must
    not reach the client before that text is checked (it went out at once, the hallucination whole in it)."""
    url, _ = gw
    events = [chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "t1", "type": "function",
                                                           "function": {"name": "search", "arguments": ""}}]})]
    events += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces]
    r = post(url, script(sse(*events, chunk({}, finish="tool_calls")), ctype="text/event-stream"), stream=True)
    assert r.status_code == 200 and "content_filter" in r.text
    delivered = [e for e in r.text.split("\n\n") if '"tool_calls"' in e]
    assert delivered and not any("Mars" in e for e in delivered)  # the role chunk only; the reason names the claim


def test_a_faithful_streamed_tool_call_is_delivered_whole(gw: tuple[str, Telemetry]) -> None:
    """The twin: pieces held while a key or parameter is read go out, unchanged, once the answer passed."""
    url, _ = gw
    raw = json.dumps({"answer": "Gift cards cannot be returned.", "city": "Paris", "days": 3})
    stream = script(_streamed_call("search", raw), ctype="text/event-stream")
    assert_delivered(post(url, stream, stream=True), stream)
