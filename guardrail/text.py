"""Sentence splitting and token-aware windows. Pure Python, no model, no I/O.

Everything returns :class:`Span` character offsets into the original text, so evidence can point
at the exact passage that supported (or failed to support) a sentence.

Why our own splitter: on the benchmark in ``benchmarks/splitters.py`` (real sentences from the
shared NLI/benchmark data, joined into paragraphs, plus hand-made hard cases) it matches or beats
pysbd and blingfire on boundary F1, runs faster than pysbd, keeps exact character offsets, and
handles what RAG text really contains: markdown lists, code fences, hard-wrapped lines and
sentences glued by bad HTML extraction ("...in the 19th century.First for Women is...").
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import NamedTuple


class Span(NamedTuple):
    """A half-open character range ``[start, end)`` of some text."""

    start: int
    end: int

    def of(self, text: str) -> str:
        return text[self.start : self.end]


# Lower-cased tokens that end with a period but rarely end a sentence when followed by more text.
ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof sr jr st mt ft vs v gen sen rep gov lt col capt sgt maj cmdr adm rev hon pres
    inc ltd co corp llc bros dept univ assn est approx appx no nos vol vols fig figs eq eqs ch sec art
    pp p para al e.g i.e cf viz ca c a.m p.m u.s u.k u.n e.u d.c jan feb mar apr jun jul aug sep sept
    oct nov dec mon tue tues wed thu thur thurs fri sat sun ave blvd rd hwy no. op cit ed eds trans
    etc esp incl excl min max avg govt misc tel ext ref resp sq oz lb lbs a.k.a w.r.t
    """.split()
)

_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)
_PARA = re.compile(r"\n[ \t]*\n\s*")
_LIST_MARKER = re.compile(r"[ \t]*(?:[-*+•‣◦]|\d{1,3}[.)]|[a-zA-Z][.)]|\(\d{1,3}\)|\([a-z]\))\s")
# sentence-final punctuation, optional closing quotes/brackets, then whitespace
_BOUNDARY = re.compile(r"([.!?…]+|\.{3})([\"'”’»)\]]*)(\s+)")
# sentences glued by text extraction: "century.First" (a lower-case word, a period, a capitalised word)
_GLUED = re.compile(r"(?<=[a-z]{3})\.(?=[A-Z][a-z])")
_CAPITAL = re.compile(r"[A-ZÀ-ÖØ-Þ]")
_TERMINAL = re.compile(r"[.!?…:;][\"'”’»)\]]*\s*$")
#: what may lead a line that continues the sentence before it, before its first word: any marks but a heading's, a
#: quote's or a table's (emphasis, code and link marks, brackets, quotes, dashes, commas, "&", "...", an entity, an
#: escape, an invisible character: "...\n(gift cards too)", "...\n-- and gift cards", "...\n**can** be returned.")
_LINE_LEAD = re.compile(r"(?:&#?[0-9A-Za-z]{1,10};|_|[^\w#>|])*")


def split_sentences(text: str) -> list[Span]:
    """Split ``text`` into sentence spans (whitespace trimmed; empty text gives ``[]``).

    >>> t = "Dr. Smith paid $3.50. Then he left!"
    >>> [s.of(t) for s in split_sentences(t)]
    ['Dr. Smith paid $3.50.', 'Then he left!']
    """
    spans: list[Span] = []
    pos = 0
    for fence in _FENCE.finditer(text):
        spans.extend(_split_prose(text, pos, fence.start()))
        _append_trimmed(spans, text, fence.start(), fence.end())
        pos = fence.end()
    spans.extend(_split_prose(text, pos, len(text)))
    return spans


def _append_trimmed(out: list[Span], text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        out.append(Span(start, end))


def _split_prose(text: str, start: int, end: int) -> list[Span]:
    out: list[Span] = []
    blocks: list[tuple[int, int]] = []
    pos = start
    for para in _PARA.finditer(text, start, end):
        blocks.append((pos, para.start()))
        pos = para.end()
    blocks.append((pos, end))
    for b_start, b_end in blocks:
        for l_start, l_end in _logical_lines(text, b_start, b_end):
            out.extend(_split_line(text, l_start, l_end))
    return out


def _logical_lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Join hard-wrapped lines; keep list items, headings and finished lines apart."""
    lines: list[tuple[int, int]] = []
    pos = start
    while pos <= end:
        nl = text.find("\n", pos, end)
        stop = end if nl == -1 else nl
        lines.append((pos, stop))
        if nl == -1:
            break
        pos = nl + 1
    merged: list[tuple[int, int]] = []
    last = ""  # the last line kept: whether the text so far ends a sentence is whether it does (linear, not the whole)
    for l_start, l_end in lines:
        line = text[l_start:l_end]
        if not line.strip():
            continue
        if merged:
            starts_item = _LIST_MARKER.match(line) is not None
            prev_done = _TERMINAL.search(last) is not None
            last = line
            # an emphasis, code or link mark before the word does not make a new sentence: "Gift cards\n**can be
            # returned." reads as one, whether or not the mark closes in this line (a stream judges the line before
            # its closing mark arrives)
            word = _LINE_LEAD.sub("", line, count=1)[:1]
            # (nothing but marks yet: a stream's line whose first word has not come; read with the sentence before)
            lower_start = word.islower() or not word
            if not starts_item and not prev_done and lower_start:
                merged[-1] = (merged[-1][0], l_end)
                continue
        last = line
        merged.append((l_start, l_end))
    return merged


def _split_line(text: str, start: int, end: int) -> list[Span]:
    out: list[Span] = []
    seg_start = start
    marker = _LIST_MARKER.match(text, start, end)
    body_start = marker.end() if marker else start
    cuts: list[int] = []
    for m in _BOUNDARY.finditer(text, body_start, end):
        after = m.end()
        if after >= end:
            continue  # nothing follows yet (a stream waits for the next character)
        # whatever comes next starts a sentence: a lower-case word, an emoji, a code span or a currency sign after
        # a full stop must not glue a second claim onto the first (the pair would be scored as one)
        punct = m.group(1)
        if punct == "." and _is_abbreviation(text, seg_start, m.start()):
            continue
        if punct == "." and text[after].islower() and not _CAPITAL.search(text, start, m.start()):
            continue  # all-lowercase chat style ("yes it is. it is a comedy"): its full stops are soft
        if m.group(2) and text[after].islower() and _quoted(text, seg_start, m.start(), m.group(2)):
            continue  # '"Why?" she asked.': the quotation ends, the sentence goes on
        cuts.append(m.end(2))
    for m in _GLUED.finditer(text, body_start, end):
        if not _in_url(text, m.start()):
            cuts.append(m.end())
    for cut in sorted(cuts):
        if cut > seg_start:
            _append_trimmed(out, text, seg_start, cut)
            seg_start = cut
    _append_trimmed(out, text, seg_start, end)
    return out


def _is_abbreviation(text: str, seg_start: int, dot: int) -> bool:
    # the word before the dot, found by walking back from it (a regex search from seg_start made long lines quadratic)
    i = dot
    while i > seg_start and not text[i - 1].isspace():
        i -= 1
    if i == dot:
        return False
    word = text[i:dot].lstrip("\"'“‘([")
    low = word.lower()
    if low in ABBREVIATIONS or low.rstrip(".") in ABBREVIATIONS:
        return True
    # initials ("J. K. Rowling") and dotted acronyms ("U.S.A")
    if len(word) == 1 and word.isalpha() and word.isupper():
        return True
    return bool(re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word))


_CLOSE_OPEN = {'"': '"', "'": "'", "”": "“", "’": "‘", "»": "«", ")": "(", "]": "["}


def _quoted(text: str, seg_start: int, pos: int, closers: str) -> bool:
    """The closing quote after the punctuation at ``pos`` closes a quotation opened earlier in the sentence."""
    opener = _CLOSE_OPEN.get(closers[0])
    if opener is None:
        return False
    segment = text[seg_start:pos]
    if opener == closers[0]:
        return segment.count(opener) % 2 == 1
    return segment.count(opener) > segment.count(closers[0])


def _in_url(text: str, pos: int) -> bool:
    left = text.rfind(" ", 0, pos) + 1
    token = text[left : pos + 20]
    return "://" in token or token.startswith("www.") or "@" in token


# --------------------------------------------------------------------------- windows

#: returns the (start, end) character offsets of each token of a text
TokenOffsets = Callable[[str], Sequence[tuple[int, int]]]


def token_windows(text: str, offsets: TokenOffsets, max_tokens: int, stride: int) -> list[Span]:
    """Cover ``text`` with windows of at most ``max_tokens`` tokens, each starting ``stride`` tokens
    after the previous one (so consecutive windows overlap by ``max_tokens - stride``).

    Nothing is dropped: the last window always reaches the last token.
    """
    if max_tokens < 1 or not 0 < stride <= max_tokens:
        raise ValueError(f"need max_tokens >= 1 and 0 < stride <= max_tokens, got {max_tokens}, {stride}")
    toks = [t for t in offsets(text) if t[1] > t[0]]
    if not toks:
        return []
    if len(toks) <= max_tokens:
        return [Span(toks[0][0], toks[-1][1])]
    windows: list[Span] = []
    i = 0
    while True:
        j = min(i + max_tokens, len(toks))
        windows.append(Span(toks[i][0], toks[j - 1][1]))
        if j == len(toks):
            return windows
        i += stride


def sentence_windows(
    text: str,
    sentences: Sequence[Span],
    count_tokens: Callable[[str], int],
    offsets: TokenOffsets,
    max_tokens: int,
    overlap_sentences: int = 1,
) -> list[Span]:
    """Pack consecutive sentences into windows of at most ``max_tokens`` tokens, consecutive windows
    sharing ``overlap_sentences`` sentences; a single sentence longer than ``max_tokens`` is cut
    into overlapping token windows. The union of the windows covers every sentence: a long context
    is never silently truncated.
    """
    windows: list[Span] = []
    sizes = [count_tokens(s.of(text)) for s in sentences]
    i = 0
    while i < len(sentences):
        if sizes[i] > max_tokens:
            sent = sentences[i]
            for w in token_windows(sent.of(text), offsets, max_tokens, max(1, max_tokens * 3 // 4)):
                windows.append(Span(sent.start + w.start, sent.start + w.end))
            i += 1
            continue
        j, total = i, 0
        while j < len(sentences) and sizes[j] <= max_tokens and total + sizes[j] <= max_tokens:
            total += sizes[j]
            j += 1
        windows.append(Span(sentences[i].start, sentences[j - 1].end))
        if j >= len(sentences):
            break
        i = max(i + 1, j - overlap_sentences) if sizes[j] <= max_tokens else j
    return windows


# --------------------------------------------------------------------------- words

#: how a short answer is read together with its question, in the check and in training
#: (the format of the multiple-choice reading QA pairs of the training pool)
QA_FORMAT = "Q: {question} A: {answer}"
#: how a "Q: ... A: ..." reading begins
QA_PREFIX = QA_FORMAT.split("{", 1)[0]


def qa_hypothesis(question: str, answer: str) -> str:
    return QA_FORMAT.format(question=question.strip(), answer=answer.strip())

def _mark_ranges(blocks: Sequence[tuple[int, int]]) -> str:
    """A regex class body of the combining marks (Mn, Mc, Me) in ``blocks``, as ranges."""
    import unicodedata

    out: list[str] = []
    for lo, hi in blocks:
        start = None
        for cp in range(lo, hi + 1):
            mark = cp < hi and unicodedata.category(chr(cp))[0] == "M"
            if mark and start is None:
                start = cp
            elif not mark and start is not None:
                out.append(f"\\u{start:04x}-\\u{cp - 1:04x}" if cp - 1 > start else f"\\u{start:04x}")
                start = None
    return "".join(out)


#: combining marks inside words (vowel signs and viramas of Indic and Southeast Asian scripts, Hebrew and Arabic
#: points, combining accents): ``\w`` does not match them, so "हिन्दी" would break into pieces without them
_MARKS = _mark_ranges(((0x0300, 0x0370), (0x0483, 0x048A), (0x0591, 0x05C8), (0x0610, 0x0700), (0x0711, 0x0800),
                       (0x0816, 0x0870), (0x0898, 0x0E00), (0x0E31, 0x0F00), (0x0F18, 0x1100), (0x1712, 0x1A00),
                       (0x1A17, 0x1B80), (0x1B80, 0x1C40), (0x1DC0, 0x1E00), (0x20D0, 0x2100), (0x302A, 0x3030),
                       (0x3099, 0x309B), (0xA66F, 0xA680), (0xA802, 0xAA80), (0xFB1E, 0xFB1F), (0xFE20, 0xFE30)))
_LETTERS_OR_DIGITS = f"(?:[^\\W_]+[{_MARKS}]*)+"
#: a word in any script: letters and digits (``\w`` without "_") with their combining marks, joined by an
#: apostrophe, period or hyphen ("don't", "3.5", "covid-19")
_WORD = re.compile(f"{_LETTERS_OR_DIGITS}(?:['’.-]{_LETTERS_OR_DIGITS})*")
#: one ideograph or kana is one word (these scripts put no spaces between words)
_IDEOGRAPH = re.compile("[\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")

STOPWORDS = frozenset(
    """
    a an the and or but if then else of to in on at by for with from as into onto about over under is are was
    were be been being am do does did doing have has had having i you he she it we they me him her us them my
    your his its our their this that these those there here what which who whom whose when where why how not no
    nor so than too very can could will would shall should may might must just also only own same such both each
    few more most other some any all s t don't isn't aren't wasn't weren't it's that's i'm you're yes yeah oh
    well really like know think
    """.split()
)


def words(text: str) -> list[str]:
    """Lower-cased word tokens in every script (keeps "3.5", "covid-19", "don't" whole; an ideograph is a word).

    >>> words("Don't pay 3.5% — ¿Qué? Straße, हिन्दी भाषा, 退货")
    ["don't", 'pay', '3.5', 'qué', 'straße', 'हिन्दी', 'भाषा', '退', '货']
    """
    out: list[str] = []
    for w in _WORD.findall(text):
        if w.isascii() or not _IDEOGRAPH.search(w):
            out.append(w.lower())
            continue
        pos = 0
        for m in _IDEOGRAPH.finditer(w):
            if m.start() > pos:
                out.append(w[pos : m.start()].lower())
            out.append(m.group())
            pos = m.end()
        if pos < len(w):
            out.append(w[pos:].lower())
    return out


#: words of pleasantries ("Sure!", "Hope this helps.") that make no claim about the context
FILLER_WORDS = frozenset(
    """
    sure ok okay certainly absolutely thanks thank hello hi hey great glad happy help helps hope course welcome
    please question good let
    """.split()
)


_WHERE = r"(?:\s+(?:in|from|within|among)\s+(?:the\s+|these\s+|your\s+|my\s+)?(?:provided\s+|given\s+|available\s+|retrieved\s+|attached\s+|shared\s+)?(?:documents?|context|passages?|sources?|texts?|information|materials?|knowledge\s+base|docs|records|data))?"
_ABOUT = r"(?:\s+(?:about|on|regarding|for)\s+(?:that|this|it|this\s+topic|that\s+topic|this\s+question|your\s+question))?"
#: a sentence that only says the answer is not known or not in the documents (an honest refusal makes no claim)
_REFUSAL = re.compile(
    r"(?:(?:sorry|unfortunately|i'?m\s+sorry|i\s+am\s+sorry|apologies)[,!.]?\s*)?(?:but\s+)?"
    r"(?:"
    r"(?:i|we)\s+(?:could\s+not|couldn'?t|can'?t|cannot|do\s+not|don'?t|did\s+not|didn'?t|am\s+unable\s+to|"
    r"are\s+unable\s+to|was\s+unable\s+to|were\s+unable\s+to|wasn'?t\s+able\s+to|am\s+not\s+able\s+to|"
    r"have\s+not\s+been\s+able\s+to|haven'?t\s+been\s+able\s+to)\s+"
    r"(?:find|locate|see|answer|know|determine|tell|say|confirm|verify|help\s+with)"
    r"(?:\s+(?:that|this|it|the\s+answer|an\s+answer|any\s+information|information|anything|that\s+information|"
    r"this\s+information|the\s+information|any\s+mention|a\s+mention|mention\s+of\s+(?:that|this|it)))?"
    + _ABOUT + _WHERE +
    r"|(?:the\s+|these\s+|your\s+)?(?:provided\s+|given\s+|available\s+|retrieved\s+)?"
    r"(?:documents?|context|passages?|sources?|texts?|information|materials?)\s+"
    r"(?:do|does|did)\s*(?:not|n'?t)\s+(?:say|mention|contain|specify|include|cover|answer|address|state)"
    r"(?:\s+(?:that|this|it|this\s+question|your\s+question|the\s+answer|anything\s+about\s+(?:that|this|it)))?"
    r"|(?:there\s+is\s+|i\s+have\s+|i\s+found\s+|we\s+have\s+)?no\s+(?:information|mention|answer|details?)"
    + _ABOUT + _WHERE +
    r"|(?:i\s+)?(?:do\s+not|don'?t)\s+know(?:\s+the\s+answer)?" + _ABOUT +
    r"|(?:that|this|it)\s+(?:is|was)\s*(?:not|n'?t)\s+(?:mentioned|stated|specified)" + _WHERE +
    # "It is not covered." answers "Does the warranty cover water damage?": only "... in the documents" is a refusal
    r"|(?:that|this|it)\s+(?:is|was)\s*(?:not|n'?t)\s+(?:covered|addressed|answered|included)" + _WHERE[:-1] +
    r")[.!]?",
    re.I,
)


def is_refusal(text: str) -> bool:
    """True for a sentence that only says the answer is unknown or not in the documents ("I could not find that in
    the documents.", "The context does not say.", "I don't know."): it makes no claim about the context, so it is not
    judged (a refusal followed by a claim, in the same sentence or the next, still has that claim judged).

    >>> [is_refusal(t) for t in ("I could not find that in the documents.", "Sorry, the context does not say.",
    ...                          "I could not find that, but gift cards can be returned.")]
    [True, True, False]
    """
    return _REFUSAL.fullmatch(text.strip().replace("’", "'")) is not None


def is_claim(text: str) -> bool:
    """False for sentences with no content word beyond pleasantries ("Sure!", "Hope this helps.", "¡Hola!",
    "ありがとう！": :func:`is_greeting`) and for lead-ins that only announce what follows ("Here is the policy:",
    :func:`is_lead_in`)."""
    return (any(w not in FILLER_WORDS for w in content_words(text)) and not is_lead_in(text) and not is_label(text)
            and not is_offer(text) and not is_greeting(text) and not _TAGS_ONLY.fullmatch(text)
            and not is_courtesy(text))


#: what a reader may feel or go through, which an assistant acknowledges ("I understand your frustration.")
_FEELINGS = (r"(?:frustration|concerns?|situation|confusion|disappointment|urgency|inconvenience|worry|worries|"
             r"feelings?|patience|question|point|request|needs?|stress|trouble|problem|issue|predicament|dilemma|"
             r"excitement|enthusiasm|interest|curiosity|hesitation|caution)")
#: courtesy: thanks, sympathy, good wishes, praise of the question, questions that ask the reader for something; none
#: states a fact about the contexts' subject
_COURTESY = re.compile(
    r"(?i)^(?:"
    r"(?:many |big )?(?:thanks|thank you)(?: (?:so|very) much)?(?: (?:for|in) (?:asking|reaching out|your "
    r"(?:question|patience|message|interest|understanding|inquiry|enquiry)|getting in touch|contacting us|"
    r"waiting|your business))?"
    r"|(?:good|great|happy|fantastic|exciting|excellent) (?:news|question)"
    r"|(?:that'?s|that is|what|such) an? (?:great|good|fair|excellent|important|common|smart) question"
    r"|(?:i|we) (?:totally |completely |really |fully |absolutely |can )?(?:understand|appreciate|hear|get|know|"
    r"see)(?: (?:your|the|this|that|how|how much|why|the|any) (?:\w+ )?" + _FEELINGS + r"| (?:that |how )?"
    r"(?:plans|things|schedules|circumstances|life|travel plans) (?:can )?(?:change|happen)| why| how you feel| "
    r"how (?:frustrating|stressful|annoying|confusing|important|disappointing) (?:this|that|it) (?:is|can be|must be)| "
    r"(?:this|that) (?:is|can be|must be) (?:frustrating|stressful|annoying|confusing|disappointing|important))?"
    r"|(?:i'?m|i am|we'?re|we are) (?:so |very |really |truly |terribly )?(?:sorry|glad|happy|delighted|pleased|thrilled)"
    r"(?: (?:to hear|for|about) (?:that|this|the inconvenience|any inconvenience|the trouble|the confusion|the wait|"
    r"the delay|your experience)| (?:to|that (?:i|we) can) help| you asked| you reached out)?"
    r"|(?:i'?m|i am|we'?re|we are) (?:sure|confident|certain) (?:that )?you(?:'ll| will) (?:enjoy|love|like|have|be)"
    r"(?: (?:it|this|them|your \w+|a \w+ \w+|the \w+|happy|pleased|satisfied)(?: with (?:it|this|them|your "
    r"\w+|the \w+))?)?"
    r"|(?:i |we )?hope (?:you (?:enjoy|have|like|love)|this (?:helps|clarifies)|that (?:helps|clarifies)|it helps)"
    r"(?: (?:it|this|your \w+|a (?:great|good|nice|wonderful|safe|pleasant) \w+))?"
    r"|(?:have|enjoy) (?:a|an|your) (?:great |good |nice |wonderful |safe |pleasant |lovely |fantastic )?"
    r"(?:trip|flight|stay|day|weekend|evening|visit|journey|meal|holiday|vacation|time)"
    r"|(?:sorry|apologies|(?:i|we) apologi[sz]e|(?:my|our) apologies)(?: for (?:the|any) (?:inconvenience|confusion|"
    r"trouble|wait|delay|frustration))?"
    r"|(?:i|we) (?:really |truly |greatly |sincerely |do )?(?:appreciate|value) (?:your|the) (?:business|feedback|"
    r"understanding|loyalty|trust|support|custom|cooperation|time|patience|kind words)"
    r"|(?:happy|safe) (?:shopping|travels|travelling|traveling|holidays|cooking|listening|reading|flying|baking)"
    r"|wishing you (?:a |an |the )?(?:(?:great|good|nice|wonderful|safe|pleasant|lovely|fantastic|speedy|quick|smooth|"
    r"happy|best|good) )*(?:(?:rest|remainder) of (?:your|the) )?(?:trip|flight|stay|day|weekend|journey|holiday|"
    r"vacation|recovery|time|travels|luck|week|evening)"
    r"|(?:please )?(?:(?:do )?let (?:us|me) know|feel free to (?:ask|reach out|contact us|get in touch))(?: if "
    r"(?:you have |there (?:is|are) )?(?:any |anything )?(?:other |more |further |else )?(?:questions?|else|concerns?)"
    r"(?: (?:comes up|i can help with|we can help with))?)?"
    r"|(?:i'?m|i am|we'?re|we are) (?:so |very |really |truly )?sorry to hear (?:that )?(?:about )?(?:your|you) "
    r"(?:[\w-]+ ){0,3}(?:is|are|was|were|has been|have been|got|went) (?:delayed|lost|damaged|late|broken|"
    r"cancell?ed|stolen|missing|sick|ill|unwell|injured|stuck|stranded|faulty|defective|not working|misplaced)"
    r"|(?:do|did|would|could|can|have|are) you (?:have|know|remember|need|happen to have)"
    r" (?:your|the|a|an|any|how|what|which|when|where|whether|if) (?!favou?rite)[^,;:]{0,40}"
    r")[\s!.?\u2026]*$")


def is_courtesy(text: str) -> bool:
    """A sentence of courtesy that claims nothing about what the contexts say: thanks ("Thanks for asking!"),
    sympathy ("I understand your frustration.", "We understand that plans change."), good wishes ("Have a great
    trip!", "I'm sure you'll enjoy your stay!"), praise of the question ("Great question!"), an apology, or a
    question that asks the reader for something ("Do you know your booking reference?"). Customer-facing answers open
    and close with them; judged as claims, they blocked faithful answers (answer probes: 8 of 297).

    >>> [is_courtesy(t) for t in ("Thanks for asking!", "I understand your frustration.", "Have a great trip!",
    ...                           "Do you know your booking reference?", "I understand that gift cards can be returned.",
    ...                           "Did you know gift cards can be returned within 30 days?")]
    [True, True, True, True, False, False]
    """
    t = " ".join(_EMOJI_EDGE.sub(" ", text).split()).replace("\u2019", "'").strip(" *_")
    if not t or len(t) > 160 or any(ch.isdigit() for ch in t):
        return False
    # "I hope this helps, and let us know if you have any other questions!": courtesy joined to courtesy
    parts = [p for p in _JOINED.split(t) if p.strip()]
    return all(len(p) <= 120 and _COURTESY.match(p.strip()) for p in parts)


#: a question to the reader about the reader ("Are you into painting yourself?", "Have you ever tried ice fishing?",
#: "How old are your kids?", "Could you push it back a month?"): its subject is "you" (or "your ...")
_READER_QUESTION = re.compile(
    r"(?i)^(?:(?:so|and|but|also|oh|then|anyway|now|btw|out\s+of\s+interest)\s*,?\s+)?"
    r"(?:(?:what|how|where|when|which|who|why)(?:\s+[^\W\d]+){0,2}\s+)?"
    r"(?:are|do|did|have|were|was|could|would|will|can|should|is|has)\s+(?:you|yours|your\s+[^\W\d]+(?:\s+[^\W\d]+)?)"
    r"(?P<rest>(?:\s+[^\W\d]+(?:['\u2019][^\W\d]+)?){0,10})\s*\?+$"
    r"|^(?:tempted|interested|curious|keen|excited|thoughts|any\s+thoughts|any\s+plans|sound\s+good|make\s+sense|"
    r"fancy\s+it)(?P<none>)\s*\?+$")
#: what makes a question to the reader say something of the world: a clause inside it ("..., which can be returned
#: within 90 days?", "... because ...?"), a verb that presupposes what follows it ("Did you know engineers earn
#: more?", "Have you heard that ...?"), a negation ("Didn't you know ...?")
_READER_CLAIMS = re.compile(
    r"(?i)\b(?:which|who|whose|that|because|since|as|so|where|when|while|although|though|if|unless|than|not|cannot|"
    r"never|no|sure|certain|positive|convinced|before|after|until|till|once|she|he|her|his|him|they|their|them)\b|n't\b|\b(?:know|knew|realis\w*|realiz\w*|aware|heard?|notic\w*|"
    r"remember\w*|recall\w*|seen|see|saw|read|learn\w*|found|find|told|tell)\s+\S+\s+\S+")
#: an interjection and an evaluation that names nothing ("Oh nice!", "Sounds fun!", "Ah, bad luck!", "Oh wow,
#: that's a nice bit of history!", "Nice, congrats on the EV!")
_INTERJECTION = (r"(?:oh|ooh|ah|aw+|wow|whoa|yay|ugh|hmm+|ha(?:ha)*|lol|nice|cool|great|awesome|lovely|brilliant|"
                 r"fantastic|amazing|same|me\s+too|ouch|yikes|oops|bummer|gosh|oh\s+no|oh\s+dear|ah\s+well|fair\s+enough|"
                 r"love\s+(?:it|that)|good\s+(?:one|call|choice|idea)|great\s+(?:choice|idea|call)|sounds\s+good)")
_EVALUATION = (r"(?:nice|fun|great|lovely|cool|amazing|awesome|exciting|interesting|wild|impressive|fascinating|tight|"
               r"smart|excellent|solid|good|"
               r"brilliant|fantastic|wonderful|neat|sad|tough|annoying|frustrating|unlucky|rough|scary|cute|beautiful|"
               r"perfect|(?:a\s+)?(?:shame|pity)|(?:bad|good|hard|tough)\s+luck|(?:a\s+)?(?:lot\s+of\s+)?fun)")
#: advice that names nothing it is about ("I'd steer clear of that one.", "I'd think twice!", "Worth a try, I think."):
#: what it rests on is what the answer says beside it
_ADVICE = (r"(?:(?:i'?d|i\s+would)\s+(?:(?:probably|definitely|personally|just)\s+)?(?:steer\s+clear(?:\s+of\s+(?:it|that|"
           r"that\s+one|them|those))?|think\s+twice|avoid\s+(?:it|that|that\s+one|them)|skip\s+(?:it|that|that\s+one)|"
           r"give\s+it\s+a\s+(?:go|try|miss)|hold\s+off|wait|go\s+for\s+it)|(?:(?:it'?s|it\s+is|definitely|probably|"
           r"well)\s+)?worth\s+a\s+(?:try|shot|go|look)(?:\s*,?\s*i\s+think)?)")
_REACTION = re.compile(
    r"(?i)^(?:" + _INTERJECTION + r"(?:[\s,!.…]+|$))*"
    r"(?:(?:(?:that|it|this)(?:'s|\u2019s|\s+is|\s+was|'d\s+be|\s+would\s+be|\s+sounds(?:\s+like)?)|what|how|sounds"
    r"(?:\s+like)?|looks(?:\s+like)?|such)\s+(?:(?:a|an|so|really|very|pretty|quite|such|super|truly|real)\s+)*"
    + _EVALUATION + r"(?:\s+(?:bit\s+of\s+history|idea|plan|trip|choice|spot|place|one|story|find|time|thing))?"
    r"|congrats(?:\s+on\s+(?:the|your)\s+[^\W\d]+)?|" + _EVALUATION +
    # a verdict on the asker's plan, with no verb: "Exciting project!", "Great choice for a fit dog!", "Tight timing."
    r"(?:\s+(?:project|choice|pick|plan|idea|move|question|timing|call|news|trip|find|combo|one)"
    r"(?:\s+for\s+(?:a|an|the|your)(?:\s+[^\W\d]+){1,3})?)?|" + _ADVICE + r")?[\s!.…]*$")


def remarks_to_reader(text: str) -> bool:
    """A question to the reader about the reader ("Are you into painting yourself?", "How old are your kids?") or a
    reaction that names nothing ("Oh nice!", "Sounds fun!", "Ah, bad luck!"): chat replies wrap their facts in them.
    Neither states a fact about the contexts' subject; beside a claim each claims nothing (alone, the reply says
    nothing the contexts support: ``guardrail.checks.faithfulness`` judges it then). A question that holds a clause, a
    presupposing verb with what it presupposes, a negation or a figure is no such remark ("Did you know gift cards can
    be returned?").

    >>> [remarks_to_reader(t) for t in ("Are you into painting yourself?", "How old are your kids?", "Oh nice!",
    ...   "Have you heard it?", "Oh wow, that's a nice bit of history!", "Did you know gift cards can be returned?",
    ...   "Would you like to return gift cards, which can be returned any time?", "Are you 18?", "Gift cards?")]
    [True, True, True, True, True, False, False, False, False]
    """
    t = " ".join(_EMOJI_EDGE.sub(" ", text).split()).replace("\u2019", "'").strip(" *_")
    if not t or len(t) > 160 or any(ch.isdigit() for ch in t):
        return False
    if t.endswith("?"):
        m = _READER_QUESTION.match(t)
        if m is None or m.group("rest") is None:
            return m is not None  # "Tempted?"
        return _READER_CLAIMS.search(m.group("rest")) is None and "," not in t[m.start("rest"):]
    return any(ch.isalpha() for ch in t) and _REACTION.match(t) is not None


_JOINED = re.compile(r"(?i)\s*(?:[,;]\s*(?:and\s+|but\s+)?|\s+and\s+)(?=(?:please |do |feel |let |have |enjoy |"
                     r"i |we |wishing |happy |safe |thanks |thank |hope |sorry ))")


_EMOJI_EDGE = re.compile(r"[\U0001F300-\U0001FAFF\u2600-\u27BF\uFE0F]")


#: a sentence that is only markup tags with a one-word name and no attribute ("<response>", "</answer>", "<item/>"):
#: the lines that frame an XML answer, which claim nothing (a tag with another name than HTML's is read as text)
_TAGS_ONLY = re.compile(r"\s*(?:</?[A-Za-z][\w.:-]{0,40}\s*/?>\s*)+")


#: greetings, thanks and farewells in the languages answers most often open or close with besides English: a sentence
#: that is only one of them claims nothing, and its script does not make the answer unjudgeable (no word that is also
#: a yes or a no in another language: Danish "tak" is Polish "yes")
GREETINGS = frozenset(g.casefold() for g in """
    hola|buenos días|buenas tardes|buenas noches|gracias|muchas gracias|de nada|saludos|un saludo|hasta luego|adiós
    bonjour|bonsoir|salut|merci|merci beaucoup|bienvenue|au revoir|cordialement|bonne journée
    hallo|guten tag|guten morgen|danke|danke schön|danke sehr|vielen dank|willkommen|tschüss|viele grüße
    ciao|buongiorno|buonasera|grazie|grazie mille|prego|arrivederci
    olá|ola|oi|bom dia|boa tarde|obrigado|obrigada|muito obrigado|muito obrigada|até logo
    hallo|hoi|dank je|dank u|bedankt|tot ziens|hej|hej hej|tack|tack så mycket|takk|tusen takk|mange tak
    cześć|dzień dobry|dziękuję|merhaba|teşekkürler|teşekkür ederim|xin chào|cảm ơn|namaste|shukriya|dhanyavaad
    привет|здравствуйте|спасибо|большое спасибо|добрый день|пока
    مرحبا|أهلا|شكرا|شكرا جزيلا|السلام عليكم|שלום|תודה|תודה רבה
    こんにちは|こんばんは|おはようございます|ありがとう|ありがとうございます|どうもありがとう|よろしくお願いします
    你好|您好|谢谢|謝謝|多谢|非常感谢|再见|안녕하세요|안녕|감사합니다|고맙습니다|नमस्ते|धन्यवाद|शुक्रिया
""".replace("\n", "|").split("|") if g.strip())
GREETINGS = frozenset(" ".join(g.split()) for g in GREETINGS)
_NOT_LETTERS = re.compile(r"[\W\d_]+")


def is_greeting(text: str) -> bool:
    """The sentence is only a greeting, thanks or farewell (:data:`GREETINGS`), in any of the listed languages, with its
    marks ("¡Hola!", "Merci !", "ありがとう！", "Vielen Dank."; a name after it is no part: "Hola, Ana." is judged).

    >>> [is_greeting(t) for t in ("¡Hola!", "Merci !", "ありがとう！", "Gracias, gift cards can be returned.")]
    [True, True, True, False]
    """
    return " ".join(_NOT_LETTERS.sub(" ", text).split()).casefold() in GREETINGS


#: a line that is a heading ("### Return policy"), a line in bold ("**Return policy**"), or only a link or a URL
#: (an item of a list of sources: "- [Return policy](https://...)", "<https://...>")
_HEADING_LINE = re.compile(r"[ \t]{0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*", re.S)
_BOLD_LINE = re.compile(r"[ \t]*(\*\*|__)([^*_]+?)\1[ \t]*:?[ \t]*")
_LINK_LINE = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(?:\[([^\[\]]*)\]\(([^()\s]*)\)|<(https?://[^<>\s]+)>|(https?://\S+))"
                        r"[ \t]*[.,;]?[ \t]*")
#: a title that is a task, not a claim: "How to return an item"
_TASK_TITLE = re.compile(r"(?i)(?:how|what|when|where|why|which|who)\s+to\b")
#: words that make a title a statement or an answer ("Gift cards can be returned", "**Yes.**", "### Ninety days",
#: "Free lifetime returns", "We refund gift cards"): auxiliaries, modals, copulas, light verbs, reply words,
#: quantifiers and absolutes, number words, personal pronouns
_NOT_TITLE = frozenset("""
    is are was were be been being am can could will would shall should may might must do does did has have had
    cannot can't won't isn't aren't wasn't weren't doesn't don't didn't hasn't haven't hadn't shouldn't wouldn't
    couldn't mustn't get gets got getting give gives gave make makes made take takes took include includes allow
    allows accept accepts require requires returned refunded shipped charged covered
    yes yeah yep yup no nope nah not never none nothing sure correct incorrect right wrong true false absolutely
    definitely certainly indeed always only all every any both neither either each free instant instantly
    guaranteed unlimited lifetime anytime full fully same
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
    eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion dozen
    half once twice first second third
    i we you he she they it us them
    """.split())
#: the most words a title has (a longer heading may hold a claim and is judged)
TITLE_MAX_WORDS = 4
#: a title's number in a sequence ("Step 1: ", "Option B - ", "2. "): the sequence's, not a number the title states
_ENUMERATOR = re.compile(r"(?i)^(?:(?:step|option|part|section|phase|method|tip|stage)\s+(?:1?\d|20|[A-Za-z])\s*[:.)\-–—]\s*"
                         r"|(?:1?\d|20)[.)]\s+)")


def label_title(text: str) -> str | None:
    """The title of a line that is a heading, a line in bold or a link alone (a source in a list), when the title
    claims nothing: a noun phrase of at most four words (or a task, "How to return an item", at most six) with no
    digit, no punctuation inside or at its end (a trailing colon aside), no -able/-ible adjective and none of the
    words that make a statement or an answer (auxiliaries, light verbs, "yes"/"no", quantifiers, number words,
    pronouns: :data:`_NOT_TITLE`): "### Return policy", "**Refunds**", "- [Refund policy](https://...)". A bare URL
    is its own title when its path reads as no sentence (at most four words). None for any other line: a heading
    that could hold a claim ("## Gift cards can be returned", "**Yes.**", "### Gift cards returnable") is judged.
    A heading or a line in bold is a title only where its words are the question's or the contexts' (see
    :class:`~guardrail.checks.evaluator.ReaderFaithfulnessCheck`)."""
    t = text.strip()
    if not t or "\n" in t:
        return None
    m = _HEADING_LINE.fullmatch(t) or _BOLD_LINE.fullmatch(t)
    title = m.group(m.lastindex or 1) if m else None
    if title is None:
        link = _LINK_LINE.fullmatch(t)
        if link is None:
            return None
        if link.group(1) is None:  # a bare URL: a title when its path reads as no sentence
            url = link.group(3) or link.group(4) or ""
            path = [w.lower() for w in words(re.sub(r"[-_/.+=?&#%]", " ", url.split("://", 1)[-1].partition("/")[2]))]
            return url if len(path) <= TITLE_MAX_WORDS and _title_words(path) else None
        if "://" not in (link.group(2) or ""):
            return None  # a link to no page (a footnote, an anchor) is no source
        title = link.group(1)
    title = title.strip().strip("*_").strip()
    core = strip_enumerator(title)
    core = core[:-1].rstrip() if core.endswith(":") else core
    if not core or any(ch.isdigit() or ch in ".,;:!?()[]\"“”" for ch in core):
        return None
    ws = [w.lower() for w in words(core)]
    if not _title_words(ws) or (core != title and ws and ws[0] in _UNITS):
        return None  # "### 90) Days for returns": the number was the title's, not a sequence's
    if len(ws) <= TITLE_MAX_WORDS or (len(ws) <= LEAD_IN_MAX_WORDS and bool(_TASK_TITLE.match(core))):
        return title
    return None


#: words a number before them measures ("90) Days for returns" states 90 days)
_UNITS = frozenset("days day weeks week months month years year hours hour minutes minute seconds percent dollars "
                   "euros times items".split())


def _title_words(ws: list[str]) -> bool:
    """No word of a title makes it a statement: none of :data:`_NOT_TITLE` (nor any part of a hyphenated word:
    "ninety-day"), no negation, no -able/-ible adjective and no -ed participle ("Gift cards accepted", "Refunds
    issued": a title that says how things are)."""
    parts = [p for w in ws for p in re.split(r"[-‐‑–]", w) if p]
    return not (_NOT_TITLE & set(parts) or any(p.endswith(("n't", "n’t", "able", "ible")) for p in parts)
                or any(len(p) > 4 and p.endswith("ed") for p in parts))


#: what separates a page title from its site's name: "Returns and refunds policy | Example Shop"
_TITLE_PARTS = re.compile(r"\s+[|\u2013\u2014\u00b7\u2022-]\s+")
#: a document's file extension: "Return policy 2024.pdf"
_FILE_EXTENSION = re.compile(r"(?i)\.(?:pdf|docx?|txt|md|markdown|html?|csv|tsv|xlsx?|pptx?|json|rtf|odt|ods|odp|xml)$")
#: a figure a source's name may carry: a year or a version ("2024", "v2", "3.1"); no count, amount or duration ("90"
#: in "Gift card refunds within 90 days" is a claim)
_NAME_FIGURE = re.compile(r"(?:19|20)\d\d|v\d{1,2}(?:\.\d{1,2})*|\d{1,2}\.\d{1,2}(?:\.\d{1,2})*")
#: words that bound what a name would say: a title with them states a term ("Returns within 30 days")
_NAME_BOUNDS = frozenset("within until till before after upto".split())
#: words at most in each part of a source's name
SOURCE_NAME_WORDS = 8
_SENTENCE_MARKS = frozenset(".,;:!?\"“”()[]{}<>")


def source_name(name: str) -> bool:
    """A citation's title or file name that only names its source: "Returns and refunds policy | Example Shop",
    "Return policy 2024.pdf", "refund_policy_v2.docx". Each part of the title (split at " | ", " - ", " · ") is a
    noun phrase of at most :data:`SOURCE_NAME_WORDS` words with no sentence punctuation, no figure but a year or a
    version, and none of the words that make a statement (:func:`_title_words`): "Gift cards can be returned within 90
    days" is no name, and is read as text (or refused) wherever it is found.

    >>> [source_name(t) for t in ("Returns and refunds policy | Example Shop", "Return policy 2024.pdf",
    ...                           "Gift cards can be returned within 90 days", "Refunds | 90-day returns")]
    [True, True, False, False]
    """
    s = name.strip()
    if not s or len(s) > 300 or any(ch in s for ch in "\n\r"):
        return False
    ext = _FILE_EXTENSION.search(s)
    if ext is not None:  # a file's name: its separators are spaces
        s = re.sub(r"[_+]+|(?<=\w)-(?=\w)", " ", s[: ext.start()])
    for part in _TITLE_PARTS.split(s):
        core = part.strip()
        tokens = core.split()
        if not tokens or len(tokens) > SOURCE_NAME_WORDS:
            return False
        if any(not _NAME_FIGURE.fullmatch(t) and any(ch.isdigit() or ch in _SENTENCE_MARKS for ch in t) for t in tokens):
            return False  # a figure that is no year nor version, or a sentence's punctuation
        ws = [w.lower() for w in words(core) if not _NAME_FIGURE.fullmatch(w)]
        if not _title_words(ws) or _NAME_BOUNDS & set(ws):
            return False
    return True


def names_only(title: str) -> bool:
    """A title that only names something ("Item", "Window", "Return window", "Product"): at most
    :data:`TITLE_MAX_WORDS` words, no digit and no punctuation inside, none of the words that make a statement (see
    :func:`label_title`). A table's column header of this kind states nothing."""
    core = title.strip().rstrip(":").strip()
    if not core or any(ch.isdigit() or ch in ".,;:!?()[]\"“”/&+=<>*_#|" for ch in core):
        return False
    ws = [w.lower() for w in words(core)]
    return 0 < len(ws) <= TITLE_MAX_WORDS and _title_words(ws)


def strip_enumerator(title: str) -> str:
    """A title without its number in a sequence ("Step 1: Return policy" -> "Return policy")."""
    return _ENUMERATOR.sub("", title)


def is_label(text: str) -> bool:
    """A line that is a title and claims nothing (see :func:`label_title`)."""
    return label_title(text) is not None


#: who a closing offer sends the reader to
_CONTACT = r"(?:me|us|(?:(?:our|the)\s+)?(?:support|customer\s+(?:service|support)|help\s+desk)(?:\s+team)?)"
#: a closing offer of more help, one clause of it ("Let me know", "Feel free to reach out to our support team", "Is
#: there anything else I can help you with", "Hope this helps", "I'll be happy to help")
_OFFER_CLAUSE = re.compile(
    r"(?i)(?:(?:and|so|also|again|otherwise|of\s+course|please|just)\s+)*(?:"
    r"let\s+(?:me|us)\s+know"
    r"|(?:(?:feel\s+free|(?:do\s+not|don't|don’t)\s+hesitate)\s+to\s+)?(?:ask(?:\s+(?:me|us))?|"
    rf"reach\s+out(?:\s+to\s+{_CONTACT})?|contact\s+{_CONTACT}|get\s+in\s+touch(?:\s+with\s+{_CONTACT})?|"
    r"let\s+(?:me|us)\s+know|follow\s+up)"
    r"|is\s+there\s+anything\s+else(?:\s+(?:I|we)\s+can\s+(?:help|assist)(?:\s+you)?(?:\s+with)?|"
    r"\s+you(?:'d|’d|\s+would)\s+like\s+to\s+know)?"
    r"|(?:can|may|could|shall)\s+(?:I|we)\s+(?:help|assist)(?:\s+you)?(?:\s+with\s+anything\s+else)?"
    r"|how\s+(?:else\s+)?(?:can|may)\s+(?:I|we)\s+(?:help|assist)(?:\s+you)?"
    r"|(?:do\s+you\s+have\s+)?any\s+(?:other|more|further|additional)\s+questions"
    r"|(?:(?:I'm|I’m|I\s+am|we're|we’re|we\s+are|I'd\s+be|I’d\s+be|I\s+would\s+be|I'll\s+be|I’ll\s+be|I\s+will\s+be|"
    r"we'll\s+be|we’ll\s+be)\s+)?(?:happy|glad)\s+to\s+help(?:\s+further|\s+(?:you\s+)?with\s+anything\s+else)?"
    r"|(?:I\s+)?hope\s+(?:this|that|it)\s+(?:helps|works|sorts\s+(?:it|things)(?:\s+out)?|does\s+the\s+trick|"
    r"clears\s+(?:it|things)\s+up)"
    r")(?:\s+(?:at\s+any\s+time|anytime|any\s+time|with\s+(?:any\s+)?(?:other\s+|more\s+|further\s+|additional\s+)?"
    r"(?:questions|concerns)))?")
#: what an offer may offer to look at or compare: parts of a document and the options themselves
_TASK_TOPICS = (r"(?:clauses?|sections?|terms|plans?|options?|tariffs?|policies|policy|documents?|details|settings|rules|"
                r"steps|bills?|accounts?|contracts?|agreements?|fares|prices|cards|tiers|packages|choices)")
#: a condition on the reader an offer may carry, before or after it ("if you have any other questions about returns",
#: "if you'd like more details", "if anything is unclear", "if there's anything else I can help with")
_OFFER_CONDITION = re.compile(
    r"(?i)(?:if|whenever|should)\s+(?:"
    r"you\s*(?:have|need|want|would\s+like|'d\s+like|’d\s+like)\s+(?:any\s+|some\s+)?(?:other\s+|more\s+|further\s+|"
    r"additional\s+)?(?:questions?|concerns?|help|assistance|details|information|clarification|anything(?:\s+else)?)"
    r"(?:\s+or\s+(?:questions?|concerns?))?"
    r"(?:\s+(?:with|about|on|regarding)\s+(?P<topic>(?:(?:a|an|the|your|this|that|these|those|any)\s+)?"
    r"[^\W\d]+(?:\s+[^\W\d]+){0,2}))?"
    r"|(?:I|we)\s+can\s+(?:help|assist)(?:\s+(?:you|further))?(?:\s+with\s+anything(?:\s+else)?)?"
    # "if you'd like me to look at any other clauses", "if you'd like to compare the plans": a document's parts or the
    # options themselves, never a thing done that the help would presume ("help with the return of your gift cards")
    r"|you\s*(?:need|want|would\s+like|'d\s+like|’d\s+like)\s+(?:(?:me|us)\s+)?to\s+(?:look\s+at|check|go\s+over|"
    r"go\s+through|review|compare)\s+(?:(?:the|your|this|that|these|those|any|other|more|both|all)\s+)*"
    r"(?P<task>(?:[^\W\d]+\s+)?" + _TASK_TOPICS + r")"
    r"|(?:that|this|it)\s+(?:doesn't|doesn’t|does\s+not|didn't|didn’t|did\s+not|won't|won’t)\s+(?:solve|fix|work|help|"
    r"answer)(?:\s+(?:it|the\s+problem|the\s+issue|your\s+question))?"
    r"|anything\s+(?:is|seems)\s+unclear"
    r"|(?:there\s+is|there's|there’s)\s+anything\s+else(?:\s+(?:I|we)\s+can\s+(?:help|assist)(?:\s+you)?(?:\s+with)?)?"
    r")")
#: the most words a closing offer has
OFFER_MAX_WORDS = 24
#: a closing well-wish ("Have a great trip!", "Happy saving!", "Good luck with your savings goals!", "Take care."),
#: and a question that offers more help ("Would you like help opening an account?"): what follows the formula, if
#: anything, is a topic (as an offer's condition names one)
_WISH = re.compile(
    r"(?i)(?:(?:have|enjoy)\s+a\s+(?:great|nice|good|wonderful|lovely|safe|fantastic|pleasant|productive)\s+"
    r"(?:day|trip|weekend|time|stay|flight|evening|week|one|journey|holiday|vacation|visit|morning|afternoon)"
    r"|happy\s+(?:saving|shopping|travels|travel(?:l)?ing|coding|reading|learning|holidays|cooking|gardening|hiking|"
    r"planning|baking)"
    r"|(?:good|best\s+of)\s+luck|take\s+care|cheers|safe\s+travels|all\s+the\s+best|best\s+wishes|stay\s+safe"
    # (alone: with words after them they may presume a claim, "Congratulations on your gift card refund!")
    r"|(?:congratulations|congrats|enjoy|(?:so\s+|very\s+|really\s+)?sorry\s+to\s+hear(?:\s+(?:that|this|about\s+"
    r"(?:that|this|(?:the|your)\s+[^\W\d]+)))?|happy\s+[^\W\d]+ing)(?=\W*$)"
    r"|(?:(?:I\s+|we\s+)?hope|fingers\s+crossed)\s+(?:(?:he|she|they|you|it|everything|things|all)(?:'s|’s|'re|’re)?|(?:your|the|an?|his|her|their)"
    r"\s+[^\W\d]+(?:\s+[^\W\d]+)?)\s+(?:is\s+|are\s+|will\s+be\s+|gets?\s+|goes\s+|go\s+|feels?\s+|turns?\s+|works?\s+|"
    r"dries\s+|dry\s+|recovers?\s+|eases?\s+|clears?\s+|settles?\s+(?:down\s+)?|calms?\s+down\s+|heals?\s+|"
    r"improves?\s+|passes\s+)?(?:okay|ok|alright|all\s+right|fine|well|better|sorted|"
    r"resolved|fixed|out|smoothly|soon|quickly|better\s+soon|out\s+fine|up|down)(?:\s+(?:fine|soon|quickly|well|okay|smoothly|out))*(?=\W*$)"
    r"|anything\s+else\s+(?:I|we)\s+can\s+(?:help|assist)(?:\s+you)?(?:\s+with)?"
    r"|(?:would|do)\s+you\s+(?:like|want|need)\s+(?:(?:me|us)\s+to\s+(?:help|assist|explain|check|go\s+over|"
    r"walk\s+you\s+through|look\s+into)|(?:any\s+|some\s+)?(?:more\s+|further\s+|additional\s+)?"
    r"(?:help|assistance|details|information))"
    r"|(?:shall|should|can|may)\s+(?:I|we)\s+(?:help|assist|explain|check|go\s+over|walk\s+you\s+through|"
    r"look\s+into)"
    r"|is\s+there\s+anything\s+else(?:\s+you(?:'d|’d|\s+would)\s+like\s+to\s+know|\s+(?:I|we)\s+can\s+"
    r"(?:help|assist)(?:\s+you)?)?"
    r")(?:\s+(?:with|on|about|regarding|for|in|through))?")


#: words that an offer's or a wish's clause may stand beside and that say nothing ("Congratulations, by the way!")
_ASIDE = re.compile(r"(?i)by\s+the\s+way|btw|again|of\s+course|as\s+always|in\s+the\s+meantime|meanwhile")
#: topics of an offer that name nothing ("if you have any questions about this")
_GENERIC_TOPIC = re.compile(r"(?i)(?:this|that|it|these|those|anything(?:\s+else)?|the\s+above|"
                            r"(?:the|your|this|that)\s+(?:process|policy|steps|order|request|question|answer|topic))")


def offer_topics(text: str) -> list[str] | None:
    """The topics an offer of more help names ("if you need help with a return" -> ["a return"]), [] for an offer
    that names none, None for a sentence that is no offer (see :func:`is_offer`). A topic is at most three words with
    no word that states (:func:`_title_words`); whether its words are the question's or the contexts' is the
    caller's to check (``guardrail.checks.evaluator``), as a title's are."""
    t = text.strip().strip("*_").strip().rstrip(".!?…").strip()
    if not t or any(ch.isdigit() for ch in t) or len(words(t)) > OFFER_MAX_WORDS:
        return None
    pointer = _POINTER.fullmatch(t)
    if pointer is not None:  # "See our returns page.", "Source: Return policy", "See https://... for details."
        pointed = _pointed_at(pointer.group("topic"))
        if pointed is not None and re.match(r"(?i)(?:sources?|references?)\s*:", t):
            return []  # a source's name ("Source: Return policy", a reference definition's title) claims nothing
        return pointed
    formula = False
    topics: list[str] = []
    for clause in re.split(r"\s*[,;]\s*|\s+and\s+", t):
        clause = clause.strip()
        if not clause or _ASIDE.fullmatch(clause):  # "Congratulations, by the way!"
            continue
        wish = _WISH.match(clause)
        if wish is not None and len(words(clause[wish.end():])) <= 4:
            # "Good luck with your savings goals", "Would you like help opening an account": the rest is a topic
            formula = True
            topic = re.sub(r"(?i)^(?:your|the|a|an|this|that|my|our)\s+", "", clause[wish.end():].strip()) or None
            if topic and not _GENERIC_TOPIC.fullmatch(topic):
                if not _title_words([w.lower() for w in words(topic)]):
                    return None
                topics.append(topic)
            continue
        m = _OFFER_CLAUSE.match(clause)
        rest = clause[m.end():].strip() if m else clause
        cond = _OFFER_CONDITION.fullmatch(rest) if rest else None
        if m and not rest:
            formula = True
        elif m and cond:
            formula = True
        elif not (m is None and cond):
            return None
        topic = (cond.group("topic") or cond.group("task")) if cond else None
        if topic and not _GENERIC_TOPIC.fullmatch(topic):
            if not _title_words([w.lower() for w in words(topic)]):
                return None
            topics.append(topic)
    return topics if formula else None


#: a pointer to where more is said ("See our returns page.", "For details, see Returns & Refunds.", "Learn more on
#: our returns page.", "Source: Return policy", "See https://shop.example/returns for details."): it claims nothing
#: but that the page is about its topic
_POINTER = re.compile(
    r"(?i)(?:(?:for|with)\s+(?:more\s+|further\s+|full\s+|additional\s+|the\s+full\s+)?(?:details|information|info)"
    r"\s*,?\s*)?(?:please\s+|you\s+can\s+(?:also\s+)?|you\s+may\s+(?:also\s+)?|also\s+)?"
    r"(?:learn\s+more(?:\s+(?:on|at|in|about|from))?|read\s+more(?:\s+(?:on|at|in|about))?|"
    r"see(?:\s+also)?|refer\s+to|visit|check(?:\s+out)?|read|consult|go\s+to|head\s+to|look\s+at|view|"
    r"find\s+(?:out\s+)?more(?:\s+(?:information|details|info))?\s+(?:on|at|in)|"
    r"(?:more|further|full)\s+(?:details|information|info)\s+(?:(?:are|is|can\s+be\s+found)\s+)?(?:available\s+)?"
    r"(?:on|at|in)|sources?\s*:|references?\s*:|more\s+info\s*:|details\s*:)"
    r"\s+(?P<topic><?https?://\S+?>?|[^,;:!?]{1,80}?)"
    r"(?:\s*,?\s*(?:for|with)\s+(?:more\s+|further\s+|full\s+|additional\s+|the\s+full\s+)?"
    r"(?:details|information|info|specifics))?")
#: words that name where a pointer sends the reader, not what it says ("our returns page" points at returns)
_PAGE_WORDS = frozenset("page pages site website web link links article articles section sections document documents "
                        "docs documentation doc help center centre faq faqs terms url here below above guide portal "
                        "knowledge base kb our the your this that policy policies handbook manual leaflet brochure "
                        "guidelines conditions".split())
_URL_TOPIC = re.compile(r"(?i)<?https?://[^\s/]+(?P<path>/\S*)?>?")


def _pointed_at(topic: str) -> list[str] | None:
    """The topics of what a pointer points at: its words but the page words ("our returns page" -> ["returns"]), the
    words of a URL's path; None when they could state something (a pointer to "gift cards can be returned" is
    judged)."""
    # a link's title or an aside after the page's name says no more than the page does ("the return policy (Returns
    # and refunds)": a markdown link's title, read as the link's tooltip)
    aside = re.search(r"\s*\(([^()]{0,80})\)\s*$", topic.strip())
    if aside is not None and len(words(aside.group(1))) <= LEAD_IN_MAX_WORDS and \
            _title_words([w.lower() for w in words(aside.group(1))]):
        topic = topic.strip()[:aside.start()] or topic  # a title names, it says nothing ("gift cards are refundable")
    url = _URL_TOPIC.fullmatch(topic)
    if url is not None:
        topic = re.sub(r"[-_/.+=?&#%]", " ", url.group("path") or "")
    ws = [w for w in words(topic) if w.lower() not in _PAGE_WORDS]
    if len(ws) > LEAD_IN_MAX_WORDS or not _title_words([w.lower() for w in ws]):
        return None
    return [" ".join(ws)] if ws else []


def is_offer(text: str) -> bool:
    """A closing offer of more help, which claims nothing: clauses (split at commas, semicolons and "and") each of
    which is an offer's formula, a condition on the reader, or both ("If you have any other questions, feel free to
    ask!", "Let me know if you'd like more details, and I'll be happy to help."), with no digit, naming no topic
    but a generic one ("about this"). A condition says only what the reader may want, so a clause that could state
    a fact ("if you need help returning your gift cards", "..., who refund gift cards") is judged; an offer that
    names a topic ("if you have any questions about returns") claims nothing where the topic's words are the
    question's or the contexts' (:func:`offer_topics`)."""
    return offer_topics(text) == []


_LEAD_IN = re.compile(r"(?i)^(?:here(?:'s|’s| is| are)|below(?: is| are)?|the following|following|these are|those are|"
                      r"this is|see (?:the )?(?:table|list|steps|summary|details)|in (?:short|summary|brief)|"
                      r"according to (?:the |your |our )?(?:\w+ )?(?:documents?|sources?|policy|policies|docs|"
                      r"documentation|terms|faq|guide|manual|passages?|context|information)\s*:$|"
                      r"(?:the|your|our) (?:\w+ ){0,2}(?:says|states|reads|notes|explains|specifies|outlines|mentions)"
                      r"\s*:$)"
                      r"|\b(?:as follows|the following|below)\s*:$")
#: a lead-in that counts or names what the list after it holds ("You have two options:", "A few things to keep in
#: mind:", "Note:"): whole, with no other words (the items are judged)
_LIST_LEAD = re.compile(r"(?i)^(?:you have|there are) (?:two|three|four|five|a few|several|some|a couple of) (?:main |possible |"
                      r"simple )?(?:options|choices|ways|steps|routes|possibilities|things you can do)\s*:$"
                      r"|^(?:a few|some|several|two|three) (?:things|details|points|notes|tips|caveats|rules)(?: (?:to|you should|"
                      r"worth) (?:keep in mind|note|know|remember|consider|noting|knowing))?\s*:$"
                      r"|^(?:please )?(?:note|keep in mind|remember|bear in mind)\s*:$")
#: "Here is what you need to know:" (seven words: the one longer form)
_KNOW_LEAD = re.compile(r"(?i)^here(?:'s|’s| is) (?:what|everything|all) you (?:need|should|want|ought) to know\s*:$")


#: the most words a lead-in has: "Here are the steps you need:" (a longer sentence ending with ':' may hold a claim)
LEAD_IN_MAX_WORDS = 6
#: a longer lead-in that announces a summary of something named by a noun phrase ("Here's a summary of the return
#: policy:", "Here are the key points from the policy:"); its tail must not be a clause (see :func:`is_lead_in`)
_SUMMARY_LEAD = re.compile(
    r"(?i)^(?:here(?:'s|’s| is| are)|below (?:is|are)|(?:this|that) is)\s+(?:a |an |the |my |some )?"
    r"(?:quick |short |brief |full |complete |detailed |general |high-level )?"
    r"(?:summary|overview|breakdown|recap|rundown|outline|explanation|key points?|main points?|highlights|details|"
    r"steps|rules|options|terms|basics|essentials)\s+(?:of|from|for|on|about|in)\s+(?P<tail>[^:]{1,60}):$")
#: words that make a summary lead-in's tail a clause that may claim something ("... of why gift cards are refundable:")
_CLAUSE_WORDS = frozenset("""is are was were be been being am can cannot could may might must shall should will would
    do does did has have had why how what when where which who whom whose that whether if not no never only all
    always free""".split())


def is_lead_in(text: str) -> bool:
    """A short sentence that ends with a colon and only announces what follows: "Here is the policy:", "The steps are
    as follows:", "Summary:" (a label of one or two words). What follows is judged; the lead-in claims nothing alone
    (a stream would otherwise judge it before the list or table it introduces arrives). Never one that could hold a
    claim: more than six words (but a summary of a named thing: "Here's a summary of the return policy:", whose tail
    is no clause), a digit, or another colon inside ("Here is the policy: gift cards can be returned within 90 days:"
    is judged; so is "Here's a summary of why gift cards are always refundable:")."""
    t = text.strip().strip("*_").strip()
    if not t.endswith(":") or ":" in t[:-1] or any(ch.isdigit() for ch in t):
        return False
    ws = words(t)
    if {"not", "no", "never", "cannot"} & set(ws) or any(w.endswith("n't") for w in ws):
        return False
    # a label of one or two words ("Summary:", "Key points:"); three could already say something ("Gift cards
    # returnable:")
    if 0 < len(ws) <= 2 or (len(ws) <= LEAD_IN_MAX_WORDS and bool(_LEAD_IN.search(t))) or bool(_KNOW_LEAD.match(t)) \
            or bool(_LIST_LEAD.match(t)):
        return True
    summary = _SUMMARY_LEAD.match(t)
    return summary is not None and not (_CLAUSE_WORDS & set(words(summary.group("tail"))))


def content_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS]


_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""), ("able", ""), ("ible", ""))


#: distinct words whose stems are kept (about 150 bytes each). Only alphabetic words longer than 3 characters are
#: cached: the others come back unchanged at the cost of two checks, and they are where the unbounded variety is
#: (ticket numbers, order ids, reference codes, prices), so caching them only filled the cache under sustained load
#: with words never seen again (the gateway's RSS grew ~1 MB/min in the soak until 65,536 entries were held).
STEM_CACHE_SIZE = 16384


def stem(word: str) -> str:
    """A light suffix stripper, so "refunds", "refunded" and "refund" match (not a linguistic stemmer).

    >>> [stem(w) for w in ("refunds", "refunded", "policies", "class", "was", "vote", "voted", "voting")]
    ['refund', 'refund', 'policy', 'class', 'was', 'vot', 'vot', 'vot']
    """
    if len(word) <= 3 or not word.isalpha() or word.endswith("ss"):
        return word
    return _stem_alpha(word)


@functools.lru_cache(maxsize=STEM_CACHE_SIZE)
def _stem_alpha(word: str) -> str:
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + repl
    # an unsuffixed word loses its final "e", so "vote" meets "voted" and "voting", "state" meets "states" ("vot",
    # "stat"), and "agree" still meets "agreed" ("agre")
    return word[:-1] if word.endswith("e") else word


def content_stems(text: str) -> list[str]:
    """Stemmed content words: what premise ranking and word coverage compare. A figure joined to its unit ("a
    45-metre waterfall", "186-seat jets") is the figure and the unit, as "45 metres" is.

    >>> content_stems("a 45-metre waterfall and 186-seat jets, covid-19")
    ['45', 'metr', 'waterfall', '186', 'seat', 'jet', 'covid-19']
    """
    out: list[str] = []
    for w in content_words(text):
        if _MEASURE.fullmatch(w):
            out.extend(stem(part) for part in w.split("-") if part)
        else:
            out.append(stem(w))
    return out


#: a figure joined to its unit by a hyphen ("45-metre", "3.5-litre", "186-seat")
_MEASURE = re.compile(r"\d[\d.,]*-[^\W\d_]+(?:-[^\W\d_]+)*")


#: words that make a short sentence an answer to the question rather than a pleasantry ("Yes, they can.", "No.")
ANSWER_WORDS = frozenset(
    """
    yes no not never none nothing nobody always can cannot can't could couldn't will won't would wouldn't is isn't
    are aren't was wasn't were weren't do don't does doesn't did didn't has hasn't have haven't had hadn't should
    shouldn't must mustn't may might true false correct incorrect right wrong both neither either all only
    """.split()
)


def answers_anything(text: str) -> bool:
    """Some sentence of ``text`` is judged: a claim, or a yes/no answer ("Yes, they can."), not only pleasantries,
    titles, offers of more help or an honest refusal. Beside a reasoning trace, an answer that answers nothing leaves
    the trace as what the client shows: it is unchecked (see ``guardrail.wire.chat``, ``guardrail.stream.release``)."""
    for span in split_sentences(text):
        sentence = span.of(text)
        if (is_claim(sentence) or is_answer_fragment(sentence)) and not is_refusal(sentence):
            return True
    return False


#: words that answer a wh-question when nothing else stands beside them ("Any of them.", "Most of them.", "We.")
BARE_ANSWER_WORDS = frozenset(
    """
    any most some few many several each every everyone everything everybody anyone anything anybody someone something
    somebody we us you they them he she him her it i me half others other of the these those this that ones one mine
    ours yours theirs his hers whichever whatever whoever whenever wherever
    """.split()
)


def is_answer_fragment(text: str) -> bool:
    """A sentence that is not a claim on its own but answers the question ("Yes, they can.", "No, never.", "Any of
    them.")."""
    if is_claim(text) or is_lead_in(text) or is_offer(text) or is_label(text):
        return False
    ws = words(text)
    return any(w in ANSWER_WORDS for w in ws) or (bool(ws) and all(w in BARE_ANSWER_WORDS for w in ws))


_LATIN_LETTER = re.compile(r"[A-Za-z\u00C0-\u024F\u1E00-\u1EFF]")
_OTHER_LETTER = re.compile(r"[^\W\d_A-Za-z\u00AA\u00B5\u00BA\u00C0-\u024F\u1E00-\u1EFF]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_LETTERS = re.compile(r"[^\W\d_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


#: function words of the languages in Latin script an English model is most often sent, none of them an English word
#: too ("die", "son", "con", "per", "plus", "met", "com" in a URL, "a", "no" are not here): a sentence is read as the
#: language whose words it holds
_FUNCTION_WORDS = {
    "German": frozenset("und der das nicht ist sind werden wird können kann mit für auf dem des ein eine einen einem "
                        "einer nur auch oder wenn nach bei innerhalb keine kein sie zurückgegeben haben diese dieser "
                        "dieses ich wir ihr sich über zum zur vom".split()),
    "French": frozenset("les des sont peuvent peut être pas ne une dans pour avec sur aux du au ou mais qui que cette "
                        "ces leur leurs été très nous vous ils elles je jours remboursés retournés aussi".split()),
    "Spanish": frozenset("los las del el es son pueden puede ser una unos unas para por dentro días que pero está "
                         "están se muy también esta este estos estas nosotros usted ustedes".split()),
    "Italian": frozenset("gli della delle dei sono possono può essere una entro giorni che il ma senza è anche questo "
                         "questa questi queste noi voi loro".split()),
    "Portuguese": frozenset("das são podem pode ser não uma para por dentro dias que ou mas sem é também este esta "
                            "estes estas nós você vocês".split()),
    "Dutch": frozenset("het een niet zijn kunnen kan worden wordt voor binnen dagen maar zonder geen ook deze dit wij "
                       "jullie".split()),
}
_FUNCTION_WORDS = {language: vocab | {unicodedata.normalize("NFKD", w).encode("ascii", "ignore").decode()
                                       for w in vocab}  # as the reading spells them ("können" -> "konnen")
                   for language, vocab in _FUNCTION_WORDS.items()}
#: English function words (a sentence that holds more of them than of another language's is English)
_ENGLISH_WORDS = frozenset("the and is are be been can cannot not to of with within for from this that these those "
                           "it they we you your our their will would should may might must has have had do does "
                           "did by at on in or but if only also any all no yes".split())


#: URLs, e-mail addresses and domains ("example.com"): no words of any language
_URLISH = re.compile(r"\S+://\S+|\S+@\S+|www\.\S+|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|de|fr|es|it|pt|nl|br)\b")


_TOKEN = re.compile(r"\S+")
#: a run of domain labels ("www.example.com", "a-b.c"): one match from each start, never re-scanned
_LABELS = re.compile(r"[\w-]+(?:\.[\w-]+)*")
_TLDS = ("com", "org", "net", "io", "de", "fr", "es", "it", "pt", "nl", "br")


def _unlinked(sentence: str) -> str:
    """``sentence`` with each URL, e-mail address and domain replaced by a space: ``_URLISH.sub(" ", sentence)``, read
    in one pass. The regex tried every start of a run without spaces up to the run's end, so an answer that is one
    long run ('{"a":{"a":...', "a-a-a-...") cost its length squared (round 37: 4,000 '{"a":' took 2.4 s)."""
    return _TOKEN.sub(_unlinked_token, sentence)


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"  # the regex's \w


def _unlinked_token(m: re.Match[str]) -> str:
    r"""One run without spaces, as ``_URLISH`` reads it: a URL or an address (``\S+://\S+``, ``\S+@\S+``) is the whole
    run wherever it matches (a match in the run also matches from its start); "www." takes the rest of the run; a
    domain runs from the first word character of a run of labels to the last ".<tld>" in it (the regex matches from
    there, greedily, or nowhere in that run of labels)."""
    t = m.group()
    n = len(t)
    for mark in ("://", "@"):
        i = t.find(mark, 1)
        if 0 < i < n - len(mark):
            return " "
    out: list[str] = []
    pos = 0
    for run in _LABELS.finditer(t):
        a, b = run.span()
        first = next((q for q in range(a, b) if _word(t[q])), None)
        if first is None:
            continue
        www = t.startswith("www.", first) and first + 4 < n  # tried before a domain at the same place
        end = None if www else _domain_end(t, first, b)
        if end is not None:
            out += [t[pos:first], " "]
            pos = first = end
        at = t.find("www.", first, b + 3)  # starting in the run
        if 0 <= at and at + 4 < n:
            return "".join(out) + t[pos:at] + " "
    return "".join(out) + t[pos:]


def _domain_end(t: str, first: int, b: int) -> int | None:
    """Where the domain that starts at ``first`` in the run of labels ending at ``b`` ends: after its last ".<tld>"
    followed by a word boundary (None: no domain)."""
    for d in range(b - 1, first, -1):
        if t[d] != ".":
            continue
        for tld in _TLDS:
            e = d + 1 + len(tld)
            if t.startswith(tld, d + 1) and (e == len(t) or not _word(t[e])):
                return e
    return None


def foreign_language(sentence: str) -> str | None:
    """The language other than English that a sentence in Latin script is written in (by its function words: at least
    two of that language's, more than of English's and a quarter of its words), or None. "Los tarjetas de regalo no
    se pueden devolver." is Spanish; "Gift cards peuvent être returned within 30 days." is French enough that an
    English model would only guess; "I flew to Los Angeles and Las Vegas." is English."""
    tokens = [t.lower() for t in _LETTERS.findall(_unlinked(sentence))]
    if len(tokens) < 3:
        return None
    english = sum(t in _ENGLISH_WORDS for t in tokens)
    best, count = None, 0
    for language, vocab in _FUNCTION_WORDS.items():
        n = sum(t in vocab for t in tokens)
        if n > count:
            best, count = language, n
    if best is None or count < 2 or count <= english or count * 4 < len(tokens):
        return None
    return best


def lone_surrogate(text: str) -> re.Match[str] | None:
    return _SURROGATE.search(text)


def uncheckable_reason(text: str, *, what: str = "text", quote: bool = True) -> str | None:
    """Why a text cannot be judged by an English NLI model, or None (``quote=False``: without the text's words).

    Lone surrogates (broken UTF-16, e.g. a ``"\\ud800"`` escape in JSON) and sentences written mostly in a non-Latin
    script are not judged: an English-only model would only guess there.
    """
    m = lone_surrogate(text)
    if m:
        return f"the {what} holds a lone surrogate (U+{ord(m.group()):04X} at offset {m.start()}): broken Unicode"
    if not _OTHER_LETTER.search(text):
        return None
    for span in split_sentences(text):
        sentence = span.of(text)
        if is_greeting(sentence):  # "ありがとう！" beside an English answer claims nothing
            continue
        latin = other = run = longest = 0
        for token in _LETTERS.findall(sentence):
            n = len(_OTHER_LETTER.findall(token))
            if not n:
                latin += 1
                run = 0
                continue
            weight = n if _CJK.search(token) else 1  # a CJK character is about a word
            other += weight
            run += weight
            longest = max(longest, run)
        if other >= 2 and (other > 0.3 * (other + latin) or longest >= 3):
            snippet = sentence if len(sentence) <= 60 else sentence[:57] + "..."
            snippet = f" ({snippet!r})" if quote else ""
            return (f"the {what} has a sentence in a script the model was not trained on{snippet}; "
                    "use an NLI model for that language (--nli-model)")
    return None


def unsupported_language(text: str, *, what: str = "text", quote: bool = True) -> str | None:
    """Why a text is in a language the English model was not trained on (a script it does not read,
    :func:`uncheckable_reason`, or a sentence in another language of Latin script, :func:`foreign_language`), or
    None."""
    reason = uncheckable_reason(text, what=what, quote=quote)
    if reason is not None:
        return reason
    for span in split_sentences(text):
        sentence = span.of(text)
        if is_greeting(sentence):
            continue
        language = foreign_language(sentence)
        if language is not None:
            snippet = sentence if len(sentence) <= 60 else sentence[:57] + "..."
            snippet = f" ({snippet!r})" if quote else ""
            return (f"unsupported language: the {what} has a sentence in {language}{snippet}, which the model "
                    "was not trained on; use an NLI model for that language (--nli-model)")
    return None
