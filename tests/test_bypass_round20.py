"""Block mode, session 10: a negative claim that only borrows its negation from another sentence of the same chunk.

Contexts list what is and what is not allowed in one chunk ("Items can be returned within 30 days of delivery. Gift
cards cannot be returned."). The model reads a negation anywhere in a window as the claim's: "Items cannot be
returned." was entailed at 0.88 by that two-sentence window and delivered, and so was "No." to "Can I return items?".
A window settles a negative claim only when its negation is in a sentence that names the claim's subject; otherwise
the sentences that name the subject are read alone, and their denial decides (the real model, whole and streamed
word by word; each hallucination with its faithful twin)."""

from __future__ import annotations

import pytest
from block_mode import block_guard, both  # noqa: F401 - fixture

from guardrail.checks.evaluator import Evaluator
from guardrail.checks.pairing import borrowed_polarity, negative
from guardrail.checks.premises import ContextIndex, Premise
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.text import Span

RETURNS = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned."]
POOL = ["The pool is open on Mondays. The gym is not open on Mondays."]
PLANS = ["The Pro plan costs $20 per month and includes priority support and 100 GB of storage. The Basic plan costs "
         "$5 per month and includes 10 GB of storage. The Basic plan does not include priority support."]
PRONOUN = ["The Basic plan costs $5 per month. It does not include priority support."]


@pytest.fixture(scope="module")
def nli() -> NLIScorer:
    return NLIScorer(default_nli_model())


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), [
    # the negation belongs to the sibling sentence: blocked
    ("Can items be returned?", RETURNS, "Items cannot be returned.", "block"),
    ("Can I return items?", RETURNS, "No.", "block"),
    ("Can I return items?", RETURNS, "No, you can't.", "block"),
    ("Is the pool open on Mondays?", POOL, "The pool is not open on Mondays.", "block"),
    ("Is the pool open on Mondays?", POOL, "No.", "block"),
    ("Does the Pro plan include priority support?", PLANS, "The Pro plan does not include priority support.", "block"),
    # the faithful twins: delivered
    ("Can items be returned?", RETURNS, "Items can be returned within 30 days of delivery.", "pass"),
    ("Can gift cards be returned?", RETURNS, "Gift cards cannot be returned.", "pass"),
    ("Can I return gift cards?", RETURNS, "No.", "pass"),
    ("Is the gym open on Mondays?", POOL, "The gym is not open on Mondays.", "pass"),
    ("Is the pool open on Mondays?", POOL, "Yes.", "pass"),
    ("Does the Basic plan include priority support?", PLANS, "The Basic plan does not include priority support.",
     "pass"),
    # the negation is in a sentence that speaks of the subject through a pronoun: the window still settles it
    ("Does the Basic plan include priority support?", PRONOUN, "The Basic plan does not include priority support.",
     "pass"),
    # a subject that is only part of the one the positive sentence speaks of
    ("Can gift cards be returned?", RETURNS, "Some items (such as gift cards) cannot be returned.", "pass"),
])
def test_a_negation_borrowed_from_a_sibling_sentence_does_not_support_a_claim(
        block_guard: Guard, question: str, contexts: list[str], answer: str, want: str) -> None:
    assert both(block_guard, question, contexts, answer) == (want, want)


def _window(text: str, nli: NLIScorer) -> tuple[ContextIndex, Premise]:
    tok = nli.tokenizer
    index = ContextIndex.build((text,), tok.count_many, tok.offsets, 100)
    return index, Premise(0, Span(0, len(text)), text)


def test_borrowed_polarity_names_the_sentences_that_decide(nli: NLIScorer) -> None:
    index, window = _window(RETURNS[0], nli)
    naming = borrowed_polarity(window, index, "Items cannot be returned.", frozenset({"item"}))
    assert [s.of(RETURNS[0]) for s in naming] == ["Items can be returned within 30 days of delivery."]
    # a positive claim, a subject named in the negative sentence, a quantified subject: nothing borrowed
    assert borrowed_polarity(window, index, "Items can be returned.", frozenset({"item"})) == []
    assert borrowed_polarity(window, index, "Gift cards cannot be returned.", frozenset({"gift", "card"})) == []
    assert borrowed_polarity(window, index, "Some items cannot be returned.", frozenset({"item"})) == []
    # a claim with no subject is read by its content words (a bare "No." to "Can I return items?")
    assert borrowed_polarity(window, index, "You cannot return items.", frozenset())
    # one sentence: nothing to borrow from
    single = Premise(0, index.sentences[0][0], index.sentences[0][0].of(RETURNS[0]))
    assert borrowed_polarity(single, index, "Items cannot be returned.", frozenset({"item"})) == []


@pytest.mark.parametrize(("text", "want"), [("Gift cards cannot be returned.", True), ("It isn't open.", True),
                                            ("They never open.", True), ("Items can be returned.", False),
                                            ("Nothing is free.", True), ("Notably, it opens.", False)])
def test_negative(text: str, want: bool) -> None:
    assert negative(text) is want


@pytest.mark.parametrize(("answer", "want"), [
    # a yes/no pleasantry after the answer's claims signs off, in a stream as in the whole answer (round 20, F3)
    ("Items can be returned within 30 days of delivery. Gift cards cannot be returned. \U0001f44d", "pass"),
    ("Gift cards cannot be returned. Absolutely!", "pass"),
    # alone it is the answer; a claim before it does not make a hallucination pass
    ("\U0001f44d", "block"),
    ("Gift cards can be returned within 90 days. \U0001f44d", "block"),
    ("Gift cards cannot be returned. Yes.", "block"),
])
def test_a_sign_off_after_the_claims_is_read_alike_whole_and_streamed(block_guard: Guard, answer: str,
                                                                        want: str) -> None:
    assert both(block_guard, "Can I return a gift card?", RETURNS, answer) == (want, want)


GOOD = "Items can be returned within 30 days of delivery."


@pytest.mark.parametrize(("answer", "want"), [
    # a greeting or thanks in another language claims nothing, and its script does not make the answer unjudged
    (f"¡Hola! {GOOD}", "pass"), (f"{GOOD} Merci !", "pass"), (f"{GOOD} ありがとう！", "pass"),
    (f"こんにちは！ {GOOD}", "pass"), (f"Hallo! {GOOD}", "pass"), (f"مرحبا! {GOOD}", "pass"),
    # the claims beside them are judged as ever
    ("¡Hola! Gift cards can be returned within 90 days.", "block"),
    ("Gift cards can be returned within 90 days. ありがとうございます！", "block"),
])
def test_greetings_in_other_languages_claim_nothing(block_guard: Guard, answer: str, want: str) -> None:
    assert both(block_guard, "How do returns work?", RETURNS, answer) == (want, want)


def test_is_greeting() -> None:
    from guardrail.text import is_greeting

    assert all(is_greeting(t) for t in ("¡Hola!", "Merci !", "ありがとう！", "Vielen Dank.", "谢谢", "Спасибо!"))
    assert not any(is_greeting(t) for t in ("Hola Ana.", "Gracias, gift cards can be returned.", "Merci de rien.",
                                            "Items can be returned.", ""))


def test_block_mode_reads_no_further_than_the_first_failing_group(nli: NLIScorer) -> None:
    """A long answer whose first sentence fails is decided by it: block mode reads the sentences in groups and stops
    after the failing one (round 20, R2: 400 sentences after it cost 15.8 s of a core); flag mode reads them all."""
    from guardrail.checks.faithfulness import STOP_GROUP

    filler = " ".join(f"Items can be returned within 30 days of delivery, reminder {k}." for k in range(40))
    answer = f"Gift cards can be returned within 90 days. {filler}"
    evaluator = Evaluator(nli=nli)
    verdicts = []
    for action in ("block", "flag"):
        guard = Guard(evaluator, Policy(action=action, retrieval_relevance=None))  # type: ignore[arg-type]
        verdicts.append(guard.check("Can I return a gift card?", RETURNS, answer))
        guard.close()
    blocked, flagged = verdicts
    assert blocked.action == "block" and flagged.action == "flag" and flagged.outcome == "failed"
    assert blocked.evaluation is not None and flagged.evaluation is not None
    read = [s for s in blocked.evaluation.faithfulness.sentences if s.score is not None]
    assert len(read) == STOP_GROUP and read[0].score is not None and read[0].score < 0.5
    assert all(s.score is not None for s in flagged.evaluation.faithfulness.sentences)
    assert blocked.evaluation.faithfulness.pairs < flagged.evaluation.faithfulness.pairs
    # the reasons name the failing sentence, as a stream's do
    assert "sentence 1" in blocked.reasons[0]
