"""Block mode, session 15: a claim that says more than the clause it is about, and a reason no passage gives.

The model reads a claim as entailed when it shares the context clause's words and its polarity, whatever the claim
does to the clause's hedge or tense: "Late fees will be waived ..." from "Late fees may be waived ..." (0.88),
"Customers must provide a receipt ..." from "Customers may provide a receipt or a bank statement ..." (0.86),
"Northwind has opened a second warehouse ..." from "Northwind plans to open a second warehouse ..." (0.88), "The city
council approved the budget on Friday." from "... is expected to approve the budget on Friday." (0.87). The words
settle it (``guardrail.checks.scales.overstated``): the claim clause and the context clause it says most about share
their content words, the context clause hedges (a modal, a frequency, a part: "may", "usually", "most", "as needed")
where the claim holds a word of certainty on the same scale ("will", "must", "guaranteed", "every") that the clause
does not hold, or the clause puts a verb in the future or in a plan ("will cut", "expects the deal to close",
"agreed to buy") that the claim puts in the past ("has cut", "closed", "bought"). A hedge in another clause of the
sentence, a claim that hedges itself, and a past form the contexts hold themselves are read as before.

A reason: "Gift cards cannot be returned because they are sold at a discount." was entailed whole from the gift-card
sentence (the reason rode along). A sentence that gives a reason is two claims (``guardrail.checks.claims.reason_claims``):
what it says, and the reason as a statement of its own (its pronoun read as the main clause's subject).

Real model, whole answer and word-by-word stream, and the gateway; each attack with its faithful twin."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from block_mode import block_guard, both  # noqa: F401 - fixture
from test_bypass_round28 import _twins
from test_bypass import assert_blocked, assert_delivered, chat, chunk, dumps, evaluator, gw, post, script, sse, \
    upstream, words_stream  # noqa: F401

from guardrail.checks.claims import reason_claims
from guardrail.checks.evaluator import Evaluator
from guardrail.checks.premises import ContextIndex
from guardrail.checks.scales import context_clauses, overstated
from guardrail.guard import Guard
from guardrail.telemetry import Telemetry
from guardrail.text import words

FEES = ["Late fees may be waived for first-time customers who call within 10 days. Customers may provide a receipt or "
        "a bank statement as proof of purchase. Items can be returned within 30 days if unused."]
SHIP = ["Orders placed before noon usually ship the same day. Most branches are open on Saturdays, and the main branch "
        "is also open on Sundays."]
NEWS = ["Northwind plans to open a second warehouse in Ohio next spring. The city council is expected to approve the "
        "budget on Friday. Fabrikam agreed to buy Tailspin Toys for $80 million, pending shareholder approval."]
DONE = ["Northwind planned to open a warehouse in Ohio, and it opened the warehouse in May. You may cancel at any time; "
        "refunds are issued within 5 business days."]
GIFT = ["Gift cards are treated as cash and cannot be returned. Store credit never expires."]

OVERSTATED = [
    # (question, contexts, hallucination, its faithful twin)
    ("Will my late fee be waived?", FEES, "Late fees will be waived for first-time customers who call within 10 days.",
     "Late fees may be waived for first-time customers who call within 10 days."),
    ("What proof of purchase do I need?", FEES, "Customers must provide a receipt as proof of purchase.",
     "Customers can provide a receipt or a bank statement as proof of purchase."),
    ("When do orders ship?", SHIP, "Orders placed before noon are guaranteed to ship the same day.",
     "Orders placed before noon usually ship the same day."),
    ("Are branches open on Saturday?", SHIP, "Every branch is open on Saturdays.", "Most branches are open on Saturdays."),
    ("What is Northwind doing in Ohio?", NEWS, "Northwind has opened a second warehouse in Ohio.",
     "Northwind plans to open a second warehouse in Ohio next spring."),
    ("What happened with the budget?", NEWS, "The city council approved the budget on Friday.",
     "The council is expected to approve the budget on Friday."),
    ("What happened to Tailspin Toys?", NEWS, "Fabrikam bought Tailspin Toys for $80 million.",
     "Fabrikam agreed to buy Tailspin Toys for $80 million."),
    ("Can I return a gift card?", GIFT, "Gift cards cannot be returned because they are sold at a discount.",
     "Gift cards cannot be returned because they are treated as cash."),
]

REFUNDS = ["Gift cards are not refundable. The Basic plan does not include priority support. The Pro plan includes "
           "priority support."]
NAMED_ECHO = [
    # a reply that names the question's subject and echoes its auxiliary is that yes or no (round 29: read as
    # written, "Gift cards can." was entailed at 0.80 by a context that says they cannot be returned)
    ("Can gift cards be returned?", GIFT, "Gift cards can.", "Gift cards cannot."),
    ("Can gift cards be returned?", GIFT, "Gift cards can be.", "Gift cards cannot be."),
    ("Are gift cards refundable?", REFUNDS, "Gift cards are.", "Gift cards are not."),
    ("Does the Basic plan include priority support?", REFUNDS, "The Basic plan does.", "The Basic plan doesn't."),
]

WARRANTY = ["The warranty does not cover damage caused by drops or commercial use. Opened software and gift cards "
            "cannot be returned. The Zephyr X2 headphones are water resistant (IPX4) but not waterproof."]
DENIED = [
    # a negation of a word that denies, against a clause that denies (the model read them apart: 0.53-0.64)
    ("Does the warranty cover drops?", WARRANTY, "Drops are not excluded from the warranty.",
     "Damage caused by drops is not covered by the warranty."),
    ("Can I return opened software?", WARRANTY, "Opened software is no longer excluded from returns.",
     "Opened software cannot be returned."),
    # a word the contexts hold only denied ("but not waterproof": the model entailed "waterproof" at 0.75)
    ("Are the Zephyr X2 headphones waterproof?", WARRANTY, "The headphones are waterproof.",
     "The headphones are water resistant but not waterproof."),
    ("Are the Zephyr X2 headphones waterproof?", WARRANTY, "Yes, they are waterproof.", "No, they are not."),
    ("Are the Zephyr X2 headphones waterproof?", WARRANTY,
     "The headphones are not only water resistant but also waterproof.", "They are water resistant (IPX4)."),
]

LEAFLET = ["Common side effects include nausea, which affects up to 1 in 10 people. Employees accrue 1.5 days of paid "
           "vacation per month, up to a maximum of 25 days per year. The company will cut about 600 jobs."]
BOUNDS = [
    # a figure qualified otherwise than the contexts always qualify it (the model reads the figure, not its bound)
    ("How common is nausea?", LEAFLET, "Nausea affects about 1 in 10 people.", "Nausea affects up to 1 in 10 people."),
    ("How much vacation do I get?", LEAFLET, "Employees get at least 25 days of paid vacation per year.",
     "Employees can accrue up to 25 days of paid vacation per year."),
    ("How many jobs will go?", LEAFLET, "The company will cut exactly 600 jobs.",
     "The company will cut roughly 600 jobs."),
]

READ_AS_BEFORE = [
    # a past form the contexts hold themselves, a hedge in another clause, a claim that hedges itself
    ("What did Northwind open?", DONE, "Northwind opened a warehouse in Ohio.", "pass"),
    ("When are refunds issued?", DONE, "Refunds will be issued within 5 business days.", "pass"),
    ("Can I cancel?", DONE, "You can cancel at any time, and refunds are issued within 5 business days.", "pass"),
]


@pytest.mark.parametrize(("question", "contexts", "answer", "want"),
                         _twins(OVERSTATED) + _twins(NAMED_ECHO) + _twins(DENIED) + _twins(BOUNDS) + READ_AS_BEFORE)
def test_the_verdict_whole_and_streamed(block_guard: Guard, question: str, contexts: list[str], answer: str,
                                        want: str) -> None:
    assert both(block_guard, question, contexts, answer) == (want, want), answer


def _read(contexts: list[str], claim: str) -> list[str]:
    index = ContextIndex.build(contexts, lambda ss: [len(s.split()) for s in ss], None, 10**6)  # type: ignore[arg-type]
    seen = frozenset(w for c in contexts for w in words(c))
    return [str(o) for o in overstated(claim, context_clauses(index), index, seen)]


@pytest.mark.parametrize(("contexts", "claim", "want"), [
    (FEES, "Late fees will be waived for first-time customers.", ['"will" where the passage says "may"']),
    (FEES, "Customers are required to provide a receipt.", ['"required" where the passage says "may"']),
    (FEES, "Items must be unused to be returned within 30 days.", []),  # a condition said as a requirement
    (NEWS, "The city council will approve the budget on Friday.", ['"will" where the passage says "expected"']),
    (["Staff should keep receipts for 12 months."], "Staff must keep receipts for 12 months.",
     ['"must" where the passage says "should"']),
    (["You may return most items within 30 days, provided they are unused."], "Items must be unused.", []),
    (SHIP, "All branches are open on Saturdays.", ['"all" where the passage says "most"']),
    (["Take 1 tablet every 6 hours as needed."], "You must take 1 tablet every 6 hours.",
     ['"must" where the passage says "as needed"']),
    (NEWS, "Northwind has opened a second warehouse in Ohio.", ['"opened" where the passage says "plans to open"']),
    (NEWS, "Fabrikam has bought Tailspin Toys for $80 million.", ['"bought" where the passage says "agreed to buy"']),
    (NEWS, "Once Fabrikam bought Tailspin Toys, it paid $80 million.", []),  # a condition, no event told
    (NEWS + ["Fabrikam completed the purchase of Tailspin Toys in May."], "Fabrikam bought Tailspin Toys in May.", []),
    (["Orders ship within 24 hours and may be split into two parcels."], "Orders will ship within 24 hours.", []),
    (["The Team plan is our most popular plan."], "All plans include support.", []),
    (["The plan renews on May 5; you may cancel before then."], "The plan will renew on May 5.", []),
    (["The company said it will cut 600 jobs."], "The company has cut 600 jobs.",
     ['"cut" where the passage says "will cut"']),
    # the clause the claim is about holds no hedge; the claim hedges itself; the contexts hold the past form
    (DONE, "Refunds will be issued within 5 business days.", []),
    (FEES, "Late fees may be waived for first-time customers.", []),
    (DONE, "Northwind opened a warehouse in Ohio.", []),
    # a certainty word the clause holds too, or a synonym of it
    (["Every plan includes most features and all plans renew monthly."], "All plans renew monthly.", []),
    # a claim about nothing the contexts say (the model's to judge)
    (FEES, "The weather will be sunny tomorrow.", []),
])
def test_what_a_claim_says_more_strongly_than_its_clause(contexts: list[str], claim: str, want: list[str]) -> None:
    assert _read(contexts, claim) == want


def test_the_words_the_contexts_hold_only_denied(evaluator: Evaluator) -> None:
    from guardrail.checks.scales import negated_only

    ctx = ["They are water resistant but not waterproof. Gift cards cannot be returned. It is not only fast. Items "
           "can be returned within 30 days. The fee isn't refundable."]
    text = ctx[0].split(". ")
    subjects = [frozenset({"headphon"}), frozenset({"gift", "card"}), frozenset({"it"}), frozenset({"item"}),
                frozenset({"fee"})]
    denied = negated_only(lambda: list(zip(text, subjects)), ctx)
    # "returned" is also said plainly; "only" is no predicate
    assert denied == {"waterproof": (frozenset({"headphon"}),), "refundable": (frozenset({"fee"}),)}
    # a denial of a kind says nothing of the whole ("Personalized items cannot be returned." / "Items must be ...")
    kinds = ["Personalized items cannot be returned. You may return most items within 30 days."]
    f = evaluator.evaluate("Can I return items?", kinds, "Items must be unused to be returned.").faithfulness
    assert f is not None and f.sentences[0].overstated == ()
    f = evaluator.evaluate("Can I return personalized items?", kinds,
                           "Personalized items can be returned within 30 days.").faithfulness
    assert f is not None and f.sentences[0].supported is False


def test_a_number_qualified_otherwise() -> None:
    from guardrail.checks.scales import number_bounds, rebounded

    bounds = number_bounds(["Refunds take up to 10 days. Items can be returned within 30 days. About 600 jobs will "
                            "go. Orders over $50 ship free, and orders of $20 or more get a gift."])
    said = lambda t: [str(o) for o in rebounded(t, bounds)]  # noqa: E731
    assert said("Refunds take about 10 days.") == ['"about 10" where the passage says "up to 10"']
    assert said("Items can be returned after at least 30 days.") == ['"at least 30" where the passage says "within 30"']
    assert said("Exactly 600 jobs will go.") == ['"Exactly 600" where the passage says "About 600"']
    # the same kind of bound in other words, a plain figure, a figure the contexts qualify two ways
    assert said("Refunds take at most 10 days.") == []
    assert said("Refunds take 10 days.") == []
    assert said("Orders of more than $50 ship free.") == []
    assert said("Orders of at least $20 get a gift.") == []
    # a time relative to an event is a window: "up to 24 hours before departure" is what "at least 24 hours before"
    # says, and "within 24 hours of departure" names the window it leaves out
    flights = number_bounds(["Flights can be changed without a fee up to 24 hours before departure."])
    assert rebounded("Change it at least 24 hours before departure.", flights) == []
    assert rebounded("Within 24 hours of departure, flights can no longer be changed without a fee.", flights) == []


def test_a_reason_is_a_claim_of_its_own() -> None:
    assert reason_claims("Gift cards cannot be returned because they are sold at a discount.") == [
        "Gift cards cannot be returned.", "Gift cards are sold at a discount."]
    assert reason_claims("The deal was delayed because regulators opened an inquiry.") == [
        "The deal was delayed.", "Regulators opened an inquiry."]
    assert reason_claims("Refunds are issued because of the fee.") is None  # no clause
    assert reason_claims("You should take it with food because it may upset your stomach.") is None  # "you", "it"


def test_the_evidence_says_what_was_overstated(evaluator: Evaluator) -> None:
    f = evaluator.evaluate(*OVERSTATED[4][:3]).faithfulness
    assert f is not None
    (s,) = f.sentences
    assert s.supported is False and s.overstated == ('"opened" where the passage says "plans to open"',)
    from guardrail.verdict import sentence_reason

    assert 'says more than the passage: "opened" where the passage says "plans to open"' in sentence_reason(s)


@pytest.mark.parametrize("stream", [False, True])
def test_through_the_gateway(gw: tuple[str, Telemetry], stream: bool) -> None:
    question, contexts, attack, twin = OVERSTATED[0]

    def answer(text: str) -> str:
        return script(sse(*words_stream(text)), ctype="text/event-stream") if stream else script(dumps(chat(text)))

    r = post(gw[0], answer(attack), question=question, contexts=contexts)
    assert_blocked(r)
    sid = answer(twin)
    assert_delivered(post(gw[0], sid, question=question, contexts=contexts), sid)


# --------------------------------------------------------------------------- streams the OpenAI SDK reads otherwise
GIFT_Q = "Can I return a gift card?"


def _events(*pieces: bytes) -> str:
    return script(list(pieces), ctype="text/event-stream")


def _data(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _answer(*texts: str, extra: dict[str, Any] | None = None, at: int = 1) -> list[bytes]:
    out = [_data(chunk({"role": "assistant", "content": ""}))]
    for k, t in enumerate(texts):
        out.append(_data({**chunk({"content": t}), **(extra or {})} if k == at else chunk({"content": t})))
    return out + [_data(chunk({}, finish="stop")), b"data: [DONE]\n\n"]


def _shown_by_sdk(url: str, sid: str) -> tuple[str, str | None]:
    """What the OpenAI SDK shows of a guarded stream, and the error it raised (None: none)."""
    client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
    shown = []
    try:
        for ev in client.chat.completions.create(model="m", messages=[{"role": "user", "content": GIFT_Q}],
                                                 stream=True, extra_body={"contexts": GIFT, "script": sid}):
            if ev.choices and ev.choices[0].delta.content:
                shown.append(ev.choices[0].delta.content)
    except (openai.APIError, ValueError) as exc:
        return "".join(shown), type(exc).__name__
    return "".join(shown), None


SDK_STOPS = {
    # "Absolutely" shown, then the SDK raises: the guard had read "Absolutely not. ..."
    "an error beside the choices": _answer("Absolutely", " not. Gift cards cannot be returned.",
                                           extra={"error": {"code": 500}}),
    "an id, then a blank line of its own": [
        _data(chunk({"role": "assistant", "content": ""})), b"id: 1\n" + _data(chunk({"content": "Absolutely"})),
        b"\n", _data(chunk({"content": " not. Gift cards cannot be returned."})),
        _data(chunk({}, finish="stop")), b"data: [DONE]\n\n"],
    "a typed event with no data": [
        _data(chunk({"role": "assistant", "content": ""})), _data(chunk({"content": "Absolutely"})),
        b"event: ping\n\n", _data(chunk({"content": " not. Gift cards cannot be returned."})),
        _data(chunk({}, finish="stop")), b"data: [DONE]\n\n"],
    "a BOM before the first event": [b"\xef\xbb\xbf" + _data(chunk({"role": "assistant", "content": "It is not true that"})),
                                     _data(chunk({"content": " gift cards can be returned."})),
                                     _data(chunk({}, finish="stop")), b"data: [DONE]\n\n"],
}


@pytest.mark.parametrize("case", list(SDK_STOPS))
def test_a_stream_the_sdk_reads_otherwise_is_stopped_before_it_shows_anything(gw: tuple[str, Telemetry],
                                                                              case: str) -> None:
    """The OpenAI SDK raises at an event whose "error" is set, and at an event with no data that it dispatches (after
    an id, a blank line; a typed event), and it does not skip a leading BOM (it drops the first event): it shows a part
    of what the guard read, or another answer. Such a stream is unreadable: nothing of it reaches the SDK."""
    sid = _events(*SDK_STOPS[case])
    r = post(gw[0], sid, question=GIFT_Q, contexts=GIFT, stream=True)
    assert_blocked(r)
    assert "cannot read" in r.text
    shown, _ = _shown_by_sdk(gw[0], sid)
    assert shown == "", shown


def test_the_same_fields_the_sdk_reads_alike_are_delivered(gw: tuple[str, Telemetry]) -> None:
    """A null error, ids on data events and comments: delivered intact, and shown whole by the SDK. (A retry or an id
    alone before the first data event makes the SDK fail before it shows anything: delivered as it came.)"""
    twins = [
        _answer("Absolutely", " not. Gift cards cannot be returned.", extra={"error": None}),
        [b": keep-alive\n\n", b"id: 1\n" + _data(chunk({"role": "assistant", "content": ""})),
         b"id: 2\n" + _data(chunk({"content": "Absolutely not."})), b":\nid: 3\n" + _data(chunk(
             {"content": " Gift cards cannot be returned."})), _data(chunk({}, finish="stop")), b"data: [DONE]\n\n"],
    ]
    for pieces in twins:
        sid = _events(*pieces)
        assert_delivered(post(gw[0], sid, question=GIFT_Q, contexts=GIFT, stream=True), sid)
        shown, error = _shown_by_sdk(gw[0], sid)
        assert error is None and shown == "Absolutely not. Gift cards cannot be returned.", (shown, error)


def test_many_tool_calls_each_with_an_index_of_its_own_are_read_in_one_pass() -> None:
    """Which tool calls hold characters back is kept as they are read (asking every call on every event cost time
    quadratic in their number: 16,000 calls took 38 s through the gateway, round 29)."""
    from guardrail.wire.deltas import DeltaReader

    reader = DeltaReader()
    call = lambda i, args: chunk({"tool_calls": [{"index": i, "id": f"c{i}", "type": "function",  # noqa: E731
                                                  "function": {"name": "lookup", "arguments": args}}]})
    for i in range(50):
        reader.read(call(i, '{"page": 1}'))
        assert not reader.holding  # every call so far is whole
    reader.read(call(50, '{"query": "gift'))  # a string value not yet ended: held
    assert reader.holding
    reader.read(call(50, ' cards"}'))
    assert not reader.holding


# --------------------------------------------------------------------------- round 30: other clients' readings
def _helper_shows(url: str, sid: str) -> str:
    """What the OpenAI SDK's chat.completions.stream() helper shows of a guarded stream ("" when it raised)."""
    client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
    shown = []
    try:
        with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": GIFT_Q}],
                                            extra_body={"contexts": GIFT, "script": sid}) as stream:
            for ev in stream:
                if ev.type == "content.delta":
                    shown.append(ev.delta)
    except (openai.APIError, ValueError):
        return ""
    return "".join(shown)


OTHER_READERS = {
    # the stream() helper skips a chunk whose object is not "chat.completion.chunk": it showed "Gift cards can be
    # returned." where the guard read "... cannot ..."
    "a chunk naming another object": [
        _data(chunk({"role": "assistant", "content": "Gift cards can"})),
        _data({**chunk({"content": "not"}), "object": "chat.completion"}),
        _data(chunk({"content": " be returned."})), _data(chunk({}, finish="stop")), b"data: [DONE]\n\n"],
    # the SDK decodes every line as UTF-8 and reads retry with int(): it failed after "Absolutely"
    "a comment that is not UTF-8": [
        _data(chunk({"role": "assistant", "content": "Absolutely"})), b": \xff\xfe\n\n",
        _data(chunk({"content": " not. Gift cards cannot be returned."})), _data(chunk({}, finish="stop")),
        b"data: [DONE]\n\n"],
    "a retry in full-width digits, then a blank line": [
        _data(chunk({"role": "assistant", "content": "Absolutely"})), "retry: \uff15\n\n".encode(),
        _data(chunk({"content": " not. Gift cards cannot be returned."})), _data(chunk({}, finish="stop")),
        b"data: [DONE]\n\n"],
    # aiohttp's line iteration splits at LF only: "data: ...\r\rdata: ...\n\n" is one line to it, which it drops
    "CR-only separators": sse(*words_stream("Gift cards can not be returned."), sep=b"\r\r"),
    # JavaScript's JSON.parse refuses NaN: a browser client skipped the event that carried "not"
    "NaN in a chunk": [
        _data(chunk({"role": "assistant", "content": "Gift cards can"})),
        b'data: {"id": "c1", "object": "chat.completion.chunk", "created": NaN, "model": "m", "choices": '
        b'[{"index": 0, "delta": {"content": "not"}, "finish_reason": null}]}\n\n',
        _data(chunk({"content": " be returned."})), _data(chunk({}, finish="stop")), b"data: [DONE]\n\n"],
}


@pytest.mark.parametrize("case", list(OTHER_READERS))
def test_a_stream_other_clients_read_otherwise_is_unreadable(gw: tuple[str, Telemetry], case: str) -> None:
    sid = _events(*OTHER_READERS[case])
    r = post(gw[0], sid, question=GIFT_Q, contexts=GIFT, stream=True)
    assert_blocked(r)
    assert "cannot read" in r.text
    assert _helper_shows(gw[0], sid) == ""


def test_the_stream_helper_shows_a_consistent_stream_whole(gw: tuple[str, Telemetry]) -> None:
    sid = _events(*_answer("Absolutely", " not. Gift cards cannot be returned."))
    assert_delivered(post(gw[0], sid, question=GIFT_Q, contexts=GIFT, stream=True), sid)
    assert _helper_shows(gw[0], sid) == "Absolutely not. Gift cards cannot be returned."


def test_a_json_answer_with_a_non_finite_number_is_unreadable(gw: tuple[str, Telemetry]) -> None:
    body = dumps(chat("Gift cards cannot be returned.")).replace(b'"created": 1', b'"created": Infinity')
    assert b"Infinity" in body
    r = post(gw[0], script(body), question=GIFT_Q, contexts=GIFT)
    assert_blocked(r)
    assert "Infinity" in r.text and "JSON.parse" in r.text


def test_a_second_request_for_confirmation_asks_about_the_same_claim(gw: tuple[str, Telemetry]) -> None:
    """"Are you sure?" / "Yes, I'm sure." / "Are you sure?": the second asks about the assistant's first claim (read
    as written, "No, gift cards cannot be returned." was judged against "Are you sure?" and blocked, round 30)."""
    messages = [{"role": "user", "content": GIFT_Q}, {"role": "assistant", "content": "No, gift cards cannot be returned."},
                {"role": "user", "content": "Are you sure?"}, {"role": "assistant", "content": "Yes, I'm sure."},
                {"role": "user", "content": "Are you sure?"}]
    for answer, delivered in (("No, gift cards cannot be returned.", True), ("Yes.", True),
                              ("No, actually gift cards can be returned.", False)):
        sid = script(dumps(chat(answer)))
        r = httpx.post(gw[0] + "/v1/chat/completions", timeout=60,
                       json={"model": "m", "messages": messages, "contexts": GIFT, "script": sid})
        if delivered:
            assert_delivered(r, sid)
        else:
            assert_blocked(r)


def test_a_large_request_is_written_as_the_small_one_is() -> None:
    from guardrail.server_request import dumps as write, validate_request

    payload = {"model": "m", "contexts": GIFT, "messages": [
        {"role": "user", "content": [{"type": "text", "text": ""}] * 12000 + [{"type": "text", "text": GIFT_Q}]}]}
    raw = json.dumps(payload, ensure_ascii=False).encode()
    assert len(raw) > 256 * 1024  # read with Python hooks, written by the Python encoder: the same request
    assert validate_request(raw) == payload
    assert write(payload) == raw


# --------------------------------------------------------------------------- round 32: integrations
def _lc_chain(pieces: list[Any]) -> Any:
    from langchain_core.documents import Document
    from langchain_core.runnables import RunnableGenerator
    from langchain_core.runnables.utils import AddableDict

    def gen(inputs: Any) -> Any:
        for inp in inputs:
            yield AddableDict(input=inp["input"])
            yield AddableDict(context=[Document(page_content=c) for c in GIFT])
            for p in pieces:
                yield AddableDict(answer=p)
    return RunnableGenerator(gen)


def _block(kind: str, text: str, index: Any) -> Any:
    from langchain_core.messages import AIMessageChunk

    return AIMessageChunk(content=[{"type": kind, ("reasoning" if kind == "reasoning" else "text"): text,
                                    "index": index}])


@pytest.mark.parametrize("index", [1, "lc_1"])
def test_a_langchain_block_that_reuses_the_index_of_another_type_is_unreadable(block_guard: Guard, index: Any) -> None:
    """LangChain merges streamed blocks by index and keeps the first block's type: text streamed at the index of a
    reasoning block becomes reasoning, and the merged answer's .text drops it ("Gift cards can" + "not" hidden)."""
    from guardrail.langchain import GuardedChain

    nxt = 2 if index == 1 else "lc_2"
    attack = [_block("text", "Gift cards can", 0), _block("reasoning", "Checking.", index), _block("text", "not", index),
              _block("text", " be returned.", nxt)]
    twin = [_block("text", "Gift cards can", 0), _block("reasoning", "Checking.", index), _block("text", "not", nxt),
            _block("text", " be returned.", nxt)]
    final: Any = None
    for c in GuardedChain(block_guard, _lc_chain(attack)).stream({"input": GIFT_Q}):
        final = c if final is None else final + c
    assert final.get("finish_reason") == "content_filter" and "reuses index" in str(final["guardrail"].error)
    final = None
    for c in GuardedChain(block_guard, _lc_chain(twin)).stream({"input": GIFT_Q}):
        final = c if final is None else final + c
    assert final["answer"].text == "Gift cards cannot be returned." and final["guardrail"].action == "pass"


def test_a_stream_that_puts_another_choice_first_is_unreadable_when_n_is_not_known(block_guard: Guard) -> None:
    """An app's own request shape says nothing of n: a client that reads choices[0] of every event shows choice 1's
    "~~" around choice 0's "not" as one struck answer."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import StreamingResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from guardrail.asgi import GuardrailMiddleware, record

    def event(index: int, text: str) -> str:
        return "data: " + json.dumps(chunk({"content": text}, index=index)) + "\n\n"

    async def ask(request: Request) -> StreamingResponse:
        body = await request.json()
        record(query=GIFT_Q, contexts=GIFT)

        async def events() -> Any:
            for index, text in body["pieces"]:
                yield event(index, text)
            yield "data: " + json.dumps(chunk({}, finish="stop")) + "\n\n"
            yield "data: [DONE]\n\n"
        return StreamingResponse(events(), media_type="text/event-stream")

    client = TestClient(GuardrailMiddleware(Starlette(routes=[Route("/ask", ask, methods=["POST"])]), block_guard,
                                            routes=["/ask"]))
    r = client.post("/ask", json={"question": GIFT_Q, "pieces": [(0, "Gift cards can"), (1, "~~"), (0, "not"),
                                                                   (1, "~~"), (0, " be returned.")]})
    assert '"content_filter"' in r.text and "choices[0]" in r.text and "not" not in r.text.split("content_filter")[0]
    r = client.post("/ask", json={"question": GIFT_Q, "pieces": [(0, "Gift cards can"), (0, "not"), (0, " be returned.")]})
    assert '"content_filter"' not in r.text and '"stop"' in r.text


# --------------------------------------------------------------------------- round 34: real servers' streams
def _no_object(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != "object"}


SERVER_STREAMS = {
    # Azure OpenAI: a content-filter chunk first, "object": "" and no choices
    "azure": [_data({"id": "", "object": "", "created": 0, "model": "", "choices": [],
                     "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]}),
              *_answer("Absolutely", " not. Gift cards cannot be returned.")],
    # FastChat: text chunks leave "object" out, the finish chunk names it
    "fastchat": [_data(_no_object(chunk({"role": "assistant", "content": "Absolutely"}))),
                 _data(_no_object(chunk({"content": " not. Gift cards cannot be returned."}))),
                 _data(chunk({}, finish="stop")), b"data: [DONE]\n\n"],
}


@pytest.mark.parametrize("server", list(SERVER_STREAMS))
def test_streams_of_real_servers_are_read(gw: tuple[str, Telemetry], server: str) -> None:
    """The object rule reads the chunks that carry text only: a content-filter chunk or a finish chunk that names
    another object (or none) shows nothing."""
    sid = _events(*SERVER_STREAMS[server])
    assert_delivered(post(gw[0], sid, question=GIFT_Q, contexts=GIFT, stream=True), sid)

