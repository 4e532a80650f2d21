"""Characters as read: right-to-left overrides reversed as displayed, invisible characters dropped, decorated letters
and digits mapped to their plain forms, combining marks dropped where the base letter carries the meaning (see the
package docs, step 6)."""

from __future__ import annotations

import functools
import re
import unicodedata

from guardrail.render.offsets import PassMap, PassOutput

# -- 5. right-to-left override
_RLO = re.compile("\u202e([^\u202c\n]*)\u202c?")


#: a UTF-16 surrogate pair written as two code points (a JSON string that ends with "\ud83c" and one that starts with
#: "\udf81", joined: a stream re-chunked by UTF-16 length, as JavaScript's ``slice`` does, splits an emoji so)
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def surrogate_pairs(text: str) -> tuple[str, PassMap | None]:
    """Each high and low surrogate next to each other as the one character they encode, as a UTF-16 reader (a browser)
    shows it; a lone surrogate stays (broken Unicode, refused by the checks)."""
    if not _PAIR.search(text):
        return text, None
    out = PassOutput(text)
    pos = 0
    for m in _PAIR.finditer(text):
        out.copy(pos, m.start())
        out.emit(m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), m.start(), m.end())
        pos = m.end()
    out.copy(pos, len(text))
    return out.done()


def rtl_overrides(text: str) -> tuple[str, PassMap | None]:
    if "\u202e" not in text:
        return text, None
    out = PassOutput(text)
    pos = 0
    for m in _RLO.finditer(text):
        out.copy(pos, m.start())
        out.emit(m.group(1)[::-1], m.start(), m.end())
        pos = m.end()
    out.copy(pos, len(text))
    return out.done()


# -- terminal control sequences
#: what a terminal reads as a command rather than text: ESC (CSI ``ESC[``, OSC ``ESC]``, DCS, APC, PM, any escape),
#: the C1 introducers a terminal may honour (CSI U+009B, OSC U+009D, DCS U+0090, SOS U+0098, PM U+009E, APC U+009F),
#: backspace, and a carriage return inside a line (a terminal writes the rest of the line over its start)
_TERMINAL = re.compile(r"[\x1b\x08\x90\x98\x9b\x9d\x9e\x9f]|\r+(?![\r\n]|\Z)")
_TERMINAL_NAMES = {"\x1b": "an escape sequence (ESC)", "\x08": "a backspace", "\x9b": "a C1 control sequence (CSI)",
                   "\x9d": "a C1 control sequence (OSC)"}


def terminal_controls(text: str) -> str | None:
    """What in ``text`` a terminal takes for a command that hides, moves or overwrites text, as a phrase ("an escape
    sequence (ESC) at offset 14"), or None. A terminal shows ``Gift cards can\\x1b[8m not\\x1b[28m be returned.``
    as "Gift cards can be returned." (SGR 8 conceals), and a backspace or a carriage return inside a line overwrites
    what was written; colours conceal too (black on black). No faithful answer needs them: an answer holding one is
    not read (the checks refuse it; block mode blocks it with this reason)."""
    m = _TERMINAL.search(text)
    if m is None:
        return None
    ch = m.group()[0]
    what = ("a carriage return inside a line" if ch == "\r"
            else _TERMINAL_NAMES.get(ch, f"a C1 control (U+{ord(ch):04X})"))
    return f"{what} at offset {m.start()}"


# -- 6. unicode
_SPECIAL = re.compile(r"[^\t\n\r\x20-\x7e]+")
#: the blocks of combining marks every script uses (diacritical marks, their extensions and supplement, marks for
#: symbols, half marks): an overlay from one of them strikes a letter of any script
_GENERIC_MARKS = ((0x0300, 0x0370), (0x1AB0, 0x1B00), (0x1DC0, 0x1E00), (0x20D0, 0x2100), (0xFE20, 0xFE30))


@functools.lru_cache(maxsize=1024)
def _strikes(mark: str, keep: bool = False) -> bool:
    """True for a combining mark that strikes the letter it sits on through: every overlay (canonical combining class
    1: U+0334-U+0338, U+20D2, U+20D3, U+20D8-U+20DA, U+20E5, U+20E6, U+20EA, U+20EB, ...). After a letter of a script
    whose marks carry meaning (``keep``), the overlays that belong to that script's writing (Vedic tone signs,
    Kharoshthi cauda, Bassa Vah tones, Duployan double mark) are part of the letter and strike nothing; an overlay
    from the generic blocks strikes any letter."""
    if unicodedata.combining(mark) != 1:
        return False
    return not keep or any(lo <= ord(mark) < hi for lo, hi in _GENERIC_MARKS)


#: invisible characters that are no format characters (Cf) by category
_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0\u2800\u180b\u180c\u180d\u180f")
_SUPERSCRIPT_DIGITS = frozenset("⁰¹²³⁴⁵⁶⁷⁸⁹")
#: vulgar fractions (½, ¾, ⅓, ...), by their value
_FRACTIONS = {ch: float(unicodedata.numeric(ch)) for ch in map(chr, range(0xA0, 0x2190))
              if unicodedata.category(ch) == "No" and "\u2044" in unicodedata.normalize("NFKD", ch)
              and 0 < unicodedata.numeric(ch, 0) < 1}
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "ZERO ONE TWO THREE FOUR FIVE SIX SEVEN EIGHT NINE TEN ELEVEN TWELVE THIRTEEN FOURTEEN FIFTEEN SIXTEEN SEVENTEEN "
    "EIGHTEEN NINETEEN TWENTY".split())}
_TENS = {"TWENTY": 20, "THIRTY": 30, "FORTY": 40, "FIFTY": 50}
_LETTER_NAME = re.compile(r"\b(SMALL|CAPITAL) LETTER ([A-Z])$|LETTER SMALL CAPITAL ([A-Z])$|SYMBOL LETTER ([A-Z])$|"
                          r"\bLETTER ([A-Z])$")
_NUMBER_NAME = re.compile(r"\b(?:DIGIT|NUMBER) ([A-Z]+(?: [A-Z]+)?)(?: FULL STOP| COMMA)?$")
#: blocks whose letters and digits are decorated forms of ASCII ones (enclosed, parenthesized, circled, negative,
#: squared, regional indicators, dingbat digits), and the small capitals of the phonetic blocks
_DECORATED_BLOCKS = ((0x2460, 0x2500), (0x2776, 0x2794), (0x3248, 0x3260), (0x1F100, 0x1F200))
_SMALL_CAPITAL_BLOCKS = ((0x0250, 0x02B0), (0x1D00, 0x1DC0), (0xA720, 0xA800), (0x10780, 0x107C0))


def _number(words: str) -> int | None:
    parts = words.split()
    if len(parts) == 1:
        return _NUMBER_WORDS.get(parts[0], _TENS.get(parts[0]))
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _NUMBER_WORDS and _NUMBER_WORDS[parts[1]] < 10:
        return _TENS[parts[0]] + _NUMBER_WORDS[parts[1]]
    return None


@functools.cache
def _decorated() -> dict[str, str]:
    """Decorated letter or number -> its plain form, read from the characters' Unicode names."""
    table: dict[str, str] = {}
    for lo, hi in _DECORATED_BLOCKS:
        for cp in range(lo, hi):
            ch = chr(cp)
            name = unicodedata.name(ch, "")
            m = _LETTER_NAME.search(name)
            if m:
                small = m.group(1) == "SMALL" or m.group(3) is not None
                letter = next(g for g in m.groups()[1:] if g)
                table[ch] = letter.lower() if small else letter
                continue
            n = _NUMBER_NAME.search(name)
            if n and _number(n.group(1)) is not None:
                table[ch] = str(_number(n.group(1)))
    for lo, hi in _SMALL_CAPITAL_BLOCKS:
        for cp in range(lo, hi):
            m = re.search(r"LATIN LETTER SMALL CAPITAL ([A-Z])$", unicodedata.name(chr(cp), ""))
            if m:
                table[chr(cp)] = m.group(1).lower()
    return table


@functools.lru_cache(maxsize=4096)
def _keeps_marks(ch: str) -> bool:
    """True for a letter of a script whose combining marks carry meaning (vowel signs, viramas, ...)."""
    if not ch.isalpha() or ord(ch) < 0x250:
        return False
    return not unicodedata.name(ch, "").startswith(("LATIN", "GREEK", "CYRILLIC", "MODIFIER", "MATHEMATICAL"))


def _run(run: str, prev: str) -> str:
    table = _decorated()
    out: list[str] = []
    if run[:1] == " " and run[1:2] in _FRACTIONS and prev.isdigit():
        run = run[1:]  # "1 ½" is one number
    keep = _keeps_marks(prev) if prev else False
    struck = False  # the letter the marks that follow sit on is struck already
    after_digit = prev.isdigit() and prev.isascii()
    for ch in run:
        if ch in _SUPERSCRIPT_DIGITS:
            if after_digit:
                out.append("^")
            out.append(unicodedata.normalize("NFKD", ch))
            after_digit, keep, struck = False, False, False
            continue
        if ch in _FRACTIONS:  # "1½ kg" is 1.5 kg (NFKD's "11⁄2" read as eleven, round 52); "½ cup" is 0.5 cup
            share = f"{_FRACTIONS[ch]:.3f}".rstrip("0")
            out.append(share[1:] if after_digit else share)
            after_digit, keep, struck = False, False, False
            continue
        plain = table.get(ch)
        if plain is not None:
            out.append(plain)
            keep, after_digit, struck = False, False, False
            continue
        cat = unicodedata.category(ch)
        if cat == "Cf" or ch in _INVISIBLE or (cat == "Cc" and ch not in "\t\n\r\x85"):
            continue
        if cat in ("Zl", "Zp") or ch == "\x85":
            out.append("\n")
            struck = False
            continue
        parts = unicodedata.normalize("NFKD", ch)
        if len(parts) > 1 and cat[0] != "M" and any(_strikes(c) for c in parts):
            out.append(ch)  # a symbol drawn with its stroke (≠, ∉): read as the symbol, not as a struck one
            keep, struck = False, False
            continue
        for c in parts:
            cc = unicodedata.category(c)
            if struck and cc[0] == "M":
                continue  # a mark of the struck letter goes with it
            if cc in ("Mn", "Me"):
                if _strikes(c, keep):  # the letter, with the marks it keeps, is withdrawn (once, however many overlays)
                    while out and unicodedata.category(out[-1])[0] == "M":
                        out.pop()
                    if out and not out[-1].isspace():
                        out.pop()
                    struck = True
                elif keep and not ("\ufe00" <= c <= "\ufe0f" or "\U000e0100" <= c <= "\U000e01ef"):
                    out.append(c)
                continue
            out.append(c)
            if cc != "Mc":  # a spacing mark is part of its letter, whose marks it keeps (or not)
                keep = _keeps_marks(c)
            struck = False
        after_digit = False
    return unicodedata.normalize("NFC", "".join(out))


def unicode_forms(text: str) -> tuple[str, PassMap | None]:
    if text.isascii() and not _SPECIAL.search(text):
        return text, None
    out = PassOutput(text)
    pos = 0
    for m in _SPECIAL.finditer(text):
        s, e = m.start(), m.end()
        if s > pos and unicodedata.category(text[s]).startswith("M"):
            s -= 1  # the base letter the marks sit on
        elif s - 2 >= pos and text[s] in _FRACTIONS and text[s - 1] == " " and text[s - 2].isdigit():
            s -= 1  # "1 ½ kg": the fraction completes the number before it
        out.copy(pos, s)
        run = text[s:e]
        prev = text[s - 1] if s > 0 else ""
        if (_is_plain(run)):
            out.copy(s, e)
        else:
            out.emit(_run(run, prev), s, e)
        pos = e
    out.copy(pos, len(text))
    return out.done()


def _is_plain(run: str) -> bool:
    """A run that rendering leaves as it is (most text in other scripts): nothing to decompose, drop or map."""
    if not unicodedata.is_normalized("NFKD", run):
        return False
    table = _decorated()
    for ch in run:
        cat = unicodedata.category(ch)
        if cat[0] in "MC" or cat in ("Zl", "Zp") or ch in table or ch in _INVISIBLE or ch in _SUPERSCRIPT_DIGITS:
            return False
    return True


#: letters of other scripts drawn like a Latin letter (Unicode's confusables, the common ones): "саn" with a Cyrillic
#: "с" and "а" reads "can" to a person, while the model sees a word it does not know
_LOOK_ALIKES = dict(zip(
    "аеорсухіјѕԁһԛԝүАВЕКМНОРСТХІЈЅУԌαονριкτυχϲΑΒΕΖΗΙΚΜΝΟΡΤΥΧɑıօսɡ",
    "aeopcyxijsdhqwyABEKMHOPCTXIJSYGaovpiktuxcABEZHIKMNOPTYXaiougg"))
#: Cherokee, Lisu and Armenian letters drawn like Latin ones (round 28: "Ꮯan", "ꓚan", "caո" passed as unknown words)
_LOOK_ALIKES.update({
    "\u13aa": "A",  # CHEROKEE LETTER GO
    "\u13f4": "B",  # CHEROKEE LETTER YV
    "\u13df": "C",  # CHEROKEE LETTER TLI
    "\u13a0": "D",  # CHEROKEE LETTER A
    "\u13ac": "E",  # CHEROKEE LETTER GV
    "\u13c0": "G",  # CHEROKEE LETTER NAH
    "\u13bb": "H",  # CHEROKEE LETTER MI
    "\u13ab": "J",  # CHEROKEE LETTER GU
    "\u13e6": "K",  # CHEROKEE LETTER TSO
    "\u13de": "L",  # CHEROKEE LETTER TLE
    "\u13b7": "M",  # CHEROKEE LETTER LU
    "\u13e2": "P",  # CHEROKEE LETTER TLV
    "\u13a1": "R",  # CHEROKEE LETTER E
    "\u13da": "S",  # CHEROKEE LETTER DU
    "\u13a2": "T",  # CHEROKEE LETTER I
    "\u13d4": "W",  # CHEROKEE LETTER TA
    "\u13c3": "Z",  # CHEROKEE LETTER NO
    "\u13a5": "i",  # CHEROKEE LETTER V
    "\uabaf": "c",  # CHEROKEE SMALL LETTER TLI
    "\uab83": "w",  # CHEROKEE SMALL LETTER LA
    "\uab87": "m",  # CHEROKEE SMALL LETTER LU
    "\uabaa": "s",  # CHEROKEE SMALL LETTER DU
    "\ua4d0": "B",  # LISU LETTER BA
    "\ua4d1": "P",  # LISU LETTER PA
    "\ua4d2": "d",  # LISU LETTER PHA
    "\ua4d3": "D",  # LISU LETTER DA
    "\ua4d4": "T",  # LISU LETTER TA
    "\ua4d6": "G",  # LISU LETTER GA
    "\ua4d7": "K",  # LISU LETTER KA
    "\ua4d9": "J",  # LISU LETTER JA
    "\ua4da": "C",  # LISU LETTER CA
    "\ua4dc": "Z",  # LISU LETTER DZA
    "\ua4dd": "F",  # LISU LETTER TSA
    "\ua4df": "M",  # LISU LETTER MA
    "\ua4e0": "N",  # LISU LETTER NA
    "\ua4e1": "L",  # LISU LETTER LA
    "\ua4e2": "S",  # LISU LETTER SA
    "\ua4e3": "R",  # LISU LETTER ZHA
    "\ua4e6": "V",  # LISU LETTER HA
    "\ua4e7": "H",  # LISU LETTER XA
    "\ua4ea": "W",  # LISU LETTER WA
    "\ua4eb": "X",  # LISU LETTER SHA
    "\ua4ec": "Y",  # LISU LETTER YA
    "\ua4ee": "A",  # LISU LETTER A
    "\ua4f0": "E",  # LISU LETTER E
    "\ua4f2": "I",  # LISU LETTER I
    "\ua4f3": "O",  # LISU LETTER O
    "\ua4f4": "U",  # LISU LETTER U
    "\u0578": "n",  # ARMENIAN SMALL LETTER VO
    "\u0570": "h",  # ARMENIAN SMALL LETTER HO
    "\u0581": "g",  # ARMENIAN SMALL LETTER CO
    "\u0566": "q",  # ARMENIAN SMALL LETTER ZA
    "\u054d": "U",  # ARMENIAN CAPITAL LETTER SEH
    "\u0555": "O",  # ARMENIAN CAPITAL LETTER OH
    "\u054f": "S",  # ARMENIAN CAPITAL LETTER TIWN
    "\u053c": "L",  # ARMENIAN CAPITAL LETTER LIWN
})
_WORD = re.compile(r"[^\W\d_]+")
#: marks drawn like an apostrophe between a word and its clitic ("can´t", "can‘t", "can`t", "can′t", "canˈt", and a
#: combining acute or grave on the letter before it): a reader sees "can't" (round 52: "can t" hid the negation)
_APOSTROPHE_LIKE = re.compile(r"(?<=[A-Za-z])[\u00b4\u2018\u0060\u2032\u02c8\u02b9\u02bb\u02ca\u02cb\u2035\uff40]"
                              r"(?=(?:t|s|d|m|ll|re|ve)(?![A-Za-z]))"
                              # a combining accent only where it stands for the n't of a negation (an accent on a
                              # letter of "not" is an accent)
                              r"|(?<=[A-Za-z]n)[\u0301\u0300](?=t(?![A-Za-z]))")


def apostrophes(text: str) -> tuple[str, PassMap | None]:
    """Marks that look like an apostrophe before a clitic, read as one (one character for one: offsets stay)."""
    if text.isascii() and "`" not in text:
        return text, None
    return _APOSTROPHE_LIKE.sub("'", text), None


def look_alikes(text: str) -> tuple[str, PassMap | None]:
    """Words spelled with letters of another script that look Latin, read as the Latin word a person sees: a word
    that mixes Latin letters with look-alikes ("саn", "Yеs"), or one made of look-alikes alone in a text written
    mostly in Latin letters ("Уеѕ"). Text in Cyrillic or Greek is left as it is. One character for one, so offsets
    do not move."""
    if text.isascii():
        return text, None
    words = _WORD.findall(text)
    latin = sum(len(w) for w in words if w.isascii())
    mostly_latin = latin * 2 > sum(len(w) for w in words)

    def fold(m: re.Match[str]) -> str:
        w = m.group()
        if w.isascii() or not any(c in _LOOK_ALIKES for c in w):
            return w
        has_latin = any(c.isascii() for c in w)
        if has_latin and all(c.isascii() or c in _LOOK_ALIKES for c in w) or (
                mostly_latin and all(c in _LOOK_ALIKES for c in w)):
            return "".join(_LOOK_ALIKES.get(c, c) for c in w)
        return w

    out = _WORD.sub(fold, text)
    return out, None
