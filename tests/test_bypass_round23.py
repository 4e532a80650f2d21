"""Block mode, session 11 (rounds 22 and 23): numbers no passage holds, quantities said of another unit or bound, and
answers that are JSON documents.

- "Refunds are issued within 5-7 business days." (7 in no passage) passed at 0.49: the model reads a sentence that
  also copies the right number as entailed, and an unsupported number was only a soft calibration feature. A number
  that neither the contexts nor the question hold, not even as a unit conversion of one they hold, now caps the
  sentence under the threshold; so does one that is there but said of another unit ("12%" beside "12 weeks"), another
  kind of unit ("30 business days" for "30 days") or bound the other way ("after 30 days" for "within 30 days").
- A structured answer (``{"answer": "...", "details": [...]}``) was read as one run-on sentence in which the copied
  values drowned a hallucinated one; pretty-printed, its lines (``"details": [``) read as claims. An answer that is
  a JSON document is read by its values, whole and streamed.

Real model, whole answer and word-by-word stream; each hallucination with its faithful twin."""

from __future__ import annotations

import json

import pytest

from block_mode import block_guard, both  # noqa: F401 - fixture

from guardrail.checks.grounding import KnownNumbers, quantities
from guardrail.guard import Guard
from guardrail.render import render
from guardrail.render.structured import json_regions
from guardrail.stream.assembler import SentenceAssembler

CTX = ["Items can be returned within 30 days of delivery for a full refund if unused. Gift cards cannot be returned. "
       "Refunds are issued within 5 business days."]
TRIAL = ["In this randomized, double-blind trial, 412 adults with moderate asthma received either drug X 200 mg daily "
         "or placebo for 12 weeks. Drug X reduced the annual rate of severe exacerbations by 34% compared with "
         "placebo. Headache was the most common adverse event, reported in 8% of patients."]
SPEC = ["The X200 laptop has a 14-inch display and 16 GB of RAM. It weighs 1.3 kg. It costs $1,299. The city "
        "approved a $45 million budget."]
AIR = ["Economy passengers may check one bag of up to 23 kg free of charge. Carry-on bags must not exceed 7 kg. "
       "Refunds are issued within 5 business days."]
QP = "What is your return policy?"


@pytest.mark.parametrize(("contexts", "sentence", "unsupported"), [
    (CTX, "Refunds are issued within 5-7 business days.", ("7",)),
    (CTX, "Items can be returned within thirty-one days.", ("thirty-one",)),
    (CTX, "Items can be returned within 30 business days of delivery.", ("within 30 business days",)),
    (CTX, "Items can be returned at least 30 days after delivery.", ("at least 30 days",)),
    (CTX, "Refunds are issued within 5 calendar days.", ("within 5 calendar days",)),
    (CTX, "Refunds are issued within 5 business hours.", ("within 5 business hours",)),
    (TRIAL, "Headache was reported in 8% to 12% of patients.", ("12%",)),
    (TRIAL, "It lasted 12 weeks (p<0.001).", ("0.001",)),
    (SPEC, "It weighs 1.3 kg (3.5 lb).", ("3.5",)),
    (SPEC, "The budget is $54M.", ("$54M",)),
    # held: as written, in words, as a unit conversion, with another scale word, less specific, in the question
    (CTX, "Items can be returned within thirty days.", ()),
    (CTX, "You have 30 days from delivery to return unused items.", ()),
    (CTX, "Items can be returned up to 30 days after delivery.", ()),
    (CTX, "Refunds take 5 days.", ()),
    (CTX, "Refunds are issued within 5 working days.", ()),
    (CTX, "Items can be returned within 30 days (about 4 weeks).", ()),
    (SPEC, "It weighs 1.3 kg (2.9 lb).", ()),
    (SPEC, "It costs $1299.", ()),
    (SPEC, "The city approved a budget of $45M.", ()),
    (SPEC, "The city approved $45,000,000.", ()),
    (TRIAL, "Drug X 200 mg was given daily for twelve weeks to 412 adults.", ()),
])
def test_numbers_no_passage_holds(contexts: list[str], sentence: str, unsupported: tuple[str, ...]) -> None:
    assert KnownNumbers([*contexts, "What does it say?"]).unsupported(sentence) == unsupported


@pytest.mark.parametrize(("context", "sentence"), [
    ("Barcelona will offer £50million for him.", "Barcelona will offer £ 50 m for Pogba."),
    ("Barcelona will offer £50million for him.", "Barcelona will offer £ 50million for Pogba."),
    ("It lies 230 meters under ground.", "It lies 230 metres below the surface."),
    ("The salary rose by 13 percent.", "The salary rose by 13%."),
    ("The change applies in the 2018-2019 academic year.", "It takes place during the 2018–19 academic year."),
    ("He stole more than £500,000 from the company.", "He stole more than £ 500,000 from a quarry company."),
    ("Tickets cost $60 each.", "Tickets cost 60 dollars."),
])
def test_numbers_written_otherwise_are_the_same(context: str, sentence: str) -> None:
    """Spellings the dev sets' faithful summaries use (CLIFF, WiCE): a space after the currency sign, "metres",
    "percent", a school year's short end."""
    assert KnownNumbers([context]).unsupported(sentence) == ()


def test_the_question_holds_numbers_too() -> None:
    assert KnownNumbers([*CTX, "Can I return 2 items?"]).unsupported("You can return 2 items.") == ()
    assert KnownNumbers([*CTX, "Can I return items?"]).unsupported("You can return 2 items.") == ("2",)


def test_quantities_read_units_bounds_and_words() -> None:
    q = {x.written: x for x in quantities("within 5 business days, after thirty-one days, up to $45 million, 34 %")}
    assert (q["5"].unit, q["5"].qualifier, q["5"].bound) == ("day", "business", "upper")
    assert (q["thirty-one"].value, q["thirty-one"].bound) == (31.0, "lower")
    assert (q["$45"].value, q["$45"].currency) == (45e6, True)
    assert q["34 %"].unit == "%"


@pytest.mark.parametrize(("contexts", "question", "answer", "want"), [
    (CTX, QP, "Refunds are issued within 5-7 business days.", "block"),
    (CTX, QP, "Items can be returned within 30 days of delivery, or 60 days for members.", "block"),
    (CTX, QP, "Items can be returned within 30 business days of delivery for a full refund if unused.", "block"),
    (CTX, QP, "Items can be returned after 30 days of delivery for a full refund if unused.", "block"),
    (CTX, QP, "Refunds are issued within 5 calendar days.", "block"),
    (CTX, QP, "Refunds are issued within 5 business days.", "pass"),
    (CTX, QP, "Items can be returned within thirty days of delivery.", "pass"),
    (TRIAL, "What were the results?", "Drug X reduced the annual rate of severe exacerbations by 34% (95% CI, 21% to "
     "45%) compared with placebo.", "block"),
    (TRIAL, "What were the results?", "Drug X reduced the annual rate of severe exacerbations by 34% compared with "
     "placebo.", "pass"),
    (SPEC, "How heavy is it?", "It weighs 1.3 kg (2.9 lb).", "pass"),
    (SPEC, "How heavy is it?", "It weighs 1.3 kg (3.9 lb).", "block"),
    # a number the subject's own sentence gives otherwise (23 kg is the checked bag's)
    (AIR, "What is the carry-on limit?", "Carry-on bags must not exceed 23 kg.", "block"),
    (AIR, "What is the carry-on limit?", "Carry-on bags must not exceed 7 kg.", "pass"),
    (AIR, "How long do refunds take?", "Refunds are issued within 5 business days.", "pass"),
])
def test_a_number_no_passage_holds_fails_the_sentence(block_guard: Guard, contexts: list[str], question: str,
                                                      answer: str, want: str) -> None:
    whole, stream = both(block_guard, question, contexts, answer)
    assert (whole, stream) == (want, want), answer


def test_the_evidence_names_the_number() -> None:
    from guardrail.checks.evaluator import Evaluator
    from guardrail.scorers.nli import NLIScorer, default_nli_model

    ev = Evaluator(nli=NLIScorer(default_nli_model()))
    result = ev.evaluate(QP, CTX, "Refunds are issued within 5-7 business days.").faithfulness
    assert result is not None
    s = result.sentences[0]
    assert s.unsupported_numbers == ("7",) and "7" in s.unsupported_terms and s.supported is False


DOC = {"answer": "Items can be returned within 30 days of delivery for a full refund if unused.",
       "details": ["Gift cards cannot be returned.", "Refunds are issued within 5 business days."]}
BAD = {**DOC, "details": [*DOC["details"], "Shipping fees are refunded as well."]}


@pytest.mark.parametrize(("answer", "want"), [
    (json.dumps(DOC), "pass"),
    (json.dumps(DOC, indent=2), "pass"),
    (json.dumps(BAD), "block"),
    (json.dumps(BAD, indent=2), "block"),
    (json.dumps([*DOC["details"], "Gift cards can be returned within 30 days."]), "block"),
    (json.dumps({"return_window_days": 30, "refund_days": 5, "gift_cards_returnable": False}), "pass"),
    (json.dumps({"return_window_days": 90, "refund_days": 5, "gift_cards_returnable": False}), "block"),
    (json.dumps({"return_window_days": 30, "refund_days": 5, "gift_cards_returnable": True}), "block"),
])
def test_a_json_answer_is_read_by_its_values(block_guard: Guard, answer: str, want: str) -> None:
    whole, stream = both(block_guard, QP, CTX, answer)
    assert (whole, stream) == (want, want), render(answer).text


@pytest.mark.parametrize(("text", "read"), [
    (json.dumps(BAD), "\n".join([DOC["answer"], *BAD["details"]])),
    ('{"a_b": 3, "ok": true, "no": false, "n": null}', "A b: 3.\nOk: yes.\nNo: no."),
    ('{"answer": "No"}', "No"),
    ('{"Gift cards can be returned.": true}', "Gift cards can be returned."),
    ('{"x": "\\u0033\\u0030 days of delivery"}', "30 days of delivery"),
    # not a whole JSON document: read as written
    ('Here: {"a": "b c"}', 'Here: {"a": "b c"}'),
    ('{"a": "b c"', '{"a": "b c"'),
    ("{not json}", "{not json}"),
])
def test_what_a_json_answer_reads(text: str, read: str) -> None:
    r = render(text)
    assert r.text == read
    if r.text != text and read:  # the evidence points back into the document: a value maps onto its own characters
        first = read.split("\n")[0]
        s, e = r.to_source(0, len(first))
        assert first.lower().rstrip(".").split(":")[0] in text[s:e].lower().replace("_", " ")


def test_a_streamed_json_answer_is_read_whole_once_it_closes() -> None:
    text = json.dumps(BAD)
    assert json_regions(text) == [(0, len(text))]
    assert json_regions(text[:40]) == [(0, None)]
    assert json_regions("[1] Items can be returned.") == [(0, 3)]
    assert json_regions("Items [a] b") == []
    a = SentenceAssembler()
    cut = text.index("Gift cards") + 20
    a.feed(text[:cut])
    assert a.sentences() == []  # nothing is released while the document is open
    a.feed(text[cut:])
    assert [s.text for s in a.sentences(final=True)] == [text]


# ------------------------------------------------------------------ subjects spelled otherwise than the denying sentence
@pytest.mark.parametrize(("answer", "want"), [
    # a modifier, a focus word, a label, another spelling, markup run into the subject: the gift-card sentence decides
    ("Unused gift cards can be returned within 30 days.", "block"),
    ("Physical gift cards can be returned within 30 days.", "block"),
    ("Digital gift cards can be returned within 30 days.", "block"),
    ("Even gift cards can be returned within 30 days.", "block"),
    ("Note: gift cards can be returned within 30 days.", "block"),
    ("Gift-cards can be returned within 30 days.", "block"),
    ("Giftcards can be returned within 30 days.", "block"),
    ("E-gift cards can be returned within 30 days.", "block"),
    ("- [x] Items can be returned within 30 days of delivery.\n- [x] Gift cards can be returned within 30 days.",
     "block"),
    ("Items can be returned within 30 days.\n\n<details open><summary>More</summary>Gift cards can be returned within "
     "30 days.</details>", "block"),
    # a person as the subject: the claim is about what it says they can do it with
    ("You can return gift cards within 30 days.", "block"),
    ("We accept returns of gift cards within 30 days.", "block"),
    # their faithful twins
    ("You cannot return gift cards.", "pass"),
    ("Unused items can be returned within 30 days of delivery.", "pass"),
    ("Note: gift cards cannot be returned.", "pass"),
    ("Gift-cards cannot be returned.", "pass"),
    ("- [x] Items can be returned within 30 days of delivery.\n- [x] Gift cards cannot be returned.", "pass"),
])
def test_a_subject_spelled_otherwise_is_still_denied(block_guard: Guard, answer: str, want: str) -> None:
    whole, stream = both(block_guard, QP, CTX, answer)
    assert (whole, stream) == (want, want), render(answer).text


def test_the_denying_clause_is_the_evidence() -> None:
    from guardrail.checks.evaluator import Evaluator
    from guardrail.scorers.nli import NLIScorer, default_nli_model

    result = Evaluator(nli=NLIScorer(default_nli_model())).evaluate(
        QP, CTX, "Gift-cards can be returned within 30 days.").faithfulness
    assert result is not None
    s = result.sentences[0]
    assert s.denied_by is not None and s.denied_by.text == "Gift cards cannot be returned."
    assert s.supported is False and s.sentence_role == "contradicts"


@pytest.mark.parametrize(("contexts", "claim", "denied"), [
    (CTX, "Gift cards can be returned within 30 days.", True),
    (["Items can be returned."], "Items cannot be returned within 30 days.", True),
    # the words do not settle it: a condition, a part of the subject, another predicate, the claim's own polarity
    # somewhere, a claim of two clauses
    (["Gift cards cannot be returned unless unused."], "Gift cards can be returned if unused.", False),
    (["Gift cards cannot be returned."], "Some gift cards can be returned.", False),
    (["Gift cards cannot be returned."], "Gift cards can be exchanged.", False),
    (["Gift cards cannot be returned. Gift cards can be returned in store."], "Gift cards can be returned.", False),
    (["The clinic is closed on Sundays."], "You cannot book an appointment for Sunday, since the clinic is closed on "
     "Sundays.", False),
    (["Gift cards cannot be returned, but items can be returned."], "Gift cards can be returned within a week.", True),
])
def test_which_clauses_deny_a_claim_in_its_own_words(contexts: list[str], claim: str, denied: bool) -> None:
    from guardrail.checks.evidence import claim_words, subject_core
    from guardrail.checks.pairing import denying_clause
    from guardrail.checks.premises import ContextIndex
    from guardrail.text import split_sentences

    index = ContextIndex.build(contexts, lambda ts: [len(t.split()) for t in ts], None, 512)  # type: ignore[arg-type]
    assert all(split_sentences(c) for c in contexts)
    about = subject_core(claim, claim_words(claim), index)
    assert (denying_clause(claim, about, index) is not None) is denied


@pytest.mark.parametrize(("claim", "core"), [
    ("Unused gift cards can be returned.", {"gift", "card"}),
    ("Giftcards can be returned.", {"gift", "card"}),
    ("Gift-cards can be returned.", {"gift", "card"}),
    ("Unused items can be returned.", {"unus", "item"}),  # named whole by the items sentence: kept whole
])
def test_the_subject_as_the_contexts_name_it(claim: str, core: set[str]) -> None:
    from guardrail.checks.evidence import claim_words, subject_core
    from guardrail.checks.premises import ContextIndex
    from guardrail.text import content_stems

    index = ContextIndex.build(CTX, lambda ts: [len(t.split()) for t in ts], None, 512)  # type: ignore[arg-type]
    want = frozenset(content_stems(" ".join(core))) if core != {"unus", "item"} else \
        frozenset(content_stems("unused items"))
    assert subject_core(claim, claim_words(claim), index) == want


# ------------------------------------------------------------ pointers, definition lists, XML framing, task boxes
FAITHFUL = "Items can be returned within 30 days of delivery for a full refund if unused."


@pytest.mark.parametrize(("tail", "want"), [
    ("See [our returns page](https://shop.example/returns).", "pass"),
    ("For details, see [Returns & Refunds](https://shop.example/returns).", "pass"),
    ("Learn more on our [returns page](https://shop.example/returns).", "pass"),
    ("Source: [Return policy](https://shop.example/returns)", "pass"),
    ("See https://shop.example/returns for details.", "pass"),
    # a pointer whose topic states something is judged
    ("See our lifetime warranty page.", "block"),
    ("See https://shop.example/gift-cards-can-be-returned for details.", "block"),
    ("See, gift cards can be returned within 30 days.", "block"),
])
def test_a_pointer_to_a_page_claims_nothing(block_guard: Guard, tail: str, want: str) -> None:
    whole, stream = both(block_guard, QP, CTX, f"{FAITHFUL} {tail}")
    assert (whole, stream) == (want, want), tail


@pytest.mark.parametrize(("answer", "want"), [
    ("Items\n: " + FAITHFUL + "\n\nGift cards\n: Cannot be returned.\n\nRefunds\n: Refunds are issued within 5 business "
     "days.", "pass"),
    ("Items\n: " + FAITHFUL + "\n\nGift cards\n: Can be returned within 30 days.", "block"),
    ("<response>\n  <answer>" + FAITHFUL + "</answer>\n  <detail>Gift cards cannot be returned.</detail>\n</response>",
     "pass"),
    ("<response>\n  <answer>" + FAITHFUL + "</answer>\n  <detail>Gift cards can be returned.</detail>\n</response>",
     "block"),
])
def test_definition_lists_and_xml_framing(block_guard: Guard, answer: str, want: str) -> None:
    whole, stream = both(block_guard, QP, CTX, answer)
    assert (whole, stream) == (want, want), render(answer).text


def test_what_definition_lists_task_boxes_and_summaries_read() -> None:
    assert render("Gift cards\n: Cannot be returned.").text == "Gift cards: Cannot be returned."
    assert render("Gift cards\n\n: Cannot be returned.").text == "Gift cards: Cannot be returned."
    assert render("- [x] Gift cards can be returned.\n- [ ] Items.").text == "- Gift cards can be returned.\n- Items."
    assert "More: Gift cards" in render("<details><summary>More</summary>Gift cards can be returned.</details>").text
    a = SentenceAssembler()
    a.feed("Gift cards\n")
    a.feed(": Cannot be returned.\n\nItems")
    assert [s.text for s in a.sentences()] == ["Gift cards\n: Cannot be returned."]


# ------------------------------------------------- round 24: what the rules must not block, and what they still catch
@pytest.mark.parametrize(("context", "sentence"), [
    # rounding after "about", conversions, a unit carried over a dimension chain, spellings of one unit
    ("It is 15.9 mm thick and has 16 GB of memory.", "It is about 16 mm thick."),
    ("It costs $1,299.", "It costs $1,299, or about $1,300."),
    ("It posted a net loss of $45.3 million.", "It posted a net loss of about $45 million."),
    ("It has a 1 TB SSD.", "It has 1,000 GB of storage."),
    ("Cabin bags must be no larger than 56 x 45 x 25 cm.", "Bags must be no larger than about 22 x 18 x 10 inches."),
    ("The trail is 12 km long.", "The trail is 12 kilometres long."),
    ("The warranty lasts one year.", "The warranty lasts 1 year."),
    ("It includes a one-year limited warranty.", "It comes with a 12-month limited warranty."),
    ("Primary caregivers get 16 weeks of leave.", "Primary caregivers get 16 weeks of leave, roughly 4 months."),
    ("New hires become eligible after 90 days.", "New hires become eligible after 3 months."),
    # worked out from a number the sentence quotes
    ("The maximum is 6 tablets a day. Each tablet is 200 mg.", "The maximum daily dose is 6 tablets, which is 1,200 mg."),
    ("Late payments accrue interest at 1.5% per month.", "Late payments accrue 1.5% per month, or 18% per year."),
    # an offset from an event, a negated bound, none, the other clock
    ("Be at the gate at least 30 minutes before departure.", "Be at the gate no later than 30 minutes before departure."),
    ("New hires become eligible after 90 days.", "New hires are not eligible before 90 days."),
    ("The Everyday card has no annual fee.", "The Everyday card's annual fee is $0."),
    ("The flight lands at 18:05.", "The flight lands at 6:05 pm."),
])
def test_numbers_said_another_way_are_held(context: str, sentence: str) -> None:
    assert KnownNumbers([context]).unsupported(sentence) == ()


@pytest.mark.parametrize(("context", "sentence"), [
    (CTX[0], "Refunds are issued within 5-7 business days."),  # 7 is no 5 + anything said
    (CTX[0], "Items can be returned within 35 days."),  # 5 + 30, but the sentence quotes neither
    (CTX[0], "Items can be returned within 30 days, or 60 days for members."),
    ("It is 15.9 mm thick.", "It is about 19 mm thick."),
    ("It costs $1,299.", "It costs $1,399."),
])
def test_numbers_the_relaxations_do_not_let_through(context: str, sentence: str) -> None:
    assert KnownNumbers([context]).unsupported(sentence) != ()


@pytest.mark.parametrize(("contexts", "answer", "want"), [
    # synonyms in a near copy are no swap (round 24: 20 of 181 faithful paraphrases were blocked)
    (CTX, "Items can be returned within 30 days of receipt for a full refund if unused.", "pass"),
    (CTX, "Refunds are processed within 5 business days.", "pass"),
    # contrasts are
    (CTX, "Items can be returned within 30 days of delivery for a partial refund if unused.", "block"),
    (CTX, "Items can be returned within 30 days of purchase for a full refund if unused.", "block"),
    (CTX, "Items can be returned within 30 days of delivery for a full refund, even if used.", "block"),
    # a bound or a price is no denial: "no more than" / "up to", "at no charge" / "free of charge"
    (["Cabin bags must weigh no more than 7 kg. Service dogs travel in the cabin at no charge."],
     "Cabin bags can weigh up to 7 kg.", "pass"),
])
def test_swaps_and_denials_read_what_is_said(block_guard: Guard, contexts: list[str], answer: str, want: str) -> None:
    whole, stream = both(block_guard, QP, contexts, answer)
    assert (whole, stream) == (want, want), answer


def test_a_bound_or_a_price_is_no_denial() -> None:
    from guardrail.checks.evidence import claim_words, subject_core
    from guardrail.checks.pairing import denying_clause
    from guardrail.checks.premises import ContextIndex

    ctx = ["Cabin bags must weigh no more than 7 kg. Service dogs travel in the cabin at no charge."]
    index = ContextIndex.build(ctx, lambda ts: [len(t.split()) for t in ts], None, 512)  # type: ignore[arg-type]
    for claim in ("Cabin bags can weigh up to 7 kg.", "Service dogs travel in the cabin free of charge."):
        assert denying_clause(claim, subject_core(claim, claim_words(claim), index), index) is None, claim


# ----------------------------------------------------------------- round 25: frames before a claim, prose in a fence
@pytest.mark.parametrize("frame", ["TL;DR — ", "TL;DR: ", "In short, ", "Good news: ", "Bottom line — ", "Summary: ",
                                   "FYI, ", "To summarize, ", "Short answer: "])
def test_a_frame_before_a_claim_hides_nothing(block_guard: Guard, frame: str) -> None:
    lead = "Items can be returned within 30 days of delivery. "
    bad = both(block_guard, QP, CTX, f"{lead}{frame}gift cards can be returned within 30 days.")
    good = both(block_guard, QP, CTX, f"{lead}{frame}gift cards cannot be returned.")
    assert (bad, good) == (("block", "block"), ("pass", "pass")), frame


@pytest.mark.parametrize(("info", "want_bad"), [("", "block"), ("text", "block"), ("markdown", "block")])
def test_prose_in_a_fence_is_read_by_its_sentences(block_guard: Guard, info: str, want_bad: str) -> None:
    fence = f"```{info}\nItems can be returned within 30 days of delivery.\n{{}}\n```"
    bad = both(block_guard, QP, CTX, fence.format("Gift cards can be returned within 30 days."))
    good = both(block_guard, QP, CTX, fence.format("Gift cards cannot be returned."))
    assert (bad, good) == ((want_bad, want_bad), ("pass", "pass")), info
    assert render("```python\nx = 1\n```").text == "```python\nx = 1\n```"  # code stays as written


@pytest.mark.parametrize(("sentence", "parts"), [
    ("Items can be returned within 30 days of delivery; gift cards can be returned within 30 days.",
     ["Items can be returned within 30 days of delivery.", "Gift cards can be returned within 30 days."]),
    ("Items can be returned within 30 days — gift cards cannot be returned.",
     ["Items can be returned within 30 days.", "Gift cards cannot be returned."]),
    ("Items can be returned within 30 days, and gift cards cannot be returned.",
     ["Items can be returned within 30 days.", "Gift cards cannot be returned."]),
    # kept whole: a frame, a clause with no subject of its own, a pronoun subject, an aside between dashes
    ("TL;DR — gift cards can be returned within 30 days.", None),
    ("Refunds are issued within 5 days, but only for unused items.", None),
    ("The device is light, and it has a long battery life.", None),
    ("The film, directed by X — a classic — was released in 1990.", None),
])
def test_clauses_joined_by_a_semicolon_a_dash_or_and(sentence: str, parts: list[str] | None) -> None:
    from guardrail.checks.claims import split_clauses

    assert split_clauses(sentence) == (parts or [sentence])


@pytest.mark.parametrize("join", ["; ", " — ", ", and ", ", but "])
def test_each_clause_of_a_compound_sentence_is_judged(block_guard: Guard, join: str) -> None:
    lead = "Items can be returned within 30 days of delivery"
    bad = both(block_guard, QP, CTX, f"{lead}{join}gift cards can be returned within 30 days.")
    good = both(block_guard, QP, CTX, f"{lead}{join}gift cards cannot be returned.")
    assert (bad, good) == (("block", "block"), ("pass", "pass")), join


# ----------------------------------------------- round 25: a number the subject's own sentence gives otherwise


def test_a_negated_claim_or_a_time_gives_no_other_value() -> None:
    from guardrail.checks.evidence import EvidenceBasis, claim_words, other_values, subject_core
    from guardrail.checks.premises import ContextIndex

    ctx = ["Carry-on bags must not exceed 7 kg. The pool is open from 7 am to 10 pm."]
    index = ContextIndex.build(ctx, lambda ts: [len(t.split()) for t in ts], None, 512)  # type: ignore[arg-type]
    basis = EvidenceBasis(ctx, index, frozenset(), frozenset(), [], None, 0.36)
    for claim, other in [("Carry-on bags must not exceed 23 kg.", ("23 kg",)),
                         ("Carry-on bags must not weigh 10 kg.", ()), ("The pool is open at 11 pm.", ())]:
        assert other_values(claim, subject_core(claim, claim_words(claim), index), basis) == other, claim


def test_a_pronoun_after_a_wh_questions_auxiliary_is_resolved() -> None:
    from guardrail.checks.claims import question_in_conversation

    assert question_in_conversation("How much does it weigh?", ["What are the specs of the AeroBook 16?"],
                                    ["The AeroBook 16 has a 16-inch display."]) == "How much does the AeroBook 16 weigh?"
