"""Block mode, classes found by the probes of round 13 (real gateway, real model, scripted upstream; each
hallucination blocked as a JSON answer and as a stream, its faithful twin delivered byte for byte):

- a noun phrase that only points back ("These items ...", "That one ...", "Such products ...", "Both can ...") is
  read as what it points at, like a pronoun; a phrase whose head names a kind of its own ("This decision ...") is
  kept as written;
- a charset other than UTF-8 on an answer: a client that honours ``charset=utf-7`` reads other text than the guard
  checked, so the answer is unreadable (JSON, stream, middleware);
- ``/v1/completions`` with a ``prompt`` list: one string is the question; several prompts or token ids leave the
  question unknown, so the gateway refuses the request with a 400 and the middleware's answer is unreadable;
- sentences whose claim sits in a frame: a yes/no word before a clause that cannot stand alone ("Yes, because
  ..."), opinions ("If you ask me, ..."), presupposing and rhetorical questions ("Did you know ...?", "Who says
  ...?"), a refusal or an uncertainty before "but"; asides that name members of the subject ("Items (including gift
  cards) ..."); "Label: predicate" lines and a predicate after a bare noun phrase; "The same applies to X."; a
  link's text read as the clause it is ("See [X can ...](url).");
- faithful answers that were blocked: numbers written unlike the context ("1240" against "1,240"), closing
  well-wishes and offers ("Have a great trip!", "Would you like help opening an account?"), "Both plans ..." (a
  determiner, not a pronoun), "No." to "Are there any X?" ("There are no X.").

The gateway, upstream and helpers are ``tests/test_bypass.py``'s."""

from __future__ import annotations

import pytest
import httpx
from test_bypass import (  # noqa: F401 - fixtures
    assert_blocked,
    assert_delivered,
    chat,
    dumps,
    evaluator,
    gw,
    post,
    script,
    sse,
    upstream,
    words_stream,
)
from test_bypass_round5 import CTX
from test_bypass_round6 import assert_blocked_both, assert_delivered_both

from guardrail.checks.claims import resolve_pronouns
from guardrail.telemetry import Telemetry

RETURNS = "What is the return policy?"


@pytest.mark.parametrize(("question", "answer"), [
    ("What about gift cards?", "Such items can be returned within 30 days of delivery."),
    ("Can gift cards be returned?", "Gift cards? That one can be returned within 30 days of delivery."),
    ("Can gift cards be returned?", "Yes, these items can be returned within 30 days of delivery."),
    (RETURNS, "Gift cards are popular gifts. Both can be returned within 30 days of delivery."),
    (RETURNS, "Gift cards are popular gifts. Those products can be returned within 30 days of delivery."),
])
def test_a_noun_phrase_that_points_back_is_read_as_its_referent(gw: tuple[str, Telemetry], question: str,
                                                                answer: str) -> None:
    assert_blocked_both(gw[0], answer, CTX, question)


@pytest.mark.parametrize(("question", "answer"), [
    ("What about gift cards?", "Such items cannot be returned."),
    ("Can gift cards be returned?", "No, these items cannot be returned."),
    (RETURNS, "Items can be returned within 30 days of delivery. Such items are refunded to the original payment "
              "method."),
])
def test_a_faithful_noun_phrase_that_points_back_is_delivered(gw: tuple[str, Telemetry], question: str,
                                                              answer: str) -> None:
    assert_delivered_both(gw[0], answer, CTX, question)


@pytest.mark.parametrize(("sentence", "read"), [
    ("These items can be returned within 30 days.", "Gift cards can be returned within 30 days."),
    ("Such products cannot be returned.", "Gift cards cannot be returned."),
    ("Both can be returned.", "Gift cards can be returned."),
    ("That one is free.", "The Basic plan is free."),
    ("This decision was criticized.", None),  # a head of its own: kept as written
    ("That is correct.", None),
    ("That way, you save money.", None),
    ("You can return these items.", None),  # an object, not a subject that points back
    ("A plan that one can buy is cheap.", None),
])
def test_which_noun_phrases_point_back(sentence: str, read: str | None) -> None:
    assert resolve_pronouns(sentence, ["gift cards", "the Basic plan"]) == read


# --------------------------------------------------------------------------- claims in frames
PLAN = ["The Pro plan includes priority support and a dedicated account manager. The Basic plan does not include "
        "priority support. Both plans include email support."]
BASIC = "Does the Basic plan include priority support?"


@pytest.mark.parametrize(("contexts", "question", "answer"), [
    (PLAN, BASIC, "Yes, as the Pro plan includes priority support."),
    (CTX, "Can I return a gift card?", "Yes, because items can be returned within 30 days of delivery."),
    (CTX, "Can I return a gift card?", "They can, as long as they are unused."),
    (CTX, RETURNS, "If you ask me, gift cards can be returned within 30 days of delivery."),
    (CTX, RETURNS, "I believe gift cards can be returned within 30 days of delivery."),
    (CTX, RETURNS, "Who says gift cards can't be returned?"),
    (PLAN, "What does the Basic plan include?", "Isn't it great that the Basic plan includes priority support?"),
    (CTX, RETURNS, "Did you know gift cards can be returned within 30 days of delivery?"),
    (CTX, RETURNS, "I couldn't find that in the documents, but gift cards can be returned within 30 days of delivery."),
    (PLAN, "What does the Basic plan include?", "I'm not sure, but the Basic plan includes priority support."),
    (CTX, RETURNS, "Items (including gift cards) can be returned within 30 days of delivery."),
    (CTX, RETURNS, "Items, such as gift cards, can be returned within 30 days of delivery."),
    (CTX, RETURNS, "**Gift cards:** returnable within 30 days of delivery."),
    (CTX, RETURNS, "Gift cards. Returnable within 30 days of delivery."),
    (CTX, RETURNS, "See [gift cards can be returned within 30 days](https://shop.example.com/returns)."),
    (CTX, RETURNS, "Items can be returned within 30 days of delivery. The same applies to gift cards."),
    (CTX, RETURNS, "Gift cards are not non-returnable."),
    (CTX, RETURNS, "Gift cards are no longer excluded from returns."),
])
def test_a_claim_in_a_frame_is_judged_for_what_it_asserts(gw: tuple[str, Telemetry], contexts: list[str],
                                                          question: str, answer: str) -> None:
    assert_blocked_both(gw[0], answer, contexts, question)


CREDITS = ["Students may take up to 18 credits per semester. The free tier is limited to 100 requests per minute."]


@pytest.mark.parametrize(("question", "answer"), [
    ("Can I take 20 credits?", "No, since students may take up to 18 credits per semester."),
    ("Can I make 200 requests per minute on the free tier?",
     "No, because the free tier is limited to 100 requests per minute."),
])
def test_a_reply_whose_reason_implies_a_comparison_is_delivered(gw: tuple[str, Telemetry], question: str,
                                                               answer: str) -> None:
    # the reason is judged as a claim; "You cannot take 20 credits." is a comparison the model reads as contradicted
    # (0.6-0.9), so it fails only when the contexts deny it outright
    assert_delivered_both(gw[0], answer, CREDITS, question)


FEES = ["There are no monthly maintenance fees. A $10 fee applies to each withdrawal after the sixth in a month."]
TRIAL = ["The trial enrolled 1,240 adults and ran for twelve months."]


@pytest.mark.parametrize(("contexts", "question", "answer"), [
    (PLAN, BASIC, "No, as only the Pro plan includes priority support."),
    (CTX, RETURNS, "Items (except gift cards) can be returned within 30 days of delivery."),
    (CTX, RETURNS, "**Gift cards:** cannot be returned."),
    (CTX, RETURNS, "I believe gift cards cannot be returned."),
    (CTX, RETURNS, "Items can be returned within 30 days of delivery. Have a great day!"),
    (CTX, RETURNS, "Items can be returned within 30 days of delivery. Would you like help returning an item?"),
    (CTX, RETURNS, "Items can be returned within 30 days of delivery. Feel free to reach out with more questions."),
    (PLAN, "What does the Basic plan include?", "Both plans include email support."),
    (FEES, "Are there any monthly fees?", "No."),
    (TRIAL, "How many adults did the trial enroll?", "The trial enrolled 1240 adults."),
    (CTX, RETURNS, "## Returns overview\n\nItems can be returned within 30 days of delivery."),
    (CTX, "Can I return shoes?", "Sure thing \u2014 just send them back within 30 days of delivery."),
])
def test_a_faithful_answer_in_these_shapes_is_delivered(gw: tuple[str, Telemetry], contexts: list[str], question: str,
                                                       answer: str) -> None:
    assert_delivered_both(gw[0], answer, contexts, question)


# --------------------------------------------------------------------------- the wire
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("charset", ["utf-7", "UTF-16", "cp037"])
def test_an_answer_in_another_charset_is_unreadable(gw: tuple[str, Telemetry], stream: bool, charset: str) -> None:
    # "+ACA-..." is a second sentence to a client that decodes UTF-7 (requests, httpx and aiohttp honour charset=)
    hidden = "Gift cards cannot be returned.+ACAARwBpAGYAdAAgAGMAYQByAGQAcwAgAGMAYQBuACAAYgBlACAAcgBlAHQAdQByAG4AZQBkAC4-"
    if stream:
        sid = script(sse(*words_stream(hidden)), ctype=f"text/event-stream; charset={charset}")
    else:
        sid = script(dumps(chat(hidden)), ctype=f"application/json; charset={charset}")
    r = post(gw[0], sid, question="Can gift cards be returned?")
    assert "ACAARwBp" not in r.text, r.text
    assert "UTF-8" in r.text, r.text  # the reason says what to do


@pytest.mark.parametrize("charset", ["utf-8", "UTF8", "us-ascii", '"utf-8"'])
def test_an_answer_in_utf8_with_its_charset_is_delivered(gw: tuple[str, Telemetry], charset: str) -> None:
    sid = script(dumps(chat("Gift cards cannot be returned.")), ctype=f"application/json; charset={charset}")
    assert_delivered(post(gw[0], sid, question="Can gift cards be returned?"), sid)


def completions(text: str) -> dict[str, object]:
    return {"id": "c1", "object": "text_completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "text": text, "finish_reason": "stop"}]}


def post_completion(url: str, sid: str, prompt: object) -> httpx.Response:
    body = {"model": "m", "prompt": prompt, "contexts": CTX, "script": sid}
    return httpx.post(url + "/v1/completions", json=body, timeout=60)


def test_a_prompt_list_of_one_is_the_question(gw: tuple[str, Telemetry]) -> None:
    sid = script(dumps(completions("Yes.")))
    assert_blocked(post_completion(gw[0], sid, ["Can gift cards be returned?"]))
    sid = script(dumps(completions("No.")))
    assert_delivered(post_completion(gw[0], sid, ["Can gift cards be returned?"]), sid)


@pytest.mark.parametrize("prompt", [["Can gift cards be returned?", "Can items be returned?"], [[9, 8, 7]], [1, 2, 3]])
def test_a_question_the_guard_cannot_read_is_refused_before_the_upstream(gw: tuple[str, Telemetry],
                                                                         prompt: object) -> None:
    sid = script(dumps(completions("Yes.")))
    r = post_completion(gw[0], sid, prompt)
    assert r.status_code == 400, r.text
    assert "prompt" in r.json()["error"]["message"]


def test_the_middleware_does_not_judge_an_answer_to_an_unreadable_prompt() -> None:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from guardrail.asgi import GuardrailMiddleware
    from guardrail.checks.evaluator import Evaluator
    from guardrail.guard import Guard
    from guardrail.policy import Policy
    from guardrail.scorers.nli import NLIScorer, default_nli_model

    async def endpoint(request: Request) -> JSONResponse:
        return JSONResponse(completions("Yes."))

    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block"))
    app = GuardrailMiddleware(Starlette(routes=[Route("/v1/completions", endpoint, methods=["POST"])]), guard=guard)
    with TestClient(app) as client:
        r = client.post("/v1/completions", json={"prompt": ["Can gift cards be returned?", "Is it free?"],
                                                 "contexts": CTX})
        assert r.status_code >= 400 and "prompt" in r.text, r.text  # blocked with the reason, not judged
        r = client.post("/v1/completions", json={"prompt": ["Can gift cards be returned?"], "contexts": CTX})
        assert r.status_code >= 400, r.text  # one prompt: read, and "Yes." is judged against it


# --------------------------------------------------------------------------- the rules, by table
@pytest.mark.parametrize(("sentence", "claim"), [
    ("If you ask me, gift cards can be returned.", ("gift cards can be returned.", True)),
    ("Personally, I'd say gift cards can be returned.", ("gift cards can be returned.", True)),
    ("I'm pretty sure gift cards can be returned.", ("gift cards can be returned.", True)),
    ("Who says gift cards can't be returned?", ("gift cards can't be returned.", False)),
    ("Did you know gift cards can be returned?", ("gift cards can be returned.", True)),
    ("I couldn't find that in the documents, but gift cards can be returned.", ("gift cards can be returned.", True)),
    ("See gift cards can be returned within 30 days.", ("gift cards can be returned within 30 days.", True)),
    ("See the returns page for details.", None),  # no clause: read as written
    ("Items can be returned, but gift cards cannot.", None),
])
def test_frames_around_a_claim(sentence: str, claim: tuple[str, bool] | None) -> None:
    from guardrail.checks.claims import framed_claim

    assert framed_claim(sentence) == claim


@pytest.mark.parametrize(("sentence", "claims"), [
    ("Items (including gift cards) can be returned.", ["Items can be returned.", "Gift cards can be returned."]),
    ("Items, except gift cards, can be returned.", ["Items can be returned.", "Gift cards cannot be returned."]),
    ("Returns, especially of gift cards, are slow.", None),  # the aside is no member of the subject
    ("Refunds are issued (like all payments) within 5 days.", None),  # the aside is not on the subject
])
def test_asides_that_name_members_of_the_subject(sentence: str, claims: list[str] | None) -> None:
    from guardrail.checks.claims import aside_claims

    assert aside_claims(sentence) == claims


@pytest.mark.parametrize(("line", "claim"), [
    ("Gift cards: returnable within 30 days.", "Gift cards are returnable within 30 days."),
    ("Gift cards: cannot be returned.", "Gift cards cannot be returned."),
    ("Priority support: included in the Pro plan.", "Priority support is included in the Pro plan."),
    ("Gift cards: they cannot be returned.", None),  # a statement of its own
    ("Note: gift cards are fine.", None),  # a label that introduces a statement
    ("Q: can I return it?", None),
])
def test_label_value_lines(line: str, claim: str | None) -> None:
    from guardrail.checks.claims import label_claim

    assert label_claim(line) == claim


@pytest.mark.parametrize(("sentence", "plain"), [
    ("Gift cards are not non-returnable.", "Gift cards are returnable."),
    ("It isn't non-refundable.", "It is refundable."),
    ("Priority support is not unavailable.", "Priority support is available."),
    ("Gift cards are no longer excluded.", "Gift cards are not excluded."),
    ("It is not unusual.", "It is not unusual."),  # not an -able adjective: as written
])
def test_double_negations_said_plainly(sentence: str, plain: str) -> None:
    from guardrail.checks.claims import plain_negation

    assert plain_negation(sentence) == plain


def test_numbers_are_read_in_the_contexts_spelling() -> None:
    from guardrail.checks.grounding import as_context_numbers, number_spellings

    spellings = number_spellings(["The trial enrolled 1,240 adults over two weeks; about 14 days later, 0.5 s."])
    assert as_context_numbers("It enrolled 1240 adults over 2 weeks.", spellings) == \
        "It enrolled 1,240 adults over two weeks."
    assert as_context_numbers("It took fourteen days, 0.50 s.", spellings) == "It took 14 days, 0.5 s."
    assert as_context_numbers("One of them; 1241 adults.", spellings) == "One of them; 1241 adults."


@pytest.mark.parametrize(("sentence", "topics"), [
    ("Have a great trip!", []),
    ("Good luck with your savings goals!", ["savings goals"]),
    ("Would you like help opening an account?", ["opening an account"]),
    ("Feel free to reach out with more questions.", []),
    ("Enjoy your free upgrade!", None),  # a well-wish that states something ("free") is judged
    ("Good luck getting a refund within 90 days!", None),
])
def test_closing_well_wishes_and_offers(sentence: str, topics: list[str] | None) -> None:
    from guardrail.text import offer_topics

    assert offer_topics(sentence) == topics


# --------------------------------------------------------------------------- a question that points into the conversation
def post_conversation(url: str, sid: str, messages: list[dict[str, str]]) -> httpx.Response:
    return httpx.post(url + "/v1/chat/completions", json={"model": "m", "messages": messages, "contexts": CTX,
                                                          "script": sid}, timeout=60)


@pytest.mark.parametrize("stream", [False, True])
def test_a_pronoun_of_the_question_points_into_the_conversation(gw: tuple[str, Telemetry], stream: bool) -> None:
    # alone, "Can I return it?" + "Yes." claims "You can return it.", entailed by anything returnable
    history = [{"role": "user", "content": "I bought a gift card last week."},
               {"role": "assistant", "content": "Thanks for letting me know."},
               {"role": "user", "content": "Can I return it?"}]

    def answer(text: str) -> str:
        return script(sse(*words_stream(text)), ctype="text/event-stream") if stream else script(dumps(chat(text)))

    assert_blocked(post_conversation(gw[0], answer("Yes."), history))
    sid = answer("No.")
    assert_delivered(post_conversation(gw[0], sid, history), sid)


@pytest.mark.parametrize(("question", "earlier", "read"), [
    ("Can I return it?", ["I bought a gift card last week."], "Can I return a gift card?"),
    ("Is it safe?", ["Should I take ibuprofen?"], "Is ibuprofen safe?"),
    ("Is it possible to return them?", ["I bought two gift cards."], "Is it possible to return two gift cards?"),
    ("Does it include priority support?", ["What does the Basic plan cost?", "The Basic plan costs $8 per month."],
     "Does the Basic plan include priority support?"),
    ("Can I return it?", [], "Can I return it?"),  # nothing before it: as written
    ("How long does shipping take?", ["I bought a gift card."], "How long does shipping take?"),
])
def test_which_question_pronouns_are_read_from_the_conversation(question: str, earlier: list[str], read: str) -> None:
    from guardrail.checks.claims import question_in_conversation

    assert question_in_conversation(question, earlier) == read


def test_the_openai_wrapper_reads_the_question_in_its_conversation() -> None:
    from guardrail.openai import _question

    messages = [{"role": "user", "content": "I bought a gift card last week."},
                {"role": "assistant", "content": "Thanks for letting me know."},
                {"role": "user", "content": "Can I return it?"}]
    assert _question(messages) == "Can I return a gift card?"


# --------------------------------------------------------------------------- round 15: the review of rounds 13-14
@pytest.mark.parametrize("ctype", ["application/json; 'charset'=utf-7", 'application/json; "charset"=utf-7',
                                   "application/json; charset*=''utf-7", "application/json; charset*0=utf-7",
                                   "application/json; CharSet = UTF-7"])
def test_a_charset_in_any_spelling_a_client_reads_is_checked(gw: tuple[str, Telemetry], ctype: str) -> None:
    hidden = "Gift cards cannot be returned.+ACAARwBpAGYAdAAgAGMAYQByAGQAcwAgAGMAYQBuACAAYgBlACAAcgBlAHQAdQByAG4AZQBkAC4-"
    sid = script(dumps(chat(hidden)), ctype=ctype)
    r = post(gw[0], sid, question="Can gift cards be returned?")
    assert "ACAARwBp" not in r.text, r.text


@pytest.mark.parametrize("messages", [None, []])
def test_a_prompt_list_beside_empty_messages_is_still_refused(gw: tuple[str, Telemetry], messages: object) -> None:
    sid = script(dumps(completions("Yes, they can.")))
    body = {"model": "m", "prompt": ["Can gift cards be returned?", "Can items be returned?"], "messages": messages,
            "contexts": CTX, "script": sid}
    r = httpx.post(gw[0] + "/v1/completions", json=body, timeout=60)
    assert r.status_code == 400 and "prompt" in r.text, r.text


def test_a_long_question_is_not_read_for_pronouns(gw: tuple[str, Telemetry]) -> None:
    # resolving every pronoun of a 40 KB message was quadratic on the event loop; /healthz stays responsive
    import time

    from guardrail.checks.claims import question_in_conversation

    started = time.perf_counter()
    assert question_in_conversation("it is " * 8000, ["I bought a gift card."]) == "it is " * 8000
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(("statement", "reason", "over"), [
    ("You can take 24 credits.", "Students may take up to 18 credits per semester.", True),
    ("You cannot take 12 credits.", "Students may take up to 18 credits per semester.", False),
    ("You cannot make 200 requests per minute.", "The free tier is limited to 100 requests per minute.", True),
    ("You can carry over 10 days.", "Unused vacation days can be carried over.", None),  # no bound
    ("You can bring 30 kg.", "Bags may weigh up to 23 pounds.", None),  # other units
])
def test_an_amount_is_compared_with_the_bound_a_reason_states(statement: str, reason: str, over: bool | None) -> None:
    from guardrail.checks.claims import exceeds_bound

    assert exceeds_bound(statement, reason) is over


def test_a_reason_that_states_no_bound_does_not_carry_a_yes() -> None:
    from guardrail.checks.evaluator import Evaluator
    from guardrail.guard import Guard
    from guardrail.policy import Policy
    from guardrail.scorers.nli import NLIScorer, default_nli_model

    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block", retrieval_relevance=None))
    credits = ["Students may take up to 18 credits per semester."]
    assert guard.check("Can I take 24 credits this semester?", credits,
                       "Yes, as students may take up to 18 credits per semester.").action == "block"
    assert guard.check("Can I take 12 credits this semester?", credits,
                       "Yes, as students may take up to 18 credits per semester.").action == "pass"


@pytest.mark.parametrize(("question", "user", "assistant", "read"), [
    ("Can I return it?", ["I bought a gift card last week."],
     ["Thanks for your purchase! A jacket can be returned within 30 days of delivery."], "Can I return a gift card?"),
    ("Can I return them?", ["My order had a jacket and a gift card."], [], "Can I return a jacket and a gift card?"),
    ("Is it true gift cards can be returned?", ["I bought a jacket."], [], "Is it true gift cards can be returned?"),
])
def test_the_users_turns_name_the_referent_before_the_assistants(question: str, user: list[str],
                                                                 assistant: list[str], read: str) -> None:
    from guardrail.checks.claims import question_in_conversation

    assert question_in_conversation(question, user, assistant) == read


@pytest.mark.parametrize(("question", "user", "setting", "read"), [
    ("I have a gift card. Can I return it?", [], [], "Can I return a gift card?"),  # its own message
    ("Can I return it?", [], ["The customer bought a gift card."], "Can I return a gift card?"),  # a system message
    ("Can I return it?", ["My gift card arrived."], [], "Can I return your gift card?"),
    ("Can I return it?", ["I bought a gift card.", "Thanks.", "Okay.", "Hmm.", "Right.", "Sure."], [],
     "Can I return a gift card?"),  # filler turns do not push the referent out of reach
    ("Hello there, hope you are well! Can I return it?", [], [], "Hello there, hope you are well! Can I return it?"),
])
def test_referents_from_every_turn_that_can_name_one(question: str, user: list[str], setting: list[str],
                                                      read: str) -> None:
    from guardrail.checks.claims import question_in_conversation

    assert question_in_conversation(question, user, (), setting) == read


def test_a_referent_in_the_system_message_is_read_by_the_gateway(gw: tuple[str, Telemetry]) -> None:
    messages = [{"role": "system", "content": "The customer bought a gift card."},
                {"role": "user", "content": "Can I return it?"}]
    assert_blocked(post_conversation(gw[0], script(dumps(chat("Yes."))), messages))
    sid = script(dumps(chat("No.")))
    assert_delivered(post_conversation(gw[0], sid, messages), sid)


@pytest.mark.parametrize("stream", [False, True])
def test_a_bare_reply_to_a_question_whose_pronoun_points_at_nothing_is_unchecked(gw: tuple[str, Telemetry],
                                                                                  stream: bool) -> None:
    # "Yes." to "Can I return it?" with nothing that says what "it" is claims "You can return it.", entailed by any
    # context about anything returnable: it cannot be judged, and block mode blocks it with the reason
    def answer(text: str) -> str:
        return script(sse(*words_stream(text)), ctype="text/event-stream") if stream else script(dumps(chat(text)))

    r = post_conversation(gw[0], answer("Yes."), [{"role": "user", "content": "Can I return it?"}])
    assert_blocked(r)
    if not stream:
        assert "points at" in r.json()["error"]["message"]
    # a claim of its own is judged as usual
    sid = answer("Items can be returned within 30 days of delivery.")
    assert_delivered(post_conversation(gw[0], sid, [{"role": "user", "content": "Can I return it?"}]), sid)
    # a bare reply is read with the sentence after it, as the whole answer reads it: its claim is what is judged
    # (a stream holds "Yes." until that sentence completes, instead of judging it alone as "You can return it.")
    sid = answer("Yes. Items can be returned within 30 days of delivery.")
    assert_delivered(post_conversation(gw[0], sid, [{"role": "user", "content": "Can I return it?"}]), sid)
    assert_blocked(post_conversation(gw[0], answer("Yes! Happy to help."), [{"role": "user", "content": "Can I return it?"}]))
