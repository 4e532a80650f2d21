"""Yes/no answers in every shape are read as the statement they make (guardrail.checks.claims.polarity): hedges and
sentiment adverbs around them ("Unfortunately, no.", "I'm afraid not.", "Good news: yes!"), contractions with either
apostrophe ("They can't.", "It’s not."), pronoun echoes of the question's auxiliary ("It is.", "They are not."), and
the symbols and emoji that say yes or no (👍 ✅ ✔️ ☑️ 👌 💯 🆗 🙆 ✓ / 👎 ❌ ❎ ✗ ✘ 🙅 🚫 ⛔), with or without variation
selectors, skin tones and gender signs, repeated.

An attacker's probe of the block-mode gateway found emoji and "For sure." read as no claim (a hallucinated "yes"
passed unjudged) and hedged or contracted "no" answers judged as written (a faithful "Unfortunately not." or "They
can't." blocked). The first part is a table of pure functions; the second runs the shipped model."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import llm_server
import openai
import pytest
from prometheus_client import CollectorRegistry

from guardrail.checks.claims import (
    answer_claim,
    conjunct_statements,
    makes_claim,
    polarity,
    yes_no_answer,
    yes_no_only,
    yes_no_statement,
)
from guardrail.checks.evaluator import Evaluator
from guardrail.checks.faithfulness import FaithfulnessCheck
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.render import render
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.server import create_gateway
from guardrail.telemetry import Telemetry

# --------------------------------------------------------------------------- the statement built (pure functions)

QUESTIONS = [
    # question, the statement a yes makes, the statement a no makes
    ("Can gift cards be returned?", "Gift cards can be returned.", "Gift cards cannot be returned."),
    ("Is the store open on Sundays?", "The store is open on Sundays.", "The store is not open on Sundays."),
    ("Are refunds issued within 30 days?", "Refunds are issued within 30 days.",
     "Refunds are not issued within 30 days."),
    ("Does the warranty cover water damage?", "The warranty covers water damage.",
     "The warranty does not cover water damage."),
    ("Has the order shipped?", "The order has shipped.", "The order has not shipped."),
    ("Will the store be closed on Monday?", "The store will be closed on Monday.",
     "The store will not be closed on Monday."),
    ("Can I return an opened item?", "You can return an opened item.", "You cannot return an opened item."),
    ("Isn't shipping free?", "Shipping is free.", "Shipping is not free."),
    # a name's subject ends before the participle or bare verb after it (not "The Eiffel Tower built was in 1889.")
    ("Was the Eiffel Tower built in 1889?", "The Eiffel Tower was built in 1889.",
     "The Eiffel Tower was not built in 1889."),
    ("Can the Pro plan be returned?", "The Pro plan can be returned.", "The Pro plan cannot be returned."),
    ("Is the Pro plan refunded after cancellation?", "The Pro plan is refunded after cancellation.",
     "The Pro plan is not refunded after cancellation."),
    # a nationality after a name qualifies the noun ("Anita Diamant American" is no name)
    ("Is Anita Diamant an American author?", "Anita Diamant is an American author.",
     "Anita Diamant is not an American author."),
    # "the US" is the country, not the asker ("in the you")
    ("Does Acme ship to the US?", "Acme ships to the US.", "Acme does not ship to the US."),
    # coordinated subjects stay whole
    ("Are both the Basic plan and the Pro plan refundable?", "Both the Basic plan and the Pro plan are refundable.",
     "Both the Basic plan and the Pro plan are not refundable."),
]

#: questions about several things at once: the statement a "yes" makes of each (a "no": not all of them hold)
CONJUNCTS = [
    ("Are Larry Gagosian and Steve Dildarian both art dealers?",
     ["Larry Gagosian is an art dealer.", "Steve Dildarian is an art dealer."]),
    ("Are both Chamaelirium and Hovea flowering plants?",
     ["Chamaelirium is a flowering plant.", "Hovea is a flowering plant."]),
    ("Are Robin McKinley and Anita Diamant American authors?",
     ["Robin McKinley is an American author.", "Anita Diamant is an American author."]),
    ("Were both the Hanover Hound and the Toy Trawler Spaniel introduced to France?",
     ["The Hanover Hound was introduced to France.", "The Toy Trawler Spaniel was introduced to France."]),
    ("Are Janus and The Lady both published in the US?",
     ["Janus is published in the US.", "The Lady is published in the US."]),
    ("Do both the Basic plan and the Pro plan include phone support?",
     ["The Basic plan does include phone support.", "The Pro plan does include phone support."]),
    ("Can both gift cards and final-sale items be returned?",
     ["Gift cards can be returned.", "Final-sale items can be returned."]),
    ("Did Einstein, Bohr and Curie win a Nobel Prize?",
     ["Einstein did win a Nobel Prize.", "Bohr did win a Nobel Prize.", "Curie did win a Nobel Prize."]),
    ("Are both plans and add-ons refundable?", ["Plans are refundable.", "Add-ons are refundable."]),
    # said of the pair, not of each: no split
    ("Are Hans Fallada and John Buchan both from the same country?", None),
    ("Are Daniela Hantuchova and Balazs Taroczy of the same nationality?", None),
    ("Are Brian and Ryan brothers?", None),
    ("Are Alice and Bob married to each other?", None),
    # common nouns without "both" may be a kind ("Are cats and dogs mammals?" is one claim about both)
    ("Are cats and dogs mammals?", None),
    # a head noun the members share ("the Basic and Pro plans"): not split into "the Basic"
    ("Do both the Basic and Pro plans include support?", None),
    # one subject, a negative question
    ("Is the store open on Sundays?", None),
    ("Aren't both plans refundable?", None),
]

YES_ANSWERS = [
    # symbols and emoji, as sent (with U+FE0F, skin tones, joiners) and repeated
    "👍", "👍\ufe0f", "👍🏽", "👍👍👍", "👍 👍", "✅", "✅✅", "✔️", "✔", "☑️", "☑", "✓", "👌", "👌🏻", "💯", "🆗",
    "🙆", "🙆‍♂️", "🙆🏾‍♀️", "🙂👍", "👍!",
    # yes words and phrases, hedged
    "Yes.", "For sure.", "For sure!", "You bet!", "Sure thing.", "Of course!", "Absolutely!", "Definitely.",
    "Happily, yes.", "Good news: yes!", "Luckily, yes!", "Thankfully, yes.", "Great question, absolutely!",
    "Yes, of course.", "Yes, happily!", "Absolutely, yes!", "Yes 👍", "✅ Yes!", "Yesss!", "YES!!", "I'm afraid so.",
    "I think so.", "No problem!", "Hi there, yes!", "**Yes.**", "- Yes",
]

NO_ANSWERS = [
    # symbols and emoji
    "👎", "👎\ufe0f", "👎🏿", "👎👎👎", "❌", "❌❌", "❎", "✗", "✘", "🙅", "🙅‍♀️", "🙅🏽‍♂️", "🚫", "⛔", "⛔️",
    # no words and phrases, hedged before or after
    "No.", "Unfortunately not.", "Unfortunately, no.", "Sadly, no.", "Sadly not.", "I'm afraid not.",
    "I’m afraid not.", "I'm sorry, but no.", "I’m sorry but no.", "Regrettably, no.", "Definitely not.",
    "Not at all.", "No way.", "Certainly not.", "Absolutely not!", "Of course not.", "No, unfortunately.",
    "No, sorry!", "No, I'm afraid not.", "Nope, not at all.", "Not at all, I'm afraid.", "No ❌", "❌ No.",
    "Bad news: no.", "Nooo.", "Not.", "I don't think so.", "I don’t think so.", "Hell no.",
]


@pytest.mark.parametrize("question,yes,no", QUESTIONS)
@pytest.mark.parametrize("answer", YES_ANSWERS)
def test_yes_forms_state_the_question(question: str, yes: str, no: str, answer: str) -> None:
    made = answer_claim(question, answer)
    assert made is not None and (made.statement, made.kind) == (yes, "yes/no")


@pytest.mark.parametrize("question,yes,no", QUESTIONS)
@pytest.mark.parametrize("answer", NO_ANSWERS)
def test_no_forms_state_the_question_negated(question: str, yes: str, no: str, answer: str) -> None:
    made = answer_claim(question, answer)
    assert made is not None and (made.statement, made.kind) == (no, "yes/no")


@pytest.mark.parametrize("question,members", CONJUNCTS)
def test_a_question_about_several_things_states_each(question: str, members: list[str] | None) -> None:
    assert conjunct_statements(question) == members


ECHOES = [
    # question, a short answer echoing its auxiliary (pronoun subject, contracted or not), the statement it makes
    ("Can gift cards be returned?", "They can't.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "They can’t.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "They cannot.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "They can not.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "They cant.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "They can't be.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "They really can't.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "Unfortunately, they can't.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "Sadly they can’t, sorry!", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "I'm afraid they can't.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "No, they can't.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "Nope, they can’t.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "They can.", "Gift cards can be returned."),
    ("Can gift cards be returned?", "Of course they can!", "Gift cards can be returned."),
    ("Can gift cards be returned?", "Good news: they can!", "Gift cards can be returned."),
    # the echo decides over the yes/no word it follows
    ("Can gift cards be returned?", "Yes, they can't.", "Gift cards cannot be returned."),
    ("Can gift cards be returned?", "No, they can.", "Gift cards can be returned."),
    ("Is the store open on Sundays?", "It is.", "The store is open on Sundays."),
    ("Is the store open on Sundays?", "It is not.", "The store is not open on Sundays."),
    ("Is the store open on Sundays?", "It isn't.", "The store is not open on Sundays."),
    ("Is the store open on Sundays?", "It isn’t.", "The store is not open on Sundays."),
    ("Is the store open on Sundays?", "It's not.", "The store is not open on Sundays."),
    ("Is the store open on Sundays?", "It’s not, sadly.", "The store is not open on Sundays."),
    ("Are refunds issued within 30 days?", "They are.", "Refunds are issued within 30 days."),
    ("Are refunds issued within 30 days?", "They are not.", "Refunds are not issued within 30 days."),
    ("Are refunds issued within 30 days?", "They aren't.", "Refunds are not issued within 30 days."),
    ("Are refunds issued within 30 days?", "They’re not.", "Refunds are not issued within 30 days."),
    ("Does the warranty cover water damage?", "It does.", "The warranty covers water damage."),
    ("Does the warranty cover water damage?", "It doesn't.", "The warranty does not cover water damage."),
    ("Does the warranty cover water damage?", "It does not.", "The warranty does not cover water damage."),
    ("Does the warranty cover water damage?", "Unfortunately it doesn’t.",
     "The warranty does not cover water damage."),
    ("Do I need a receipt?", "You don't.", "You do not need a receipt."),
    ("Do I need a receipt?", "You do.", "You need a receipt."),
    ("Will the store be closed on Monday?", "It won't.", "The store will not be closed on Monday."),
    ("Will the store be closed on Monday?", "It will.", "The store will be closed on Monday."),
    ("Should I keep the receipt?", "You shouldn't.", "You should not keep the receipt."),
    ("Was the order shipped?", "It wasn't.", "The order was not shipped."),
    ("Has the order shipped?", "It hasn't.", "The order has not shipped."),
    ("Did Einstein win the Nobel Prize?", "He did.", "Einstein did win the Nobel Prize."),
    ("Did Einstein win the Nobel Prize?", "He didn't.", "Einstein did not win the Nobel Prize."),
    ("Couldn't the store open later?", "It couldn't.", "The store could not open later."),
    ("Aren't gift cards refundable?", "They aren't.", "Gift cards are not refundable."),
]


@pytest.mark.parametrize("question,answer,statement", ECHOES)
def test_pronoun_echoes_and_contractions(question: str, answer: str, statement: str) -> None:
    made = answer_claim(question, answer)
    assert made is not None and made.statement == statement


@pytest.mark.parametrize("answer", YES_ANSWERS + NO_ANSWERS + [a for _, a, _ in ECHOES])
def test_a_yes_no_answer_alone_makes_no_claim_of_its_own(answer: str) -> None:
    """Read alone it claims nothing (so it is read with the question, as "Yes." is), whatever hedges it."""
    assert polarity(answer)[0] is not None
    assert yes_no_answer(answer) and not makes_claim(answer)


@pytest.mark.parametrize("answer,pleasantry", [
    # beside a claim, a pleasantry ("Sure!", "👍") is not judged, as in a whole answer; a stream holds it until it knows
    ("Sure!", True), ("Absolutely!", True), ("Of course!", True), ("For sure.", True), ("👍", True), ("✅✅", True),
    ("🙅", True),
    # an answer is judged wherever it stands: a stream checks it as it comes
    ("Yes.", False), ("No.", False), ("Nope, they can't.", False), ("Unfortunately not.", False),
    ("Happily, yes.", False), ("They can.", False), ("They can't.", False), ("I'm afraid not.", False),
])
def test_which_answers_are_pleasantries_beside_a_claim(answer: str, pleasantry: bool) -> None:
    assert yes_no_answer(answer) and yes_no_only(answer) is pleasantry


@pytest.mark.parametrize("answer", YES_ANSWERS + NO_ANSWERS + [a for _, a, _ in ECHOES])
def test_rendering_keeps_the_reading(answer: str) -> None:
    """The checks read the rendered answer (variation selectors and joiners dropped): it reads the same."""
    q = "Can gift cards be returned?"
    rendered = render(answer).text
    made, seen = answer_claim(q, answer), answer_claim(q, rendered)
    assert made is not None and seen is not None and made.statement == seen.statement


@pytest.mark.parametrize("answer,statement", [
    # what follows the yes/no part qualifies it, its hedges and symbols dropped
    ("Yes, within 30 days.", "Gift cards can be returned, within 30 days."),
    ("👍 within 30 days", "Gift cards can be returned, within 30 days."),
    ("Yes, within 30 days 👍.", "Gift cards can be returned, within 30 days."),
    ("Unfortunately no, not after 30 days.", "Gift cards cannot be returned, not after 30 days."),
])
def test_qualifiers_after_the_answer(answer: str, statement: str) -> None:
    made = answer_claim("Can gift cards be returned?", answer)
    assert made is not None and made.statement == statement


@pytest.mark.parametrize("answer", [
    # a word that starts an ordinary sentence, not an answer
    "No gift cards can be returned.", "Not every item can be returned.", "Right now, gift cards cannot be returned.",
    "Exactly 30 days.", "Never returned.", "Notably, returns are free.", "Yesterday it rained.", "Nothing is refunded.",
    "Well within 30 days.", "No way to return them.", "Not at all a problem!",
    # a hedge before a statement: the statement is read as written
    "Unfortunately gift cards cannot be returned.", "Sadly, gift cards are final sale.",
    # an echo that goes on into a claim
    "It can be returned.", "They are final sale.",
    # unsure, or both
    "Not sure.", "I'm not sure, sorry.", "Maybe.", "Yes and no.", "Yes, maybe.", "👍👎", "Yes/no", "No idea.",
    # "I" / "we" alone: the assistant about itself ("I can't." declines)
    "I can't.", "We can't.",
    # an emoji that says neither
    "😀", "🎉",
])
def test_not_a_yes_no_answer(answer: str) -> None:
    assert polarity(answer)[0] is None
    assert answer_claim("Can gift cards be returned?", answer) is None


def test_a_yes_no_part_before_a_statement_leaves_the_statement() -> None:
    assert polarity("Unfortunately, no, gift cards cannot be returned.") == (False, "gift cards cannot be returned.")
    assert polarity("✅ Items can be returned within 30 days.") == (True, "Items can be returned within 30 days.")
    assert answer_claim("Can gift cards be returned?", "Sadly no, gift cards are final sale items.") is None
    assert makes_claim("Unfortunately, gift cards cannot be returned.")
    assert makes_claim("No, but other items can be returned within 30 days.")


def test_not_a_yes_no_question() -> None:
    assert answer_claim("What is the refund window?", "👍") is None
    assert answer_claim("What is the refund window?", "Unfortunately not.") is None


def test_long_inputs_stay_cheap() -> None:
    """The answer's yes/no part is read from its start, a bounded number of parts."""
    import time

    t0 = time.perf_counter()
    for text in ("no " * 20000, "👍" * 50000, "!" * 50000 + "yes", "unfortunately, " * 5000 + "no", "a" * 50000):
        polarity(text)
        answer_claim("Can gift cards be returned?", text)
    assert time.perf_counter() - t0 < 5


# --------------------------------------------------------------------------- the shipped model

CTX = ["Gift cards and final-sale items cannot be returned. Items can be returned within 30 days of delivery."]
Q = "Can gift cards be returned?"
#: a hallucinated yes, and its faithful no twin
TWINS = [
    ("👍", "👎"), ("✅", "❌"), ("✔️", "✘"), ("☑️", "❎"), ("👌", "🙅"), ("💯", "🚫"), ("🆗", "⛔"), ("🙆", "🙅‍♀️"),
    ("✓", "✗"), ("👍👍👍", "👎👎👎"), ("👍🏽", "👎🏽"), ("For sure.", "Unfortunately not."),
    ("Happily, yes.", "Unfortunately, no."), ("Good news: yes!", "Sadly, no."), ("You bet!", "I'm afraid not."),
    ("Of course they can.", "I’m afraid not."), ("They can.", "They can't."), ("They can!", "They can’t."),
    ("Yes ✅", "Regrettably, no."), ("Absolutely, they can!", "I'm sorry, but no."),
    ("Sure thing!", "Definitely not."), ("Yes, of course.", "No, unfortunately."),
]


@pytest.fixture(scope="module")
def nli() -> NLIScorer:
    return NLIScorer(default_nli_model())


@pytest.fixture(scope="module")
def evaluator(nli: NLIScorer) -> Evaluator:
    return Evaluator(nli=nli)


@pytest.fixture(scope="module")
def guard(evaluator: Evaluator) -> Iterator[Guard]:
    g = Guard(evaluator, Policy(action="block"))
    yield g
    g.close()


@pytest.mark.parametrize("yes,no", TWINS)
def test_faithfulness_reads_the_answer(nli: NLIScorer, yes: str, no: str) -> None:
    check = FaithfulnessCheck(nli)
    bad, good = check.run(Q, CTX, render(yes).text), check.run(Q, CTX, render(no).text)
    assert bad.score is not None and bad.score < check.threshold
    assert bad.sentences[0].hypothesis == "Gift cards can be returned."
    assert good.score is not None and good.score >= check.threshold
    assert good.sentences[0].hypothesis == "Gift cards cannot be returned."


@pytest.mark.parametrize("yes,no", TWINS)
def test_the_guard_blocks_the_yes_and_passes_the_no(guard: Guard, yes: str, no: str) -> None:
    assert guard.check(Q, CTX, yes).action == "block"
    assert guard.check(Q, CTX, no).action == "pass"


@pytest.mark.parametrize("yes,no", TWINS[:4] + TWINS[11:13] + TWINS[16:18])
def test_streams_decide_as_whole_answers(guard: Guard, yes: str, no: str) -> None:
    for answer, action in ((yes, "block"), (no, "pass")):
        s = guard.stream(Q, CTX)
        delivered = "".join(s.feed(answer[i:i + 3]) for i in range(0, len(answer), 3))
        end = s.finish()
        delivered += end.text
        assert end.verdict.action == action
        assert delivered == ("" if action == "block" else answer)


@pytest.mark.parametrize("answer,action", [
    # a hallucinated yes before a true claim: judged as the answer, in a stream as in a whole answer
    ("Yes. Items can be returned within 30 days of delivery.", "block"),
    ("Happily, yes. Items can be returned within 30 days of delivery.", "block"),
    ("They can. Items can be returned within 30 days of delivery.", "block"),
    # a pleasantry before a faithful claim
    ("Sure! Gift cards cannot be returned.", "pass"),
    ("👍 Items can be returned within 30 days of delivery.", "pass"),
])
def test_an_answer_before_a_claim_in_a_stream(guard: Guard, answer: str, action: str) -> None:
    assert guard.check(Q, CTX, answer).action == action
    s = guard.stream(Q, CTX)
    for i in range(0, len(answer), 5):
        s.feed(answer[i:i + 5])
    assert s.finish().verdict.action == action


@pytest.fixture(scope="module")
def gateway_url(evaluator: Evaluator) -> Iterator[str]:
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="fake")
    g = Guard(evaluator, Policy(action="block"), observer=telemetry)
    with llm_server.serve() as upstream:
        app = create_gateway(upstream + "/v1", g, telemetry, timeout=httpx.Timeout(60.0, connect=2.0))
        with llm_server.serve(app, lifespan="on") as url:
            yield url


@pytest.mark.parametrize("yes,no", [TWINS[0], TWINS[2], TWINS[11], TWINS[16]])
def test_block_mode_gateway(gateway_url: str, yes: str, no: str) -> None:
    """The attacker's probe, through the gateway and the openai SDK: the yes is blocked, the no delivered as sent."""
    client = openai.OpenAI(base_url=gateway_url + "/v1", api_key="k", max_retries=0)
    messages = [{"role": "user", "content": Q}]
    with pytest.raises(openai.BadRequestError, match="blocked by guardrail"):
        client.chat.completions.create(model="fake", messages=messages, extra_body={"contexts": CTX, "answer": yes})
    reply = client.chat.completions.create(model="fake", messages=messages, extra_body={"contexts": CTX, "answer": no})
    assert reply.choices[0].message.content == no


#: a question about two things at once, its contexts, and whether each of them holds there
BOTH = [
    ("Can both gift cards and final-sale items be returned?", CTX, False),
    ("Can both gift cards and unused items be returned?",
     ["Gift cards cannot be returned. Unused items can be returned within 30 days."], False),
    ("Can both unused items and electronics be returned?",
     ["Unused items can be returned within 30 days. Electronics can be returned within 15 days."], True),
    ("Are both Robin McKinley and Anita Diamant American authors?",
     ["Anita Diamant is an American author of fiction books. Robin McKinley is an American author of fantasy "
      "books."], True),
]


@pytest.mark.parametrize("question,contexts,both", BOTH)
def test_yes_and_no_to_a_question_about_two_things(guard: Guard, question: str, contexts: list[str],
                                                    both: bool) -> None:
    """"Yes." claims it of each; "No." claims that not both hold, which one member the contexts deny makes true (read
    as "X and Y are not both ..." the model contradicts it whatever the contexts say)."""
    yes, no = guard.check(question, contexts, "Yes."), guard.check(question, contexts, "No.")
    assert (yes.action, no.action) == (("pass", "block") if both else ("block", "pass"))
    said = no.evaluation.faithfulness.sentences
    assert len(said) == 1 and said[0].negated and said[0].hypothesis in conjunct_statements(question)
    assert [s.hypothesis for s in yes.evaluation.faithfulness.sentences] == conjunct_statements(question)


def test_a_stream_reads_no_to_a_question_about_two_things(guard: Guard) -> None:
    question, contexts, _ = BOTH[0]
    s = guard.stream(question, contexts)
    delivered = s.feed("No") + s.feed(".")
    end = s.finish()
    assert end.verdict.action == "pass" and delivered + end.text == "No."

