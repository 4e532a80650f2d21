"""Block mode, session 12 (round 25's open classes): a short answer bound to another fact.

"23 kg." to "What is the carry-on weight limit?" was read alone: the span is a copy of a context phrase (the checked
bag's limit), the model entails it, and it passed at 0.83 (round 25: 17 of 18 such answers delivered). A short answer
to a wh-question whose quantity the contexts give something other than what the question asks about now fails: the
context sentences most about the question (its words in their subject count twice) state the same unit with another
value, and none of them states the answer's.

Real model, whole answer and word-by-word stream; each hallucination with its faithful twin, and answers whose value
is the question's although another sentence shares words with it."""

from __future__ import annotations

import pytest

from block_mode import block_guard, both  # noqa: F401 - fixture

from guardrail.guard import Guard

AIR = ["Economy passengers may check one bag of up to 23 kg free of charge. A second checked bag costs $60. Carry-on "
       "bags must not exceed 7 kg. Business class passengers may check two bags of up to 32 kg each."]
SPEC = ["The AeroBook 14 has a 14-inch OLED display with a 120 Hz refresh rate. It comes with 16 GB of RAM and a 1 TB "
        "SSD. It weighs 1.2 kg and is 15.9 mm thick. The AeroBook 16 has a 16-inch LCD display, 32 GB of RAM and "
        "weighs 1.9 kg."]
RET = ["Items can be returned within 30 days of delivery for a full refund if unused. Gift cards cannot be returned. "
       "Refunds are issued within 5 business days."]
BANK = ["The Everyday Checking account has a $12 monthly fee. Overdraft fees are $35 per item, up to 3 per day. Wire "
        "transfers sent abroad cost $45; incoming wires are free."]

SPANS = [
    # question, contexts, hallucinated span (the value of another fact), faithful twin
    ("What is the carry-on weight limit?", AIR, "23 kg.", "7 kg."),
    ("How much does the AeroBook 16 weigh?", SPEC, "1.2 kg.", "1.9 kg."),
    ("How much RAM does the AeroBook 16 have?", SPEC, "16 GB.", "32 GB."),
    ("How long do refunds take?", RET, "30 days.", "5 business days."),
    ("What is the overdraft fee?", BANK, "$45 per item.", "$35 per item."),
    ("How much does a second checked bag cost?", AIR, "$45.", "$60."),
]


@pytest.mark.parametrize(("question", "contexts", "bad", "good"), SPANS)
def test_a_short_answer_bound_to_another_fact_is_blocked(block_guard: Guard, question: str, contexts: list[str],
                                                         bad: str, good: str) -> None:
    assert both(block_guard, question, contexts, bad) == ("block", "block"), bad
    assert both(block_guard, question, contexts, good) == ("pass", "pass"), good


@pytest.mark.parametrize(("question", "contexts", "answer"), [
    # a question about no one fact: any value the contexts hold is an answer to it
    ("What is the baggage allowance?", AIR, "23 kg."),
    ("What is your return policy?", RET, "30 days."),
    # the value in another unit than the question's sentence states (a conversion is not another value)
    ("How much does the AeroBook 14 weigh?", SPEC, "1.2 kg."),
    ("How much does the AeroBook 16 weigh?", SPEC, "About 1.9 kg."),
    # the value of the sentence that names the subject through a pronoun
    ("How thick is the AeroBook 14?", SPEC, "15.9 mm."),
])
def test_a_short_answer_the_contexts_give_the_question_passes(block_guard: Guard, question: str, contexts: list[str],
                                                              answer: str) -> None:
    assert both(block_guard, question, contexts, answer) == ("pass", "pass"), answer


def test_the_evidence_names_the_value() -> None:
    from guardrail.checks.evaluator import Evaluator
    from guardrail.scorers.nli import NLIScorer, default_nli_model

    ev = Evaluator(nli=NLIScorer(default_nli_model()))
    result = ev.evaluate("What is the carry-on weight limit?", AIR, "23 kg.").faithfulness
    assert result is not None
    s = result.sentences[0]
    assert s.unsupported_numbers == ("23 kg",) and s.supported is False
