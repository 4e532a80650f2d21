from __future__ import annotations

import pytest

from guardrail.text import sentence_windows, split_sentences, token_windows


def sents(text: str) -> list[str]:
    return [s.of(text) for s in split_sentences(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Dr. Smith paid $3.50. Then he left!", ["Dr. Smith paid $3.50.", "Then he left!"]),
        ("The U.S. economy grew 2.5% in 2023. J. K. Rowling wrote it.", ["The U.S. economy grew 2.5% in 2023.", "J. K. Rowling wrote it."]),
        ("Refunds take 30 days, e.g. for books. Call us.", ["Refunds take 30 days, e.g. for books.", "Call us."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ('"Why?" she asked. He ran.', ['"Why?" she asked.', "He ran."]),
        ("Steps:\n1. Open the box.\n2. Remove the item.", ["Steps:", "1. Open the box.", "2. Remove the item."]),
        ("- first point\n- second point", ["- first point", "- second point"]),
        ("This line is hard\nwrapped in the middle. Next one.", ["This line is hard\nwrapped in the middle.", "Next one."]),
        ("Run:\n```python\nx = 1. \nprint(x)\n```\nThat prints 1.", ["Run:", "```python\nx = 1. \nprint(x)\n```", "That prints 1."]),
        ("in the 19th century.First for Women is a magazine.", ["in the 19th century.", "First for Women is a magazine."]),
        ("See https://example.com/A.Html for details.", ["See https://example.com/A.Html for details."]),
        ("Version 3.14 shipped. Pi is 3.14159.", ["Version 3.14 shipped.", "Pi is 3.14159."]),
        ("Wait... Really? Yes!", ["Wait...", "Really?", "Yes!"]),
        ("", []),
        ("   \n\n  ", []),
        ("Delhi", ["Delhi"]),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert sents(text) == expected


def test_spans_are_exact_offsets() -> None:
    text = "  First one.  Second one!\n\nThird?  "
    spans = split_sentences(text)
    assert [text[s.start : s.end] for s in spans] == ["First one.", "Second one!", "Third?"]


def _char_tokens(text: str) -> list[tuple[int, int]]:
    # one token per word: offsets like a tokenizer's
    import re

    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def test_token_windows_cover_everything_with_overlap() -> None:
    text = " ".join(f"w{i}" for i in range(103))
    windows = token_windows(text, _char_tokens, max_tokens=10, stride=7)
    assert all(len(_char_tokens(w.of(text))) <= 10 for w in windows)
    covered = set()
    for w in windows:
        covered.update(w.of(text).split())
    assert covered == set(text.split())
    assert windows[-1].end == len(text)
    # consecutive windows overlap by max_tokens - stride tokens
    assert windows[0].of(text).split()[-3:] == windows[1].of(text).split()[:3]


def test_sentence_windows_never_truncate() -> None:
    sentences = [f"Sentence number {i} says fact {i}." for i in range(40)]
    long_one = " ".join(f"x{i}" for i in range(50)) + "."
    text = " ".join(sentences[:20] + [long_one] + sentences[20:])
    spans = split_sentences(text)
    count = lambda s: len(_char_tokens(s))  # noqa: E731
    windows = sentence_windows(text, spans, count, _char_tokens, max_tokens=24)
    assert all(count(w.of(text)) <= 24 for w in windows)
    joined = " ".join(w.of(text) for w in windows)
    for tok in text.split():
        assert tok in joined.split()
    assert windows[-1].end == spans[-1].end


def test_token_windows_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="stride"):
        token_windows("a b", _char_tokens, 2, 3)



def test_stem_keeps_nothing_for_words_it_returns_unchanged() -> None:
    """A gateway sees new ticket numbers, order ids and reference codes in every request. stem() returns them
    unchanged, and must not keep them: its cache held up to 65,536 of them (~150 bytes each), which was most of the
    gateway's RSS growth in the soak (~1 MB/min at 14 streams/s, benchmarks/soak.py)."""
    import tracemalloc

    from guardrail import text

    ids = [w for i in range(20_000) for w in (f"{7_000_000 + i}-{i % 5}", f"{9_000_000 + i}")]
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        assert [text.stem(w) for w in ids] == ids
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 256 * 1024, f"stem() kept {(after - before) / 1024:.0f} KiB for 40,000 ids"


def test_stem_cache_is_bounded() -> None:
    from guardrail import text

    text._stem_alpha.cache_clear()
    try:
        assert text.content_stems("Policy reference 1000123-0: ticket 1000123 refunds") == [
            "policy", "referenc", "1000123-0", "ticket", "1000123", "refund"]
        assert text._stem_alpha.cache_info().currsize == 4  # policy, reference, ticket, refunds: the ids are not kept
        words = [f"word{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676 % 26)}{chr(97 + i // 17576)}s"
                 for i in range(text.STEM_CACHE_SIZE + 100)]
        assert all(text.stem(w) == w[:-1] for w in words)
        assert text._stem_alpha.cache_info().currsize == text.STEM_CACHE_SIZE
    finally:
        text._stem_alpha.cache_clear()


def test_urls_are_set_aside_in_one_pass_as_the_url_pattern_reads_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """foreign_language() reads a sentence without its URLs, addresses and domains. The regex that found them tried
    every start of a run without spaces up to the run's end: an answer that is one long run ('{"a":{"a":...') cost
    its length squared (round 37). The one-pass reading gives what the regex gives, and looks at each character of
    a run a bounded number of times."""
    import random

    import guardrail.text as text

    parts = ["a", "w", "www.", "www", ".", "-", "_", "@", ":", "/", "://", "com", "io", "de", "dev", "x", "é", "1",
             " ", "{", '"', "\t", "..", "Com", "org"]
    rng = random.Random(37)
    for _ in range(20_000):
        s = "".join(rng.choice(parts) for _ in range(rng.randint(0, 14)))
        assert text._unlinked(s) == text._URLISH.sub(" ", s), s
    for s in ("See https://example.com/a or mail me@example.org.", "Visit www.example.com today.",
              "Go to shop.example.de-x or a.b.c.io, not a.dev.", '{"a":' * 50, "a-" * 50 + "a.com"):
        assert text._unlinked(s) == text._URLISH.sub(" ", s), s
    seen = {"chars": 0}

    def counted(ch: str) -> bool:
        seen["chars"] += 1
        return ch.isalnum() or ch == "_"

    monkeypatch.setattr(text, "_word", counted)
    for n in (1_000, 8_000):
        seen["chars"] = 0
        assert text.foreign_language('{"a":' * n) is None
        assert seen["chars"] <= 2 * len('{"a":' * n), (n, seen)
