"""Short answers read as the statements they make (guardrail.checks.claims): a table of question shapes."""

from __future__ import annotations

import pytest

from guardrail.checks.claims import answer_claim, polarity, wh_statement, yes_no_statement

YES_NO = [
    # question, yes statement, no statement
    ("Can gift cards be returned?", "Gift cards can be returned.", "Gift cards cannot be returned."),
    ("Is the store open on Sundays?", "The store is open on Sundays.", "The store is not open on Sundays."),
    ("Are refunds issued within 30 days?", "Refunds are issued within 30 days.", "Refunds are not issued within 30 days."),
    ("Does the warranty cover water damage?", "The warranty covers water damage.",
     "The warranty does not cover water damage."),
    ("Did Einstein win the Nobel Prize?", "Einstein did win the Nobel Prize.", "Einstein did not win the Nobel Prize."),
    ("Has the order shipped?", "The order has shipped.", "The order has not shipped."),
    ("Will the store be closed on Monday?", "The store will be closed on Monday.",
     "The store will not be closed on Monday."),
    ("Is Paris the capital of France?", "Paris is the capital of France.", "Paris is not the capital of France."),
    ("Is the Eiffel Tower in Paris?", "The Eiffel Tower is in Paris.", "The Eiffel Tower is not in Paris."),
    ("Is the return policy strict?", "The return policy is strict.", "The return policy is not strict."),
    ("Are gift cards refundable?", "Gift cards are refundable.", "Gift cards are not refundable."),
    # the asker's "I" is the reader's "you"
    ("Can I return an opened item?", "You can return an opened item.", "You cannot return an opened item."),
    ("Am I eligible for a refund?", "You are eligible for a refund.", "You are not eligible for a refund."),
    # negative questions: "Yes" affirms the statement, as English speakers answer them
    ("Isn't shipping free?", "Shipping is free.", "Shipping is not free."),
    ("Can't gift cards be returned?", "Gift cards can be returned.", "Gift cards cannot be returned."),
    ("Doesn't the plan include dental care?", "The plan includes dental care.",
     "The plan does not include dental care."),
    # lead-ins
    ("So, can gift cards be returned?", "Gift cards can be returned.", "Gift cards cannot be returned."),
]


@pytest.mark.parametrize("question,yes,no", YES_NO)
def test_yes_no_question_shapes(question: str, yes: str, no: str) -> None:
    assert yes_no_statement(question, True) == yes
    assert yes_no_statement(question, False) == no


@pytest.mark.parametrize("question", ["What is the refund window?", "Gift cards can be returned.", "Why?", "Returns"])
def test_not_a_yes_no_question(question: str) -> None:
    assert yes_no_statement(question, True) is None


WH = [
    ("What is the capital of India?", "Delhi", "The capital of India is Delhi."),
    ("Who is the CEO of the company?", "Jane Doe", "The CEO of the company is Jane Doe."),
    ("Who wrote Hamlet?", "Shakespeare", "Shakespeare wrote Hamlet."),
    ("Which country hosted the 2016 Olympics?", "Brazil", "Brazil hosted the 2016 Olympics."),
    ("When was the Eiffel Tower completed?", "1889", "The Eiffel Tower was completed in 1889."),
    ("When was the store opened?", "in May 2001", "The store was opened in May 2001."),
    ("Where was Obama born?", "Hawaii", "Obama was born in Hawaii."),
    ("How long is the warranty?", "two years", "The warranty is two years."),
    ("What did Einstein win in 1921?", "the Nobel Prize", "Einstein did win the Nobel Prize in 1921."),
    ("Which city are Acme's headquarters in?", "Denver", "Acme's headquarters are in Denver."),
    ("Which city hosted the 2010 summit?", "Delhi", "Delhi hosted the 2010 summit."),
]


@pytest.mark.parametrize("question,answer,statement", WH)
def test_wh_question_shapes(question: str, answer: str, statement: str) -> None:
    assert wh_statement(question, answer) == statement


@pytest.mark.parametrize("question,answer", [("Why is the sky blue?", "Rayleigh scattering"),
                                             ("How does it work?", "Magic"), ("Tell me about refunds.", "30 days")])
def test_wh_shapes_without_a_statement(question: str, answer: str) -> None:
    assert wh_statement(question, answer) is None


@pytest.mark.parametrize("answer,value", [
    ("Yes.", True), ("Yes, they can.", True), ("Sure!", True), ("Correct.", True), ("Of course.", True),
    ("No.", False), ("Nope, they cannot.", False), ("Not really.", False), ("Of course not.", False),
    ("Nothing is refunded.", None), ("Notably, returns are free.", None), ("Yesterday it rained.", None),
])
def test_polarity(answer: str, value: bool | None) -> None:
    assert polarity(answer)[0] is value


Q = "Can gift cards be returned?"


@pytest.mark.parametrize("answer,statement", [
    ("Yes.", "Gift cards can be returned."),
    ("Yes, they can.", "Gift cards can be returned."),
    ("Sure!", "Gift cards can be returned."),
    ("No, they cannot.", "Gift cards cannot be returned."),
    ("No, they can't.", "Gift cards cannot be returned."),
    ("Nope.", "Gift cards cannot be returned."),
    # an echo that says "not" after a bare yes is a no
    ("Yes, they cannot.", "Gift cards cannot be returned."),
    # a qualifier after yes/no is read with the statement
    ("Yes, within 30 days.", "Gift cards can be returned, within 30 days."),
])
def test_answer_claim_yes_no(answer: str, statement: str) -> None:
    made = answer_claim(Q, answer)
    assert made is not None and made.statement == statement and made.kind == "yes/no"


def test_answer_claim_leaves_full_statements_and_unknown_shapes() -> None:
    # a full statement after the yes/no word is a claim of its own: not rebuilt from the question
    assert answer_claim(Q, "No, gift cards cannot be returned.") is None
    assert answer_claim("Tell me about gift cards.", "Yes.") is None
    assert answer_claim("", "Yes.") is None
    assert answer_claim("What is the capital of India?", "Delhi").statement == "The capital of India is Delhi."
    # a sentence with a verb is no span answer
    assert answer_claim("What is the capital of India?", "The capital moved to Delhi in 1911.") is None


@pytest.mark.parametrize("sentence,parts", [
    ("The couple married in New York in December 2012, and their son, Bear, was born the next year.",
     ["The couple married in New York in December 2012.", "Their son, Bear, was born the next year."]),
    ("He was born in Ohio in 1950, and moved to Paris in 1970 where he studied painting.",
     ["He was born in Ohio in 1950.", "He moved to Paris in 1970 where he studied painting."]),
    # a modifier after "and" is no clause of its own: the sentence stays whole
    ("Arnold is the publisher of Media Play News, one of five Hollywood trades and the only one dedicated to home "
     "entertainment.", None),
    ("Refunds are issued within 30 days.", None),  # short: never split
])
def test_split_claims(sentence: str, parts: list[str] | None) -> None:
    from guardrail.checks.claims import split_claims

    assert split_claims(sentence) == (parts if parts is not None else [sentence])
