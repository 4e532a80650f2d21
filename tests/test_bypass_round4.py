"""Block mode, classes found by an attacker's probe of round 4 (real gateway, real model, scripted upstream): markup
a client shows but the guard once dropped, struck text across sentences in streams, code blocks read as written, and
answers sent under an error status. Each case is blocked, and its faithful twin is delivered byte for byte. The
gateway, upstream and helpers are ``tests/test_bypass.py``'s."""

from __future__ import annotations

import json

import pytest
from test_bypass import (  # noqa: F401 - fixtures
    GOOD,
    SCRIPTS,
    assert_blocked,
    assert_delivered,
    chat,
    chunk,
    dumps,
    evaluator,
    gw,
    post,
    script,
    sse,
    tool_call,
    upstream,
)

from guardrail.render import render
from guardrail.stream.assembler import SentenceAssembler
from guardrail.telemetry import Telemetry

HAL = "Gift cards can be returned within 90 days."


def chunks_of(text: str, size: int = 5) -> list[bytes]:
    """``text`` streamed as chat chunks of ``size`` characters (tags and marks cut anywhere)."""
    return sse(chunk({"role": "assistant", "content": ""}),
               *[chunk({"content": text[i:i + size]}) for i in range(0, len(text), size)], chunk({}, finish="stop"))


# --------------------------------------------------------------------------- markup a reader sees as text
#: each shows the hallucination to some common reader (a CommonMark renderer, a browser, a plain-text client)
SHOWN = {
    "not a tag (attribute names start with a letter)": f"{GOOD} <{HAL}>",
    "not an HTML element": f"{GOOD} <Gift cards can be returned within ninety days>",
    "bare words in a real tag": f"{GOOD} <span Gift cards can be returned within ninety days>ok</span>",
    "<del> inside attribute values": f'<span title="<del>">{HAL}</span><span title="</del>"></span>',
    "escaped tags": f"\\<del>{HAL}\\</del>",
    "indented code block": f"{GOOD}\n\n    <del>{HAL}</del>\n",
    "textarea content": f"{GOOD} <textarea><del>{HAL}</del></textarea>",
    "prose attribute value": f'{GOOD} <span data-note="{HAL}"></span>',
}


@pytest.mark.parametrize("name", list(SHOWN))
def test_markup_a_reader_sees_as_text_is_read(gw: tuple[str, Telemetry], name: str) -> None:
    url, _ = gw
    text = SHOWN[name]
    assert "90" in render(text).text or "ninety" in render(text).text  # what the checks read holds the claim
    assert_blocked(post(url, script(dumps(chat(text)))))
    assert_blocked(post(url, script(chunks_of(text), ctype="text/event-stream"), stream=True))


@pytest.mark.parametrize("text", [
    f'{GOOD} <span class="note highlight" style="color: red; font-weight: bold">Gift cards cannot be returned.</span>',
    f"{GOOD}\n\n    Refunds are issued to the original payment method within 5 business days.\n",
    f'<a href="https://shop.example/returns and refunds">{GOOD}</a>',
    f"<del>{HAL}</del> {GOOD}",
])
def test_faithful_markup_twins_are_delivered(gw: tuple[str, Telemetry], text: str) -> None:
    url, _ = gw
    sid = script(dumps(chat(text)))
    assert_delivered(post(url, sid), sid)
    sid = script(chunks_of(text), ctype="text/event-stream")
    assert_delivered(post(url, sid, stream=True), sid)


# --------------------------------------------------------------------------- struck text across sentences
SPANNING = [
    "Gift cards <s>cannot be returned. Items</s> can be returned within 90 days of delivery.",
    "Gift cards <del>cannot be returned. Items</del> can be returned within 90 days of delivery.",
    "Gift cards <strike>cannot be returned.\nItems</strike> can be returned within 90 days of delivery.",
    "Gift cards ~~cannot be returned. Items~~ can be returned within 90 days of delivery.",
]


@pytest.mark.parametrize("text", SPANNING)
def test_struck_text_spanning_sentences_is_read_as_the_reader_reads_it(gw: tuple[str, Telemetry], text: str) -> None:
    """Each half alone reads as faithful ("Gift cards cannot be returned." / "Items can be returned within ..."); the
    reader sees "Gift cards can be returned within 90 days of delivery.": the stream checks it as one sentence, as
    the whole answer is checked."""
    url, _ = gw
    assert_blocked(post(url, script(dumps(chat(text)))))
    for size in (3, 5, 11):
        assert_blocked(post(url, script(chunks_of(text, size), ctype="text/event-stream"), stream=True))


def test_the_assembler_waits_for_a_strike_to_close_and_reads_an_unclosed_one_as_text() -> None:
    a = SentenceAssembler()
    a.feed("Gift cards <s>cannot be returned. Items are")
    assert a.sentences() == []  # the strike may still close: the sentence before it is not complete
    a.feed(" fine.</s> Gift cards cannot be returned. More")
    got = [s.text for s in a.sentences()]
    assert got == ["Gift cards <s>cannot be returned. Items are fine.</s> Gift cards cannot be returned."]
    b = SentenceAssembler()
    b.feed("Gift cards ~~cannot be returned. Items are fine.")
    assert [s.text for s in b.sentences(final=True)] == ["Gift cards ~~cannot be returned.", "Items are fine."]


# --------------------------------------------------------------------------- answers under an error status
@pytest.mark.parametrize("status", [400, 422, 500, 503])
def test_an_answer_under_an_error_status_is_checked(gw: tuple[str, Telemetry], status: int) -> None:
    """A client that does not look at the status (curl, ``requests.post(...).json()``) reads the choices."""
    url, _ = gw
    assert_blocked(post(url, script(dumps(chat(HAL)), status=status)))
    r = post(url, script(chunks_of(HAL), status=status, ctype="text/event-stream"), stream=True)
    assert r.status_code == status and "content_filter" in r.text  # the stream's status kept, its text stopped
    assert "90 days" not in "".join(json.loads(line[6:])["choices"][0].get("delta", {}).get("content") or ""
                                    for line in r.text.splitlines()
                                    if line.startswith("data: {") and '"choices"' in line)
    faithful = script(dumps(chat(GOOD)), status=status)
    r = post(url, faithful)
    assert r.status_code == status and r.content == dumps(chat(GOOD))  # checked, passed: delivered with its status


@pytest.mark.parametrize("body, ctype", [
    (b'{"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}',
     "application/json"),
    (b'{"object": "error", "message": "max_tokens is too large", "type": "BadRequestError", "code": 400}',
     "application/json"),
    (b"<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    (b"upstream connect error or disconnect/reset before headers", "text/plain"),
])
def test_upstream_errors_reach_the_client_as_sent(gw: tuple[str, Telemetry], body: bytes, ctype: str) -> None:
    url, _ = gw
    for status in (429, 400, 502):
        sid = script(body, status=status, ctype=ctype)
        r = post(url, sid)
        assert r.status_code == status and r.content == body
        assert SCRIPTS[sid]["status"] == status


# --------------------------------------------------------------------------- a reply word in tool-call arguments
@pytest.mark.parametrize("key", ["result", "say", "status", "confirm"])
def test_a_yes_in_tool_call_arguments_answers_the_question(gw: tuple[str, Telemetry], key: str) -> None:
    """A one-word value under a one-word key is a parameter (``{"city": "Paris"}``), but a reply word is an answer
    whatever key holds it: read with the question, "yes" claims that gift cards can be returned."""
    url, _ = gw
    question = "Can gift cards be returned?"
    bad = script(dumps(tool_call(json.dumps({key: "yes"}))))
    assert_blocked(post(url, bad, question=question))
    good = script(dumps(tool_call(json.dumps({key: "no"}))))
    assert_delivered(post(url, good, question=question), good)
