"""Block mode, session 13: a value moved to a sibling clause of the sentence that states it.

"Online check-in closes 24 hours before departure." against "Online check-in opens 24 hours before departure and
closes 60 minutes before departure.": every word of the claim is in the context sentence, and the model entails the
copy (0.70; round 25: two values in one sentence bound to the wrong clause). The claim's value is now read in the
clause that states it: when every context clause holding it says something else of it, and a sibling clause with
another value of the same measure says what the claim says, the value counts as unsupported
(``SentenceEvidence.unsupported_terms``), and the sentence fails. A claim that states both values ("open from 24
hours until 60 minutes before departure"), or that says what the value's own clause says, is read as before.

Real model, whole answer and word-by-word stream; each hallucination with its faithful twin."""

from __future__ import annotations

import pytest

from block_mode import block_guard, both  # noqa: F401 - fixture
from test_bypass import evaluator  # noqa: F401 - fixture

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard

CHECKIN = ["Online check-in opens 24 hours before departure and closes 60 minutes before departure. Bags must be "
           "dropped at the counter 45 minutes before departure."]
REFUNDS = ["Standard refunds are processed within 5 business days, while express refunds are processed within 2 "
           "business days. Refunds go back to the original payment method."]
PLAN = ["The Team plan costs $12 per user per month and includes 100 GB of storage per user, but the Business plan "
        "costs $20 per user per month."]

BOUND = [
    # (question, contexts, hallucination, its faithful twin)
    ("When does online check-in close?", CHECKIN, "Online check-in closes 24 hours before departure.",
     "Online check-in closes 60 minutes before departure."),
    ("When does online check-in open?", CHECKIN, "Online check-in opens 60 minutes before departure.",
     "Online check-in opens 24 hours before departure."),
    ("How long do standard refunds take?", REFUNDS, "Standard refunds are processed within 2 business days.",
     "Standard refunds are processed within 5 business days."),
    ("How long do express refunds take?", REFUNDS, "Express refunds are processed within 5 business days.",
     "Express refunds are processed within 2 business days."),
    ("What does the Business plan cost?", PLAN, "The Business plan costs $12 per user per month.",
     "The Business plan costs $20 per user per month."),
]

READ_AS_BEFORE = [
    # both values stated, a paraphrase that keeps the value's own clause, a claim silent on which kind
    ("When can I check in online?", CHECKIN,
     "Online check-in is open from 24 hours until 60 minutes before departure."),
    ("When can I check in online?", CHECKIN,
     "You can check in online from 24 hours before your flight until 60 minutes before departure."),
    ("When can I check in online?", CHECKIN,
     "Online check-in opens 24 hours before departure and closes 60 minutes before departure."),
    ("How long do refunds take?", REFUNDS, "Express refunds take 2 business days."),
]

VERDICTS = ([(q, c, bad, "block") for q, c, bad, _ in BOUND] + [(q, c, good, "pass") for q, c, _, good in BOUND]
            + [(q, c, a, "pass") for q, c, a in READ_AS_BEFORE])


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), VERDICTS)
def test_the_verdict_whole_and_streamed(block_guard: Guard, question: str, contexts: list[str], answer: str,
                                        want: str) -> None:
    assert both(block_guard, question, contexts, answer) == (want, want), answer


def test_the_evidence_names_the_value_bound_elsewhere(evaluator: Evaluator) -> None:
    f = evaluator.evaluate(*BOUND[0][:2], BOUND[0][2]).faithfulness
    assert f is not None
    (s,) = f.sentences
    assert "24 hours" in s.unsupported_terms
    twin = evaluator.evaluate(*BOUND[0][:2], BOUND[0][3]).faithfulness
    assert twin is not None and twin.sentences[0].unsupported_terms == ()
