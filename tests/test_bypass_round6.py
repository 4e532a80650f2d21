"""Block mode, classes found by an attacker's probe of round 6 (real gateway, real model, scripted upstream): a
reasoning trace streamed ahead of an answer that never comes (or shows nothing) ... Each hallucination is blocked, and
its faithful twin is delivered byte for byte. The gateway, upstream and helpers are ``tests/test_bypass.py``'s."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
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
from test_bypass_round5 import CTX, P, send, words_of

from guardrail.telemetry import Telemetry

TRACE = "Gift cards can be returned within 90 days."


def json_answer(text: str) -> bytes:
    return dumps(chat(text))


def assert_blocked_both(url: str, answer: str, contexts: list[str] = CTX, question: str = Q) -> None:
    """Blocked as a JSON answer and as a stream."""
    assert_blocked(send(url, script(json_answer(answer)), contexts, question))
    assert_blocked(send(url, script(words_of(answer)), contexts, question, stream=True))


def assert_delivered_both(url: str, answer: str, contexts: list[str] = CTX, question: str = Q) -> None:
    """Delivered byte for byte as a JSON answer and as a stream."""
    sid = script(json_answer(answer))
    assert_delivered(send(url, sid, contexts, question), sid)
    sid = script(words_of(answer))
    assert_delivered(send(url, sid, contexts, question, stream=True), sid)


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


# --------------------------------------------------------------------------- titles, sources and closing offers
GOOD = "Items can be returned within 30 days of delivery."
POLICY_Q = "What is the return policy?"


@pytest.mark.parametrize("answer", [
    "### Return policy\n\n" + GOOD,
    "## Returns\n" + GOOD + "\n## How to return an item\n" + GOOD,
    "**Return policy**\n" + GOOD,
    GOOD + "\n\nSources:\n- [Return policy](https://example.com/returns)\n- [Refunds](https://example.com/faq)",
    GOOD + "\n\nSources:\n1. https://example.com/returns\n2. <https://example.com/refunds>",
    GOOD + " Let me know if you have any other questions!",
    GOOD + " Is there anything else I can help you with?",
    GOOD + " Feel free to reach out if you need help with a return.",
    GOOD + " Don't hesitate to contact us if you have more questions about returns.",
    GOOD + " Let me know if you'd like more details.",
    GOOD + " If you have any other questions, feel free to ask!",
    GOOD + " Let me know if anything is unclear.",
    GOOD + " Feel free to contact customer service if you have more questions.",
    GOOD + " I hope this helps, and let me know if you need anything else!",
    GOOD + " Let me know if you have any questions, and I'll be happy to help.",
    GOOD + " If you have any other questions or concerns, feel free to ask.",
    GOOD + " Is there anything else you'd like to know?",
    GOOD + " Let me know if I can help with anything else!",
    GOOD + " Feel free to reach out to our customer support team at any time.",
    GOOD + " Hope this helps, and feel free to contact our support team with any other questions!",
])
def test_titles_sources_and_closing_offers_claim_nothing(gw: tuple[str, Telemetry], answer: str) -> None:
    """A heading, a line in bold, a source's link and an offer of more help are no claims: a faithful answer with them
    is delivered whole, as JSON and streamed."""
    url, _ = gw
    assert_delivered_both(url, answer, question=POLICY_Q)


@pytest.mark.parametrize("answer", [
    "### Gift cards can be returned\n\n" + GOOD,
    "## Gift cards: refunds within 90 days\n" + GOOD,
    "**Gift cards are returnable**\n" + GOOD,
    GOOD + "\n\nSources:\n- [Gift cards can be returned within 90 days](https://example.com/returns)",
    GOOD + " Feel free to return gift cards within 90 days.",
    GOOD + " Let me know if you need help, since gift cards can be returned too.",
    GOOD + " Feel free to contact us, who refund gift cards at any time.",
    # a title of words the question and contexts do not use, or one that states (light verbs, -able, absolutes)
    "### Lifetime warranty\n\n" + GOOD,
    "**Gift cards get refunded**\n\n" + GOOD,
    "### Gift cards returnable\n\n" + GOOD,
    "## Free lifetime returns\n\n" + GOOD,
    "### Returns within ninety days\n\n" + GOOD,
    GOOD + "\n\n- [Instant refunds, any method](https://shop.example/refunds)",
    GOOD + "\n\nhttps://example.com/gift-cards-are-refundable-in-cash",
    # a claim in an offer's condition
    GOOD + " Let me know if you need help getting your gift card refunded in cash.",
    GOOD + " Feel free to reach out if you would like a cash refund for your gift cards.",
    GOOD + " Let me know if you want the free return label we email for gift card returns.",
    # round 8: participles, link texts and URL paths that state, a number taken for a sequence's, an offer's topic
    "### Gift cards accepted\n\n" + GOOD,
    "**Gift card returns allowed**\n\n" + GOOD,
    GOOD + "\n\n- [Ninety-day returns](https://shop.example.com/returns)",
    GOOD + "\n\n- [Complimentary return shipping](https://shop.example.com/returns)",
    GOOD + "\n\nhttps://shop.example.com/gift-cards-returnable",
    "### 90) Days for returns\n\n" + GOOD,
    "**Tip 90: Days for returns**\n\n" + GOOD,
    GOOD + " Let me know if you have any questions about free lifetime returns.",
    GOOD + " If you'd like more details about cash refunds, feel free to ask!",
])
def test_a_claim_written_as_a_title_or_an_offer_is_judged(gw: tuple[str, Telemetry], answer: str) -> None:
    url, _ = gw
    assert_blocked_both(url, answer, question=POLICY_Q)


@pytest.mark.parametrize(("question", "answer"), [
    ("Can gift cards be returned?", "**Yes.**\n\nRefunds are issued to the original payment method within 5 business days."),
    ("Can gift cards be returned?", "### Yes\n\nRefunds are issued to the original payment method within 5 business days."),
    ("Can gift cards be returned?", "**Yes, absolutely!**"),
    ("Can gift cards be returned?", "Let me know if you need help returning your gift cards!"),
    ("How long do I have to return an item?", "### Ninety days\n\nRefunds are issued to the original payment method."),
])
def test_an_answer_written_as_a_title_or_an_offer_is_judged(gw: tuple[str, Telemetry], question: str,
                                                            answer: str) -> None:
    url, _ = gw
    assert_blocked_both(url, answer, CTX, question)


def test_label_titles() -> None:
    from guardrail.text import is_offer, label_title

    assert label_title("### Return policy") == "Return policy"
    assert label_title("- [Return policy](https://example.com/r)") == "Return policy"
    assert label_title("https://example.com/r") == "https://example.com/r"
    for claim in ("## Gift cards can be returned", "## Refunds in 5 days", "**Gift cards are not returnable**",
                  "## Gift cards not returnable", "Return policy", "## Gift cards returnable within the first month"):
        assert label_title(claim) is None, claim
    assert is_offer("Let me know if you have any other questions!")
    assert not is_offer("Let me know if you have questions, which gift cards raise.")


# --------------------------------------------------------------------------- tables in quotes and list items
@pytest.mark.parametrize("answer", [
    "> | Item | Return window |\n> |---|---|\n> | Items | 30 days of delivery |\n> | Gift cards | none |",
    "- | Item | Return window |\n  |---|---|\n  | Items | 30 days of delivery |",
    "Here is the policy:\n\n- > | Item | Return window |\n  > |---|---|\n  > | Items | 30 days of delivery |\n",
    "- Policy:\n  - Details:\n    > | Item | Return window |\n    > |---|---|\n    > | Items | 30 days of delivery |\n",
])
def test_a_table_in_a_quote_or_a_list_item_is_read_as_a_table(gw: tuple[str, Telemetry], answer: str) -> None:
    url, _ = gw
    assert_delivered_both(url, answer)
    assert_blocked_both(url, answer.replace("30 days", "90 days"))


# --------------------------------------------------------------------------- a pronoun ellipsis
@pytest.mark.parametrize(("question", "answer"), [
    ("Can items be returned?", "Yes, items can be returned within 30 days of delivery. Gift cards? Those too."),
    ("Can items be returned?", "Yes, items can be returned within 30 days of delivery. What about gift cards? Same for them."),
])
def test_a_pronoun_ellipsis_claims_what_was_said_of_the_subject_just_named(gw: tuple[str, Telemetry], question: str,
                                                                         answer: str) -> None:
    url, _ = gw
    assert_blocked_both(url, answer, CTX, question)
    # the twin: the same shape, said the way the contexts say it ("Gift cards cannot be returned ...")
    good = "Yes, items can be returned within 30 days of delivery. Gift cards? Not those."
    sid = script(json_answer(good))
    assert_delivered(send(url, sid, CTX, question), sid)


@pytest.mark.parametrize("reply", ["Yes, those too.", "Those too, yes.", "Sure, those too."])
def test_a_pronoun_ellipsis_with_a_reply_word_is_still_resolved(gw: tuple[str, Telemetry], reply: str) -> None:
    url, _ = gw
    answer = GOOD + " Gift cards? " + reply
    assert_blocked_both(url, answer, question=POLICY_Q)


@pytest.mark.parametrize("answer", ["Gift cards? Those too.", "Items can be returned within 30 days. Gift cards? Those too.",
                                    "Gift cards? Same for them.", "They also."])
def test_a_pronoun_and_too_answer_the_yes_no_question(gw: tuple[str, Telemetry], answer: str) -> None:
    url, _ = gw
    q = "Can gift cards be returned?"
    assert_blocked_both(url, answer, CTX, q)
    good = answer.replace("Those too.", "Those not.").replace("Same for them.", "Not those.").replace("They also.", "Not them.")
    sid = script(json_answer(good))
    assert_delivered(send(url, sid, CTX, q), sid)
    # the pronoun points at the subject the answer just named, whatever the question's: gift cards, which cannot be
    # returned ("Gift cards? Not those." is faithful under either question)
    if "Gift cards?" not in answer:  # "They also." under "Can items be returned?": items can be, it is faithful
        sid = script(json_answer(answer))
        assert_delivered(send(url, sid, CTX, "Can items be returned?"), sid)
        return
    assert_blocked(send(url, script(json_answer(answer)), CTX, "Can items be returned?"))
    if answer.startswith("Gift cards?"):
        sid = script(json_answer(answer.replace("Those too.", "Not those.").replace("Same for them.", "Not those.")))
        assert_delivered(send(url, sid, CTX, "Can items be returned?"), sid)


# --------------------------------------------------------------------------- a tool call's parameters
@pytest.mark.parametrize("args", [{"customer_name": "Alice"}, {"customer_email": "alice@example.com"},
                                  {"search_query": "returns", "max_results": 5}, {"name": "Alice"}])
def test_who_or_what_a_tool_call_is_about_is_a_parameter(gw: tuple[str, Telemetry], args: dict[str, Any]) -> None:
    url, _ = gw
    call = [{"id": "t1", "type": "function", "function": {"name": "lookup", "arguments": json.dumps(args)}}]
    sid = script(dumps(chat(None, tool_calls=call)))
    assert_delivered(send(url, sid), sid)
    stated = {**args, "note": "Gift cards can be returned within 90 days."}
    call = [{"id": "t1", "type": "function", "function": {"name": "lookup", "arguments": json.dumps(stated)}}]
    assert_blocked(send(url, script(dumps(chat(None, tool_calls=call)))))


@pytest.mark.parametrize("args", [{"support_phone": "1-800-555-0199"}, {"return_carrier_name": "FedEx"},
                                  {"contact_phone": "1-800-555-0199"}, {"sender_email": "giftcard-refunds@shop.com"},
                                  {"gift_card_refund_search": True}, {"return_window_days_query": 90}])
def test_a_key_that_names_a_fact_is_judged_whatever_word_it_ends_with(gw: tuple[str, Telemetry],
                                                                     args: dict[str, Any]) -> None:
    url, _ = gw
    ctx = CTX + ["Contact support at 1-800-555-0100 or support@shop.com. Returns ship with UPS."]
    call = [{"id": "t1", "type": "function", "function": {"name": "answer", "arguments": json.dumps(args)}}]
    assert_blocked(send(url, script(dumps(chat(None, tool_calls=call))), ctx, "How do I contact support about a return?"))


# --------------------------------------------------------------------------- a trace beside an answer that answers nothing
@pytest.mark.parametrize("answer", ["Hope this helps!", "Let me know if you have any other questions!",
                                    "I could not find that in the documents.",
                                    "~~Items can be returned within 30 days of delivery.~~",
                                    "<del>Refunds are issued to the original payment method.</del>"])
def test_a_trace_beside_an_answer_that_answers_nothing_is_not_delivered(gw: tuple[str, Telemetry], answer: str) -> None:
    url, _ = gw
    r = send(url, script(traced_stream(answer)), stream=True)
    assert_blocked(r)
    assert "90" not in delivered(r), r.text
    r = send(url, script(dumps(chat(answer, reasoning_content=TRACE))))
    assert r.status_code == 400 and "reasoning" in r.json()["error"]["message"], r.text
    body = {"model": "m", "input": "Can gift cards be returned?", "contexts": CTX, "stream": True}
    r = httpx.post(url + "/v1/responses", json={**body, "script": script(responses_traced_stream(answer))}, timeout=60)
    assert "90" not in delivered(r) and "response.incomplete" in r.text, r.text


@pytest.mark.parametrize("heading", ["### Step 1: Return policy", "## 2. Refunds", "### Option A - Returns"])
def test_a_numbered_title_claims_nothing(gw: tuple[str, Telemetry], heading: str) -> None:
    url, _ = gw
    answer = heading + "\n\n" + GOOD
    sid = script(json_answer(answer))
    assert_delivered(send(url, sid, question=POLICY_Q), sid)
    bad = heading.rsplit(" ", 1)[0] + " Returns in 90 days\n\n" + GOOD
    assert_blocked(send(url, script(json_answer(bad)), question=POLICY_Q))
