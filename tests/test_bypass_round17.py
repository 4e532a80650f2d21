"""Block mode: a bare reply ("Yes.", "No.") read with the question it answers, however the question is put
(session 9; real gateway, real model, scripted upstream, each hallucination blocked as a JSON answer and as a stream,
its faithful twin delivered byte for byte):

- a question asked indirectly ("Do you know if I can return a gift card?", "Please tell me whether ...", "I wonder
  if ..."), with a tag ("Gift cards can be returned, right?") or after a condition ("If I buy a gift card, can I
  return it?") is answered by the statement of the clause inside, not of the frame ("You do know if ...");
- a follow-up that names only a new noun phrase ("And a gift card?", "What about jackets?", "Gift cards too?", "And on
  Mondays?") asks the user's question before it with that phrase in its place;
- a bare reply to a question that still points at nothing the guard can read ("Can I return that one?", "mine?"), or
  that no statement can be built from ("Returnable?", "I want to return it."), or with no question at all, is
  unchecked: block mode blocks it with the reason. A reply followed by a claim is judged on that claim (a stream holds
  the reply until the sentence after it completes)."""

from __future__ import annotations

import httpx
import pytest
from test_bypass import (  # noqa: F401 - fixtures
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
    words_stream,
)
from test_bypass_round5 import CTX
from test_bypass_round13 import post_conversation

from block_mode import block_guard, both  # noqa: F401 - fixture

from guardrail.checks.claims import points_at_nothing, question_in_conversation, yes_no_statement
from guardrail.guard import Guard
from guardrail.telemetry import Telemetry


@pytest.mark.parametrize(("question", "yes", "no"), [
    ("Do you know if I can return a gift card?", "You can return a gift card.", "You cannot return a gift card."),
    ("Can you tell me whether gift cards can be returned?", "Gift cards can be returned.",
     "Gift cards cannot be returned."),
    ("Could you check if gift cards are refundable?", "Gift cards are refundable.", "Gift cards are not refundable."),
    ("I wonder whether a gift card can be returned.", "A gift card can be returned.",
     "A gift card cannot be returned."),
    ("Please tell me if I can return a gift card.", "You can return a gift card.", "You cannot return a gift card."),
    ("Hi, I'd like to know if I am eligible for a refund.", "You are eligible for a refund.",
     "You are not eligible for a refund."),
    ("Do you think I can return a gift card?", "You can return a gift card.", "You cannot return a gift card."),
    ("Would you say gift cards are refundable?", "Gift cards are refundable.", "Gift cards are not refundable."),
    ("Is it true that gift cards can be returned?", "Gift cards can be returned.", "Gift cards cannot be returned."),
    ("Gift cards can be returned, right?", "Gift cards can be returned.", "Gift cards cannot be returned."),
    ("I'm eligible for a refund, correct?", "You are eligible for a refund.", "You are not eligible for a refund."),
    ("Gift cards can be returned, can't they?", "Gift cards can be returned.", "Gift cards cannot be returned."),
    ("If I buy a gift card, can I return it?", "If you buy a gift card, you can return it.",
     "If you buy a gift card, you cannot return it."),
    # the plain shapes are read as before
    ("Can gift cards be returned?", "Gift cards can be returned.", "Gift cards cannot be returned."),
    ("Does the Basic plan include support?", "The Basic plan includes support.",
     "The Basic plan does not include support."),
    ("Does the return policy exclude gift cards?", "The return policy excludes gift cards.",
     "The return policy does not exclude gift cards."),
    ("Gift cards can't be returned, can they?", "Gift cards can be returned.", "Gift cards can't be returned."),
    ("Gift cards can't be returned, right?", "Gift cards can't be returned.", "Gift cards can be returned."),
    ("That sounds great. Can I return gift cards?", "You can return gift cards.", "You cannot return gift cards."),
    ("I bought a gift card. Can I return it?", "You can return a gift card.", "You cannot return a gift card."),
])
def test_a_question_asked_indirectly_is_answered_by_its_clause(question: str, yes: str, no: str) -> None:
    assert yes_no_statement(question, True) == yes
    assert yes_no_statement(question, False) == no


@pytest.mark.parametrize("question", ["Do you know where the store is?", "Please tell me if.",
                                      "I wonder whether gift cards.", "Returnable?",
                                      "Can I return gift cards? How long do I have?"])
def test_a_frame_around_no_clause_makes_no_statement(question: str) -> None:
    assert yes_no_statement(question, True) is None or "know" in yes_no_statement(question, True)


@pytest.mark.parametrize(("question", "earlier", "read"), [
    ("And a gift card?", ["Can I return a jacket?"], "Can I return a gift card?"),
    ("What about gift cards?", ["Can I return a jacket?"], "Can I return gift cards?"),
    ("How about a gift card?", ["Can I return a jacket?"], "Can I return a gift card?"),
    ("And if it's a gift card?", ["Can I return a jacket?"], "Can I return a gift card?"),
    ("And graduate students?", ["Can students take 18 credits?"], "Can graduate students take 18 credits?"),
    ("What about the Pro plan?", ["Does the Basic plan include priority support?"],
     "Does the Pro plan include priority support?"),
    ("And on Mondays?", ["Is the store open on Sundays?"], "Is the store open on Mondays?"),
    # nothing new named, or no question before it: as written
    ("And those?", ["Can I return a jacket?"], "And those?"),
    ("And a gift card?", ["I like jackets."], "And a gift card?"),
    ("And a gift card?", [], "And a gift card?"),
])
def test_a_follow_up_asks_the_question_before_it_of_the_new_phrase(question: str, earlier: list[str],
                                                                   read: str) -> None:
    assert question_in_conversation(question, earlier) == read


def test_politeness_is_no_referent() -> None:
    assert question_in_conversation("Please tell me if I can return it.", ["I bought a gift card."]) == \
        "Please tell me if I can return a gift card."


@pytest.mark.parametrize(("statement", "points"), [
    ("You can return it.", True), ("You can return that one.", True), ("You can return this.", True),
    ("You can return those within 30 days.", True), ("You can return yours.", True),
    ("You can return this jacket.", False), ("You can return a gift card.", False),
    ("If you buy a gift card, you can return it.", False), ("It is possible to return a gift card.", False),
])
def test_what_still_points_at_nothing(statement: str, points: bool) -> None:
    assert points_at_nothing(statement) is points


# --------------------------------------------------------------------------- through the gateway
def _answer(text: str, stream: bool) -> str:
    return script(sse(*words_stream(text)), ctype="text/event-stream") if stream else script(dumps(chat(text)))


U = "user"
JACKET = [{"role": U, "content": "Can I return an item?"}, {"role": "assistant", "content": "Yes, within 30 days."}]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("messages", [
    [{"role": U, "content": "Do you know if I can return a gift card?"}],
    [{"role": U, "content": "Could you check whether gift cards can be returned?"}],
    [{"role": U, "content": "Gift cards can be returned, right?"}],
    [{"role": U, "content": "If I buy a gift card, can I return it?"}],
    [{"role": U, "content": "I bought a gift card."}, {"role": U, "content": "Please tell me if I can return it."}],
    [*JACKET, {"role": U, "content": "And a gift card?"}],
    [*JACKET, {"role": U, "content": "What about gift cards?"}],
], ids=["know-if", "check-whether", "tag", "condition", "please-tell-me", "and-np", "what-about"])
def test_a_reply_to_a_question_put_another_way_is_read_with_it(gw: tuple[str, Telemetry], stream: bool,
                                                               messages: list[dict[str, str]]) -> None:
    assert_blocked(post_conversation(gw[0], _answer("Yes.", stream), messages))
    sid = _answer("No.", stream)
    assert_delivered(post_conversation(gw[0], sid, messages), sid)


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("messages", [
    [{"role": U, "content": "Can I return that one?"}],
    [{"role": U, "content": "Can I return mine?"}],
    [{"role": U, "content": "Returnable?"}],
    [{"role": U, "content": "I bought a gift card."}, {"role": U, "content": "I want to return it."}],
    [{"role": U, "content": "Can I return a gift card?"},
     {"role": U, "content": [{"type": "image_url", "image_url": {"url": "https://example.com/card.png"}}]}],
], ids=["that-one", "mine", "no-verb", "statement", "image-only"])
def test_a_bare_reply_that_cannot_be_read_is_unchecked(gw: tuple[str, Telemetry], stream: bool,
                                                       messages: list[dict[str, object]]) -> None:
    for reply in ("Yes.", "No."):
        r = post_conversation(gw[0], _answer(reply, stream), messages)  # type: ignore[arg-type]
        assert_blocked(r)
        if not stream:
            assert "cannot be judged" in r.json()["error"]["message"]
    # a claim of its own is judged as usual
    sid = _answer("Items can be returned within 30 days of delivery.", stream)
    assert_delivered(post_conversation(gw[0], sid, messages), sid)  # type: ignore[arg-type]


def test_a_reply_with_a_claim_after_it_is_judged_on_the_claim(block_guard: Guard) -> None:
    guard = block_guard
    for question in ("Can I return that one?", ""):
        assert guard.check(question, CTX, "Yes.").action == "block"
        assert guard.check(question, CTX, "Yes. Items can be returned within 30 days of delivery.").action == "pass"
        assert guard.check(question, CTX, "Yes. Gift cards can be returned within 30 days.").action == "block"


# --------------------------------------------------------------------------- one text per field of a streamed answer
def _responses(*deltas: tuple[str, int, int, str]) -> list[dict[str, object]]:
    created = {"type": "response.created", "response": {"id": "r1", "object": "response", "status": "in_progress",
                                                        "output": []}}
    done = {"type": "response.completed", "response": {"id": "r1", "object": "response", "status": "completed"}}
    return [created, *({"type": kind, "output_index": item, "content_index": part, "item_id": f"m{item}",
                        "delta": text} for kind, item, part, text in deltas), done]


ITEMS = "Items can be returned within 30 days of delivery. "
SPLICED = {
    # the guard read "Gift cards cannot be returned within 30 days." in the order the pieces came; a client shows
    # content "... Gift cards can be returned within 30 days." and refusal "not"
    "content+refusal": [chunk({"role": "assistant", "content": ""}), chunk({"content": ITEMS + "Gift cards can"}),
                        chunk({"refusal": "not"}), chunk({"content": " be returned within 30 days."}),
                        chunk({}, finish="stop")],
    "content+transcript": [chunk({"content": ITEMS + "Gift cards can"}), chunk({"audio": {"id": "a", "transcript": "not"}}),
                           chunk({"content": " be returned within 30 days."}), chunk({}, finish="stop")],
    "two tool calls": [
        chunk({"tool_calls": [{"index": 0, "id": "t0", "type": "function",
                               "function": {"name": "reply", "arguments": '{"answer": "' + ITEMS + "Gift cards can"}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "t1", "type": "function",
                               "function": {"name": "note", "arguments": '{"answer": "not'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ' be returned within 30 days."}'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": '"}'}}]}), chunk({}, finish="tool_calls")],
    "responses two parts": _responses(("response.output_text.delta", 0, 0, ITEMS + "Gift cards can"),
                                      ("response.output_text.delta", 0, 1, "not"),
                                      ("response.output_text.delta", 0, 0, " be returned within 30 days.")),
    "responses two items": _responses(("response.output_text.delta", 0, 0, ITEMS + "Gift cards can"),
                                      ("response.output_text.delta", 1, 0, "not"),
                                      ("response.output_text.delta", 0, 0, " be returned within 30 days.")),
    "responses text+refusal": _responses(("response.output_text.delta", 0, 0, ITEMS + "Gift cards can"),
                                         ("response.refusal.delta", 0, 1, "not"),
                                         ("response.output_text.delta", 0, 0, " be returned within 30 days.")),
}


@pytest.mark.parametrize("case", list(SPLICED))
def test_a_stream_may_not_interleave_two_fields_of_an_answer(gw: tuple[str, Telemetry], case: str) -> None:
    path = "/v1/responses" if case.startswith("responses") else "/v1/chat/completions"
    sid = script(sse(*SPLICED[case]), ctype="text/event-stream")
    r = post_conversation_path(gw[0], sid, path)
    assert_blocked(r)
    assert "Gift cards can be" not in r.text.replace('"', "")


def post_conversation_path(url: str, sid: str, path: str) -> httpx.Response:
    body: dict[str, object] = {"model": "m", "contexts": CTX, "script": sid, "stream": True}
    if path == "/v1/responses":
        body["input"] = "Can I return gift cards?"
    else:
        body["messages"] = [{"role": "user", "content": "Can I return gift cards?"}]
    return httpx.post(url + path, json=body, timeout=60)


def test_fields_that_follow_each_other_are_read_apart() -> None:
    from guardrail.errors import UnreadableError
    from guardrail.wire.deltas import DeltaReader

    # one after the other, each field is its own paragraph: no sentence is read across them
    reader = DeltaReader()
    text = "".join(d.text for ev in (chunk({"content": "Gift cards can"}), chunk({"refusal": "not be returned."}))
                   for d in reader.read(ev))
    assert text == "Gift cards can\n\nnot be returned."
    # a field that takes up again after another one had text is unreadable
    reader = DeltaReader()
    reader.read(chunk({"content": "Gift cards can"}))
    reader.read(chunk({"refusal": "not"}))
    with pytest.raises(UnreadableError, match="interleaves"):
        reader.read(chunk({"content": " be returned."}))


def test_a_faithful_answer_then_a_tool_call_is_delivered(gw: tuple[str, Telemetry]) -> None:
    events = [chunk({"role": "assistant", "content": ""}), chunk({"content": ITEMS}),
              chunk({"tool_calls": [{"index": 0, "id": "t0", "type": "function",
                                     "function": {"name": "lookup", "arguments": '{"order": "'}}]}),
              chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'Items can be returned."}'}}]}),
              chunk({}, finish="tool_calls")]
    sid = script(sse(*events), ctype="text/event-stream")
    assert_delivered(post_conversation_path(gw[0], sid, "/v1/chat/completions"), sid)


# --------------------------------------------------------------------------- lists, lead-ins, questions the answer asks
PLANS = ["The Basic plan costs $10 per month and includes 5 GB of storage. The Pro plan costs $25 per month and "
         "includes 100 GB of storage and priority support. The Basic plan does not include priority support."]


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), [
    # a list's items complete the line before them
    ("What does the Basic plan include?", PLANS, "The Basic plan includes:\n- 5 GB of storage\n- Priority support",
     "block"),
    ("What does the Basic plan include?", PLANS, "The Basic plan includes:\n- 5 GB of storage", "pass"),
    ("What does the Pro plan include?", PLANS, "Here is what the Pro plan includes:\n- 100 GB of storage\n"
     "- Priority support", "pass"),
    ("What can be returned?", CTX, "- Gift cards:\n  - returnable within 30 days of delivery", "block"),
    ("What can be returned?", CTX, "- Items:\n  - returnable within 30 days of delivery", "pass"),
    # a lead-in that only announces what follows claims nothing
    ("How do returns work?", CTX, "The policy says:\n- Items can be returned within 30 days of delivery.\n"
     "- Gift cards cannot be returned.", "pass"),
    ("How do returns work?", CTX, "According to the documents:\n- Items can be returned within 30 days of delivery.",
     "pass"),
    ("How do returns work?", CTX, "Here is what you need to know:\n- Items can be returned within 30 days of delivery.",
     "pass"),
    # a yes/no question the answer asks itself asserts nothing; its reply is read with it
    ("What can be returned?", CTX, "### Can gift cards be returned?\nNo.", "pass"),
    ("What can be returned?", CTX, "**Can gift cards be returned?**\nNo.", "pass"),
    ("What can be returned?", CTX, "### Can gift cards be returned?\nNo, gift cards cannot be returned.", "pass"),
    ("What can be returned?", CTX, "Q: Can gift cards be returned?\nA: No, gift cards cannot be returned.", "pass"),
    ("What can be returned?", CTX, "### Can gift cards be returned?\nYes.", "block"),
    ("What can be returned?", CTX, "Q: Can gift cards be returned?\nA: Yes, within 30 days.", "block"),
    # footnote and superscript markers are references, a GitHub alert's first line a title
    ("How do returns work?", CTX, "Items can be returned within 30 days of delivery.[^1] Refunds are issued to the "
     "original payment method within 5 business days.[^2]", "pass"),
    ("How do returns work?", CTX, "Items can be returned within 30 days of delivery.\u00b9 Refunds are issued to the "
     "original payment method within 5 business days.\u00b2", "pass"),
    ("How do returns work?", CTX, "Items can be returned within 30 days of delivery.\u00b9 Gift cards can be returned "
     "within 30 days.\u00b2", "block"),
    ("How do returns work?", CTX, "Items can be returned within 30 days of delivery.\n\n> [!NOTE]\n> Refunds are "
     "issued to the original payment method within 5 business days.", "pass"),
])
def test_answer_shapes_are_read_as_a_reader_reads_them(block_guard: Guard, question: str, contexts: list[str],
                                                       answer: str, want: str) -> None:
    guard = block_guard
    assert both(guard, question, contexts, answer) == (want, want)


@pytest.mark.parametrize(("question", "answer", "want"), [
    ("Gift cards can't be returned, can they?", "No, they can't.", "pass"),
    ("Gift cards can't be returned, can they?", "Yes, they can.", "block"),
    ("Gift cards can't be returned, right?", "Right.", "pass"),
    ("Can I return gift cards? How long do I have?", "Yes.", "block"),
])
def test_tags_and_compound_subjects(block_guard: Guard, question: str, answer: str, want: str) -> None:
    guard = block_guard
    assert both(guard, question, CTX, answer) == (want, want)


OFFER = ["The holiday return offer is valid until January 31, 2026. Members earn 2 points per dollar spent."]


@pytest.mark.parametrize(("answer", "want"), [
    ("The holiday return offer is valid until 2026-01-31.", "pass"),  # the contexts' date, written the ISO way
    ("The holiday return offer is valid until 2026-03-31.", "block"),
])
def test_an_iso_date_is_read_as_the_contexts_spell_it(block_guard: Guard, answer: str, want: str) -> None:
    from guardrail.checks.grounding import as_context_numbers, number_spellings

    assert as_context_numbers("until 2026-01-31.", number_spellings(OFFER)) == "until January 31, 2026."
    guard = block_guard
    assert both(guard, "How long is the holiday offer valid?", OFFER, answer) == (want, want)


GC = ["Gift cards cannot be returned or refunded. Items can be returned within 30 days of purchase with a receipt. "
      "Refunds are issued to the original payment method."]
C2 = ["Items can be returned within 30 days of purchase with a receipt. The store is open on Sundays from 10am to 5pm. "
      "Members can bring their kids to the pool on weekends. It will rain in Paris tomorrow, according to the forecast."]


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), [
    # a lead-in that says something is judged; a clause before a list is judged as written too (round 18)
    ("Can I return a gift card?", GC, "Here is why gift cards are always refundable:\n- Refunds are issued to the "
     "original payment method.", "block"),
    ("Can I return a gift card?", GC, "The policy says gift cards are fully refundable:\n- Refunds are issued to the "
     "original payment method.", "block"),
    ("Can I return a gift card?", GC, "Gift cards can be refunded in cash at:\n- Refunds are issued to the original "
     "payment method.", "block"),
    # the yes of a reply to the answer's own question is judged beside the claim after it
    ("What is the return policy?", GC, "Can gift cards be returned? Yes, items can be returned within 30 days.",
     "block"),
    # an exponent is no footnote
    ("How large is the plot?", ["The plot is 500 metres wide and 40 metres deep."], "The plot is 500 metres\u00b2.",
     "block"),
    # a possessive of the question's subject and the weather's "it" point at something
    ("Can members bring their kids to the pool?", C2, "Yes.", "pass"),
    ("Will it rain in Paris tomorrow?", C2, "Yes.", "pass"),
    # what follows the question and asks nothing more
    ("Can I return items? Thanks!", C2, "Yes.", "pass"),
    ("Can I return items? Yes or no?", C2, "Yes.", "pass"),
    # a bare reply is read up to the first claim after it, in a stream as in the whole answer
    ("Can I return it?", GC, "Yes. Here are the details:\n- Items can be returned within 30 days.", "pass"),
    ("Can I return it?", GC, "Yes[^1]. Items can be returned within 30 days.", "pass"),
])
def test_round_18(block_guard: Guard, question: str, contexts: list[str], answer: str, want: str) -> None:
    guard = block_guard
    assert both(guard, question, contexts, answer) == (want, want)


def test_a_space_between_fields_interleaves_nothing() -> None:
    from guardrail.wire.deltas import DeltaReader

    reader = DeltaReader()
    reader.read(chunk({"content": "Items can be returned."}))
    reader.read(chunk({"tool_calls": [{"index": 0, "id": "t", "type": "function",
                                       "function": {"name": "f", "arguments": '{"q": "returns"}'}}]}))
    assert reader.read(chunk({"content": "\n"}))  # read, not refused


RET19 = ["Items can be returned within 30 days of delivery for a full refund. Gift cards cannot be returned. Refunds are "
         "issued to the original payment method within 5-7 business days. Sale items can only be exchanged, not refunded."]
FEES = ["The late fee is $15. Items can be returned within 30 days of delivery."]


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), [
    # round 19: a "no" with the corrected amount claims that amount
    ("Do I have 60 days to return items?", RET19, "No, 30 days.", "pass"),
    ("Do I have 60 days to return items?", RET19, "No, 90 days.", "block"),
    ("Is the late fee $25?", FEES, "No, $15.", "pass"),
    ("Is the late fee $25?", FEES, "No, $20.", "block"),
    # summary lead-ins before the yes or no
    ("Can I return gift cards?", RET19, "TL;DR: no.", "pass"),
    ("Can I return gift cards?", RET19, "Bottom line: yes.", "block"),
    ("Can I return gift cards?", RET19, "So to answer your question: no.", "pass"),
    ("Can I return gift cards?", RET19, "Also yes.", "block"),
    # a greeting before the question
    ("Quick q: can gift cards be returned?", RET19, "Yes, within 30 days.", "block"),
])
def test_round_19(block_guard: Guard, question: str, contexts: list[str], answer: str, want: str) -> None:
    guard = block_guard
    assert both(guard, question, contexts, answer) == (want, want)


PLAN19 = ["The Pro plan costs $20 per month and includes priority support and 100 GB of storage. The Basic plan costs $5 "
          "per month and includes 10 GB of storage. The Basic plan does not include priority support."]


@pytest.mark.parametrize(("contexts", "answer", "want"), [
    # round 19: a second clause that echoes the first with another subject is a claim of its own
    (RET19, "Gift cards can be returned, but sale items can't.", "block"),
    (RET19, "Items can be returned, but gift cards can't.", "pass"),
    (RET19, "Items can be returned; gift cards cannot.", "pass"),
    (PLAN19, "The Basic plan includes priority support, but the Pro plan doesn't.", "block"),
    (PLAN19, "The Pro plan includes priority support, but the Basic plan doesn't.", "pass"),
])
def test_a_contrast_is_two_claims(block_guard: Guard, contexts: list[str], answer: str, want: str) -> None:
    from guardrail.checks.claims import contrast_claims

    assert contrast_claims("Gift cards can be returned, but sale items can't.") == (
        "Gift cards can be returned.", "Sale items cannot be returned.")
    guard = block_guard
    assert both(guard, "What is the policy?", contexts, answer) == (want, want)


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), [
    # round 19: a yes or no after the topic it is about answers the question (or says it of that topic)
    ("Does the Basic plan include priority support?", PLAN19, "As for the Basic plan, yes.", "block"),
    ("Does the Basic plan include priority support?", PLAN19, "The Basic plan \u2014 no.", "pass"),
    ("Does the Basic plan include priority support?", PLAN19, "For the Basic plan, the answer is yes.", "block"),
    ("Can I return items?", RET19, "As for items, yes.", "pass"),
    ("Can I return items?", RET19, "As for gift cards, no.", "pass"),
])
def test_a_reply_after_its_topic(block_guard: Guard, question: str, contexts: list[str], answer: str,
                                 want: str) -> None:
    guard = block_guard
    assert both(guard, question, contexts, answer) == (want, want)


def test_the_statement_a_reply_after_its_topic_makes(block_guard: Guard) -> None:
    # ("You cannot return items." itself reads entailed at 0.87 against RET19: the window that joins "Items can be
    # returned ..." and "Gift cards cannot be returned." is read as support; a known limit of the model)
    guard = block_guard
    v = guard.check("Can I return items?", RET19, "As for items, no.")
    assert v.evaluation is not None and v.evaluation.faithfulness is not None
    assert [s.hypothesis for s in v.evaluation.faithfulness.sentences] == ["You cannot return items."]


@pytest.mark.parametrize(("answer", "want"), [
    # round 19: a sentence adverb is no part of the claim's subject (which the subject-conflict check reads)
    ("Typically, the Basic plan includes priority support.", "block"),
    ("Typically, the Pro plan includes priority support.", "pass"),
])
def test_a_sentence_adverb_is_no_subject(block_guard: Guard, answer: str, want: str) -> None:
    from guardrail.checks.claims import claim_subject

    assert claim_subject("Typically, the Basic plan includes priority support.") == "the Basic plan"
    guard = block_guard
    assert both(guard, "What does each plan include?", PLAN19, answer) == (want, want)


@pytest.mark.parametrize(("answer", "want"), [
    # round 19: restating the question claims nothing; more in the same sentence is judged
    ('You asked "Can I return a gift card?" No, you can\'t.', "pass"),
    ("You're asking whether gift cards can be returned. They cannot.", "pass"),
    ("You asked whether gift cards can be returned within 90 days \u2014 they can.", "block"),
])
def test_a_restated_question_claims_nothing(block_guard: Guard, answer: str, want: str) -> None:
    guard = block_guard
    assert both(guard, "Can I return a gift card?", RET19, answer) == (want, want)
