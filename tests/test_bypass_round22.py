"""Block mode, session 11 (round 22): conversation turns that ask no question of their own, and tables whose header
row only names the columns.

- "Are you sure?" answered "Yes, I'm sure." was read as "You are sure, I'm sure." and blocked; "Please answer with
  just yes or no." answered "No." was unchecked (blocked). A confirmation asks whether what the assistant last said
  holds; a request for the form of the answer asks the question before it.
- "| Item | Returnable | Window |" over "| Items | Yes | 30 days |" was read "Item, Window: Items: returnable." and
  blocked: header cells that only name a column ("Item", "Window") state nothing and are not read.

Real model, whole answer and word-by-word stream (tables), the gateway's and the OpenAI wrapper's question readers
(conversations); each faithful answer with its hallucinated twin."""

from __future__ import annotations

from typing import Any

import pytest

from block_mode import block_guard, both  # noqa: F401 - fixture

from guardrail.asgi import openai_request
from guardrail.checks.claims import question_in_conversation
from guardrail.guard import Guard
from guardrail.openai import _question
from guardrail.render import render

CTX = ["Items can be returned within 30 days of delivery for a full refund if unused. Gift cards cannot be returned. "
       "Refunds are issued within 5 business days."]
QG = "Can I return a gift card?"


@pytest.mark.parametrize(("question", "earlier", "assistant", "read"), [
    # a confirmation: whether the assistant's last claim holds
    ("Are you sure?", [QG], ["Gift cards cannot be returned."], "Is it true that gift cards cannot be returned?"),
    ("Really?", [QG], ["No."], "Is it true that you cannot return a gift card?"),
    ("Is that right?", [QG], ["Unfortunately not."], "Is it true that you cannot return a gift card?"),
    ("Hmm, are you certain about that?", [QG], ["No, gift cards cannot be returned."],
     "Is it true that gift cards cannot be returned?"),
    ("Can you double-check?", ["What is the refund time?"], ["Refunds are issued within 5 business days."],
     "Is it true that refunds are issued within 5 business days?"),
    # a request for the form of the answer: the question before it
    ("Please answer with just yes or no.", [QG], ["Let me check the policy for you."], QG),
    ("Yes or no?", [QG], ["It depends on the item."], QG),
    ("Be brief.", ["I bought a gift card. Can I return it?"], ["Let me check."], "Can I return a gift card?"),
    ("Explain.", [QG], ["No."], QG),
    # a follow-up that names only another model number asks the question before it of that model
    ("What about the 16?", ["How much does the AeroBook 14 weigh?"], ["It weighs 1.2 kg."],
     "How much does the AeroBook 16 weigh?"),
    # questions of their own are read as written
    ("Are you sure it is free?", ["Is shipping free?"], ["Yes."], "Are you sure it is free?"),
    ("Is that the only option?", [QG], ["Store credit is offered."], "Is that the only option?"),
    ("Can you answer a question about shipping?", [QG], ["No."], "Can you answer a question about shipping?"),
    # nothing before it to stand for: as written
    ("Are you sure?", [], [], "Are you sure?"),
    ("Please answer with just yes or no.", [], ["Hello!"], "Please answer with just yes or no."),
])
def test_a_turn_with_no_question_of_its_own_stands_for_one(question: str, earlier: list[str], assistant: list[str],
                                                           read: str) -> None:
    assert question_in_conversation(question, earlier, assistant) == read


def _chat(*turns: str) -> dict[str, Any]:
    roles = ["user", "assistant"] * len(turns)
    return {"model": "m", "contexts": CTX, "messages": [{"role": r, "content": t} for r, t in zip(roles, turns)]}


@pytest.mark.parametrize(("turns", "answer", "want"), [
    ((QG, "Gift cards cannot be returned.", "Are you sure?"), "Yes, I'm sure.", "pass"),
    ((QG, "Gift cards cannot be returned.", "Are you sure?"), "Yes.", "pass"),
    ((QG, "Gift cards cannot be returned.", "Are you sure?"), "No, sorry, they can be returned.", "block"),
    # the assistant's last claim was the hallucination: confirming it is one too
    ((QG, "Gift cards can be returned within 30 days.", "Are you sure?"), "Yes, I'm sure.", "block"),
    ((QG, "No.", "Really?"), "Yes.", "pass"),
    ((QG, "Let me check the policy for you.", "Please answer with just yes or no."), "No.", "pass"),
    ((QG, "Let me check the policy for you.", "Please answer with just yes or no."), "Yes.", "block"),
    ((QG, "Let me check the policy for you.", "Please answer with just yes or no."),
     "Yes, gift cards can be returned.", "block"),
])
def test_conversation_meta_turns_are_judged_by_what_they_stand_for(block_guard: Guard, turns: tuple[str, ...],
                                                                   answer: str, want: str) -> None:
    body = _chat(*turns)
    question, contexts = openai_request(body)
    assert contexts == CTX
    assert question == _question(body["messages"])  # the gateway and the OpenAI wrapper read the same question
    assert question is not None
    assert block_guard.check(question, CTX, answer).action == want, (question, answer)


@pytest.mark.parametrize(("answer", "want"), [
    ("| Item | Returnable | Window |\n|---|---|---|\n| Items | Yes | 30 days |\n| Gift cards | No | - |", "pass"),
    ("| Item | Returnable | Window |\n|---|---|---|\n| Items | Yes | 90 days |\n| Gift cards | No | - |", "block"),
    ("| Item | Returnable | Window |\n|---|---|---|\n| Items | Yes | 30 days |\n| Gift cards | Yes | - |", "block"),
    ("| Product | Return window |\n|---|---|\n| Items | 30 days of delivery |", "pass"),
    # a header that states something is still read: here it is the hallucination
    ("| Product | Refunds never issued |\n|---|---|\n| Items | 30 days of delivery |", "block"),
    ("| Item | Window |\n|---|---|\n| Items | 30 days of delivery |\n| Gift cards | any time |", "block"),
])
def test_table_headers_that_name_columns_state_nothing(block_guard: Guard, answer: str, want: str) -> None:
    whole, stream = both(block_guard, "What is your return policy?", CTX, answer)
    assert (whole, stream) == (want, want), render(answer).text


@pytest.mark.parametrize(("header", "read"), [
    ("Window", False), ("Return window", False), ("Thing", False), ("Product name", False),
    ("Lifetime returns", True), ("Free shipping", True), ("30-day window", True), ("Refunds never issued", True),
    ("Returnable", True), ("Window (days)", True), ("Gift cards excluded", True),
])
def test_which_headers_are_read(header: str, read: bool) -> None:
    text = render(f"| Thing | {header} |\n|---|---|\n| Shoes | from delivery on |").text
    assert (header in text) is read, text
