"""Readings of session 18: a value the contexts hold, moved into a sentence it does not belong to. The long-context
blind set's number hallucinations that passed were mostly of this kind: "within 10 working days of the assessment
deadline" where the submission sentence says 5 working days and the 10 working days are the outcome email's. The
number rule sees a value the contexts hold, the subject rule needs the two subjects to be the same words, and the
model reads the near copy as support. :func:`~guardrail.checks.evidence.misplaced_values` reads which sentence the
claim's clause retells. The function on a table of shapes; the verdicts through the real model, whole and streamed,
each with its twin."""

from __future__ import annotations

import pytest

from block_mode import block_guard, both  # noqa: F401 - fixture
from guardrail.checks.evidence import EvidenceBasis, misplaced_values, opposite_copy
from guardrail.checks.grounding import KnownNumbers, quantities
from guardrail.checks.premises import ContextIndex
from guardrail.guard import Guard

CLAIMS = ["Claims must be submitted via the student portal no later than 5 working days after the assessment "
          "deadline or examination date. Claims must be supported by independent evidence, such as a medical "
          "certificate. Students will be notified of the outcome by email, normally within 10 working days of the "
          "claim being received. Appeals must be lodged within 20 working days of the publication of results."]
DATA = ["We retain account data for as long as your account is active. After you close your account, we delete your "
        "personal data within 90 days, except where we are required to keep it for legal or tax purposes, in which "
        "case invoices and related billing records are kept for 7 years. Usage logs are retained for 13 months and "
        "then aggregated or deleted. We will notify customers 30 days before adding a new sub-processor."]
BATTERY = ["A full charge with the supplied 4 A charger takes approximately 4.5 hours; charging from empty to 80% takes "
           "about 3 hours. For storage longer than one month, store the battery at 30-60% charge in a cool, dry place "
           "and check the level every 3 months."]


def _basis(contexts: list[str], answer: str) -> EvidenceBasis:
    index = ContextIndex.build(contexts, lambda ts: [len(t.split()) for t in ts], None, 512)  # type: ignore[arg-type]
    return EvidenceBasis(contexts, index, frozenset(), frozenset(), [], None, 0.36, answer=[answer])


@pytest.mark.parametrize(("contexts", "claim", "moved"), [
    (CLAIMS, "EC claims must be submitted via the student portal within 10 working days of the assessment deadline.",
     ("within 10 working days",)),
    (CLAIMS, "EC claims must be submitted via the student portal within 5 working days of the assessment deadline.",
     ()),
    # the value's own sentence is the one retold
    (CLAIMS, "You will hear about the outcome by email within 10 working days.", ()),
    # two clauses, each with its own sentence's value
    (CLAIMS, "Submit the claim via the student portal within 5 working days of the deadline, and you will be notified "
             "of the outcome by email within 10 working days.", ()),
    (DATA, "Within 30 days of closing your account your personal data is deleted.", ("Within 30 days",)),
    (DATA, "Within 90 days of closing your account your personal data is deleted.", ()),
    (DATA, "Billing records are kept for 7 years.", ()),
    # a conversion of the value said where it belongs is no move
    (DATA, "Usage logs are retained for about a year and a month.", ()),
    (DATA, "Usage logs are retained for 13 months, then aggregated or deleted.", ()),
    (BATTERY, "Store the battery at 80% charge in a cool, dry place.", ("80%",)),
    # a value no context holds is the number rule's
    (BATTERY, "Store the battery at 100% charge in a cool, dry place.", ()),
    (BATTERY, "Store the battery at 30-60% charge in a cool, dry place.", ()),
    # a clause that denies a value states none of its own
    (BATTERY, "Do not store the battery at 80% charge in a cool place.", ()),
    # too few words to say which sentence is retold
    (CLAIMS, "It takes 10 working days.", ()),
])
def test_a_value_moved_from_another_sentence(contexts: list[str], claim: str, moved: tuple[str, ...]) -> None:
    assert misplaced_values(claim, _basis(contexts, claim)) == moved


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), [
    ("How long do I have to submit an extenuating circumstances claim?", CLAIMS,
     "EC claims must be submitted via the student portal within 10 working days of the assessment deadline or exam "
     "date.", "block"),
    ("How long do I have to submit an extenuating circumstances claim?", CLAIMS,
     "EC claims must be submitted via the student portal within 5 working days of the assessment deadline or exam "
     "date.", "pass"),
    ("How long after I close my account is my data deleted?", DATA,
     "Within 30 days of account closure your personal data is deleted.", "block"),
    ("How long after I close my account is my data deleted?", DATA,
     "Within 90 days of account closure your personal data is deleted.", "pass"),
    ("How should I store the battery over winter?", BATTERY,
     "Store it at 100% charge in a cool, dry place and check the level every 3 months.", "block"),
    ("How should I store the battery over winter?", BATTERY,
     "Store it at 30-60% charge in a cool, dry place and check the level every 3 months.", "pass"),
    ("How should I store the battery over winter?", BATTERY,
     "Store it at 80% charge in a cool, dry place and check the level every 3 months.", "block"),
])
def test_moved_values_whole_and_streamed(block_guard: Guard, question: str, contexts: list[str], answer: str,
                                         want: str) -> None:
    assert both(block_guard, question, contexts, answer) == (want, want), answer


# --------------------------------------------------------------------------- round 40: times, currencies, opposites
@pytest.mark.parametrize(("text", "value", "unit"), [
    ("Check-out is at 11 pm.", 11.0, "pm"), ("Check-out is at 11 a.m.", 11.0, "am"),
    ("Check-in starts at 3:00 PM.", 3.0, "pm"), ("It closes at 9 p.m. daily.", 9.0, "pm"),
    ("Doors open at 3:30 p.m.", 3.5, "pm"), ("Doors open at 7.30pm.", 7.5, "pm"),
    ("I have 5 amazing cats.", 5.0, "amazing"),
])
def test_a_time_of_day_says_its_half(text: str, value: float, unit: str) -> None:
    q = quantities(text)
    assert [(x.value, x.unit) for x in q] == [(value, unit)], text


def test_a_currency_sign_names_its_currency() -> None:
    euro, dollar, pound = (quantities(t)[0] for t in ("€15", "$15", "£15"))
    assert euro.sign == "€" and not euro.stands_for(dollar) and not pound.stands_for(dollar)
    assert dollar.stands_for(quantities("$15.")[0]) and quantities("15 euros")[0].stands_for(euro)
    assert not quantities("15 dollars")[0].stands_for(euro)


HOTEL = ["Check-in starts at 3:00 PM and check-out is at 11 am. Breakfast is served from 7 am to 10 am."]
SHIPPING = ["Standard shipping costs $5. Express shipping costs $15. Orders over $50 ship free."]
FEES = ["The late fee is $25. The replacement card fee is $10."]
IPHONE = ["The iPhone 15 starts at $799. The iPhone 15 Pro starts at $999."]
BIG_FEES = ["The late fee is $1,200. The cancellation fee is $2,500."]
STORE = ["Opening hours: the store is open from 9 am to 6 pm on weekdays and from 10 am to 4 pm on Saturdays. "
         "The store is closed on Sundays and public holidays."]
TWO_FA = ["Two-factor authentication is disabled by default. Administrators can enable it in the security settings."]
SALE = ["The summer sale starts on June 1 and ends on June 30."]
FLIGHTS = ["Flights to Paris arrive at Terminal 2 and depart from Terminal 1."]
PILLS = ["The medication lowers blood pressure and may cause dizziness."]
HOURS = ["The store opens at 9 am and closes at 8 pm."]
CLINIC = ["The clinic is open Monday to Friday from 8 a.m. to 6 p.m. and on Saturdays from 9 a.m. to 1 p.m. It is "
          "closed on Sundays and public holidays."]
CHECK_IN = ["Online check-in opens 24 hours before departure and closes 90 minutes before departure."]
TRAIL = ["Bicycles are not prohibited on the trail, but e-bikes are. Dogs must be kept on a leash."]


@pytest.mark.parametrize(("contexts", "claim", "opposite"), [
    (STORE, "The store is open on Sundays.", ("open",)),
    (STORE, "The store is not open on Sundays.", ()),  # says what the sentence says
    (STORE, "The store is open on Saturdays.", ()),
    (STORE, "It is open on public holidays.", ("open",)),
    (FLIGHTS, "Flights to Paris depart from Terminal 2.", ("depart",)),
    (FLIGHTS, "Flights to Paris depart from Terminal 1.", ()),
    (FLIGHTS, "Flights to Paris arrive at Terminal 2.", ()),
    (SALE, "The summer sale ends on June 1.", ("ends",)),
    (SALE, "The summer sale ends on June 30.", ()),
    (HOURS, "The store closes at 9 am.", ("closes",)),
    (HOURS, "The store closes at 8 pm.", ()),
    (PILLS, "The medication raises blood pressure.", ("raises",)),
    (TWO_FA, "Two-factor authentication is enabled by default.", ("enabled",)),
    (TWO_FA, "Administrators can enable it in the security settings.", ()),
    # a clause with no predicate of its own says the one before it; a splitter that keeps "1 p.m. It is closed"
    # together does not make the closing the Saturday's
    (CLINIC, "On Saturdays it's open from 9 a.m. to 1 p.m.", ()),
    (CLINIC, "The clinic is open on Sundays.", ("open",)),
    # the claim's clause is what is compared, and a contrast's parts say different things
    (TRAIL, "Bicycles are allowed on the trail, but e-bikes aren't.", ()),
    # a unit said another way is no other clause's ("an hour and a half" is the closing's "90 minutes")
    (CHECK_IN, "Online check-in closes an hour and a half before departure.", ()),
    (CHECK_IN, "Online check-in closes 24 hours before departure.", ("closes",)),
])
def test_a_predicate_the_contexts_say_the_opposite_of(contexts: list[str], claim: str,
                                                      opposite: tuple[str, ...]) -> None:
    assert opposite_copy(claim, _basis(contexts, claim)) == opposite


@pytest.mark.parametrize(("question", "contexts", "answer", "want"), [
    ("What time is check-out?", HOTEL, "Check-out is at 11 pm.", "block"),
    ("What time is check-out?", HOTEL, "Check-out is at 11 am.", "pass"),
    ("What time is check-in?", HOTEL, "Check-in starts at 3:00 AM.", "block"),
    ("What time is check-in?", HOTEL, "Check-in starts at 3 pm.", "pass"),
    ("When is breakfast served?", HOTEL, "Breakfast is served from 7 pm to 10 pm.", "block"),
    ("How much is express shipping?", SHIPPING, "Express shipping costs €15.", "block"),
    ("How much is express shipping?", SHIPPING, "Express shipping costs $15.", "pass"),
    ("How much is express shipping?", SHIPPING, "Express shipping costs $5.", "block"),  # standard's price
    ("What is the late fee?", FEES, "The late fee is $10.", "block"),
    ("What is the late fee?", FEES, "The late fee is $25.", "pass"),
    # a figure's thousands comma is no clause break
    ("What is the late fee?", BIG_FEES, "The late fee is $2,500.", "block"),
    ("What is the late fee?", BIG_FEES, "The late fee is $1,200.", "pass"),
    # a brand in camel case is a name, its model number part of it: "It" is the iPhone 15 Pro, not "the iPhone"
    ("What does the iPhone 15 Pro cost?", IPHONE, "It starts at $799.", "block"),
    ("What does the iPhone 15 Pro cost?", IPHONE, "It starts at $999.", "pass"),
    ("Is the store open on Sundays?", STORE, "Yes.", "block"),
    ("Is the store open on Sundays?", STORE, "No.", "pass"),
    ("Is the store open on Sundays?", STORE, "No, the store is closed on Sundays.", "pass"),
    ("Is the store open on Saturdays?", STORE, "Yes, from 10 am to 4 pm.", "pass"),
    ("Is two-factor authentication enabled by default?", TWO_FA, "Yes, it is enabled by default.", "block"),
    ("Is two-factor authentication enabled by default?", TWO_FA, "No.", "pass"),
    ("Which terminal do flights to Paris depart from?", FLIGHTS, "Flights to Paris depart from Terminal 2.", "block"),
    ("Which terminal do flights to Paris depart from?", FLIGHTS, "Flights to Paris depart from Terminal 1.", "pass"),
    ("When does the store open?", HOURS, "The store closes at 9 am.", "block"),
    ("When does the store open?", HOURS, "The store opens at 9 am.", "pass"),
    ("What are Saturday hours?", CLINIC, "On Saturdays it's open from 9 a.m. to 1 p.m.", "pass"),
    ("Can I ride my bike on the trail?", TRAIL, "Yes, bicycles are allowed on the trail, but e-bikes aren't.", "pass"),
    ("Can I ride an e-bike there?", TRAIL, "Yes, e-bikes are allowed on the trail.", "block"),
])
def test_times_currencies_and_opposites_whole_and_streamed(block_guard: Guard, question: str, contexts: list[str],
                                                           answer: str, want: str) -> None:
    assert both(block_guard, question, contexts, answer) == (want, want), answer


@pytest.mark.parametrize(("context", "answer", "unsupported"), [
    ("The usual adult dose is one 500 mg capsule three times a day.", "One 500 mg capsule twice a day.", ("twice",)),
    ("The usual adult dose is one 500 mg capsule three times a day.", "Take it once a day.", ("once",)),
    ("The usual adult dose is one 500 mg capsule three times a day.", "One capsule three times a day.", ()),
    ("Take two tablets twice a day.", "Take two tablets 2 times a day.", ()),
    ("Take two tablets twice a day.", "Take two tablets twice daily.", ()),
    ("Take two tablets twice a day.", "Take two tablets three times a day.", ("three times",)),
    # "once" that opens a clause counts nothing
    ("Take two tablets twice a day. Once you feel better, keep taking them.",
     "Once you feel better, keep taking them.", ()),
])
def test_a_frequency_in_one_word_is_a_count(context: str, answer: str, unsupported: tuple[str, ...]) -> None:
    assert KnownNumbers([context]).unsupported(answer) == unsupported


GIFT = ["Gift cards and final-sale items cannot be returned. Other items can be returned within 30 days with a receipt."]


@pytest.mark.parametrize(("answer", "want"), [
    # round 47: a line that continues an unfinished sentence after a soft break is read with it, whatever mark leads
    # it (a Markdown view joins the lines)
    ("Other items can be returned within 30 days with a receipt\n(gift cards too)", "block"),
    ("Other items can be returned within 30 days with a receipt\n& gift cards", "block"),
    ("Other items can be returned within 30 days with a receipt\n(not gift cards)", "pass"),
    # round 48: any lead but a heading's, a quote's or a table's: dashes, commas, other quotes, an invisible
    # character, an escape or an entity before the bracket
    ("Other items can be returned within 30 days with a receipt\n-- and gift cards", "block"),
    ("Other items can be returned within 30 days with a receipt\n,and so can gift cards", "block"),
    ("Other items can be returned within 30 days with a receipt\n\u200b(gift cards too)", "block"),
    ("Other items can be returned within 30 days with a receipt\n&#40;gift cards too)", "block"),
    ("Other items can be returned within 30 days with a receipt\n\u200b(not gift cards)", "pass"),
    # a link whose text holds two sentences: the stream reads the second without the link's "](url)", as the whole
    # answer rendered does
    ("[Gift cards cannot be returned. Other items can be returned within 30 days.](https://shop.example/returns)",
     "pass"),
    ("[Gift cards cannot be returned. Gift cards can be returned within 90 days.](https://shop.example/returns)",
     "block"),
])
def test_soft_breaks_and_links_whole_and_streamed(block_guard: Guard, answer: str, want: str) -> None:
    assert both(block_guard, "What can I return?", GIFT, answer) == (want, want), answer
