"""Block mode, classes found by an attacker's probe of round 5 (real gateway, real model, scripted upstream): a fact
moved from one subject to another that the context denies it, elliptical sentences ("Gift cards too."), retrieved
chunks in the shapes RAG frameworks send (LangChain ``page_content``, LlamaIndex nodes) or refused with a 400 that
says why, requests with no question, and upstream bodies a client reads (several gzip members, a UTF-8 byte order
mark). Each hallucination is blocked, and its faithful twin is delivered byte for byte. The gateway, upstream and
helpers are ``tests/test_bypass.py``'s."""

from __future__ import annotations

import gzip
import json
import logging
import time
from typing import Any

import httpx
import pytest
from test_bypass import (  # noqa: F401 - fixtures
    Q,
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
)

from guardrail.asgi import request_contexts
from guardrail.checks.claims import claim_subject, is_elliptical, resolve_ellipsis
from guardrail.telemetry import Telemetry

CTX = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned. "
       "Refunds are issued to the original payment method within 5 business days."]
PLANS = ["The Pro plan includes priority support and a dedicated account manager. The Basic plan does not include "
         "priority support. Both plans include email support."]
DOCTORS = ["Dr. Smith works on Mondays and Tuesdays. Dr. Jones does not work on Mondays. The clinic is closed on Sundays."]
P = "Items can be returned within 30 days of delivery."


def send(url: str, sid: str, contexts: Any = CTX, question: str | None = Q, **extra: Any) -> httpx.Response:
    messages = [{"role": "user", "content": question}] if question is not None else [{"role": "system", "content": "Be brief."}]
    body = {"model": "m", "messages": messages, "contexts": contexts, "script": sid, **extra}
    return httpx.post(url + "/v1/chat/completions", json=body, timeout=60)


def words_of(text: str) -> list[bytes]:
    pieces = [w + " " for w in text.split(" ")]
    pieces[-1] = pieces[-1].rstrip()
    return sse(chunk({"role": "assistant", "content": ""}), *[chunk({"content": p}) for p in pieces],
               chunk({}, finish="stop"))


def streamed_text(r: httpx.Response) -> str:
    out = []
    for event in r.text.split("\n\n"):
        if event.startswith("data: {"):
            payload = json.loads(event[6:])
            for c in payload.get("choices", []):
                out.append((c.get("delta") or {}).get("content") or "")
    return "".join(out)


def assert_stream_stopped_before(r: httpx.Response, claim: str) -> None:
    assert r.status_code == 200, r.text
    assert '"finish_reason": "content_filter"' in r.text or '"finish_reason":"content_filter"' in r.text, r.text[-400:]
    assert claim not in streamed_text(r)


# --------------------------------------------------------------------------- a fact moved to another subject
#: (contexts, hallucination, faithful twin): every word of each is in the contexts, and the hallucination's support is
#: a sentence about another subject, while a sentence about its own subject denies it
MOVED = [
    (CTX, Q, "Gift cards can be returned within 30 days of delivery.", "Items can be returned within 30 days of delivery."),
    (CTX, Q, "Refunds for gift cards are issued within 5 business days.",
     "Refunds are issued to the original payment method within 5 business days."),
    (PLANS, "Which plans include priority support?", "The Basic plan includes priority support.",
     "The Pro plan includes priority support."),
    (DOCTORS, "When do the doctors work?", "Dr. Jones works on Mondays and Tuesdays.", "Dr. Smith works on Mondays."),
]


@pytest.mark.parametrize("contexts,question,bad,good", MOVED)
def test_a_fact_moved_to_a_subject_the_context_denies_it_is_blocked(gw: tuple[str, Telemetry], contexts: list[str],
                                                                     question: str, bad: str, good: str) -> None:
    url, _ = gw
    r = send(url, script(dumps(chat(bad))), contexts, question)
    assert r.status_code == 400 and r.json()["error"]["type"] == "guardrail_blocked", r.text
    assert "faithfulness" in r.text
    assert_stream_stopped_before(send(url, script(words_of(f"{good} {bad}")), contexts, question, stream=True), bad)
    sid = script(dumps(chat(good)))
    assert_delivered(send(url, sid, contexts, question), sid)
    sid = script(words_of(good))
    assert_delivered(send(url, sid, contexts, question, stream=True), sid)


def test_the_evidence_names_the_sentence_about_the_subject(gw: tuple[str, Telemetry]) -> None:
    from guardrail.checks.evaluator import Evaluator
    from guardrail.scorers.nli import NLIScorer, default_nli_model

    ev = Evaluator(nli=NLIScorer(default_nli_model()), checks=("faithfulness",)).evaluate(
        Q, PLANS, "The Basic plan includes priority support.")
    s = ev.faithfulness.sentences[0]  # type: ignore[union-attr]
    assert s.subject == "The Basic plan" and s.subject_conflict is not None and s.subject_conflict > 0.7
    assert s.supported is False and s.sentence_role == "contradicts"
    assert "Basic plan does not include" in s.sentence.text  # type: ignore[union-attr]


def test_claim_subjects() -> None:
    assert claim_subject("The Basic plan includes priority support.") == "The Basic plan"
    assert claim_subject("Gift cards can be returned.") == "Gift cards"
    assert claim_subject("Dr. Jones works on Mondays.") == "Dr. Jones"
    assert claim_subject("The film, directed by Ang Lee, won an award.") == "The film"
    assert claim_subject("They can be returned.") is None  # a pronoun: its referent is elsewhere
    assert claim_subject("In 1990, the company was founded.") is None
    assert claim_subject("Gift cards.") is None  # no verb


# --------------------------------------------------------------------------- elliptical sentences
@pytest.mark.parametrize("fragment", ["Gift cards too.", "Gift cards as well.", "Also gift cards.",
                                      "Including gift cards.", "Same for gift cards.", "Within 90 days."])
def test_an_elliptical_sentence_is_read_with_the_sentence_before_it(gw: tuple[str, Telemetry], fragment: str) -> None:
    url, _ = gw
    r = send(url, script(dumps(chat(f"{P} {fragment}"))))
    assert r.status_code == 400 and r.json()["error"]["type"] == "guardrail_blocked", r.text
    assert_stream_stopped_before(send(url, script(words_of(f"{P} {fragment}")), stream=True), fragment)


@pytest.mark.parametrize("fragment", ["Gift cards not.", "Except gift cards.", "But not gift cards.", "Within 30 days."])
def test_faithful_elliptical_sentences_are_delivered(gw: tuple[str, Telemetry], fragment: str) -> None:
    url, _ = gw
    sid = script(dumps(chat(f"{P} {fragment}")))
    assert_delivered(send(url, sid), sid)
    sid = script(words_of(f"{P} {fragment}"))
    assert_delivered(send(url, sid, stream=True), sid)


def test_ellipses_are_resolved_against_the_sentence_before() -> None:
    assert resolve_ellipsis(P, "Gift cards too.") == "Gift cards can be returned within 30 days of delivery."
    assert resolve_ellipsis(P, "Not gift cards.") == "Gift cards cannot be returned within 30 days of delivery."
    assert resolve_ellipsis("Gift cards cannot be returned.", "Not vouchers.") == "Vouchers can be returned."
    assert resolve_ellipsis("Items can be returned.", "Also on weekends.") == "Items can be returned on weekends."
    assert is_elliptical("Gift cards too.") and is_elliptical("Within 90 days.")
    for whole in ("Contact Maria Lopez in Madrid.", "Delhi.", "Not at all.", "Thanks!", "Gift cards."):
        assert not is_elliptical(whole), whole


# --------------------------------------------------------------------------- the request's retrieved chunks
@pytest.mark.parametrize("contexts", [
    [{"page_content": CTX[0], "metadata": {"source": "policy.md"}}],  # LangChain Document
    [{"node": {"text": CTX[0], "id_": "n1"}, "score": 0.8}],  # LlamaIndex NodeWithScore
    [{"text": CTX[0]}],
    [{"content": CTX[0]}],
])
def test_chunks_in_the_shapes_rag_frameworks_send_are_read(gw: tuple[str, Telemetry], contexts: list[Any]) -> None:
    url, _ = gw
    sid = script(dumps(chat(P)))
    assert_delivered(send(url, sid, contexts), sid)
    assert_blocked(send(url, script(dumps(chat("Gift cards can be returned within 90 days."))), contexts))


def test_documents_are_read_when_contexts_is_null(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    sid = script(dumps(chat(P)))
    assert_delivered(send(url, sid, None, documents=CTX), sid)
    assert_blocked(send(url, script(dumps(chat("Gift cards can be returned within 90 days."))), None, documents=CTX))


@pytest.mark.parametrize("extra,says", [
    ({"contexts": [{"page": 1}]}, "contexts[0] is an object with no string 'text', 'content', 'page_content'"),
    ({"contexts": [CTX[0], 5]}, "contexts[1] is a int"),
    ({"contexts": CTX[0]}, "'contexts' must be a list"),
    ({"contexts": CTX, "documents": CTX}, "both 'contexts' and 'documents'"),
    ({"contexts": [], "documents": CTX}, "both 'contexts' and 'documents'"),
])
def test_chunks_in_other_shapes_are_refused_with_the_reason(gw: tuple[str, Telemetry], extra: dict[str, Any],
                                                            says: str) -> None:
    url, _ = gw
    body = {"model": "m", "messages": [{"role": "user", "content": Q}], "script": script(dumps(chat(P))), **extra}
    r = httpx.post(url + "/v1/chat/completions", json=body, timeout=60)
    assert r.status_code == 400 and says in r.json()["error"]["message"], r.text


def test_request_contexts_reads_every_documented_shape() -> None:
    assert request_contexts({"contexts": ["a", {"text": "b"}, {"content": "c"}, {"page_content": "d"},
                                          {"node": {"text": "e"}}]}) == (["a", "b", "c", "d", "e"], None)
    assert request_contexts({"documents": ["a"], "contexts": None}) == (["a"], None)
    assert request_contexts({}) == (None, None)
    assert request_contexts({"contexts": []}) == ([], None)


def test_a_request_with_no_question_is_judged_on_faithfulness(gw: tuple[str, Telemetry]) -> None:
    """No user text to be relevant to: retrieval relevance is not checked (it was a block that said "no passages were
    retrieved" although the contexts were sent); faithfulness still decides."""
    url, _ = gw
    sid = script(dumps(chat(P)))
    assert_delivered(send(url, sid, question=None), sid)
    r = send(url, script(dumps(chat("Gift cards can be returned within 90 days."))), question=None)
    assert r.status_code == 400 and "faithfulness" in r.text and "no passages" not in r.text


# --------------------------------------------------------------------------- upstream bodies a client reads
def test_a_body_of_several_gzip_members_is_read_whole(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    for answer, ok in ((P, True), ("Gift cards can be returned within 90 days.", False)):
        body = dumps(chat(answer))
        packed = gzip.compress(body[:20]) + gzip.compress(body[20:])  # what curl and browsers decode as one body
        sid = script(packed, headers=[(b"content-encoding", b"gzip")])
        r = send(url, sid)
        if ok:
            assert_delivered(r, sid)
        else:
            assert_blocked(r)
    sid = script(gzip.compress(dumps(chat(P))) + b"trailing junk", headers=[(b"content-encoding", b"gzip")])
    r = send(url, sid)
    assert r.status_code == 502 and "no gzip member" in r.json()["error"]["message"]


def test_a_json_answer_after_a_byte_order_mark_is_read(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    sid = script(b"\xef\xbb\xbf" + dumps(chat(P)))
    assert_delivered(send(url, sid), sid)
    assert_blocked(send(url, script(b"\xef\xbb\xbf" + dumps(chat("Gift cards can be returned within 90 days.")))))


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_a_stream_that_carries_an_error_is_logged_as_such(gw: tuple[str, Telemetry]) -> None:
    url, _ = gw
    logger = logging.getLogger("guardrail.access")  # the handler on the logger itself: whatever propagation is set
    handler, level = _Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        for events, expected in (
            (sse(chunk({"role": "assistant", "content": P}), {"error": {"message": "overloaded", "type": "server"}}), True),
            (sse(chunk({"role": "assistant", "content": P}), chunk({}, finish="stop")), False),
        ):
            handler.records.clear()
            send(url, script(events, ctype="text/event-stream"), stream=True)
            deadline = time.monotonic() + 5  # the line is written when the server's ASGI call returns, after the last byte
            while not handler.records and time.monotonic() < deadline:
                time.sleep(0.02)
            lines = [getattr(r, "guardrail", {}) for r in handler.records]
            assert lines and lines[-1].get("stream_error") is expected, lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


# --------------------------------------------------------------------------- lead-ins and tables in streams
TABLE = "Here is the policy:\n\n| Item | Return window |\n|---|---|\n| Items | 30 days of delivery |\n"


def test_a_streamed_table_is_read_whole_as_the_whole_answer_reads_it(gw: tuple[str, Telemetry]) -> None:
    """A stream cuts sentences at line ends: a table's header line alone ("| Item | Return window |") once read as a
    claim and blocked a faithful table; the table is held until it ends and read as its rows' statements."""
    from test_bypass_round4 import chunks_of

    url, _ = gw
    for size in (3, 7, 50):
        sid = script(chunks_of(TABLE, size), ctype="text/event-stream")
        assert_delivered(send(url, sid, stream=True), sid)
        sid = script(chunks_of(TABLE + "\nHope this helps!", size), ctype="text/event-stream")
        assert_delivered(send(url, sid, stream=True), sid)
    bad = TABLE + "| Gift cards | 90 days of delivery |\n"
    r = send(url, script(chunks_of(bad, 5), ctype="text/event-stream"), stream=True)
    assert_stream_stopped_before(r, "Gift cards")
    sid = script(dumps(chat(TABLE)))
    assert_delivered(send(url, sid), sid)
    assert_blocked(send(url, script(dumps(chat(bad.replace("90 days of delivery", "90 days"))))))


@pytest.mark.parametrize("lead", ["Here is the policy:", "The rules are as follows:", "Summary:"])
def test_a_lead_in_claims_nothing_alone(lead: str) -> None:
    from guardrail.text import is_claim, is_lead_in

    assert is_lead_in(lead) and not is_claim(lead)
    assert not is_lead_in("Gift cards can be returned within:")  # a claim that goes on: judged with what follows


# --------------------------------------------------------------------------- an answer that is only a reasoning trace
def test_a_message_that_is_only_a_reasoning_trace_is_unchecked_not_delivered(gw: tuple[str, Telemetry]) -> None:
    """A reasoning trace is not the answer and is not checked; a message with no answer but a trace (a model stopped
    at max_tokens while reasoning) would show the trace as the answer: in block mode it is blocked as unchecked."""
    url, _ = gw
    for trace in ({"reasoning_content": "Gift cards can be returned within 90 days."},
                  {"reasoning": "Gift cards can be returned within 90 days."},
                  {"reasoning_details": [{"type": "reasoning.text", "text": "Gift cards can be returned within 90 days."}]}):
        r = send(url, script(dumps(chat(None, **trace))))
        assert r.status_code == 400, r.text
        err = r.json()["error"]
        assert err["type"] == "guardrail_blocked" and "reasoning" in err["message"], err
        sid = script(dumps(chat(P, **trace)))  # with its answer: the answer is checked and the message delivered
        assert_delivered(send(url, sid), sid)


# --------------------------------------------------------------------------- round 6
@pytest.mark.parametrize("answer", [
    "Here is the policy: gift cards can be returned within 90 days:",
    "Gift cards can be returned within 90 days, as follows:",
    "In short, gift cards can be returned within 90 days:",
    "This is why gift cards can be returned within 90 days:",
    "Refund: 90 days:",
    "**Gift cards can be returned within 90 days:**",
])
def test_a_claim_that_ends_with_a_colon_is_judged(gw: tuple[str, Telemetry], answer: str) -> None:
    url, _ = gw
    assert_blocked(send(url, script(dumps(chat(answer)))))
    assert_stream_stopped_before(send(url, script(words_of(answer)), stream=True), "90")


@pytest.mark.parametrize("answer", [
    "1. Items can be returned within 30 days of delivery.\n2. Gift cards cannot be returned.",
    "1) Items can be returned within 30 days of delivery.\n2) Gift cards cannot be returned.",
    "Refunds are issued to the original payment method within 5 business days [1].",
    "Items can be returned within 30 days of delivery.[1][2] Gift cards cannot be returned [1, 3].",
])
def test_numbered_lists_and_citation_markers_are_not_claims(gw: tuple[str, Telemetry], answer: str) -> None:
    url, _ = gw
    sid = script(dumps(chat(answer)))
    assert_delivered(send(url, sid), sid)
    sid = script(words_of(answer))
    assert_delivered(send(url, sid, stream=True), sid)


@pytest.mark.parametrize("bad", [
    "Priority support is included in the Basic plan.",  # the name is not the subject
    "The Pro plan includes priority support. The Basic plan too.",  # an ellipsis resolved, then subject-checked
    "The Pro plan includes priority support. Also the Basic plan.",
])
def test_a_fact_moved_to_a_name_anywhere_in_the_claim_is_blocked(gw: tuple[str, Telemetry], bad: str) -> None:
    url, _ = gw
    q = "Which plans include priority support?"
    assert_blocked(send(url, script(dumps(chat(bad))), PLANS, q))
    for good in ("Priority support is included in the Pro plan.",
                 "The Pro plan includes priority support. The Basic plan does not."):
        sid = script(dumps(chat(good)))
        assert_delivered(send(url, sid, PLANS, q), sid)


@pytest.mark.parametrize("blank", ["\u200b", "\u2060", "&nbsp;", "<br>", "**", "<!-- -->"])
def test_a_reasoning_trace_behind_content_that_shows_nothing_is_unchecked(gw: tuple[str, Telemetry], blank: str) -> None:
    url, _ = gw
    r = send(url, script(dumps(chat(blank, reasoning_content="Gift cards can be returned within 90 days."))))
    assert r.status_code == 400 and "reasoning" in r.json()["error"]["message"], r.text
