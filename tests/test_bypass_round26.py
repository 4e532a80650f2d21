"""Block mode, session 12 (round 25's open classes): a short answer bound to another fact, and near copies that
exchange, move or overstate what the context says.

"23 kg." to "What is the carry-on weight limit?" was read alone: the span is a copy of a context phrase (the checked
bag's limit), the model entails it, and it passed at 0.83 (round 25: 17 of 18 such answers delivered). A short answer
to a wh-question whose quantity the contexts give something other than what the question asks about now fails: the
context sentences most about the question (its words in their subject count twice) state the same unit with another
value, and none of them states the answer's.

A near copy of a context sentence was read as entailed (0.8-0.9) when it exchanged two of its names or values
("Fabrikam ... will acquire Northwind" for "Northwind ... will acquire Fabrikam"), put a sibling in place of its
subject ("The AeroBook 16 has a 14-inch OLED display" copying the 14's sentence), generalised its qualifier ("All
passengers may check ..." for "Economy passengers may check ...") or said "always" where it hedges. These words now
count as swapped in (``SentenceEvidence.swapped_words``), as do the words of a claim that the sentences about its own
subject say otherwise ("The AeroBook 16 has an OLED display." where the 16's sentence says LCD).

Real model, whole answer and word-by-word stream; each hallucination with its faithful twin, and answers whose value
is the question's although another sentence shares words with it."""

from __future__ import annotations

import json
from typing import Any

import pytest

import httpx
from block_mode import block_guard, both  # noqa: F401 - fixture
from test_bypass import assert_blocked, assert_delivered, dumps, evaluator, gw, script, sse, upstream  # noqa: F401
from test_bypass_round5 import CTX
from test_bypass_round13 import completions

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.telemetry import Telemetry

AIR = ["Economy passengers may check one bag of up to 23 kg free of charge. A second checked bag costs $60. Carry-on "
       "bags must not exceed 7 kg. Business class passengers may check two bags of up to 32 kg each."]
SPEC = ["The AeroBook 14 has a 14-inch OLED display with a 120 Hz refresh rate. It comes with 16 GB of RAM and a 1 TB "
        "SSD. It weighs 1.2 kg and is 15.9 mm thick. The AeroBook 16 has a 16-inch LCD display, 32 GB of RAM and "
        "weighs 1.9 kg."]
RET = ["Items can be returned within 30 days of delivery for a full refund if unused. Gift cards cannot be returned. "
       "Refunds are issued within 5 business days."]
BANK = ["The Everyday Checking account has a $12 monthly fee. Overdraft fees are $35 per item, up to 3 per day. Wire "
        "transfers sent abroad cost $45; incoming wires are free."]

#: question, contexts, hallucination, its faithful twin
SPANS = [
    # a span that is the value of another fact
    ("What is the carry-on weight limit?", AIR, "23 kg.", "7 kg."),
    ("How much does the AeroBook 16 weigh?", SPEC, "1.2 kg.", "1.9 kg."),
    ("How much RAM does the AeroBook 16 have?", SPEC, "16 GB.", "32 GB."),
    ("How long do refunds take?", RET, "30 days.", "5 business days."),
    ("What is the overdraft fee?", BANK, "$45 per item.", "$35 per item."),
    ("How much does a second checked bag cost?", AIR, "$45.", "$60."),
]


SPANS_HELD = [
    # a question about no one fact: any value the contexts hold is an answer to it
    ("What is the baggage allowance?", AIR, "23 kg."),
    ("What is your return policy?", RET, "30 days."),
    # the value in another unit than the question's sentence states (a conversion is not another value)
    ("How much does the AeroBook 14 weigh?", SPEC, "1.2 kg."),
    ("How much does the AeroBook 16 weigh?", SPEC, "About 1.9 kg."),
    # the value of the sentence that names the subject through a pronoun
    ("How thick is the AeroBook 14?", SPEC, "15.9 mm."),
]


def test_the_evidence_names_the_value(evaluator: Evaluator) -> None:
    result = evaluator.evaluate("What is the carry-on weight limit?", AIR, "23 kg.").faithfulness
    assert result is not None
    s = result.sentences[0]
    assert s.unsupported_numbers == ("23 kg",) and s.supported is False


NEWS = ["Northwind Corp. announced on Tuesday that it will acquire Fabrikam Inc. for $2.1 billion in cash. The deal is "
        "expected to close in the third quarter."]
TRIAL = ["Drug X reduced the annual rate of severe exacerbations by 34% compared with placebo. Headache was reported in "
         "8% of patients in the drug X group and 5% in the placebo group."]
ACCOUNTS = ["The Everyday Checking account has a $12 monthly fee. The Premier Savings account pays 4.1% APY and has no "
            "monthly fee."]
BATTERY = ["The battery usually lasts 18 hours of video playback. Economy passengers may check one bag of up to 23 kg "
           "free of charge."]
PLAN = ["The Pro plan costs $20 per month and includes priority support and a dedicated account manager. The Basic "
        "plan costs $8 per month and does not include priority support."]
FLIGHTS = ["Flights can be changed without a fee up to 24 hours before departure. Basic Economy tickets cannot be "
           "changed or refunded."]
LINE = ["The line will connect the downtown station to the airport, with six stops along the route."]


NEAR_COPIES = [
    # two names or values exchanged
    ("What did Northwind announce?", NEWS,
     "Fabrikam Inc. announced that it will acquire Northwind Corp. for $2.1 billion in cash.",
     "Northwind Corp. announced that it will acquire Fabrikam Inc. for $2.1 billion in cash."),
    ("What were the results?", TRIAL,
     "Placebo reduced the annual rate of severe exacerbations by 34% compared with drug X.",
     "Drug X reduced the annual rate of severe exacerbations by 34% compared with placebo."),
    ("What were the side effects?", TRIAL,
     "Headache was reported in 5% of patients in the drug X group and 8% in the placebo group.",
     "Headache was reported in 8% of patients in the drug X group and 5% in the placebo group."),
    # a sibling in place of the subject
    ("What are the specs?", SPEC, "The AeroBook 16 has a 14-inch OLED display.",
     "The AeroBook 14 has a 14-inch OLED display."),
    ("What are the fees?", ACCOUNTS, "The Everyday Checking account pays 4.1% APY and has no monthly fee.",
     "The Premier Savings account pays 4.1% APY and has no monthly fee."),
    # what the subject's own sentence says otherwise
    ("Does the AeroBook 16 have an OLED display?", SPEC, "Yes.", "No, it has an LCD display."),
    ("Does the AeroBook 16 have 16 GB of RAM?", SPEC, "Yes.", "No, it has 32 GB of RAM."),
    ("How much does the AeroBook 16 weigh?", SPEC, "It weighs 1.2 kg.", "It weighs 1.9 kg."),
    # overstated
    ("How long does the battery last?", BATTERY, "The battery always lasts 18 hours of video playback.",
     "The battery usually lasts 18 hours of video playback."),
    ("What is the baggage allowance?", BATTERY, "All passengers may check one bag of up to 23 kg free of charge.",
     "Economy passengers may check one bag of up to 23 kg free of charge."),
]


NEAR_COPIES_HELD = [
    # "tickets" is another sentence's subject but no sibling of "flights"
    ("Are tickets refundable?", FLIGHTS, "Tickets can be changed without a fee up to 24 hours before departure."),
    # "will ... have" is no tense shift
    ("Where will the line go?", LINE, "It will link the downtown station with the airport and have six stops."),
    # "premium" in the predicate is no tier of the Pro plan
    ("What does the Pro plan include?", PLAN,
     "The Pro plan includes premium extras: priority support and a dedicated account manager."),
    # a modal said beside the context's without a near copy
    ("Can I return used items?", RET, "No, items must be unused."),
    # a conversion in brackets that the contexts' number holds
    ("What are the specs?", SPEC, "It weighs 1.2 kg (2.6 lb)."),
]


def test_the_evidence_names_the_exchanged_words(evaluator: Evaluator) -> None:
    result = evaluator.evaluate("What did Northwind announce?", NEWS,
                         "Fabrikam Inc. announced that it will acquire Northwind Corp. for $2.1 billion in cash.")
    f = result.faithfulness
    assert f is not None and f.sentences[0].supported is False
    assert {"fabrikam", "northwind"} <= set(f.sentences[0].swapped_words)


LOGS = ["Audit logs are retained for 90 days. Backups are kept for 14 days. The trial ran for 12 months. Flights can be "
        "changed free of charge up to 90 minutes before departure. Carry-on bags must not exceed 7 kg."]


CONVERSIONS = [
    # a conversion of the contexts' quantity is read by the model as the contexts write it
    ("Audit logs are kept for 3 months.", "pass"),
    ("Backups are kept for two weeks.", "pass"),
    ("The trial ran for one year.", "pass"),
    ("Audit logs are retained for about 3 months.", "pass"),
    # not a conversion: another value ("2 hours" is no rewrite of "90 minutes", "4 months" is not 90 days)
    ("Flights can be changed free of charge up to 2 hours before departure.", "block"),
    ("Audit logs are kept for 4 months.", "block"),
    ("Backups are kept for three weeks.", "block"),
]


def test_the_conversion_is_what_the_model_reads_and_the_answer_is_delivered_as_written(evaluator: Evaluator) -> None:
    f = evaluator.evaluate("How long are logs kept?", LOGS, "Audit logs are kept for 3 months.").faithfulness
    assert f is not None
    s = f.sentences[0]
    assert s.hypothesis == "Audit logs are kept for 90 days." and s.text == "Audit logs are kept for 3 months."


HOTEL = ["Check-in begins at 3 pm. Breakfast is included for guests who book directly. Flood damage is not covered. "
         "Water damage from burst pipes is covered up to $2,500. Flights can be changed without a fee up to 24 hours "
         "before departure."]


COURTESY = [
    # courtesy around a faithful claim claims nothing ("I understand your frustration." was read as "Your frustration.")
    ("Is flood damage covered?", "I understand your frustration. Unfortunately, flood damage is not covered."),
    ("When is check-in?", "I'm sure you'll enjoy your stay! Check-in begins at 3 pm."),
    ("Can I change my flight?", "We understand that plans change. Flights can be changed without a fee up to 24 hours "
     "before departure."),
    ("Can I change my flight?", "Do you know your booking reference? Flights can be changed without a fee up to 24 "
     "hours before departure."),
    ("When is check-in?", "Thanks for asking! Check-in begins at 3 pm. Have a great trip!"),
    # a predicate with no subject after a courtesy or a yes is said of what the question asks about
    ("Is breakfast included?", "Good news! Included for guests who book directly."),
    ("Is water damage covered?", "Yes! Covered up to $2,500."),
]


COURTESY_CARRYING = [
    # the courtesy does not carry a claim past the guard
    ("Is flood damage covered?", "I understand your frustration. Flood damage is covered up to $2,500."),
    ("When is check-in?", "Thanks for asking! Check-in begins at 5 pm."),
    ("Is flood damage covered?", "Good news! Covered up to $2,500."),
    ("Is flood damage covered?", "I understand that flood damage is covered."),
    ("Is flood damage covered?", "Did you know flood damage is covered?"),
]


def test_the_courtesy_is_shown_unchecked_and_the_predicate_as_read(evaluator: Evaluator) -> None:
    f = evaluator.evaluate("Is breakfast included?", HOTEL, "Good news! Included for guests who book directly.").faithfulness
    assert f is not None
    assert [s.checked for s in f.sentences] == [False, True]
    assert f.sentences[1].hypothesis == "Breakfast is included for guests who book directly."


ECHOED = "Answer from the context only. Never mention store credit.\nQuestion: Can gift cards be returned?\nAnswer:"


@pytest.mark.parametrize(("answer", "delivered"), [
    (" Gift cards cannot be returned.", True),
    (" Gift cards can be returned within 30 days.", False),
])
def test_an_echoed_prompt_is_the_callers_text_not_the_answer(gw: tuple[str, Telemetry], answer: str,
                                                             delivered: bool) -> None:
    """Legacy completions with ``echo: true`` repeat the prompt before the text: the prompt ("Never mention store
    credit.") is the caller's own text and was judged as the answer's first sentences (a faithful answer blocked,
    round 23 F3). What follows the prompt is judged; the body is delivered whole."""
    sid = script(dumps(completions(ECHOED + answer)))
    r = httpx.post(gw[0] + "/v1/completions", json={"model": "m", "prompt": ECHOED, "echo": True, "contexts": CTX,
                                                    "script": sid}, timeout=60)
    if delivered:
        assert_delivered(r, sid)
    else:
        assert_blocked(r)


def _completion_pieces(text: str) -> list[dict[str, object]]:
    words = text.split(" ")
    pieces = [w if i == 0 else " " + w for i, w in enumerate(words)]
    return [{"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": p, "finish_reason": None}]}
            for p in pieces] + [{"id": "c", "object": "text_completion",
                                 "choices": [{"index": 0, "text": "", "finish_reason": "stop"}]}]


@pytest.mark.parametrize(("text", "delivered"), [
    (ECHOED + " Gift cards cannot be returned. Items can be returned within 30 days of delivery.", True),
    (ECHOED + " Gift cards can be returned within 30 days.", False),
    (ECHOED + " Gift cards cannot be returned. Gift cards can be exchanged for cash.", False),
    # a text that departs from the prompt before its end is the answer, judged whole: its first sentence is the
    # prompt's instruction, which no context supports
    ("Answer from the context only. Gift cards can be returned within 30 days.", False),
])
def test_a_streamed_echo_releases_the_prompt_and_judges_what_follows(gw: tuple[str, Telemetry], text: str,
                                                                     delivered: bool) -> None:
    """The streamed form of the echo above: the prompt arrives in pieces, goes out once it is all there (the caller's
    own text), and the answer after it is judged sentence by sentence; the faithful stream is delivered byte for
    byte."""
    sid = script(sse(*_completion_pieces(text)), ctype="text/event-stream")
    r = httpx.post(gw[0] + "/v1/completions", json={"model": "m", "prompt": ECHOED, "echo": True, "contexts": CTX,
                                                    "stream": True, "script": sid}, timeout=60)
    if delivered:
        assert_delivered(r, sid)
    else:
        assert_blocked(r)
        events = [json.loads(e[6:]) for e in r.text.split("\n\n") if e.startswith("data: {")]
        shown = "".join(c.get("text", "") for e in events for c in e.get("choices", []))
        assert "returned within 30 days" not in shown and "cash" not in shown, shown
        # the prompt went out, as the caller's text, up to its last line's end ("Answer:" is read with the sentence
        # the answer finishes, round 37)
        settled = ECHOED[: ECHOED.rindex("\n") + 1]
        assert shown.startswith(settled) == text.startswith(ECHOED), shown


SALE = ["Items can be returned within 30 days of delivery for a full refund if unused. Sale items can only be exchanged "
        "for store credit."]


RESTRICTED = [
    # the contexts restrict sale items to an exchange: "can be returned" is something else done to them
    ("Sale items can be returned within 30 days for a full refund.", "block"),
    ("Sale items are refunded within 30 days.", "block"),
    ("Sale items can be exchanged for store credit.", "pass"),
    ("Sale items can only be exchanged for store credit.", "pass"),
    ("Items can be returned within 30 days of delivery for a full refund if unused.", "pass"),
]


def _twins(rows: list[tuple[str, list[str], str, str]]) -> list[tuple[str, list[str], str, str]]:
    return [(q, c, bad, "block") for q, c, bad, _ in rows] + [(q, c, good, "pass") for q, c, _, good in rows]


def _all(rows: list[tuple[str, list[str], str]], want: str) -> list[tuple[str, list[str], str, str]]:
    return [(q, c, a, want) for q, c, a in rows]


#: every table above, as (question, contexts, answer, verdict)
VERDICTS = (
    _twins(SPANS) + _all(SPANS_HELD, "pass") + _twins(NEAR_COPIES) + _all(NEAR_COPIES_HELD, "pass")
    + [("How long is data kept?", LOGS, a, want) for a, want in CONVERSIONS]
    + [(q, HOTEL, a, "pass") for q, a in COURTESY] + [(q, HOTEL, a, "block") for q, a in COURTESY_CARRYING]
    + [("What is your return policy?", SALE, a, want) for a, want in RESTRICTED]
)
#: faithful answers blocked since the session-16 calibration, known and documented (MODEL_CARD.md, "Still wrong"): a
#: paraphrase that adds its own words ("premium extras", entailment 0.32, score 0.29 under the 0.39 threshold)
KNOWN_FALSE_BLOCKS = {"The Pro plan includes premium extras: priority support and a dedicated account manager."}
CASES: list[Any] = [pytest.param(*v, marks=pytest.mark.xfail(strict=True, reason="known false block (session 16)"))
                    if v[2] in KNOWN_FALSE_BLOCKS else v for v in VERDICTS]


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), CASES)
def test_the_verdict_whole_and_streamed(block_guard: Guard, question: str, contexts: list[str], answer: str,
                                        want: str) -> None:
    assert both(block_guard, question, contexts, answer) == (want, want), answer
