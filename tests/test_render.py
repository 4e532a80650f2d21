"""Text as a reader sees it (guardrail.render): the rendered text of decorated letters and markup, offsets back into
the original, and, through the shipped model, decorated or marked-up hallucinations blocked while faithful entity,
table and markup answers pass and are delivered byte for byte."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import httpx
import llm_server
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.render import render
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.server import create_gateway
from guardrail.telemetry import Telemetry
from guardrail.text import split_sentences, words

# --------------------------------------------------------------------------- the rendered text
CASES = {
    # struck text is withdrawn
    "gfm strikethrough": ("Gift cards ~~cannot~~ can be returned.", "Gift cards  can be returned."),
    "single tilde is text": ("Gift cards ~cannot~ can be returned.", "Gift cards ~cannot~ can be returned."),
    "del tag": ("Gift cards <del>cannot</del> can be returned.", "Gift cards  can be returned."),
    "s and strike across lines": ("A <S class='x'>b\nc</S> d <strike>e</strike> f.", "A  d  f."),
    "combining overlay": ("Gift cards c\u0336a\u0336n\u0336n\u0336o\u0336t\u0336 can be returned.",
                          "Gift cards  can be returned."),
    "tildes that strike nothing": ("about ~5 days or ~10 days", "about ~5 days or ~10 days"),
    # entities
    "numeric entity": ("Returns within &#51;0 days.", "Returns within 30 days."),
    "hex and named": ("&#x33;0 &amp; &eacute;t&eacute; &copy;", "30 & ete ©"),
    "escaped markup stays text": ("&lt;del&gt;x&lt;/del&gt; &#126;&#126;y&#126;&#126;", "<del>x</del> ~~y~~"),
    # markdown and html marks
    "emphasis and code": ("**Gift cards** can be *returned* within `30` days.", "Gift cards can be returned within 30 days."),
    "underscores": ("__Bold__ and _it_ but snake_case_name stays", "Bold and it but snake_case_name stays"),
    "link, image, autolink": ("See [the policy](https://x.y/p \"Returns\"), ![a chart](c.png) <https://x.y>.",
                              "See the policy (Returns), a chart https://x.y."),
    "heading, quote, rule": ("# Returns #\n> Items can be returned.\n\n---\nEnd.", "Returns\nItems can be returned.\n\nEnd."),
    "html tags": ("Gift <b>cards</b> can<br>be <span title=\"hover text\">returned</span>.",
                  "Gift cards can\nbe  (hover text) returned."),
    "comments keep their text": ("Items ship free. <!-- to Mars --> Done.", "Items ship free.   to Mars   Done."),
    "escapes": (r"5 \* 3 \_x\_", "5 * 3 _x_"),
    "tags in inline code are text": ("Use `<s>` Mars is free `</s>` ok", "Use <s> Mars is free </s> ok"),
    "fenced code is kept": ("```\n~~x~~ &amp; **y**\n```\nafter ~~x~~ y", "```\n~~x~~ &amp; **y**\n```\nafter  y"),
    # tables read as statements
    "table": ("| Item | Return window |\n|---|---|\n| Items | 30 days of delivery |\n| Gift cards | Not returnable |",
              "Items: 30 days of delivery. \nGift cards: Not returnable. "),
    # a header that could state something is read, as the heading of the first row
    "table whose header could state something": (
        "| Item | Lifetime warranty |\n|---|---|\n| Items | 30 days of delivery |",
        "Item, Lifetime warranty: Items: 30 days of delivery. "),
    "table with short cells and yes/no": (
        "Item | Returnable | Fee\n:-- | :-: | --:\nShoes | ✓ | $5\nGift cards | No | -\n\nAfter.",
        "Shoes: returnable. Shoes: fee: $5. \nGift cards: not returnable. \n\nAfter."),
    "table cells are rendered": ("| A | B |\n|---|---|\n| x | ~~1 day~~ &#51;0 days |", "x:  30 days. "),
    "not a table": ("a | b\nc | d", "a | b\nc | d"),
    # unicode: decorated letters
    "circled": ("ⓖⓘⓕⓣ ⓒⓐⓡⓓⓢ Ⓖⓘⓕⓣ", "gift cards Gift"),
    "parenthesized": ("⒢⒤⒡⒯ ⒞⒜⒭⒟⒮", "gift cards"),
    "negative, squared, regional": ("🅖🅘🅕🅣 🄶🄸🄵🅃 🅶🅸🅵🆃 🇬🇮🇫🇹", "GIFT GIFT GIFT GIFT"),
    "mathematical": ("𝐠𝐢𝐟𝐭 𝑐𝑎𝑟𝑑𝑠 𝓬𝓪𝓷 𝕓𝕖 𝚛𝚎𝚝𝚞𝚛𝚗𝚎𝚍 𝗂𝗇 𝟗𝟎 𝖉𝖆𝖞𝖘", "gift cards can be returned in 90 days"),
    "fullwidth": ("ＧＩＦＴ ｃａｒｄｓ ９０", "GIFT cards 90"),
    "combining dots": ("ġịḟṭ c̈ȧr̈d̈s", "gift cards"),
    "zalgo": ("g\u0301\u0300\u0302i\u0308\u0323f\u0327t", "gift"),
    "small capitals": ("ɢɪꜰᴛ ᴄᴀʀᴅꜱ", "gift cards"),
    "enclosed numbers": ("⑨⓪ days, ❾⓿ days, ⑽ days, ⒈ day, ⓫ days", "90 days, 90 days, 10 days, 1 day, 11 days"),
    "superscripts": ("10² m², ᵍⁱᶠᵗ, H₂O", "10^2 m2, gift, H2O"),
    "invisible characters": ("Gi\u200bft\u200d ca\u00adr\u2060ds\ufeff a\u180ere\u034f r\u3164e\u2800turned\u200e",
                             "Gift cards are returned"),
    "bidi controls": ("\u202aGift\u202c \u2067cards\u2069 can", "Gift cards can"),
    "right-to-left override": ("Gift cards \u202etonnac\u202c be returned.", "Gift cards cannot be returned."),
    "ligatures and spaces": ("ﬁve\u00a0oﬀers\u2003here", "five offers here"),
    "other scripts keep their marks": ("हिन्दी भाषा, ٱلْعَرَبِيَّة, 退货, Привет", "हिन्दी भाषा, ٱلْعَرَبِيَّة, 退货, Привет"),
    "plain text is left alone": ("Items can be returned within 30 days. Refunds take 5 days!",
                                 "Items can be returned within 30 days. Refunds take 5 days!"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_rendered_text(case: str) -> None:
    source, expected = CASES[case]
    r = render(source)
    assert r.text == expected
    assert r.source == source and r.changed == (source != expected)


def test_offsets_point_into_the_source() -> None:
    source = ("**Gift cards** ~~cannot~~ can be returned. Ⓖⓘⓕⓣ &#51;0 days.\n\n| Item | 30-day window |\n|--|--|\n"
              "| Shoes | 30 days |")
    r = render(source)
    spans = {r.text[s.start : s.end]: r.to_source(s.start, s.end) for s in split_sentences(r.text)}
    assert source[slice(*spans["Gift cards  can be returned."])] == "**Gift cards** ~~cannot~~ can be returned."
    assert source[slice(*spans["Gift 30 days."])] == "Ⓖⓘⓕⓣ &#51;0 days."
    # the header cells no statement reads head the first row's statement: the span covers header and row
    assert source[slice(*spans["Item, 30-day window: Shoes: 30 days."])] == \
        "Item | 30-day window |\n|--|--|\n| Shoes | 30 days |"
    assert r.to_source(0, 0) == (2, 2) and r.to_source(len(r.text), len(r.text)) == (len(source), len(source))


_PIECES = list("ab c.\n|-*_~`#>[]()!<>/&;#x30:") + ["&#51;", "ⓖ", "𝐠", "ġ", "\u0301", "\u0336", "\u200b", "\u202e", "²",
                                                     "~~", "**", "<del>", "</del>", "\n|--|--|\n", "```", "<b t='x'>"]


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
@settings(max_examples=400, deadline=None, derandomize=True)
def test_rendering_never_crashes_and_maps_every_span(source: str) -> None:
    r = render(source)
    n = len(r.text)
    last = (0, 0)
    for start in range(0, n + 1, 3):
        for end in range(start, min(n, start + 9) + 1, 4):
            s, e = r.to_source(start, end)
            assert 0 <= s <= e <= len(source)
        s, e = r.to_source(start, n)
        assert s >= last[0] or start == 0  # monotone in the start
        last = (s, e)


def test_rendering_is_bounded() -> None:
    header = "| Item | " + " | ".join(f"header {i} " * 5 for i in range(100)) + " |\n|" + "---|" * 101 + "\n"
    rows = ("| " + "subject " * 30 + " | " + " | ".join("v" for _ in range(100)) + " |\n") * 300
    source = header + rows
    assert len(render(source).text) <= 2 * len(source) + 4096 + 10_000
    import time

    big = ("Items **can** be returned ~~never~~ within &#51;0 days ⓖ. " * 20_000)  # ~1.2 MB
    t0 = time.process_time()
    assert "Items can be returned  within 30 days g." in render(big).text[:100]
    assert time.process_time() - t0 < 10
    # marks that never close, on one long line: linear, not one scan to the end of the line per mark
    for unit in ("~~a ", "**a ", "_a ", "``a `", "<del>a ", "[a](u \"", "<a b=\"", "[", "<s ", "&#", "\u0336"):
        t0 = time.process_time()
        render(unit * (200_000 // len(unit)))
        assert time.process_time() - t0 < 2, unit


def test_words_in_every_script() -> None:
    assert words("Don't pay 3.5% — ¿Qué? Straße, हिन्दी भाषा, Привет мир, 退货") == [
        "don't", "pay", "3.5", "qué", "straße", "हिन्दी", "भाषा", "привет", "мир", "退", "货"]
    assert words("snake_case covid-19 l'été") == ["snake", "case", "covid-19", "l'été"]


# --------------------------------------------------------------------------- through the shipped model
CTX = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned. "
       "Refunds are issued to the original payment method within 5 business days.",
       "Standard shipping takes 3 to 5 business days and costs $4.99. Express shipping takes 1 day and costs $12."]
Q = "How do returns and shipping work?"

HALLUCINATIONS = {
    "struck negation": "Gift cards ~~cannot~~ can be returned.",
    "struck with del": "Gift cards <del>cannot</del> can be returned.",
    "struck with an overlay": "Gift cards c\u0336a\u0336n\u0336n\u0336o\u0336t\u0336 can be returned.",
    "circled": "ⓖⓘⓕⓣ ⓒⓐⓡⓓⓢ ⓒⓐⓝ ⓑⓔ ⓡⓔⓣⓤⓡⓝⓔⓓ.",
    "parenthesized": "⒢⒤⒡⒯ ⒞⒜⒭⒟⒮ ⒞⒜⒩ ⒝⒠ ⒭⒠⒯⒰⒭⒩⒠⒟.",
    "mathematical bold": "𝐆𝐢𝐟𝐭 𝐜𝐚𝐫𝐝𝐬 𝐜𝐚𝐧 𝐛𝐞 𝐫𝐞𝐭𝐮𝐫𝐧𝐞𝐝.",
    "combining dots": "ġịḟṭ ċạṛḋṡ ċạṅ ḃẹ ṛẹṭụṛṅẹḋ.",
    "fullwidth": "Ｇｉｆｔ ｃａｒｄｓ ｃａｎ ｂｅ ｒｅｔｕｒｎｅｄ.",
    "small capitals": "ɢɪꜰᴛ ᴄᴀʀᴅꜱ ᴄᴀɴ ʙᴇ ʀᴇᴛᴜʀɴᴇᴅ.",
    "zero-width split": "Items can be returned within 9\u200b0 days of delivery.",
    "enclosed number": "Items can be returned within ⑨⓪ days of delivery.",
    "entity number": "Items can be returned within &#57;0 days of delivery.",
    "table cell": "| Item | Return window |\n|---|---|\n| Items | 90 days of delivery |",
    "right-to-left override": "Items can be returned within \u202esyad 09\u202c of delivery.",
}
FAITHFUL = {
    "entity": "Items can be returned within &#51;0 days of delivery.",
    "named entities": "Standard shipping costs &dollar;4&period;99&nbsp;and takes 3 to 5 business days.",
    "table": ("| Shipping | Cost |\n|---|---|\n| Standard shipping | $4.99 |\n| Express shipping | $12 |\n\n"
              "Items can be returned within 30 days of delivery."),
    "markdown": "**Items** can be returned within *30 days* of delivery. Refunds are issued to the `original payment "
                "method` within 5 business days.",
    "html": "<p>Items can be returned within <b>30 days</b> of delivery.</p>",
    "struck hallucination": "Items can be returned within ~~90~~ 30 days of delivery.",
    "decorated faithful": "𝐈𝐭𝐞𝐦𝐬 can be returned within ③⓪ days of delivery.",
}


@pytest.fixture(scope="module")
def guard() -> Iterator[Guard]:
    g = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block"))
    yield g
    g.close()


@pytest.mark.parametrize("case", list(HALLUCINATIONS))
def test_decorated_and_marked_up_hallucinations_are_blocked(guard: Guard, case: str) -> None:
    answer = HALLUCINATIONS[case]
    verdict = guard.check(Q, CTX, answer)
    assert verdict.action == "block" and verdict.outcome == "failed", (case, verdict.reasons)
    assert verdict.response == answer  # what the client would have received is the text as sent
    for ev in verdict.evaluation.faithfulness.sentences:  # evidence points into the answer as sent
        assert answer[ev.start : ev.end] == ev.text


@pytest.mark.parametrize("case", list(FAITHFUL))
def test_faithful_entity_table_and_markup_answers_pass(guard: Guard, case: str) -> None:
    answer = FAITHFUL[case]
    verdict = guard.check(Q, CTX, answer)
    assert verdict.action == "pass", (case, verdict.reasons)
    for ev in verdict.evaluation.faithfulness.sentences:
        assert answer[ev.start : ev.end] == ev.text
        if ev.sentence is not None:
            assert CTX[ev.sentence.chunk][ev.sentence.start : ev.sentence.end] == ev.sentence.text


def test_rendering_can_be_turned_off() -> None:
    plain = Evaluator(nli=NLIScorer(default_nli_model()), checks=["faithfulness"], render=False)
    with pytest.raises(Exception, match="script the model was not trained on"):  # read as unknown letters
        plain.evaluate(Q, CTX, HALLUCINATIONS["mathematical bold"])
    assert plain.evaluate(Q, CTX, "Items &amp; more").faithfulness.sentences[0].hypothesis == "Items &amp; more"


def test_long_questions_are_read_from_their_end(guard: Guard) -> None:
    pasted = "Lorem ipsum dolor sit amet. " * 40_000  # 1.1 MB pasted before the question
    import time

    t0 = time.process_time()
    verdict = guard.check(pasted + Q, CTX, "Items can be returned within 90 days of delivery.")
    assert verdict.action == "block" and time.process_time() - t0 < 20


# --------------------------------------------------------------------------- delivered byte for byte
@pytest.fixture(scope="module")
def gateway(guard: Guard) -> Iterator[str]:
    async def upstream(scope, receive, send):  # type: ignore[no-untyped-def]
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        answer = json.loads(body)["answer"]
        payload = json.dumps({"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}]},
            ensure_ascii=False).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": payload})

    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="upstream")
    with llm_server.serve(upstream) as up:
        with llm_server.serve(create_gateway(up + "/v1", guard, telemetry), lifespan="on") as url:
            yield url


@pytest.mark.parametrize("case", ["entity", "table", "markdown", "html"])
def test_faithful_markup_is_delivered_byte_for_byte(gateway: str, case: str) -> None:
    answer = FAITHFUL[case]
    r = httpx.post(gateway + "/v1/chat/completions", timeout=60,
                   json={"model": "m", "messages": [{"role": "user", "content": Q}], "contexts": CTX, "answer": answer})
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] == answer  # rendering is for scoring only


@pytest.mark.parametrize("case", ["circled", "struck negation", "table cell"])
def test_decorated_hallucinations_are_blocked_at_the_gateway(gateway: str, case: str) -> None:
    r = httpx.post(gateway + "/v1/chat/completions", timeout=60, json={
        "model": "m", "messages": [{"role": "user", "content": Q}], "contexts": CTX, "answer": HALLUCINATIONS[case]})
    assert r.status_code == 400 and r.json()["error"]["type"] == "guardrail_blocked"
    assert re.search(r"not supported|contradicted", r.json()["error"]["message"])
