"""Cheap grounding signals shown next to the NLI probabilities in the evidence.

- ``coverage``: share of the sentence's content words that its best premise contains.
- ``unsupported``: numbers, dates and capitalised names in the sentence that appear nowhere in
  the contexts (the typical hallucination: a right-looking sentence with a wrong figure).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from guardrail.text import STOPWORDS

_NUMBER = re.compile(r"(?<![\w.])[-+]?\$?\d[\d,]*(?:\.\d+)?%?")
_CAP = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|de|la|von|van|the)?\s*[A-Z][\w'’-]*)*")
_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)


def _norm_number(tok: str) -> str:
    tok = tok.replace(",", "").replace("$", "").rstrip("%").lstrip("+")
    if "." in tok:
        tok = tok.rstrip("0").rstrip(".")
    return tok


def salient_terms(sentence: str, *, skip_first_word: bool = True) -> list[str]:
    """Numbers (normalised), month names and capitalised names of a sentence, in order."""
    terms: list[str] = []
    for m in _NUMBER.finditer(sentence):
        terms.append(_norm_number(m.group()))
    first = re.match(r"\W*(\w+)", sentence)
    first_end = first.end() if first else 0
    for m in _CAP.finditer(sentence):
        words = m.group().split()
        if skip_first_word and m.start() < first_end and len(words) == 1:
            continue  # a capitalised first word is usually just the sentence start
        for w in words:
            low = w.lower().strip("'’")
            if low in STOPWORDS or len(low) < 2:
                continue
            terms.append(low)
    for w in re.findall(r"[A-Za-z]+", sentence):
        if w.lower() in _MONTHS and w.lower() not in terms:
            terms.append(w.lower())
    seen: set[str] = set()
    return [t for t in terms if not (t in seen or seen.add(t))]  # type: ignore[func-returns-value]


def context_terms(contexts: Iterable[str]) -> frozenset[str]:
    """Every lower-cased word and normalised number of the contexts."""
    vocab: set[str] = set()
    for text in contexts:
        vocab.update(w.lower().strip("'’") for w in re.findall(r"[\w'’-]+", text))
        vocab.update(_norm_number(m.group()) for m in _NUMBER.finditer(text))
    return frozenset(vocab)


def unsupported_terms(sentence: str, vocabulary: frozenset[str]) -> tuple[str, ...]:
    out = []
    for term in salient_terms(sentence):
        parts = term.split("-") if "-" in term and term not in vocabulary else [term]
        if any(p and p not in vocabulary for p in parts):
            out.append(term)
    return tuple(out)


def coverage(hyp_words: Sequence[str], premise_words: frozenset[str]) -> float:
    if not hyp_words:
        return 1.0
    return sum(1 for w in hyp_words if w in premise_words) / len(hyp_words)


#: a number as written in running text: digits with thousands separators or a decimal part ("1,240", "0.5")
_FIGURE = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,]|\.\d)|(?<![\w.,])\d+(?:\.\d+)?(?![\w,]|\.\d)")
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90})
#: a number word standing alone: not part of "twenty-five" nor of "two hundred"
_WORD = re.compile(r"(?i)(?<![\w-])(" + "|".join(_NUMBER_WORDS) + r")(?![\w-])(?!\s+(?:hundred|thousand|million|billion)\b)")


def _value(figure: str) -> float:
    return float(figure.replace(",", ""))


_MONTH_NUMBER = {m: k for k, m in enumerate(
    "january february march april may june july august september october november december".split(), start=1)}
#: a date the contexts spell out: "January 31, 2026", "31 January 2026", "Jan. 31, 2026"
_SPELLED_DATE = re.compile(
    r"(?i)\b(?:(?P<m1>jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?,?"
    r"\s+(?P<y1>\d{4})|(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct"
    r"|nov|dec)[a-z]*\.?,?\s+(?P<y2>\d{4}))\b")
_ISO_DATE = re.compile(r"(?<![\w-])(\d{4})-(\d{2})-(\d{2})(?![\w-])")

#: how the contexts write a number (by value) or a date (by year, month, day)
Spellings = dict[float | tuple[int, int, int], str]


def number_spellings(contexts: Iterable[str]) -> Spellings:
    """How the contexts write each number they hold (the first spelling of each value): "1,240", "two"; and each
    date they spell out ("January 31, 2026"), by (year, month, day)."""
    out: Spellings = {}
    for text in contexts:
        for m in _FIGURE.finditer(text):
            out.setdefault(_value(m.group()), m.group())
        for m in _WORD.finditer(text):
            out.setdefault(float(_NUMBER_WORDS[m.group().lower()]), m.group().lower())
        for m in _SPELLED_DATE.finditer(text):
            month = (m.group("m1") or m.group("m2")).lower()[:3]
            number = next(v for k, v in _MONTH_NUMBER.items() if k.startswith(month))
            out.setdefault((int(m.group("y1") or m.group("y2")), number, int(m.group("d1") or m.group("d2"))),
                           m.group())
    return out


def as_context_numbers(sentence: str, spellings: Spellings) -> str:
    """``sentence`` with each number written as the contexts write the same value ("1240" -> "1,240", "2 weeks" ->
    "two weeks" where the contexts say "1,240" and "two"), and each ISO date as the contexts spell it ("2026-01-31"
    -> "January 31, 2026"): a model reads "1240" against "1,240" as another number. Values the contexts do not hold
    are left as written."""
    if not spellings:
        return sentence

    def date(m: re.Match[str]) -> str:
        return spellings.get((int(m.group(1)), int(m.group(2)), int(m.group(3))), m.group())

    sentence = _ISO_DATE.sub(date, sentence)

    def figure(m: re.Match[str]) -> str:
        seen = spellings.get(_value(m.group()))
        if seen is None or seen == m.group():
            return m.group()
        if not seen[:1].isdigit():  # a word only for a figure standing alone ("$2", "2%", "2:30", "2-5" stay)
            before = m.string[m.start() - 1: m.start()]
            after = m.string[m.end(): m.end() + 1]
            if "." in m.group() or before in ("$", "-", "/", ":", "\u20ac", "\u00a3") or after in ("%", "-", "/", ":"):
                return m.group()
        return seen

    def word(m: re.Match[str]) -> str:
        if m.group().lower() == "one":  # a pronoun as often as a number ("One of them", "one can ...")
            return m.group()
        seen = spellings.get(float(_NUMBER_WORDS[m.group().lower()]))
        return seen if seen is not None and seen[:1].isdigit() else m.group()

    out = _FIGURE.sub(figure, sentence)
    return _WORD.sub(word, out)

