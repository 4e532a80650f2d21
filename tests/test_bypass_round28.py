"""Block mode, session 14: what one holder alone has, said of another.

"Both models support 45 W wired charging, but only the Pro supports wireless charging." against "The Nova 8 supports
wireless charging." (or a "Yes." to "Does the Nova 8 support wireless charging?", or a table row "| Nova 8 | Yes |"):
the model reads the Pro's clause as the Nova's and entails the claim at 0.76. An exclusive clause ("only X ...",
"... is available on the X plan only", "... is exclusive to X") grants its predicate to its holder alone: a positive
claim that repeats the whole predicate of another subject the contexts name, without naming the holder, is denied by
that clause (``guardrail.checks.pairing.exclusive_clause``; the evidence shows it as contradicting). The other way
round, "The Nova 8 does not support wireless charging." (a "No." to the same question) says nothing but what the
clause implies of another subject, and the model misses it (entailment 0.09): the clause supports it
(``exclusive_support``). A claim with a condition, "both", "also", or a paraphrase of the holder the contexts do not
name is read as before.

A word negated by a prefix: "Used items can be returned within 30 days." beside "... if they are unused" (0.81),
"Unopened software cannot be returned." beside "Opened software cannot be returned." (0.75), "eligible" for
"ineligible". A claim word whose prefixed (or unprefixed) form the contexts hold instead, in sentences of the claim's
own polarity (counted without that word), is unsupported (``guardrail.checks.evidence.prefix_antonyms``); a claim of
the other polarity that says nothing but the sentence's words ("Part-time employees are not eligible for the annual
bonus." for "... are ineligible ...", entailed at 0.15) is supported (``prefix_antonym_support``).

One member of a denied list: "The warranty covers drops." beside "The warranty does not cover damage caused by
descaling neglect, drops or commercial use." (0.82; the rule that reads a denial in the claim's own words wanted the
whole list, and a positive sentence about the warranty stopped it). A positive claim that names the clause's subject,
its verb and one member is denied by the clause (``guardrail.checks.pairing.denied_member``).

A count in one number word: "Marilyn Horne has won five Grammys." beside "She has won four Grammy Awards." (0.37). A
single number word is unsupported when the contexts count the same thing (the same counted noun) otherwise and never
so (``KnownNumbers``; alone, "two plans" may count what the contexts list by name, and stays the model's).

Streams whose events clients read otherwise than the guard did (attack round 28, all through the gateway):

- an event with a type (``event: ping``, ``event: thread.message.delta``) carrying a chat chunk: a browser's
  ``onmessage`` never sees it and the OpenAI SDK reads a ``thread.*`` one as no chat chunk, so "Gift cards can" +
  (typed) "not" + " be returned." was checked as "cannot" and shown as "can";
- a Responses API event whose ``event:`` type is not its data's ``type`` (an output_text delta by name, a reasoning
  summary by data): a client that listens by event type showed a sentence the guard took for a reasoning trace;
- an event after ``[DONE]`` ("Absolutely" [DONE] " not. ..."), or a last event the stream ends inside (no blank line
  after it): clients stop at [DONE] and drop an unterminated event, so they showed "Absolutely" alone.

Each is unreadable now (block mode: blocked with the reason); an ``event: message``, a Responses stream whose names
match, an ``event: error`` error object and an unterminated ``[DONE]`` read as before. The stop events of a Responses
stream carry their ``event:`` type.

Real model, whole answer and word-by-word stream, and the gateway; each attack with its faithful twin."""

from __future__ import annotations

import json
from typing import Any

import httpx
import openai
import pytest
from block_mode import block_guard, both  # noqa: F401 - fixture
from test_bypass import (CTX, Q, assert_blocked, assert_delivered, chat, chunk, dumps, evaluator, gw, post,  # noqa: F401
                         responses_stream, script, sse, upstream, words_stream)

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.telemetry import Telemetry

PHONES = ["The Nova 8 has a 6.1-inch display and a 4,000 mAh battery; the Nova 8 Pro has a 6.7-inch display and a "
          "5,000 mAh battery. Both models support 45 W wired charging, but only the Pro supports wireless charging."]
DESK = ["Priority 1 incidents receive a first response within 1 hour. Phone support is available on the Enterprise "
        "plan only; Standard customers can open tickets by email or in the web portal."]
LOUNGE = ["Gold members get two free checked bags and priority boarding. Lounge access is exclusive to Platinum "
          "members. Silver members get priority boarding."]

EXCLUSIVE = [
    # (question, contexts, hallucination, its faithful twin)
    ("Does the Nova 8 support wireless charging?", PHONES, "Yes.", "No."),
    ("Does the Nova 8 support wireless charging?", PHONES, "Yes, the Nova 8 supports wireless charging.",
     "No, the Nova 8 does not support wireless charging."),
    ("Which phone has wireless charging?", PHONES, "The Nova 8 supports wireless charging.",
     "The Nova 8 Pro supports wireless charging."),
    ("Compare the two phones.", PHONES,
     "| Model | Display | Wireless charging |\n|---|---|---|\n| Nova 8 | 6.1-inch | Yes |\n"
     "| Nova 8 Pro | 6.7-inch | Yes |",
     "| Model | Display | Wireless charging |\n|---|---|---|\n| Nova 8 | 6.1-inch | No |\n"
     "| Nova 8 Pro | 6.7-inch | Yes |"),
    ("Can I call support?", DESK, "Standard customers can get phone support.",
     "Standard customers do not get phone support."),
    ("Do Gold members get lounge access?", LOUNGE, "Yes, Gold members get lounge access.",
     "No, Gold members do not get lounge access."),
]

SHOP = ["Items can be returned within 30 days of delivery if they are unused and in their original packaging. Opened "
        "software cannot be returned."]
STAFF = ["Part-time employees are ineligible for the annual bonus. Unpaid invoices are sent to collections after 60 "
         "days."]
ANTONYMS = [
    # a word whose negation by prefix the contexts hold instead, in a claim of the sentence's own polarity
    ("Can I return used items?", SHOP, "Used items can be returned within 30 days of delivery.",
     "Used items cannot be returned."),
    ("Can I return used items?", SHOP, "Yes.", "No."),
    ("What can't I return?", SHOP, "Unopened software cannot be returned.", "Opened software cannot be returned."),
    ("Do part-time employees get the annual bonus?", STAFF, "Part-time employees are eligible for the annual bonus.",
     "Part-time employees are not eligible for the annual bonus."),
    ("Are part-time employees eligible for the annual bonus?", STAFF, "Yes.", "No."),
    ("What happens to invoices?", STAFF, "Paid invoices are sent to collections after 60 days.",
     "Unpaid invoices are sent to collections after 60 days."),
]

SHIPPING = ["Standard shipping takes 3 to 5 business days. Standard shipping does not include tracking, insurance or "
            "Saturday delivery. Express shipping includes tracking and insurance."]
PROTECTION = ["The protection plan covers accidental damage and mechanical failure for two years. The plan does not "
              "cover cosmetic damage, loss or theft."]
MEMBERS = [
    # one member of a list the contexts deny the subject, beside a sentence that says what the subject does have
    ("Does standard shipping include insurance?", SHIPPING, "Yes, standard shipping includes insurance.",
     "No, standard shipping does not include insurance."),
    ("Does standard shipping include Saturday delivery?", SHIPPING, "Yes.", "No."),
    ("Is theft covered?", PROTECTION, "The plan covers theft.", "The plan covers mechanical failure."),
    ("Does the plan cover loss?", PROTECTION, "Yes.", "No."),
]

AWARDS = ["Marilyn Horne studied under Vennard at the University of Southern California. She has won four Grammy "
          "Awards. The plan has three tiers: Basic, Plus and Pro."]
COUNTS = [
    # a count in one number word where the contexts count the same thing otherwise (the number rule read only
    # figures and compound number words: "five" passed at 0.37)
    ("How many Grammy Awards has Marilyn Horne won?", AWARDS, "Marilyn Horne has won five Grammys.",
     "Marilyn Horne has won four Grammys."),
    ("How many tiers does the plan have?", AWARDS, "The plan has two tiers.", "The plan has three tiers."),
]

READ_AS_BEFORE = [
    # the holder itself, a claim about both, a claim with its own condition, a paraphrase of the holder
    ("Which phone has wireless charging?", PHONES, "Only the Nova 8 Pro supports wireless charging.", "pass"),
    ("Do both phones charge at 45 W?", PHONES, "Yes, both models support 45 W wired charging.", "pass"),
    ("Can I call support?", DESK, "Enterprise customers can get phone support.", "pass"),
    ("Who gets priority boarding?", LOUNGE, "Silver members get priority boarding.", "pass"),
    ("Does express shipping include tracking?", SHIPPING, "Yes, express shipping includes tracking.", "pass"),
]


def _twins(rows: list[tuple[str, list[str], str, str]]) -> list[tuple[str, list[str], str, str]]:
    return [(q, c, bad, "block") for q, c, bad, _ in rows] + [(q, c, good, "pass") for q, c, _, good in rows]


@pytest.mark.parametrize(("question", "contexts", "answer", "want"),
                         _twins(EXCLUSIVE) + _twins(ANTONYMS) + _twins(MEMBERS) + _twins(COUNTS) + READ_AS_BEFORE)
def test_the_verdict_whole_and_streamed(block_guard: Guard, question: str, contexts: list[str], answer: str,
                                        want: str) -> None:
    assert both(block_guard, question, contexts, answer) == (want, want), answer


def test_the_evidence_shows_the_exclusive_clause(evaluator: Evaluator) -> None:
    f = evaluator.evaluate("Which phone has wireless charging?", PHONES,
                           "The Nova 8 supports wireless charging.").faithfulness
    assert f is not None
    (s,) = f.sentences
    assert s.supported is False and s.sentence_role == "contradicts"
    assert s.denied_by is not None and s.denied_by.text.startswith("only the Pro supports wireless charging")


def test_a_single_number_word_counts_only_against_the_same_thing_counted() -> None:
    from guardrail.checks.grounding import KnownNumbers

    known = KnownNumbers(["She has won four Grammy Awards. Refunds take 5 days. Shipping takes 2 weeks.", "q"])
    assert known.unsupported("She has won five Grammys.") == ("five Grammys",)
    assert known.unsupported("She has won four Grammys.") == ()
    assert known.unsupported("Refunds take five days.") == ()  # the figure, spelled out
    assert known.unsupported("Shipping takes fourteen days.") == ()  # a conversion of what they count
    assert known.unsupported("There are two plans.") == ()  # nothing counts plans: the model's


def test_the_evidence_names_the_word_negated_by_prefix(evaluator: Evaluator) -> None:
    f = evaluator.evaluate(*ANTONYMS[0][:3]).faithfulness
    assert f is not None and f.sentences[0].unsupported_terms == ("used",) and f.sentences[0].supported is False
    # a claim the other way round, or in more words than the sentence's, is the model's to judge
    more = evaluator.evaluate(ANTONYMS[3][0], STAFF, "Part-time employees are not eligible for the annual bonus, "
                              "and they get a free lunch.").faithfulness
    assert more is not None and more.sentences[0].supported is False


@pytest.mark.parametrize("stream", [False, True])
def test_through_the_gateway(gw: tuple[str, Telemetry], stream: bool) -> None:
    question, contexts, attack, twin = EXCLUSIVE[1]

    def answer(text: str) -> str:
        return script(sse(*words_stream(text)), ctype="text/event-stream") if stream else script(dumps(chat(text)))

    assert_blocked(post(gw[0], answer(attack), question=question, contexts=contexts))
    sid = answer(twin)
    assert_delivered(post(gw[0], sid, question=question, contexts=contexts), sid)


# --------------------------------------------------------------------------- streams read otherwise by clients
GIFT_Q = "Can I return a gift card?"
HIDDEN = ("Gift cards can", "not", " be returned.")  # checked with the middle piece, shown without it


def _typed(name: str | None, payload: Any, end: bytes = b"\n\n") -> bytes:
    data = b"data: " + json.dumps(payload).encode()
    return (b"event: " + name.encode() + b"\n" if name else b"") + data + end


def _hidden_word(name: str | None) -> list[bytes]:
    first, middle, last = HIDDEN
    return [_typed(None, chunk({"role": "assistant", "content": first})), _typed(name, chunk({"content": middle})),
            _typed(None, chunk({"content": last})), _typed(None, chunk({}, finish="stop")), b"data: [DONE]\n\n"]


def _stream(chunks: list[bytes]) -> str:
    return script(chunks, ctype="text/event-stream")


def _blocked_unreadable(r: httpx.Response, why: str) -> None:
    assert_blocked(r)
    assert "unreadable" in r.text and why in r.text, r.text[-600:]


@pytest.mark.parametrize("name", ["ping", "thread.message.delta", "error", "response.output_text.delta"])
def test_a_typed_event_is_no_message_to_every_client(gw: tuple[str, Telemetry], name: str) -> None:
    r = post(gw[0], _stream(_hidden_word(name)), question=GIFT_Q)
    _blocked_unreadable(r, f"an event of type {name!r}")
    before_stop = r.text.rsplit("content_filter", 1)[0].rsplit("\n\n", 1)[0]
    assert "be returned" not in before_stop, before_stop


@pytest.mark.parametrize("name", [None, "message"])
def test_an_event_every_client_reads_as_a_message(gw: tuple[str, Telemetry], name: str | None) -> None:
    sid = _stream(_hidden_word(name))
    assert_delivered(post(gw[0], sid, question=GIFT_Q), sid)


def test_the_sdk_reads_a_typed_event_otherwise_and_the_stream_is_stopped(gw: tuple[str, Telemetry]) -> None:
    client = openai.OpenAI(base_url=gw[0] + "/v1", api_key="k", max_retries=0)
    shown, finish = "", []
    for c in client.chat.completions.create(model="m", messages=[{"role": "user", "content": GIFT_Q}], stream=True,
                                            extra_body={"contexts": CTX, "script": _stream(
                                                _hidden_word("thread.message.delta"))}):
        if c.choices:
            shown += c.choices[0].delta.content or ""
            finish += [c.choices[0].finish_reason] if c.choices[0].finish_reason else []
    assert finish == ["content_filter"] and "be returned" not in shown, (shown, finish)


def _responses(smuggled: str | None, name_of_smuggled: str) -> list[bytes]:
    events = responses_stream("No, gift cards cannot be returned.")
    out = [_typed(e["type"], e) for e in events]
    if smuggled is not None:
        extra = {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 1,
                 "summary_index": 0, "delta": smuggled}
        out.insert(len(out) - 3, _typed(name_of_smuggled, extra))
    return out


def test_a_responses_event_named_otherwise_than_its_type(gw: tuple[str, Telemetry]) -> None:
    r = post(gw[0], _stream(_responses(" Gift cards can be returned within 30 days.", "response.output_text.delta")),
             path="/v1/responses", question=GIFT_Q)
    _blocked_unreadable(r, "carries the data's type 'response.reasoning_summary_text.delta'")
    # the stop event is named too: a client that listens by event type sees it
    assert "event: response.incomplete\ndata: " in r.text
    # and it ends there, as the API's own streams do: no "[DONE]", every data line is a JSON event
    data = [line[len("data: "):] for line in r.text.splitlines() if line.startswith("data: ")]
    assert data and all(isinstance(json.loads(d), dict) for d in data), data
    assert json.loads(data[-1])["type"] == "response.incomplete"
    # named as its data says, the reasoning summary is what the guard reads it as (a trace, not the answer)
    sid = _stream(_responses(" Checking the policy.", "response.reasoning_summary_text.delta"))
    assert_delivered(post(gw[0], sid, path="/v1/responses", question=GIFT_Q), sid)
    sid = _stream(_responses(None, ""))
    assert_delivered(post(gw[0], sid, path="/v1/responses", question=GIFT_Q), sid)


def _truncated(after_done: bool) -> list[bytes]:
    head = [_typed(None, chunk({"role": "assistant", "content": "Absolutely"}))]
    tail = [_typed(None, chunk({"content": " not. Gift cards cannot be returned."}, finish="stop"),
                   end=b"\n\n" if after_done else b"\n")]
    return head + [b"data: [DONE]\n\n"] + tail if after_done else head + tail


@pytest.mark.parametrize("after_done", [True, False])
def test_text_clients_never_read_is_no_part_of_the_answer(gw: tuple[str, Telemetry], after_done: bool) -> None:
    r = post(gw[0], _stream(_truncated(after_done)), question=GIFT_Q)
    _blocked_unreadable(r, "after [DONE]" if after_done else "the stream ended inside an event")
    # the same answer, well formed, and a stream whose [DONE] has no blank line after it, go out intact
    whole = [_typed(None, chunk({"role": "assistant", "content": "Absolutely"})),
             _typed(None, chunk({"content": " not. Gift cards cannot be returned."}, finish="stop"))]
    for ending in (b"data: [DONE]\n\n", b"data: [DONE]\n", b"data: [DONE]"):
        sid = _stream(whole + [ending])
        assert_delivered(post(gw[0], sid, question=GIFT_Q), sid)


def test_the_parser_keeps_the_event_type_and_whether_the_event_ended() -> None:
    from guardrail.wire import SSEParser, shown_alike

    p = SSEParser()
    evs = p.feed(b"event: ping\ndata: {\"a\": 1}\n\ndata: {\"b\": 2}\n\nevent: x\nevent: \ndata: {}\n\ndata: {\"c\"")
    assert [e.name for e in evs] == ["ping", None, None]  # the type resets after each event; an empty one clears it
    assert all(e.terminated for e in evs)
    (last,) = p.feed(b": 3}") + p.close()
    assert last.payload == {"c": 3} and not last.terminated
    assert shown_alike(evs[0]) is not None and shown_alike(evs[1]) is None


# --------------------------------------------------------------------------- text a reader sees (round 28c)
GIFT = ["Gift cards and final-sale items cannot be returned. Other items can be returned within 30 days of delivery "
        "with a receipt."]
SHOWN = [
    # (question, hallucination as a reader sees it, its faithful twin in the same markup)
    # attribute text a browser shows as a tooltip at most: judged without it too
    ("Can gift cards be returned?", 'Gift cards [can](https://a.com "not") be returned.',
     'Gift cards [cannot](https://a.com "policy") be returned.'),
    ("Can gift cards be returned?", 'Gift cards <span title="not">can</span> be returned.',
     'Gift cards <span title="policy">cannot</span> be returned.'),
    ("Can gift cards be returned?", 'Gift cards can<span aria-label="not"></span> be returned.',
     'Gift cards cannot<span aria-label="policy"></span> be returned.'),
    ("Can gift cards be returned?", 'Gift cards can<span data-note="no, they cannot"></span> be returned.',
     'Gift cards cannot<span data-note="see policy"></span> be returned.'),
    # content a renderer does not show
    ("Can gift cards be returned?", "Gift cards can<progress>not</progress> be returned.",
     "Gift cards cannot be returned<progress>.</progress>"),
    ("Can gift cards be returned?", "Gift cards can<meter>not</meter> be returned.",
     "Gift cards cannot be returned.<meter></meter>"),
    ("Can gift cards be returned?", "Gift cards can<math><mphantom>not</mphantom></math> be returned.",
     "Gift cards cannot<math><mphantom></mphantom></math> be returned."),
    ("Can gift cards be returned?", "Gift cards can$\\phantom{not}$ be returned.",
     "Gift cards cannot be returned$\\phantom{.}$."),
    # strikes GitHub's renderer makes and markdown-it does not
    ("Can gift cards be returned?", "Gift cards can~not~ be returned.", "Gift cards ~can~ cannot be returned."),
    ("Can gift cards be returned?", "Gift cards can~~not\nbe~~ returned within 30 days.",
     "Gift cards cannot be returned."),
    # letters of Cherokee, Lisu and Armenian drawn like Latin ones
    ("Can gift cards be returned?", "Gift cards \u13dfan be returned within 30 days.",
     "Gift cards \u13dfannot be returned."),
    ("Can gift cards be returned?", "Gift cards \ua4daan be returned within 30 days.",
     "Gift cards \ua4daannot be returned."),
    ("Can gift cards be returned?", "Gift cards ca\u0578 be returned within 30 days.",
     "Gift cards ca\u0578not be returned."),
    # a bulleted "label: yes" is the yes it says, as without the bullet
    ("Can gift cards be returned?", "- Gift cards: yes", "- Gift cards: no"),
    ("Can gift cards be returned?", "- Gift cards \u2705", "- Gift cards \u274c"),
    ("What can I return?", "- Gift cards \u2705", "- Gift cards \u2716\ufe0f"),  # a heavy X is a no too
    ("What can I return?", "- Gift cards: yes", "- Other items: yes"),
    ("Can gift cards be returned?", "- Gift cards: yes, within 30 days", "- Gift cards: no, never"),
    ("What can I return?", "- Gift cards: yes, within 30 days", "- Other items: yes, within 30 days"),
    ("What can I return?", "You can return gift cards.", "You can return other items within 30 days."),
    # a source's name claims nothing: a reference definition's title, a footnote that names a page
    ("Can gift cards be returned?", 'Gift cards [can][1] be returned.\n\n[1]: https://example.com/r "Return policy"',
     'Gift cards [cannot][1] be returned.\n\n[1]: https://example.com/r "Return policy"'),
    ("Can gift cards be returned?", "Gift cards can be returned.[^1]\n\n[^1]: Return policy.",
     "No, gift cards cannot be returned.[^1]\n\n[^1]: Return policy."),
    ("Can gift cards be returned?", "No, gift cards cannot be returned.[^1]\n\n[^1]: Gift cards can be returned "
     "within 30 days.", "No, gift cards cannot be returned.[^1]\n\n[^1]: Returns policy."),
]


@pytest.mark.parametrize(("question", "attack", "twin"), SHOWN)
def test_text_as_a_reader_sees_it(block_guard: Guard, question: str, attack: str, twin: str) -> None:
    assert both(block_guard, question, GIFT, attack) == ("block", "block"), attack
    assert both(block_guard, question, GIFT, twin) == ("pass", "pass"), twin


def test_a_context_chunk_with_its_text_in_two_fields_is_refused(gw: tuple[str, Telemetry]) -> None:
    sid = script(dumps(chat("No, gift cards cannot be returned.")))
    for chunk_ in ({"page_content": GIFT[0], "text": "Gift cards can be returned within 30 days."},
                   {"content": GIFT[0], "text": "x"}, {"node": {"text": GIFT[0]}, "text": "x"}):
        r = post(gw[0], sid, question="Can gift cards be returned?", contexts=[chunk_])  # type: ignore[list-item]
        assert r.status_code == 400 and "more than one field" in r.json()["error"]["message"], r.text
    r = post(gw[0], sid, question="Can gift cards be returned?", contexts=[{"page_content": GIFT[0], "metadata": {}}])
    assert_delivered(r, sid)


# --------------------------------------------------------------------------- languages (round 28c)
@pytest.mark.parametrize(("sentence", "language"), [
    ("No, las tarjetas de regalo no se pueden devolver.", "Spanish"),
    ("Nein, Geschenkkarten können nicht zurückgegeben werden.", "German"),
    ("Non, les cartes-cadeaux ne peuvent pas être retournées.", "French"),
    ("No, le carte regalo non possono essere restituite.", "Italian"),
    ("Não, os cartões-presente não podem ser devolvidos.", "Portuguese"),
    ("Nee, cadeaukaarten kunnen niet worden geretourneerd.", "Dutch"),
    ("Gift cards peuvent être returned within 30 days.", "French"),  # the claim's words in another language
    ("I flew to Los Angeles and Las Vegas with a gift card.", None),
    ("Die-cast models can be returned within 30 days of delivery.", None),
    ("The café at Place de la Concorde accepts gift cards.", None),
])
def test_the_language_of_a_sentence_in_latin_script(sentence: str, language: str | None) -> None:
    from guardrail.text import foreign_language

    assert foreign_language(sentence) == language


def test_the_answers_language_decides_and_the_questions_never_blocks(block_guard: Guard) -> None:
    for question in ("礼品卡可以退货吗？", "¿Se pueden devolver las tarjetas de regalo?", "Können Geschenkkarten "
                     "zurückgegeben werden?"):
        assert block_guard.check(question, GIFT, "No, gift cards cannot be returned.").action == "pass", question
        assert block_guard.check(question, GIFT, "Gift cards can be returned within 30 days.").action == "block"
    for answer in ("No, las tarjetas de regalo no se pueden devolver.", "Nein, Geschenkkarten können nicht "
                   "zurückgegeben werden.", "Non, les cartes-cadeaux ne peuvent pas être retournées."):
        v = block_guard.check("Can gift cards be returned?", GIFT, answer)
        assert v.action == "block" and v.outcome == "error" and "unsupported language" in v.reasons[0], v.reasons
    # a greeting in another language claims nothing beside an English answer
    assert block_guard.check("Can gift cards be returned?", GIFT, "¡Hola! No, gift cards cannot be returned.").action \
        == "pass"
