"""Block mode, round 39 (an attack on the gateway's wire path with shapes nobody had listed, BENCHMARKS.md): an error
message beside a Responses answer, logprobs tokens that spell another text than the one beside them (a content
part's, a Responses part's or delta event's, a token's ``bytes``), a yes/no reply cut off before its statement ends,
and a surrogate pair split across two stream chunks.

Real model and gateway; each attack with its faithful twin."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_bypass import (CTX, GOOD, assert_blocked, assert_delivered, chat, chunk, dumps, evaluator, gw,  # noqa: F401
                         post, responses_stream, script, sse, upstream)

from guardrail.telemetry import Telemetry

HALLUCINATION = "Items can be returned within 90 days of delivery."
GIFT = ["Gift cards and final-sale items cannot be returned. Other items can be returned within 30 days with a receipt."]


def _response(text: str, **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m",
            "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]}], **extra}


@pytest.mark.parametrize("status", ["failed", "completed", "incomplete"])
def test_an_error_message_beside_a_responses_answer_is_withheld(gw: tuple[str, Telemetry], status: str) -> None:
    """A Responses body with a faithful ``output`` and an ``error`` whose message says something else: an SDK shows
    the message, which nothing checked; it is withheld, as in a stream."""
    body = _response(GOOD, status=status, error={"code": "server_error", "message": HALLUCINATION})
    r = post(gw[0], script(dumps(body)), path="/v1/responses")
    assert r.status_code == 200 and "90 days" not in r.text, r.text
    got = r.json()
    assert got["output"] == body["output"] and got["error"]["code"] == "server_error"
    sid = script(dumps(_response(GOOD, error=None)))
    assert_delivered(post(gw[0], sid, path="/v1/responses"), sid)


def _entries(tokens: list[str], raw: list[bytes] | None = None) -> list[dict[str, Any]]:
    raw = raw or [t.encode() for t in tokens]
    return [{"token": t, "logprob": -0.1, "bytes": list(b), "top_logprobs": []} for t, b in zip(tokens, raw)]


def _assert_logprobs_read(url: str, text: str, entries: list[dict[str, Any]], question: str, delivered: bool,
                          reason: str) -> None:
    """A chat answer ``text`` with these logprobs entries: delivered intact, or refused with ``reason``."""
    body = chat(text)
    body["choices"][0]["logprobs"] = {"content": entries}
    sid = script(dumps(body))
    r = post(url, sid, question=question, contexts=GIFT)
    if delivered:
        assert_delivered(r, sid)
    else:
        assert r.status_code == 400 and reason in r.text, r.text


TOKENS = ["Items", " can", " be", " returned", " within", " 30", " days", " of", " delivery", "."]
SPELLED = ["Items", " can", " be", " returned", " within", " 90", " days", " of", " delivery", "."]


@pytest.mark.parametrize("spelled", [True, False])
def test_tokens_beside_a_text_spell_that_text(gw: tuple[str, Telemetry], spelled: bool) -> None:
    """Token lists a token-highlighting view shows: a chat content part's, a Responses ``output_text`` part's, a
    Responses delta event's, and each token's ``bytes`` (the documented way to rebuild the text)."""
    tokens = TOKENS if spelled else SPELLED
    part = {"type": "text", "text": GOOD, "logprobs": _entries(tokens)}
    bodies = [(chat([part]), "/v1/chat/completions")]
    body = _response(GOOD)
    body["output"][0]["content"][0]["logprobs"] = _entries(tokens)
    bodies.append((body, "/v1/responses"))
    # the text's tokens, with bytes that spell another word under one of them
    entries = _entries(TOKENS, [t.encode() for t in (TOKENS if spelled else SPELLED)])
    bodies.append(({**chat(GOOD), "choices": [{**chat(GOOD)["choices"][0], "logprobs": {"content": entries}}]},
                   "/v1/chat/completions"))
    for payload, path in bodies:
        sid = script(dumps(payload))
        r = post(gw[0], sid, path=path)
        if spelled:
            assert_delivered(r, sid)
        else:
            assert r.status_code == 400 and "90" not in r.text, r.text
    # streamed: each delta event's tokens spell its delta
    events = responses_stream(GOOD)
    for e in events:
        if e["type"] == "response.output_text.delta":
            e["logprobs"] = _entries([e["delta"] if spelled or e["delta"] != "30 " else "90 "])
    sid = script([b"event: " + e["type"].encode() + b"\ndata: " + json.dumps(e).encode() + b"\n\n" for e in events],
                 ctype="text/event-stream")
    r = post(gw[0], sid, path="/v1/responses", stream=True)
    if spelled:
        assert_delivered(r, sid)
    else:
        assert "response.incomplete" in r.text and "spells a text other than" in r.text, r.text[-500:]
        assert '"90 "' not in r.text


@pytest.mark.parametrize(("reply", "delivered"), [
    ("Yes, gift cards can", False), ("Yes, gift cards can be", False), ("Of course, gift cards can be", False),
    ("Yes, definitely, you can return", False), ("No, gift cards cannot be", True), ("Yes.", False),
    ("No, gift cards cannot be returned.", True),
])
def test_a_reply_cut_off_is_judged_as_the_yes_or_no_it_shows(gw: tuple[str, Telemetry], reply: str,
                                                              delivered: bool) -> None:
    """An answer stopped at its length limit ("Yes, gift cards can"): the statement is a fragment the model entails
    from anything; the reply is the yes (or no) it shows."""
    question = "Can I return a gift card?"
    body = chat(reply)
    body["choices"][0]["finish_reason"] = "length"
    sid = script(dumps(body))
    r = post(gw[0], sid, question=question, contexts=GIFT)
    words = reply.split(" ")
    events = [chunk({"role": "assistant", "content": ""})] + [
        chunk({"content": w if i == 0 else " " + w}) for i, w in enumerate(words)] + [chunk({}, finish="length")]
    sid_stream = script(sse(*events), ctype="text/event-stream")
    rs = post(gw[0], sid_stream, question=question, contexts=GIFT, stream=True)
    if delivered:
        assert_delivered(r, sid)
        assert_delivered(rs, sid_stream)
    else:
        assert r.status_code == 400, r.text
        shown = "".join(json.loads(e[6:])["choices"][0]["delta"].get("content") or ""
                        for e in rs.text.split("\n\n") if e.startswith("data: {") and '"choices": [{' in e)
        assert "can" not in shown, shown


def test_a_surrogate_pair_split_across_chunks_is_one_character(gw: tuple[str, Telemetry]) -> None:
    """A server that re-chunks by UTF-16 length (JavaScript's ``slice``) splits an emoji into two JSON escapes in two
    events; a browser joins them, and so does the guard (the faithful answer was blocked as broken Unicode)."""
    def events(text: str) -> list[bytes]:
        escaped = json.dumps(text)[1:-1]  # "\\ud83c\\udf81"
        cut = escaped.index("\\udf81")
        pieces = [escaped[:cut], escaped[cut:]]
        out = [b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
               b'"delta":{"content":"' + p.encode() + b'"},"finish_reason":null}]}\n\n' for p in pieces]
        return out + sse(chunk({}, finish="stop"))

    sid = script(events("Gift cards cannot be returned. \U0001f381"), ctype="text/event-stream")
    assert_delivered(post(gw[0], sid, question="Can I return a gift card?", contexts=GIFT, stream=True), sid)
    sid = script(events("Gift cards can be returned within 90 days. \U0001f381"), ctype="text/event-stream")
    assert_blocked(post(gw[0], sid, question="Can I return a gift card?", contexts=GIFT, stream=True))


# --------------------------------------------------------------------------- round 42
def test_an_echoed_soft_line_break_before_markup_is_one_sentence(gw: tuple[str, Telemetry]) -> None:
    """"A: Gift cards\\n" + "**can** be returned.": a Markdown view joins the lines; the guard reads the rendered text,
    so the prompt's last line is judged with the completion (the completion alone passed as a fragment)."""
    prompt = "Q: Can I return a gift card?\nA: Gift cards\n"
    for rest, delivered in (("**can** be returned.", False), ("<b>can</b> be returned.", False),
                            ("**cannot** be returned.", True)):
        body = {"model": "m", "prompt": prompt, "echo": True, "contexts": GIFT, "messages": None}
        sid = script(dumps({"id": "c", "object": "text_completion", "created": 1, "model": "m",
                            "choices": [{"index": 0, "text": prompt + rest, "finish_reason": "stop", "logprobs": None}]}))
        r = post(gw[0], sid, path="/v1/completions", **body)
        if delivered:
            assert_delivered(r, sid)
        else:
            assert r.status_code == 400, r.text


def test_token_bytes_under_a_piece_of_a_character_spell_the_text(gw: tuple[str, Telemetry]) -> None:
    """A token that shows U+FFFD carries bytes of its own, but all the bytes together must spell the text: " cannot\\ufffd"
    over the bytes of " can" rebuilt "Gift cards can be returned within 90 days." under a faithful text. A real split
    character (an emoji over two tokens, or half a surrogate pair) is delivered."""
    text = "Gift cards cannot be returned. \U0001f381"
    emoji = "\U0001f381".encode()
    good = [{"token": t, "logprob": -0.1, "bytes": list(b), "top_logprobs": []} for t, b in [
        ("Gift", b"Gift"), (" cards", b" cards"), (" cannot", b" cannot"), (" be", b" be"), (" returned", b" returned"),
        (".", b"."), (" \ufffd", b" " + emoji[:2]), ("\ufffd", emoji[2:])]]
    bad = [dict(e) for e in good]
    bad[2] = {**bad[2], "token": " cannot\ufffd", "bytes": list(b" can")}
    bad[4] = {**bad[4], "token": " returned\ufffd", "bytes": list(b" returned within 90 days")}
    for entries, delivered in ((good, True), (bad, False)):
        _assert_logprobs_read(gw[0], text, entries, "Can I return a gift card?", delivered,
                              "bytes spell a text other than")
    # half a surrogate pair under its half of the text (a stream re-chunked by UTF-16 length): no crash, delivered
    words = [{"token": t, "logprob": -0.1, "bytes": list(t.encode()), "top_logprobs": []}
             for t in ("Gift", " cards", " cannot", " be", " returned", ".")]
    head = json.dumps(words)[1:-1]
    pieces = ['{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":'
              '{"content":"Gift cards cannot be returned. \\ud83c"},"logprobs":{"content":[' + head + ',{"token":'
              '" \\ud83c","logprob":-0.1,"bytes":[32,240,159,142],"top_logprobs":[]}]},"finish_reason":null}]}',
              '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":'
              '{"content":"\\udf81"},"logprobs":{"content":[{"token":"\\udf81","logprob":-0.1,"bytes":[129],'
              '"top_logprobs":[]}]},"finish_reason":null}]}']
    sid = script([b"data: " + p.encode() + b"\n\n" for p in pieces] + sse(chunk({}, finish="stop")),
                 ctype="text/event-stream")
    assert_delivered(post(gw[0], sid, question="Can I return a gift card?", contexts=GIFT, stream=True), sid)


def test_value_dense_json_is_read_off_the_event_loop() -> None:
    """What decides that reading an answer is a worker thread's job: its size, or how many JSON values it holds (250 KB
    of "[[[[0]]]]" costs twenty times the reading of 250 KB of text; /healthz stalled 0.4-0.8 s)."""
    from guardrail.asgi_stream import OFF_LOOP_VALUES, costly

    nested = b'{"x_groq": ' + b"[[[[[[[[0]]]]]]]]," * 14_000 + b"0}"
    assert len(nested) < 256 * 1024 and costly(nested)
    assert costly(b"[" + b"0," * (OFF_LOOP_VALUES + 1) + b"0]")
    text = json.dumps({"choices": [{"delta": {"content": "Gift cards cannot be returned. " * 8000}}]}).encode()
    assert len(text) < 256 * 1024 and not costly(text)


# --------------------------------------------------------------------------- round 43
def test_an_echo_stream_waits_for_the_answers_first_sentence(gw: tuple[str, Telemetry]) -> None:
    """"\\n**can " then "be** returned.": at the first word the markup is open, and the line read as its own sentence;
    the stream now finds the answer's start once the answer's first sentence has ended, as the whole text does."""
    prompt = "Q: Can I return a gift card?\nA: Gift cards"
    for pieces, delivered in ((["\n**can ", "be** returned."], False), (["\n**cannot ", "be** returned."], True)):
        events = [{"id": "c", "object": "text_completion", "choices": [{"index": 0, "text": p, "finish_reason": None}]}
                  for p in [prompt, *pieces]]
        sid = script(sse(*events, {"id": "c", "object": "text_completion",
                                   "choices": [{"index": 0, "text": "", "finish_reason": "stop"}]}),
                     ctype="text/event-stream")
        r = post(gw[0], sid, path="/v1/completions", stream=True, model="m", prompt=prompt, echo=True,
                 contexts=GIFT, messages=None)
        if delivered:
            assert_delivered(r, sid)
        else:
            shown = "".join(json.loads(e[6:])["choices"][0].get("text") or ""
                            for e in r.text.split("\n\n") if e.startswith("data: {") and '"choices": [{' in e)
            assert "can" not in shown.split("A: Gift cards", 1)[-1], shown


def test_an_echoed_prompt_is_read_from_its_last_paragraph() -> None:
    """Only the prompt's last paragraph can be finished by the answer: a long prompt (60 KB of definition lists, which
    held the event loop for 5 s) costs no more than a short one, and the answer's start is the same."""
    from guardrail.render import answer_start

    long = "a\n: b\n" * 10_000 + "\n\nQ: Can I return a gift card?\nA: Gift cards"
    assert answer_start(long, long + " can be returned.") == long.rindex("A: Gift cards")
    assert answer_start(long + ".\n\n", long + ".\n\nGift cards cannot be returned.") == len(long) + 3


def test_tokens_spell_the_text_in_order(gw: tuple[str, Telemetry]) -> None:
    """Tokens that hold the text's characters in another order ("Gift cards: ✅ ... Other items: ❌" under "Gift cards:
    ❌ ... Other items: ✅") or only a part of it that says something else are unreadable; the text's own tokens pass."""
    text = "- Gift cards: \u274c\n- Other items: \u2705"
    own = ["-", " Gift", " cards", ":", " \u274c", "\n", "-", " Other", " items", ":", " \u2705"]
    swapped = ["-", " Gift", " cards", ":", " \u2705", "\n", "-", " Other", " items", ":", " \u274c"]
    for tokens, delivered in ((own, True), (swapped, False)):
        _assert_logprobs_read(gw[0], text, _entries(tokens), "What can I return?", delivered, "spells a text other than")
