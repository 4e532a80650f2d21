"""Atoms (guardrail.wire.fields.is_atom): a field the gateway does not read as answer text (an annotation's title,
an id, a model name) is accepted only when it holds one word. Words joined by characters that render blank or are
dropped unseen (U+2800 BRAILLE PATTERN BLANK, U+3164 HANGUL FILLER, ...) are several words, and words joined by
hyphens, underscores, dots or slashes that read as a sentence are prose: both make the body unreadable. Identifiers,
URLs, slugs, file names, model names, dates and base64/hex ids stay atoms."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import pytest

from guardrail import wire
from guardrail.errors import UnreadableError
from guardrail.render.unicode import _INVISIBLE, unicode_forms
from guardrail.wire import fields
from guardrail.wire.fields import is_atom, is_blank, is_token, reads_as_prose

SENTENCE = ["Gift", "cards", "can", "be", "returned", "within", "90", "days."]

#: values that must stay atoms
ATOMS = {
    "url with a slug": "https://shop.example/returns-and-refunds-policy",
    "url, news headline slug": "https://news.example/2024/01/02/business/gift-cards-can-now-be-returned-in-90-days.html",
    "url with a query": "https://www.google.com/search?q=can+gift+cards+be+returned",
    "url, empty query": "https://shop.example/returns-and-refunds?",
    "bare slug": "returns-and-refunds-policy",
    "how-to slug": "how-to-return-an-item",
    "chat completion id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
    "response id (hex)": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452e3a79b",
    "hex with words of hex letters": "deadbeef1a2be3a4be5a6be7a",
    "fingerprint": "fp_44709d6fcb",
    "file id": "file-abc123",
    "call id": "call_abc123",
    "uuid urn": "urn:uuid:123e4567-e89b-12d3-a456-426614174000",
    "sha256 digest": "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "base64": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "data url": "data:image/png;base64,iVBORw0KGgo=",
    "short base64": "UklGRg==",
    "model": "gpt-4o-mini-2024-07-18",
    "hub model": "meta-llama/Llama-3.1-8B-Instruct",
    "hub model with version": "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "model path": "accounts/fireworks/models/llama-v3p1-405b-instruct",
    "dated model": "claude-3-5-sonnet-20241022",
    "iso datetime": "2024-07-18T12:00:00Z",
    "iso date": "2024-07-18",
    "event type": "response.function_call_arguments.delta",
    "object": "chat.completion.chunk",
    "finish reason": "content_filter",
    "error code": "context_length_exceeded",
    "error code with not": "model_not_found",
    "file name": "returns_and_refunds_policy_2024.pdf",
    "file name with function words": "how_to_return_an_item.md",
    "title-like file name": "Terms_of_Service_for_the_EU.pdf",
    "tool name": "transfer_to_a_human_agent",
    "tool name with by": "get_order_status_by_id",
    "camelCase": "getUserById",
    "PascalCase": "InvalidRequestError",
    "content type": "text/event-stream",
    "path": "/v1/chat/completions",
    "version": "v1.2.3",
    "header name": "x-ratelimit-remaining-requests",
    "one word and a full stop": "returned.",
    "abbreviation": "U.S.",
    "mailto": "mailto:help@shop.example",
    "accented": "été",
    "a word of an unspaced script": "退货",
    "greek word": "επιστροφή",
}

#: values that read as prose
PROSE = {
    "braille blank (U+2800)": "\u2800".join(SENTENCE),
    "hangul filler (U+3164)": "\u3164".join(SENTENCE),
    "hangul choseong filler (U+115F)": "\u115f".join(SENTENCE),
    "hangul jungseong filler (U+1160)": "\u1160".join(SENTENCE),
    "halfwidth hangul filler (U+FFA0)": "\uffa0".join(SENTENCE),
    "ideographic half fill space": "\u303f".join(SENTENCE),
    "no-break space": "\u00a0".join(SENTENCE),
    "ideographic space": "\u3000".join(SENTENCE),
    "zero width space": "\u200b".join(SENTENCE),
    "combining grapheme joiner": "\u034f".join(SENTENCE),
    "variation selector": "\ufe0f".join(SENTENCE),
    "mongolian free variation selector": "\u180b".join(SENTENCE),
    "khmer inherent vowel": "\u17b4".join(SENTENCE),
    "tag character": "\U000e0020".join(SENTENCE),
    "hyphens": "-".join(SENTENCE),
    "hyphens, no full stop": "-".join(SENTENCE)[:-1],
    "underscores, lower case": "_".join(SENTENCE)[:-1].lower(),
    "dots": ".".join(SENTENCE),
    "slashes, no full stop": "/".join(SENTENCE)[:-1],
    "plus signs": "+".join(SENTENCE),
    "middle dots, no full stop": "\u00b7".join(SENTENCE)[:-1],
    "spacing accents": "\u00b4".join(SENTENCE),
    "overlines": "\u203e".join(SENTENCE),
    "camelCase": "GiftCardsCanBeReturnedWithin90Days",
    "short sentence": "Gift-cards-are-refundable.",
    "exclamation": "Shipping-to-Mars-is-free!",
    "question": "Can-gift-cards-be-returned?",
    "quoted sentence": "\"Gift-cards-can-be-returned.\"",
    "phrase without a full stop": "Items-cannot-be-returned-after-the-deadline",
    "phrase with is": "Shipping-to-Mars-is-free",
    "url ending in a sentence": "https://x.example/Gift-cards-can-be-returned-within-90-days.",
    "url whose host is a phrase": "https://gift-cards-can-be-returned-within-90-days.example/",
    "fullwidth": "\uff27\uff49\uff46\uff54\uff0d\uff43\uff41\uff52\uff44\uff53\uff0d\uff43\uff41\uff4e\uff0e",
    "unspaced script sentence": "礼品卡可以在90天内退货",
    "too long": "a" * 257,
}


@pytest.mark.parametrize("case", list(ATOMS))
def test_identifiers_urls_and_codes_stay_atoms(case: str) -> None:
    assert is_atom(ATOMS[case]), ATOMS[case]


@pytest.mark.parametrize("case", list(PROSE))
def test_prose_is_no_atom(case: str) -> None:
    assert not is_atom(PROSE[case]), PROSE[case]


def test_the_reported_values() -> None:
    for joiner in ("\u2800", "\u3164", "-"):
        value = joiner.join(SENTENCE)
        assert value == f"Gift{joiner}cards{joiner}can{joiner}be{joiner}returned{joiner}within{joiner}90{joiner}days."
        assert not is_atom(value)


def test_characters_the_renderer_drops_or_reads_as_space_separate_words() -> None:
    """Every character guardrail's renderer drops as invisible (or reads as a space) between two words separates
    them for is_atom (combining marks aside: they are drawn on their letter, not between words)."""
    for ch in _INVISIBLE:
        assert is_blank(ch), hex(ord(ch))
    missed = []
    for cp in range(0x110000):
        ch = chr(cp)
        cat = unicodedata.category(ch)
        if cat in ("Cn", "Cs", "Co") or cat[0] == "M":
            continue  # (unassigned, surrogate and private-use characters are blank by category)
        if all(unicodedata.category(c)[0] == "M" for c in unicodedata.normalize("NFKD", ch)):
            continue  # a mark in a spacing form (U+FF9E): drawn, dropped after a Latin letter as any accent is
        out = unicode_forms("Gift" + ch + "cards")[0]
        if out == "Giftcards" or (out[:4] == "Gift" and out[-5:] == "cards" and out[4:-5].isspace()):
            if is_atom("Gift" + ch + "cards"):
                missed.append(hex(cp))
    assert not missed


def test_blank_characters_and_prose_are_no_logprobs_tokens() -> None:
    for token in ("returned.", " returned", "❤️", "👨\u200d👩\u200d👧", "\ufffd", " cards ", "\u2800", "-", "90"):
        assert is_token(token), token
    for token in ("Gift\u2800cards", "Gift\u3164cards", "Gift cards", "Gift-cards-can-be-returned.",
                  "\u2800".join(SENTENCE)[:60]):
        assert not is_token(token), token


def test_reads_as_prose_reads_decorated_letters() -> None:
    assert reads_as_prose("\U0001d406\U0001d422\U0001d41f\U0001d42d-cards-can-be-returned.")  # mathematical bold
    assert not reads_as_prose("𝐆𝐢𝐟𝐭")


# --------------------------------------------------------------------------- through the readers
def chat(title: str) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "Gift cards cannot be returned.", "annotations": [
                {"type": "url_citation", "url_citation": {"url": "https://shop.example/returns-and-refunds-policy",
                                                          "title": title, "start_index": 0, "end_index": 5}}]}}]}


def responses(title: str) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed", "model": "m", "output": [
        {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [
            {"type": "output_text", "text": "Gift cards cannot be returned.", "annotations": [
                {"type": "url_citation", "url": "https://shop.example/returns-and-refunds-policy", "title": title,
                 "start_index": 0, "end_index": 5}]}]}]}


@pytest.mark.parametrize("joiner", ["\u2800", "\u3164", "\u115f", "\uffa0", "-", "_", "."])
@pytest.mark.parametrize("build", [chat, responses])
def test_prose_in_an_annotation_makes_the_answer_unreadable(build: Any, joiner: str) -> None:
    wire.read_answers(build("Returns-and-refunds"))  # an atom title is read past...
    with pytest.raises(UnreadableError, match="names no source"):  # ...a sentence is not
        wire.read_answers(build(joiner.join(SENTENCE)))


def test_prose_in_a_top_logprobs_token_makes_the_answer_unreadable() -> None:
    body = chat("Returns")
    body["choices"][0]["logprobs"] = {"content": [{"token": "Gift", "logprob": -0.1, "bytes": None, "top_logprobs": [
        {"token": "\u2800".join(SENTENCE)[:60], "logprob": -9.0, "bytes": None}]}], "refusal": None}
    with pytest.raises(UnreadableError, match="token"):
        wire.read_answers(body)


def test_a_name_the_request_sent_need_only_be_one_token() -> None:
    """A tool's name is the request's: a long descriptive one is accepted when the request defined it, never when it
    holds a blank character."""
    name = "check_if_the_item_can_be_returned"
    request = {"model": "m", "tools": [{"type": "function", "function": {"name": name, "parameters": {}}}]}
    body = {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps({"sku": "A1"})}}]}}]}
    with pytest.raises(UnreadableError):
        wire.read_answers(body)
    wire.read_answers(body, echo=wire.request_strings(request))
    fields.atom(name, "x", frozenset({name}))
    blank = "\u2800".join(SENTENCE)
    with pytest.raises(UnreadableError):
        fields.atom(blank, "x", frozenset({blank}))
