"""Cheap grounding signals shown next to the NLI probabilities in the evidence.

- ``coverage``: share of the sentence's content words that its best premise contains.
- ``unsupported``: numbers, dates and capitalised names in the sentence that appear nowhere in
  the contexts (the typical hallucination: a right-looking sentence with a wrong figure).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


#: a possessive's ending ("Marsh's", "the Alliance’s")
_POSSESSIVE_END = re.compile(r"['’]s$")


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
            if "-" in w:  # "Minneapolis-based" names Minneapolis ("based" is the sentence's word, not a name)
                w = "-".join(p for p in w.split("-") if p[:1].isupper() or p[:1].isdigit()) or w
            low = _POSSESSIVE_END.sub("", w.lower()).strip("'’")  # "Marsh's goal" names Marsh
            if low in STOPWORDS or len(low) < 2:
                continue
            terms.append(low)
    for w in re.findall(r"[A-Za-z]+", sentence):
        if w.lower() in _MONTHS and w.lower() not in terms:
            terms.append(w.lower())
    seen: set[str] = set()
    return [t for t in terms if not (t in seen or seen.add(t))]  # type: ignore[func-returns-value]


#: an elided article or preposition before a name: "l'Aube", "d'Ivoire", "dell'Orso"
_ELIDED = re.compile(r"^(?:l|d|dell|dall|nell|all|sull|qu)['’](?=\w)")


def context_terms(contexts: Iterable[str]) -> frozenset[str]:
    """Every lower-cased word and normalised number of the contexts."""
    vocab: set[str] = set()
    for text in contexts:
        for w in re.findall(r"[\w'’-]+", text):
            w = _POSSESSIVE_END.sub("", w.lower()).strip("'’")
            vocab.add(w)
            if "-" in w:  # "a Dutch-born oceanographer" names the Dutch
                vocab.update(p for p in w.split("-") if p)
            if _ELIDED.match(w):  # "Tour de l'Aube" names Aube
                vocab.add(_ELIDED.sub("", w))
        vocab.update(_norm_number(m.group()) for m in _NUMBER.finditer(text))
    return frozenset(vocab)


#: endings of a place's name (``_PLACE_ENDINGS``) and of the word for its people or things (``_PEOPLE_ENDINGS``),
#: after a shared stem of at least :data:`_STEM` letters: "Belgium"/"Belgian", "Florence"/"Florentine",
#: "Japan"/"Japanese". One word of each kind: two place endings are as often two names ("Roberta"/"Roberto",
#: "Maria"/"Mario"), two people endings two peoples
_PLACE_ENDINGS = frozenset("a ia y e ey um ium o ce en land".split()) | {""}
_PEOPLE_ENDINGS = frozenset("an ian ean ese ish ic i ine tine ite".split())
_STEM = 5
#: names and their people's words that share no stem (the two-way pairs of a small closed class)
_IRREGULAR_NAMES = {a: b for x, y in (pair.split("/") for pair in (
    "france/french netherlands/dutch holland/dutch wales/welsh spain/spanish denmark/danish flanders/flemish "
    "poland/polish finland/finnish norway/norwegian switzerland/swiss britain/british england/english "
    "scotland/scottish scotland/scots ireland/irish greece/greek portugal/portuguese peru/peruvian "
    "philippines/filipino thailand/thai iceland/icelandic rome/roman venice/venetian naples/neapolitan "
    "moscow/muscovite glasgow/glaswegian manchester/mancunian liverpool/liverpudlian madrid/madrilenian "
    "cyprus/cypriot monaco/monegasque uk/british us/american usa/american sweden/swedish china/chinese "
    "iran/iranian iraq/iraqi cuba/cuban oman/omani chad/chadian mali/malian laos/lao turkey/turkish").split())
    for a, b in ((x, y), (y, x))}
#: a unit's abbreviation, written as a name ("a 50 MP camera"), and the words the contexts may spell it with
_UNIT_NAMES = {"mp": "megapixel", "gb": "gigabyte", "tb": "terabyte", "mb": "megabyte", "kb": "kilobyte",
               "km": "kilometre kilometer", "kg": "kilogram kilo", "hz": "hertz", "ghz": "gigahertz", "mhz": "megahertz",
               "kw": "kilowatt", "kwh": "kilowatt-hour", "mah": "milliamp", "mph": "mile", "cm": "centimetre centimeter",
               "mm": "millimetre millimeter", "ml": "millilitre milliliter", "tv": "television"}
#: a decade or a century written as a figure: "the 1990s", "the early 1200s"
_DECADE = re.compile(r"(?<![\w.])(\d{2,3}0)['’]?s\b")


def _named_otherwise(term: str, vocabulary: frozenset[str]) -> bool:
    """``term`` (lower case) is a form of a word of ``vocabulary``: a plural ("A321neos" for "A321neo"), a place's
    people or things ("Belgian" for "Belgium", "Flemish" for "Flanders"), a unit's abbreviation ("MP" for
    "50-megapixel")."""
    if term.endswith("s") and any(ch.isdigit() for ch in term) and term[:-1] in vocabulary:
        return True  # a model's plural ("A321neos"; not "Williams" for "William")
    other = _IRREGULAR_NAMES.get(term)
    if other is not None and other in vocabulary:
        return True
    for n in range(len(term), _STEM - 1, -1):
        ending = term[n:]
        others = _PEOPLE_ENDINGS if ending in _PLACE_ENDINGS else _PLACE_ENDINGS if ending in _PEOPLE_ENDINGS else ()
        if any(term[:n] + e in vocabulary for e in others):
            return True
    spelled = _UNIT_NAMES.get(term)
    return spelled is not None and any(
        w == f or w == f + "s" or w.endswith(("-" + f, "-" + f + "s")) for f in spelled.split() for w in vocabulary)


def _decade_held(figure: str, vocabulary: frozenset[str]) -> bool:
    """A year of the decade ("1990s") or, for a figure ending in "00", the century ("the early 1200s") is in
    ``vocabulary``."""
    start = int(figure)
    span = 100 if start % 100 == 0 else 10
    return any(w.isdigit() and start <= int(w) < start + span for w in vocabulary if len(w) == len(figure))


def unsupported_terms(sentence: str, vocabulary: frozenset[str]) -> tuple[str, ...]:
    out = []
    decades = frozenset(_DECADE.findall(sentence))
    for term in salient_terms(sentence):
        parts = term.split("-") if "-" in term and term not in vocabulary else [term]
        if any(p and p not in vocabulary and not _named_otherwise(p, vocabulary) for p in parts):
            if term in decades and _decade_held(term, vocabulary):
                continue
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



# ---------------------------------------------------------------------------------------------- numbers and quantities
_UNITS_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen".split())}
_TENS_WORDS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
               "ninety": 90}
_SCALE_WORDS = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
#: a run of number words: "thirty-one", "twenty five", "two hundred", "one hundred and twenty", "3 million"
_WORD_RUN = re.compile(
    r"(?i)(?<![\w-])(?:(?:" + "|".join([*_UNITS_WORDS, *_TENS_WORDS, *_SCALE_WORDS]) + r")(?:[\s-]+(?:and\s+)?)?)+"
    r"(?<![\s-])(?!\w)")
#: a figure as written: "$1,240.50", "34%", "5", "0.001", "1.5"
_FIGURE_AT = re.compile(r"(?<![\w.,])(?P<cur>[$€£]\s?)?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d])"
                        r"(?:(?P<pct>\s?%)|(?P<suffix>[kKmMB]|bn|mn)\b)?")
#: the rest of a dimension chain after its first figure, up to its unit ("x 18 x 10 inches")
_DIMENSIONS = re.compile(r"(?:\s*[x×]\s*\d+(?:\.\d+)?)+\s*(?P<unit>[^\W\d_]+)")
#: a scale letter after an amount of money and a space ("£ 50 m")
_SHORT_SCALE = re.compile(r" ([kKmMB]|bn|mn)\b")
#: a year before a two-digit end of a range ("2018–19")
_YEAR_RANGE = re.compile(r"\b((?:19|20)\d\d)\s?[-–/]\s?$")
#: a scale word after a figure ("$45 million", "2.5 bn")
_SCALE_AFTER = re.compile(r"(?i)\s*(?P<scale>thousand|million|billion|trillion|bn|mn)\b")
#: the end of a range whose scale word is the range's: "$4.9–5.1 billion", "2 to 3 million"
_RANGE_SCALE = re.compile(r"(?i)\s*(?:[-\u2013\u2014]|to)\s*[$\u20ac\u00a3]?(?P<to>\d[\d,]*(?:\.\d+)?)\s*"
                          r"(?P<scale>thousand|million|billion|trillion|bn|mn)\b")
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "bn": 1e9, "mn": 1e6, "k": 1e3, "m": 1e6,
           "b": 1e9}
_UNIT_AFTER = re.compile(r"[\s-]*(?P<unit>°\s?[CFcf]\b|[^\W\d_]+)")


def _words_value(run: str) -> float | None:
    """The value of a run of number words ("thirty-one" -> 31, "two hundred and five" -> 205), None if it is no
    number ("and" alone)."""
    total = current = 0.0
    seen = False
    for w in re.split(r"[\s-]+", run.lower()):
        if w in _UNITS_WORDS:
            current += _UNITS_WORDS[w]
        elif w in _TENS_WORDS:
            current += _TENS_WORDS[w]
        elif w in _SCALE_WORDS:
            scale = _SCALE_WORDS[w]
            if scale == 100:
                current = (current or 1) * 100
            else:
                total += (current or 1) * scale
                current = 0
        elif w == "and" or not w:
            continue
        else:
            return None
        seen = True
    return total + current if seen else None


#: spellings of one unit ("metres" and "meters", "per cent" and "%")
_SAME_UNIT = {"metre": "m", "meter": "m", "kilometre": "km", "kilometer": "km", "centimetre": "cm", "centimeter": "cm",
              "millimetre": "mm", "millimeter": "mm", "litre": "l", "liter": "l", "millilitre": "ml", "milliliter": "ml",
              "percent": "%", "pct": "%", "percentage": "%", "kilo": "kg", "kilogram": "kg", "gram": "g",
              "milligram": "mg", "pound": "lb", "lbs": "lb", "ounce": "oz", "mile": "mi", "foot": "ft", "feet": "ft",
              "inch": "in", "inche": "in", "gigabyte": "gb", "terabyte": "tb", "megabyte": "mb", "hr": "hour",
              "min": "minute", "sec": "second", "yr": "year", "mo": "month", "wk": "week"}


def _singular(u: str) -> str:
    u = u.lower().replace(" ", "")
    u = u[:-1] if len(u) > 3 and u.endswith("s") and not u.endswith("ss") else u
    return _SAME_UNIT.get(u, u)


#: words between a number and its unit that say which kind of unit ("5 business days", "30 calendar days"); "working"
#: reads as "business"
_QUALIFIERS = {"business": "business", "working": "business", "calendar": "calendar", "consecutive": "consecutive",
               "school": "school", "banking": "business", "clear": "clear", "full": "full"}
#: units a number measures: two different ones never stand for each other ("12%" is not "12 weeks")
_MEASURES = frozenset("""second sec minute min hour hr day week month year night decade century
    mg g gram kg kilogram kilo lb lbs pound oz ounce ton tonne mm cm m meter metre km kilometer kilometre in inch inche ft
    foot feet mi mile ml l liter litre gal gallon kb mb gb tb kbp mbp gbp mhz ghz hz w kw kwh v mah mph kph
    % percent percentage point dollar usd euro eur gbp cent am pm""".split())
_CURRENCY_UNITS = frozenset({"dollar", "usd", "euro", "eur", "gbp", "cent", "buck"})
#: which currency a sign or a unit word names: "€15" is not "$15"
_CURRENCY_KIND = {"$": "dollar", "dollar": "dollar", "usd": "dollar", "buck": "dollar", "€": "euro", "euro": "euro",
                  "eur": "euro", "£": "pound", "gbp": "pound", "cent": "cent"}


#: a time of day's half after its hour (and minutes): "11 pm", "9 a.m.", "3:00 PM", "7.30pm"
_MERIDIEM = re.compile(r"(?i)(?:[:.](?P<minutes>[0-5]\d))?\s?(?P<half>[ap])(?:\.\s?m\b\.?|\s?m\b)")


def _unit(text: str, end: int) -> tuple[str, str, int]:
    """The unit word after a number ending at ``end`` (lower-cased, singular: "days" -> "day", "°F" -> "°f"; "am" or
    "pm" for a time of day), the qualifier before it ("business" in "5 business days"; "" when none) and where the
    unit ends."""
    if (half := _MERIDIEM.match(text, end)) is not None:
        return half.group("half").lower() + "m", "", half.end()
    m = _UNIT_AFTER.match(text, end)
    if m is None or m.group("unit").lower() in STOPWORDS or m.group("unit").lower() in ("x", "×"):
        return "", "", end  # "£500,000 from ...", "5 and 6", "22 x 18": no unit said
    u = _singular(m.group("unit"))
    if u in _QUALIFIERS:
        nxt = _UNIT_AFTER.match(text, m.end())
        if nxt is not None:
            return _singular(nxt.group("unit")), _QUALIFIERS[u], nxt.end()
    return u, "", m.end()


#: a bound before a number, by direction: "within 30 days", "up to 10 hours" (at most) / "after 30 days", "at least 5"
_UPPER = r"within|up\s+to|under|less\s+than|fewer\s+than|at\s+most|no\s+more\s+than|not\s+more\s+than|maximum(?:\s+of)?|max\.?|below|before|no\s+later\s+than|inside(?:\s+of)?"
_LOWER = r"after|at\s+least|more\s+than|over|no\s+earlier\s+than|not\s+before|minimum(?:\s+of)?|min\.?|beyond|above|no\s+less\s+than|not\s+less\s+than|exceeding|upwards\s+of|past"
_BOUND_BEFORE = re.compile(rf"(?i)(?:(?P<upper>{_UPPER})|(?P<lower>{_LOWER}))\s+(?:the\s+(?:first\s+|last\s+)?)?[$€£]?$")


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number of a text with the unit word after it (``unit`` "" when none), and how it was written."""

    value: float
    unit: str
    written: str
    #: written in words ("thirty-one") rather than figures
    words: bool = False
    #: the kind of unit ("business" in "5 business days"), "" when none is said
    qualifier: str = ""
    #: "upper" ("within 30 days", "up to 10 hours"), "lower" ("after 30 days", "at least 5"), "" when none is said
    bound: str = ""
    #: a currency sign before it ("$60")
    currency: bool = False
    #: the sign itself ("$", "€", "£"; "" when none)
    sign: str = ""
    #: the number with its bound and unit as written ("after 30 days", "30 business days")
    phrase: str = ""
    #: said as an approximation ("about 1.3 kg", "roughly $45 million")
    hedged: bool = False

    def stands_for(self, other: "Quantity") -> bool:
        """This quantity of an answer says what ``other`` (of a context) says: the same value, no other measure
        ("12%" is not "12 weeks", "$60" is not "60 days"), no other kind of unit ("30 business days" is not "30
        days"; "5 days" for "5 business days" says less, not otherwise) and no bound the other way ("after 30 days"
        is not "within 30 days")."""
        if self.value != other.value:
            return False
        kinds = (_CURRENCY_KIND.get(self.sign or self.unit), _CURRENCY_KIND.get(other.sign or other.unit))
        if None not in kinds and kinds[0] != kinds[1]:
            return False  # "€15" is not "$15", "15 cents" not "$15"
        mine = "$" if self.currency or self.unit in _CURRENCY_UNITS else self.unit
        theirs = "$" if other.currency or other.unit in _CURRENCY_UNITS else other.unit
        if mine != theirs and (mine in _MEASURES or mine == "$") and (theirs in _MEASURES or theirs == "$"):
            return False  # two measures: "12%" is not "12 weeks", "$60" is not "60 days"
        if self.qualifier and mine == theirs and self.qualifier != other.qualifier:
            return False
        return not (self.bound and other.bound and self.bound != other.bound)


def quantities(text: str, *, compound_words_only: bool = False, ones: bool = False) -> list[Quantity]:
    """The numbers of ``text`` with their units: figures ("$1,240", "34%", "1.5k"), and numbers in words ("thirty-one
    days"; with ``compound_words_only`` only those of two or more words, "thirty-one", "two hundred": a single word
    such as "two" is as often a count the answer makes as a figure it quotes)."""
    out: list[Quantity] = []
    skip = 0
    for m in _FIGURE_AT.finditer(text):
        if m.start() < skip:
            continue
        value = float(m.group("num").replace(",", ""))
        end = m.end()
        year = _YEAR_RANGE.search(text, max(0, m.start() - 8), m.start()) if len(m.group("num")) == 2 else None
        if year is not None:  # "2018–19": 2019
            value = float(int(year.group(1)[:2]) * 100 + int(m.group("num")))
        if m.group("suffix"):
            value *= _SCALES[m.group("suffix").lower()]
        elif m.group("cur") and (short := _SHORT_SCALE.match(text, end)) is not None:  # "£ 50 m", "$3 bn"
            value *= _SCALES[short.group(1).lower()]
            end = short.end()
        elif (scale := _SCALE_AFTER.match(text, end)) is not None:  # "$45 million": 45,000,000
            value *= _SCALES[scale.group("scale").lower()]
            end = scale.end()
        elif (shared := _RANGE_SCALE.match(text, end)) is not None and \
                float(shared.group("to").replace(",", "")) >= value:  # "$4.9–5.1 billion": 4,900,000,000
            value *= _SCALES[shared.group("scale").lower()]
        unit, qualifier, end = ("%", "", m.end()) if m.group("pct") else _unit(text, end)
        if not unit and (dims := _DIMENSIONS.match(text, end)) is not None:  # "22 x 18 x 10 inches": inches all
            unit = _singular(dims.group("unit"))
        bound, start = _bound(text, m.start(), end)
        if unit in ("am", "pm"):
            if (minutes := _MERIDIEM.match(text, m.end())) and minutes.group("minutes"):
                value += int(minutes.group("minutes")) / 60  # "3:30 pm": half past three
                skip = end  # the minutes are no figure of their own
            elif re.fullmatch(r"\d{1,2}\.[0-5]\d", m.group("num")):
                value = int(value) + round(value % 1 * 100) / 60  # "7.30pm": half past seven
        out.append(Quantity(value, unit, m.group().strip(), qualifier=qualifier, bound=bound,
                            currency=bool(m.group("cur")), sign=(m.group("cur") or "").strip(),
                            phrase=text[start:end].strip(), hedged=_hedged(text, m.start())))
    for m in _WORD_RUN.finditer(text):
        run = m.group()
        spelled = _words_value(run)
        if spelled is None:
            continue
        value = spelled
        if compound_words_only and len(re.split(r"[\s-]+(?:and[\s-]+)?", run.strip())) < 2:
            continue
        if run.strip().lower() == "one" and not ones:
            continue  # a pronoun as often as a number (in an answer; in the contexts it may be the number said)
        unit, qualifier, end = _unit(text, m.end())
        bound, start = _bound(text, m.start(), end)
        out.append(Quantity(value, unit, run.strip(), words=True, qualifier=qualifier, bound=bound,
                            phrase=text[start:end].strip(), hedged=_hedged(text, m.start())))
    for m in () if compound_words_only else _FREQUENCY.finditer(text):  # "twice a day": 2 times (one word: a count)
        bound, start = _bound(text, m.start(), m.end(1))
        out.append(Quantity(float(_TIMES[m.group(1).lower()]), "time", m.group(1), words=True, bound=bound,
                            phrase=text[start:m.end(1)].strip(), hedged=_hedged(text, m.start())))
    return out


#: a frequency in one word, before the period it counts in ("twice a day", "once weekly"); not "once" that opens a
#: clause ("Once you have registered, ...")
_TIMES = {"once": 1, "twice": 2, "thrice": 3}
_FREQUENCY = re.compile(r"(?i)\b(once|twice|thrice)\b(?=\s+(?:(?:a|an|per|every|each)\s+(?:day|week|fortnight|month|"
                        r"year|hour|night|quarter|term|season)\b|(?:daily|weekly|monthly|yearly|annually|nightly|hourly)"
                        r"\b))")


def _bound(text: str, start: int, end: int) -> tuple[str, int]:
    """The direction of the bound before a number starting at ``start`` (its unit ending at ``end``) and where the
    bound starts. None for an offset from an event ("no later than 30 minutes before departure" is "at least 30
    minutes before": the words turn round)."""
    a = max(0, start - 40)
    m = _BOUND_BEFORE.search(text[a:start])
    if m is None or _OFFSET_AFTER.match(text, end):
        return "", start
    return "upper" if m.group("upper") else "lower", a + m.start()


#: an offset from an event after a quantity ("30 minutes before departure", "14 days in advance")
_OFFSET_AFTER = re.compile(r"(?i)\s*(?:before|prior|ahead|in\s+advance|earlier|beforehand)\b")
#: an approximation before a quantity ("about", "roughly", "~")
_HEDGE_BEFORE = re.compile(r"(?i)(?:about|around|roughly|approximately|approx\.?|nearly|almost|some|just\s+(?:under|over)|"
                           r"close\s+to|~|≈|circa|ca\.)\s*(?:the\s+)?[$€£]?\s*$")


def _hedged(text: str, start: int) -> bool:
    return _HEDGE_BEFORE.search(text[max(0, start - 24): start]) is not None


#: unit conversions an answer may add beside a quantity it quotes ("1.3 kg (2.9 lb)", "14 days (two weeks)"):
#: (units of the context's quantity, units of the answer's, factor from the first to the second)
_CONVERSIONS: tuple[tuple[frozenset[str], frozenset[str], float], ...] = (
    (frozenset({"kg"}), frozenset({"lb"}), 2.20462),
    (frozenset({"tb"}), frozenset({"gb"}), 1000.0),
    (frozenset({"tb"}), frozenset({"gb"}), 1024.0),
    (frozenset({"gb"}), frozenset({"mb"}), 1000.0),
    (frozenset({"cm"}), frozenset({"mm"}), 10.0),
    (frozenset({"l"}), frozenset({"ml"}), 1000.0),
    (frozenset({"month"}), frozenset({"week"}), 4.345),
    (frozenset({"month"}), frozenset({"day"}), 30.44),
    (frozenset({"year"}), frozenset({"week"}), 52.0),
    (frozenset({"year"}), frozenset({"day"}), 365.0),
    (frozenset({"hour"}), frozenset({"second"}), 3600.0),
    (frozenset({"g", "gram"}), frozenset({"oz", "ounce"}), 0.035274),
    (frozenset({"km", "kilometer", "kilometre"}), frozenset({"mi", "mile"}), 0.621371),
    (frozenset({"m", "meter", "metre"}), frozenset({"ft", "foot", "feet"}), 3.28084),
    (frozenset({"cm", "centimeter", "centimetre"}), frozenset({"in", "inch", "inche"}), 0.393701),
    (frozenset({"mm", "millimeter", "millimetre"}), frozenset({"in", "inch", "inche"}), 0.0393701),
    (frozenset({"l", "liter", "litre"}), frozenset({"gal", "gallon"}), 0.264172),
    (frozenset({"ml", "milliliter", "millilitre"}), frozenset({"oz", "ounce"}), 0.033814),
    (frozenset({"week"}), frozenset({"day"}), 7.0),
    (frozenset({"year"}), frozenset({"month"}), 12.0),
    (frozenset({"day"}), frozenset({"hour"}), 24.0),
    (frozenset({"hour"}), frozenset({"minute", "min"}), 60.0),
    (frozenset({"minute", "min"}), frozenset({"second", "sec"}), 60.0),
    (frozenset({"kg", "kilogram"}), frozenset({"g", "gram"}), 1000.0),
    (frozenset({"g", "gram"}), frozenset({"mg", "milligram"}), 1000.0),
    (frozenset({"km", "kilometer", "kilometre"}), frozenset({"m", "meter", "metre"}), 1000.0),
)
_CELSIUS = frozenset({"°c", "c", "celsius", "degree"})
_FAHRENHEIT = frozenset({"°f", "f", "fahrenheit", "degree"})


def _close(x: float, y: float, written: str, hedged: bool = False) -> bool:
    """``x`` as written says ``y``: to the precision written (3%; rounding to the last digit written up to 10%: "15
    pounds" for 15.4, not "2 hours" for 1.5), or within 10% after "about", "roughly"."""
    decimals = len(written.split(".", 1)[1].rstrip("%kKmMB")) if "." in written else 0
    if hedged:
        return abs(x - y) <= max(0.1 * abs(y), 0.5 * 10.0 ** -decimals)
    return abs(x - y) <= max(0.03 * abs(y), min(0.5 * 10.0 ** -decimals, 0.1 * abs(y)))


def _converted(q: Quantity, known: Sequence[Quantity]) -> bool:
    """``q`` is a unit conversion of a quantity in ``known`` (either direction)."""
    return conversion_of(q, known) is not None


def _partners() -> dict[str, frozenset[str]]:
    """Each unit with the units it converts to (either direction)."""
    out: dict[str, set[str]] = {}
    for a, b, _ in _CONVERSIONS:
        for u in a:
            out.setdefault(u, set()).update(b)
        for u in b:
            out.setdefault(u, set()).update(a)
    for u in _CELSIUS:
        out.setdefault(u, set()).update(_FAHRENHEIT)
    for u in _FAHRENHEIT:
        out.setdefault(u, set()).update(_CELSIUS)
    return {u: frozenset(v) for u, v in out.items()}


#: a unit -> the units a quantity of it may be a conversion of: the others are not tried (round 57: trying every
#: conversion for every context quantity was 3.5 s of a 26 s check over 100k characters of contexts)
_PARTNERS = _partners()


def conversion_of(q: Quantity, known: Sequence[Quantity]) -> Quantity | None:
    """The quantity of ``known`` that ``q`` is a unit conversion of (either direction), or None."""
    partners = _PARTNERS.get(q.unit) if q.unit else None
    if not partners:
        return None
    for k in known:
        if not k.unit or k.unit not in partners:
            continue
        for a, b, factor in _CONVERSIONS:
            if k.unit in a and q.unit in b and _close(q.value, k.value * factor, q.written, q.hedged):
                return k
            if k.unit in b and q.unit in a and _close(q.value, k.value / factor, q.written, q.hedged):
                return k
        if k.unit in _CELSIUS and q.unit in _FAHRENHEIT and _close(q.value, k.value * 9 / 5 + 32, q.written):
            return k
        if k.unit in _FAHRENHEIT and q.unit in _CELSIUS and _close(q.value, (k.value - 32) * 5 / 9, q.written):
            return k
    return None


def _exact(q: Quantity, k: Quantity) -> bool:
    """``q`` is ``k`` converted to within 2% (10% when hedged: "about 15 pounds" for "7 kg")."""
    tolerance = 0.1 if q.hedged else 0.02
    for a, b, factor in _CONVERSIONS:
        for m in ((factor,) if k.unit in a and q.unit in b else ()) + ((1 / factor,) if k.unit in b and q.unit in a
                                                                        else ()):
            if k.value and abs(q.value - k.value * m) <= tolerance * abs(k.value * m):
                return True
    return False


def as_context_units(sentence: str, known: "KnownNumbers") -> str:
    """``sentence`` with each quantity that is a unit conversion of one the contexts hold written as the contexts
    write it ("kept for 3 months" -> "kept for 90 days", "two weeks" -> "14 days", "about 15 pounds" -> "about 7
    kg"): the model does not convert units, and reads "Audit logs are kept for 3 months." against "Audit logs are
    retained for 90 days." as contradicted (0.04). The number rule has checked the conversion; quantities the contexts
    hold as written, or not at all, are left as they are."""
    out = sentence
    for q in quantities(sentence, ones=True):
        if not q.unit or any(k.value == q.value and k.unit == q.unit for k in known.quantities):
            continue
        k = conversion_of(q, known.quantities)
        if k is None or k.unit == q.unit or not _exact(q, k):
            continue  # "2 hours" may round "90 minutes" for the number rule; it is no rewrite of it
        mine, theirs = q.phrase[q.phrase.find(q.written):], k.phrase[k.phrase.find(k.written):]
        if mine and theirs and q.written in q.phrase and k.written in k.phrase and mine in out:
            out = out.replace(mine, theirs, 1)
    return out


#: ordinal words, which hold the number an answer may write as "1st" or "3rd"
_ORDINALS = {w: i for i, w in enumerate("first second third fourth fifth sixth seventh eighth ninth tenth eleventh "
                                        "twelfth".split(), start=1)}


_REFERENCE_LABEL = re.compile(r"\]\[[^\]\n]{1,40}\]")
#: a negation, which may turn a bound round ("not ... before 90 days")
_NEGATED = re.compile(r"(?i)\b(?:not|no|never|cannot|can't|won't|isn't|aren't|don't|doesn't|n't)\b|n't\b")
#: a time of day ("18:05", "6 pm", "9 a.m.")
_CLOCK = re.compile(r"(?i)\b(\d{1,2})(?::(?P<minutes>\d{2})|\s*(?:am|pm|a\.m\.|p\.m\.))")
#: a context that says there is none of something ("no annual fee", "free of charge")
_NONE = re.compile(r"(?i)\b(?:no|zero|free|without|waived|none)\b")


#: factors an answer may multiply or divide a number it quotes by (a week's days, a year's months or weeks, a day's
#: hours, an hour's minutes, a year's days)
_FACTORS = (7.0, 12.0, 24.0, 52.0, 60.0, 365.0)


def _derived(q: Quantity, own: Sequence[float], known: frozenset[float]) -> bool:
    """``q`` is worked out from a number the same sentence quotes (``own``: those the contexts hold) and one the
    contexts hold (a sum, a difference, a product, a percentage of it) or a calendar factor (a product or quotient:
    "6 tablets, which is 1,200 mg", "1.5% per month, or 18% per year", "$12 a month adds up to $144 a year"), to its
    last written digit (10% after "about"). A number worked out from nothing the sentence says ("within 35 days"
    beside a context's 5 and 30) is not, nor one that only a loose reading makes ("5-7 days": 7 is no 5 + anything
    the contexts say)."""
    if not own or q.value == 0:
        return False

    def same(v: float) -> bool:
        return abs(q.value - v) <= (0.1 * abs(v) if q.hedged else 1e-9 + 0.005 * abs(v))

    for x in own:
        for y in known:
            if y != x and any(same(v) for v in (x + y, x - y, y - x, x * y, x * y / 100)):
                return True
        if any(same(x * f) or same(x / f) for f in _FACTORS):
            return True
    return False


_DIGIT = re.compile(r"\d")
#: the answer's sentences before a sentence whose figures it may work on
_NEARBY = 3


#: words after a number that are no thing it counts: "no more than two per household" counts permits, as "a maximum of
#: three per household" does
_NOT_COUNTED = frozenset({"per", "each", "every", "a", "an", "more", "other", "extra"})


#: words that say a sentence works a figure out of others: "£38 plus £8 each", "that works out at £42.50", "£550 in total"
_WORKS_OUT = re.compile(r"(?i)\b(?:plus|minus|times|total|totals|totalling|totaling|altogether|combined|in\s+all|"
                        r"adds?\s+up|sum|works?\s+out|comes?\s+(?:out\s+)?to)\b|[=+×]")
#: a context's sentences, roughly: where the figures a total is worked out of must stand together
_CONTEXT_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n+")


class KnownNumbers:
    """The numbers the contexts and the question hold (figures and number words), as values, with their units."""

    def __init__(self, texts: Iterable[str], answer: Iterable[str] = (), question: str = "") -> None:
        texts = list(texts)
        #: the counts the question asks about ("two Off-Peak Day Returns"): an answer may multiply by them ("£22.40
        #: altogether" for two fares of £11.20)
        self._asked = [o for o in quantities(question, ones=True) if o.value > 1 and (not o.words or o.unit)] \
            if question else []
        #: the answer's sentences: the numbers they quote that the contexts hold may be worked on in any of them
        self._answer = list(answer)
        self._worked: dict[str, frozenset[str]] = {}
        self.quantities = [q for t in texts for q in quantities(t, ones=True)]
        clock: set[float] = set()
        for t in texts:  # "18:05" is "6:05 pm" (6 + 5/60 once read with its minutes), and "6:05 pm" holds 5
            for m in _CLOCK.finditer(t):
                h, minutes = int(m.group(1)), int(m.group("minutes") or 0)
                other = float(h + 12) if h < 12 else float(h - 12)
                clock |= {other, other + minutes / 60, h + minutes / 60, float(minutes)} if 0 < h < 24 else set()
        zero = {0.0} if any(_NONE.search(t) for t in texts) else set()  # "no annual fee": "$0"
        self.values = frozenset(q.value for q in self.quantities) | clock | zero | frozenset(
            float(_ORDINALS[w.lower()]) for t in texts for w in re.findall(r"[A-Za-z]+", t) if w.lower() in _ORDINALS)
        self._texts = texts
        for t in texts:  # a date spelled out holds its day and year ("January 31, 2026": 31, 2026, and 1 for the month)
            for m in _SPELLED_DATE.finditer(t):
                month = (m.group("m1") or m.group("m2")).lower()[:3]
                number = next(v for k, v in _MONTH_NUMBER.items() if k.startswith(month))
                self.values = self.values | {float(number)}

    @functools.cached_property
    def _answer_quantities(self) -> list[tuple[str, list[Quantity]]]:
        """Each sentence of the answer with the figures it quotes that the contexts hold (read once)."""
        return [(t, [o for o in quantities(t) if o.value in self.values] if _DIGIT.search(t) else [])
                for t in self._answer]

    def _nearby(self, sentence: str) -> list[Quantity]:
        """The figures the contexts hold that the answer quotes in the sentences next to ``sentence`` (up to
        :data:`_NEARBY` before it and one after): a total works on what was just said, and a long answer full of
        figures must not make every check pair each of its figures with all the others."""
        rows = self._answer_quantities
        at = next((k for k, (t, _) in enumerate(rows) if t == sentence), None)
        if at is None:
            return []
        return [o for _, qs in rows[max(0, at - _NEARBY):at] + rows[at + 1:at + 2] for o in qs]

    @functools.cached_property
    def _sentence_values(self) -> list[frozenset[float]]:
        """The values each sentence of the contexts holds (read once, when a sentence works a figure out)."""
        return [values for t in self._texts for part in _CONTEXT_SENTENCE.split(t)
                if len(values := frozenset(q.value for q in quantities(part, ones=True))) > 1]

    def _together(self, values: list[float]) -> bool:
        """Some sentence of the contexts holds every one of ``values`` (two at least)."""
        wanted = frozenset(values)
        return len(wanted) > 1 and any(wanted <= held for held in self._sentence_values)

    def worked_out(self, sentence: str) -> frozenset[str]:
        """The figures of ``sentence`` (as written, without separators, currency or percent signs) that
        :meth:`unsupported` read as worked out from numbers the answer's other sentences quoted ("550" after "£250"
        and "£300"): no context holds them, and they are no term the contexts lack."""
        if sentence not in self._worked:
            self.unsupported(sentence)
        return self._worked.get(sentence, frozenset())

    def unsupported(self, sentence: str) -> tuple[str, ...]:
        """The numbers of ``sentence`` (figures, compound number words) that no context nor the question holds,
        neither as written nor as a unit conversion of one they hold ("2.9 lb" beside "1.3 kg"), as written."""
        out = []
        # a reference link's label ("[30 days of delivery][1]") numbers the link, not a claim: a stream may judge the
        # sentence before the reference's definition below makes the label markup
        sentence = _REFERENCE_LABEL.sub("]", sentence)
        said = quantities(sentence, compound_words_only=True)
        negated = bool(_NEGATED.search(sentence))  # "not eligible before 90 days" is "eligible after 90 days"
        # the numbers the sentence quotes that the contexts hold, number words included ("two months would cost £10":
        # 2 x £5), and those it works out from them ("$90 a month, or $1,080 for the year": 9 x 10, then x 12)
        own = [o for o in quantities(sentence, ones=True) if o.value in self.values and
               (not o.words or o.unit and o.value > 1)]  # a number word that counts something: "two months"
        # and those the answer's other sentences quote ("That makes £550 in total.")
        elsewhere = self._nearby(sentence) if said and self._answer else []

        def worked_from(quoted: list[Quantity]) -> list[Quantity]:
            worked: list[Quantity] = []
            for _ in range(2):
                base = quoted + worked
                worked += [q for q in said if q not in worked and q.value not in self.values and
                           _derived(q, [o.value for o in base if o is not q], self.values)]
            return worked

        worked = worked_from(own + self._asked + elsewhere)
        # what only the answer's other sentences make: no term the contexts lack (a figure worked out within the
        # sentence stays one: "2 puffs about 30 minutes before" is 2 x 15 by chance as often as by design)
        alone = worked_from(own) if elsewhere or self._asked else worked
        # (one the sentence says it works out is, too, from figures one context sentence gives together: "€25,000 -
        # the €20,000 prize plus the €5,000 bonus" beside "... €20,000 and a €5,000 bonus for the course record"; not
        # the runner-up's bonus added to the winner's prize)
        shown = bool(_WORKS_OUT.search(sentence)) and self._together([o.value for o in own])
        self._worked[sentence] = frozenset(q.written.replace(",", "").lstrip("$€£").rstrip("%")
                                           for q in worked if shown or q not in alone)
        for q in said:
            if q in worked:
                continue  # "6 tablets, which is 1,200 mg" (6 x 200), "1.5% per month, or 18% per year"
            if q.hedged and any(_close(q.value, k.value, q.written, True) and
                                Quantity(k.value, q.unit, q.written, currency=q.currency).stands_for(k)
                                for k in self.quantities):
                continue  # "about $1,300" for "$1,299", "about 16 mm" for "15.9 mm"
            if negated and q.bound:
                q = dataclasses.replace(q, bound="")
            same = [k for k in self.quantities if k.value == q.value]
            if any(q.stands_for(k) for k in same) or not same and q.value in self.values or \
                    _converted(q, self.quantities):
                continue
            if same and q.value in self.values:
                out.append(q.phrase)  # the number is there, said of another unit or bound the other way
                continue
            if q.unit == "%" and q.value % 100 and q.value / 100 in self.values:
                continue  # "50%" for "0.5" (not "100%" for a "one" the contexts count with)
            if not q.unit == "%" and q.value * 100 in self.values and "." in q.written:
                continue  # "0.5" for "50%"
            out.append(q.written)
        out += self._miscounted(sentence, said)
        return tuple(dict.fromkeys(out))

    def _miscounted(self, sentence: str, said: list[Quantity]) -> list[str]:
        """A count in one number word ("five Grammys") where the contexts count the same thing otherwise ("four Grammy
        Awards") and never so: a single number word is read only then (alone, "two plans" may count what the contexts
        list by name)."""
        out = []
        for q in quantities(sentence):
            if not q.unit or q.unit in _NOT_COUNTED or any(o.value == q.value and o.unit == q.unit for o in said) or \
                    re.search(r"\d", q.written):
                continue
            counted = [k for k in self.quantities if k.unit == q.unit]
            if counted and not any(k.value == q.value for k in counted) and not _converted(q, self.quantities):
                out.append(q.phrase)
        return out
