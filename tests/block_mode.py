"""What the block-mode reading tests share: a guard over faithfulness alone with the shipped model, and the verdict
on an answer whole and streamed word by word (the two must agree)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer, default_nli_model


@pytest.fixture(scope="module")
def block_guard() -> Iterator[Guard]:
    """Block mode over faithfulness alone (the model's reading of the answer is what these tests are about)."""
    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block", retrieval_relevance=None))
    yield guard
    guard.close()


def both(guard: Guard, question: str, contexts: list[str], answer: str) -> tuple[str, str]:
    """The verdict on the whole answer and on the same answer streamed word by word."""
    whole = guard.check(question, contexts, answer).action
    stream = guard.stream(question, contexts)
    for w in re.findall(r"\S+\s*", answer):
        stream.feed(w)
    return whole, stream.finish().verdict.action
