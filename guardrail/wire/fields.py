"""Field rules shared by the readers: what a field that is not answer text may hold.

Every reader knows, per object, which fields are answer text (it reads them) and which are text-free (ids, enums,
counts, token lists, base64 data). A text-free field is checked by its rule; a field a reader does not know is
accepted only when it holds no string at all (numbers, booleans, null, at any depth, under keys that are
:func:`atom`\\ s). Anything else makes the body or event unreadable: a reader that lets an unknown string through
delivers text nobody checked.

Rules (``rule(value, where, sent)``; ``sent`` is the set of strings the request itself carried, or None):

- :func:`atom`: every string (and key) at any depth is one token that does not read as prose, at most 256
  characters (``id``, ``model``, ``finish_reason``, ``usage``, content-filter results; see :func:`is_atom`);
- :func:`citations`: a citation's strings are atoms, but its source's title or file name, which may be a name
  (not a statement);
- :func:`token`: a logprobs token: at most 64 characters and one word (see :func:`is_token`);
- :func:`base64`: opaque data (``audio.data``);
- :func:`skip`: known, and not the answer (a reasoning trace);
- :func:`echo`: a field that repeats the request (the Responses API's ``instructions``, ``tools``, ``metadata``):
  every string is an atom or a string the request carried;
- :func:`unknown`: the rule of every other field.

Messages name fields by their path and never quote the strings they hold: a reason is shown to the client.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

from guardrail.errors import UnreadableError
from guardrail.text import source_name

ATOM_MAX = 256
#: choices checked per answer at most (an answer with more, or a stream choice index past it, is unreadable)
MAX_CHOICES = 8
TOKEN_MAX = 64
#: containers nested deeper than this in a text-free field make it unreadable
MAX_DEPTH = 64

Echo = Collection[str] | None
Rule = Callable[[Any, str, Echo], None]

_BASE64 = re.compile(r"[A-Za-z0-9+/=_-]*")
_PLAIN = re.compile(r"[\x21-\x7e]*")


# --------------------------------------------------------------------------- atoms: one word, not prose
#: characters that are not format or separator characters by category and yet render blank: the Hangul fillers,
#: the blank Braille pattern, the ideographic half fill space, the null notehead, the Khitan filler
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800\u303f\U0001d159\U00016fe4")
#: Default_Ignorable_Code_Point (Unicode DerivedCoreProperties): dropped unseen by renderers (and by
#: ``guardrail.render``, which drops the invisible characters and fillers: the wire layer does not import it)
_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
              (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
              (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
              (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
#: what ends a sentence, and what may close it after (quotes, brackets)
_TERMINATORS = frozenset(".!?\u2026\u203d\u3002\u061f\u0964\u0965")
_CLOSERS = "\"')]}\u00bb\u201d\u2019"
#: a URL: scheme, authority, then the rest (path, query, fragment)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}://([^/?#]*)(.*)", re.S)
#: an identifier in camelCase or PascalCase whose humps are words, numbers between (``giftCardsCanBeReturned``,
#: ``Within90Days``); a run of lower-case letters and digits (a hex id) is none
_CAMEL = re.compile(r"(?:[a-z]{2,}|[A-Z][a-z]+)(?:[A-Z][a-z]+|[0-9]+(?![0-9]))+")
_HUMP = re.compile(r"[A-Z]?[a-z]+")
_NON_WORD = re.compile(r"[\W_]+")
#: letters of the scripts written without spaces between words (Thai, Lao, Tibetan, Myanmar, Khmer, Tai Le, New Tai
#: Lue, Tai Tham, Balinese, CJK radicals, kana, Bopomofo, CJK ideographs, Yi, Javanese, Tai Viet, CJK extensions)
_UNSPACED = ((0x0E00, 0x10A0), (0x1780, 0x1800), (0x1950, 0x19E0), (0x1A20, 0x1AB0),
             (0x1B00, 0x1B80), (0x2E80, 0x2FE0), (0x3040, 0x3130), (0x31A0, 0x3200), (0x3400, 0x4DC0),
             (0x4E00, 0xA000), (0xA000, 0xA4D0), (0xA980, 0xA9E0), (0xAA60, 0xAAE0), (0xF900, 0xFB00),
             (0x20000, 0x40000))
#: words that make a sentence of other words: auxiliaries, modals and negation (the verb of a statement) ...
_AUXILIARIES = frozenset("""
am is are was were be been being isnt arent wasnt werent can cannot cant could couldnt will wont would wouldnt shall
should shouldnt may might must mustnt do does did dont doesnt didnt has have had hasnt havent hadnt not never
""".split())
#: ... and the other function words: determiners, pronouns, prepositions, conjunctions
_FUNCTION_WORDS = _AUXILIARIES | frozenset("""
a an the this that these those every each all any some no its it they them their we our us you your he she his her
him i my me of to in on at by for from with within without into onto about after before until than per via over under
during since and or but if so as then also only just there here when where which who whom what how why
""".split())
#: letters of scripts written without spaces (a sentence there is one "word"): this many make a value prose
_UNSPACED_MAX = 5


@functools.lru_cache(maxsize=8192)
def is_blank(ch: str) -> bool:
    """A character that separates words for a reader: whitespace, a separator, control, format, private-use or
    unassigned character (categories Z* and C*), a default-ignorable code point (dropped unseen: zero-width
    characters, variation selectors, the combining grapheme joiner, ...), a character that renders blank (the
    Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the blank Braille pattern U+2800, ...), or one whose compatibility
    form holds a space (spacing accents, overlines: ``guardrail.render`` reads them as a space). Every character that
    ``guardrail.render`` drops as invisible or reads as a space is one."""
    if ch.isspace() or unicodedata.category(ch)[0] in "ZC" or ch in _BLANK:
        return True
    cp = ord(ch)
    if any(lo <= cp <= hi for lo, hi in _IGNORABLE):
        return True
    return cp >= 0x80 and any(c.isspace() for c in unicodedata.normalize("NFKD", ch))


def _unspaced(ch: str) -> bool:
    return ord(ch) >= 0x0E00 and ch.isalpha() and any(lo <= ord(ch) < hi for lo, hi in _UNSPACED)


def _words(s: str) -> list[str]:
    """The words of ``s`` (lower-cased, without their marks): its runs of letters between any other characters, a
    camelCase run split at its humps; runs that hold a digit (``4o``, ``v1``, hex and base64 runs) are no words."""
    out: list[str] = []
    for run in _NON_WORD.split(s):
        humped = run[1:] != run[1:].lower()
        if run.isalpha() and not humped:
            out.append(run.lower())
        elif humped and _CAMEL.fullmatch(run):
            out.extend(h.lower() for h in _HUMP.findall(run))
        elif run.isalpha():
            out.append(run.lower())
        elif run and all(c.isalpha() or unicodedata.category(c)[0] == "M" for c in run):
            word = "".join(c for c in run if unicodedata.category(c)[0] != "M").lower()
            if word:
                out.append(word)
    return out


def _ends_a_sentence(s: str) -> bool:
    """``s`` ends as a sentence does: a word, then sentence punctuation (and closing quotes or brackets), and holds
    two words of two letters or more (``returned.`` is one word; ``U.S.`` no sentence)."""
    body = s.rstrip(_CLOSERS)
    end = len(body)
    while end and body[end - 1] in _TERMINATORS:
        end -= 1
    if end == len(body) or not end or not (body[end - 1].isalnum() or unicodedata.category(body[end - 1])[0] == "M"):
        return False
    return sum(len(w) >= 2 for w in _words(body[:end])) >= 2


def _phrase(s: str) -> bool:
    """Five words or more, two of them function words, one of those the verb of a statement (an auxiliary, a modal
    or a negation): ``gift-cards-can-be-returned-within-90-days``, not ``returns-and-refunds-policy`` nor
    ``Terms_of_Service_for_the_EU.pdf``."""
    words = _words(s)
    if len(words) < 5:
        return False
    function = [w for w in words if w in _FUNCTION_WORDS]
    return len(function) >= 2 and any(w in _AUXILIARIES for w in function)


@functools.lru_cache(maxsize=4096)
def reads_as_prose(s: str) -> bool:
    """A string of no blank character that a reader still reads as a sentence (or part of one), with its words
    joined by hyphens, underscores, dots, slashes, any punctuation or camelCase humps:

    - it ends as a sentence does (``Gift-cards-can-be-returned.``; in a URL, its last path segment does);
    - it is a phrase (:func:`_phrase`) (in a URL, its host is: the path of a URL names a page, and the slugs of
      real pages are often their headlines: ``https://news.example/2024/gift-cards-can-now-be-returned``);
    - it holds more than a few letters of scripts written without spaces (``礼品卡可以退货``).

    Identifiers, slugs, file names, model names, dates, hex and base64 ids are no prose (see the tests)."""
    text = unicodedata.normalize("NFKC", s)  # fullwidth, mathematical and circled letters read as their letters
    if not text.isascii() and sum(map(_unspaced, text)) >= _UNSPACED_MAX:
        return True
    url = _URL.fullmatch(text)
    if url:  # (a "?" that ends a URL starts its query)
        return _ends_a_sentence(text.rpartition("/")[2].rstrip("?")) or _phrase(url.group(1))
    return _ends_a_sentence(text) or _phrase(text)


def _one_token(s: str) -> bool:
    return len(s) <= ATOM_MAX and (bool(_PLAIN.fullmatch(s)) or not any(map(is_blank, s)))


def is_atom(s: str) -> bool:
    """One token that does not read as prose (an id, a URL, a code, an enum, a name): no character that separates
    words for a reader (:func:`is_blank`: whitespace, separators, control, format and default-ignorable characters,
    characters that render blank), not prose by :func:`reads_as_prose`; at most 256 characters."""
    return _one_token(s) and not reads_as_prose(s)


def is_token(s: str) -> bool:
    """A logprobs token: at most 64 characters, one word (leading or trailing whitespace allowed; whitespace is any
    character that renders blank: separators, the Hangul fillers, the blank Braille pattern) that does not read as
    prose. Zero-width characters join (emoji sequences are tokens)."""
    if len(s) > TOKEN_MAX:
        return False
    pieces = "".join(" " if c in _BLANK else c for c in s).split()
    return len(pieces) <= 1 and not (pieces and reads_as_prose(pieces[0]))


def name(key: Any) -> str:
    """A field name fit for a message (keys are chosen by the upstream: never quote prose)."""
    if isinstance(key, int):
        return f"[{key}]"
    if isinstance(key, str) and len(key) <= 40 and is_atom(key):
        return f".{key}"
    return ".<a field>"


def describe(value: Any) -> str:
    """A value's kind for a message (never the value: it may be the text under check)."""
    if isinstance(value, str):
        return "a string"
    return {dict: "an object", list: "a list", bool: "a boolean", int: "a number", float: "a number",
            type(None): "null"}.get(type(value), type(value).__name__)


_SCALARS = frozenset({int, float, bool, type(None)})


def walk(value: Any, where: str) -> Iterator[tuple[str, str, bool]]:
    """Every string under ``value``: (path, string, is_key); iterative, bounded in depth."""
    stack: list[tuple[Any, str, int]] = [(value, where, 0)]
    while stack:
        v, w, depth = stack.pop()
        if isinstance(v, str):
            yield w, v, False
        elif isinstance(v, (dict, list)):
            if depth >= MAX_DEPTH:
                raise UnreadableError(f"{w} is nested more than {MAX_DEPTH} levels deep")
            if isinstance(v, dict):
                for k, x in v.items():
                    path = w + name(k)
                    yield path, k, True
                    stack.append((x, path, depth + 1))
            elif not _SCALARS.issuperset(map(type, v)):
                # numbers, booleans and nulls hold no string: a list of them only (30 MB of zeros) is passed over in
                # C, and elsewhere a path is made only for what may hold one
                stack.extend([(x, f"{w}[{i}]", depth + 1) for i, x in enumerate(v) if isinstance(x, (str, dict, list))])


# --------------------------------------------------------------------------- rules
def unknown(value: Any, where: str, sent: Echo = None) -> None:
    """A field no reader knows: text-free only when it holds no string (keys aside, when they are atoms)."""
    for path, s, is_key in walk(value, where):
        if not is_key:
            inside = "" if path == where else f" (at {path})"
            raise UnreadableError(f"{where} is a field guardrail does not know, and it holds text{inside}; "
                                  "text that is not read is not delivered")
        if not is_atom(s):
            raise UnreadableError(f"{where} is a field guardrail does not know, and a key under it is text")


def atom(value: Any, where: str, sent: Echo = None) -> None:
    """Every string is an atom; a string the request itself sent (a tool's name, a model's) need only be one token."""
    for path, s, _ in walk(value, where):
        if not is_atom(s) and not (sent is not None and s in sent and _one_token(s)):
            raise UnreadableError(f"{path} holds text where an identifier or code is expected")


#: the fields of a citation (an ``annotations`` entry) that name its source to a reader: a page's title, a file's name
_SOURCE_NAMES = (".title", ".filename")


def citations(value: Any, where: str, sent: Echo = None) -> None:
    """Citations (``message.annotations``, a Responses part's ``annotations``): every string is an atom (a URL, an
    id, an index), but a page's ``title`` or a file's ``filename``, which a client shows as the source's name: that
    one may be a name (:func:`guardrail.text.source_name`: "Returns and refunds policy | Example Shop", "Return policy
    2024.pdf"), and one that reads as a statement is unreadable, like text in any field no reader reads."""
    for path, s, is_key in walk(value, where):
        if is_atom(s) or (not is_key and path.endswith(_SOURCE_NAMES) and source_name(s)):
            continue
        if not is_key and path.endswith(_SOURCE_NAMES):
            raise UnreadableError(f"{path} holds text that names no source (a citation's title or file name that "
                                  "reads as a statement); text that is not read is not delivered")
        raise UnreadableError(f"{path} holds text where an identifier or code is expected")


def token(value: Any, where: str, sent: Echo = None) -> None:
    for path, s, is_key in walk(value, where):
        if not (is_token(s) or (is_key and is_atom(s))):
            raise UnreadableError(f"{path} holds text where a single token is expected")


def base64(value: Any, where: str, sent: Echo = None) -> None:
    if value is not None and not (isinstance(value, str) and _BASE64.fullmatch(value)):
        raise UnreadableError(f"{where} is not base64 data")


def skip(value: Any, where: str, sent: Echo = None) -> None:
    """Known, and not the answer: not read (see the package documentation for which fields)."""


def echo(value: Any, where: str, sent: Echo = None) -> None:
    for path, s, _ in walk(value, where):
        if not is_atom(s) and (sent is None or s not in sent):
            raise UnreadableError(f"{path} holds text that the request did not send")


def check(obj: Mapping[str, Any], where: str, rules: Mapping[str, Rule], sent: Echo, read: Collection[str] = ()) -> None:
    """Apply each field's rule (``unknown`` for the fields not in ``rules``); ``read`` are read by the caller."""
    for key, value in obj.items():
        if key in read:
            continue
        rule = rules.get(key)
        if rule is None and not is_atom(key):
            raise UnreadableError(f"{where} has a field whose name is text; text that is not read is not delivered")
        (rule or unknown)(value, where + name(key), sent)


def text(value: Any, where: str) -> str:
    """A text field: a string, or nothing (null)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UnreadableError(f"{where} is {describe(value)}, not a string")
    return value


def obj(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise UnreadableError(f"{where} is {describe(value)}, not an object")
    return value


def index(value: Any, where: str, default: int = 0) -> int:
    """A position (``index``, ``output_index``...): a small integer."""
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1024:
        raise UnreadableError(f"{where} is not a small integer")
    return value


def strings(value: Any, limit: int = 1_000_000) -> frozenset[str]:
    """Every string (values and keys) of a request body, for :func:`echo` (bounded: a request is bounded too)."""
    out: set[str] = set()
    try:
        for _, s, _ in walk(value, ""):
            out.add(s)
            if len(out) >= limit:
                break
    except UnreadableError:
        pass
    return frozenset(out)


_BYTE_TOKEN = re.compile(r"bytes:(?:\\x[0-9a-fA-F]{2})+")


def _ascii(s: str) -> str:
    return "".join(c for c in s if ord(c) < 128)


#: a high and a low surrogate in a row
_PAIRED = re.compile("[\ud800-\udbff][\udc00-\udfff]")
#: how many places in the text a spelling with pieces of characters may end at before it is refused (the match stays
#: linear in the tokens: pieces that alternate with characters would otherwise make it quadratic)
_MAX_READINGS = 64


def tokens_agree(tokens: list[str], text: str) -> bool:
    """The logprobs tokens spell ``text``, whole and in order, white space aside; a token piece of a character a
    tokenizer split (U+FFFD, ``bytes:\\x..``, half a surrogate pair) stands for up to as many characters outside
    ASCII as there are pieces in a row. A token list that spells anything else (another word, the same marks in
    another order, a part of the text that says something else) is text a client can show (token-highlighting views)
    that nobody checked."""
    joined = "".join(tokens)
    if joined == text or not joined.strip():
        return True
    # halves of a surrogate pair in a row are the character they make, as a UTF-16 reader (a browser) joins them
    joined = _PAIRED.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), joined)
    spelled = "".join(_BYTE_TOKEN.sub("\ufffd", joined).split())
    target = "".join(_PAIRED.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"),
                                 text).split())
    # where the next ASCII character of the target is, from each position (a run of pieces spans no ASCII)
    next_ascii = [len(target)] * (len(target) + 1)
    for k in range(len(target) - 1, -1, -1):
        next_ascii[k] = k if ord(target[k]) < 128 else next_ascii[k + 1]
    states = {0}  # positions in the target the spelling so far may end at
    i, n = 0, len(spelled)
    while i < n and states:
        c = spelled[i]
        if c == "\ufffd" or "\ud800" <= c <= "\udfff":
            k = i
            while k < n and (spelled[k] == "\ufffd" or "\ud800" <= spelled[k] <= "\udfff"):
                k += 1
            nxt: set[int] = set()
            for at in states:  # a piece may also be the very character the text holds, or none of it yet
                hi = min(at + k - i, next_ascii[at])
                if hi - at > _MAX_READINGS or len(nxt) > _MAX_READINGS:
                    return False  # pieces that may stand for so many runs of the text say nothing checkable
                nxt.update(range(at, hi + 1))
            states, i = nxt, k
            continue
        states = {at + 1 for at in states if at < len(target) and target[at] == c}
        i += 1
    return len(target) in states


def logprob_tokens(logprobs: Any, key: str) -> list[str] | None:
    """The tokens of ``logprobs[key]`` (chat: a list of {"token": ...}; completions' ``tokens``: strings), or None."""
    if not isinstance(logprobs, dict):
        return None
    entries = logprobs.get(key)
    if not isinstance(entries, list):
        return None
    out = []
    for e in entries:
        tok = e.get("token") if isinstance(e, dict) else e
        if not isinstance(tok, str):
            return None
        out.append(tok)
    return out


def check_logprobs(logprobs: Any, where: str, texts: Mapping[str, str]) -> None:
    """The logprobs tokens of each key (``content``, ``refusal``, completions' ``tokens``) spell that text, and so do
    their bytes; UnreadableError otherwise."""
    for key, text in texts.items():
        tokens = logprob_tokens(logprobs, key)
        if tokens is not None and not tokens_agree(tokens, text):
            raise UnreadableError(f"{where}.logprobs.{key} spells a text other than the answer's")
        check_token_bytes(logprobs.get(key) if isinstance(logprobs, dict) else None, f"{where}.logprobs.{key}", text)


def check_token_list(entries: Any, where: str, text: str) -> None:
    """A list of logprobs entries beside one text (a content part's ``logprobs``, a Responses ``output_text`` part's
    or delta event's): its tokens spell (a part of) the text, and so do their bytes; UnreadableError otherwise.
    Anything but a list of entries is left to the field's rule (:func:`token`)."""
    if not isinstance(entries, list):
        return
    tokens = logprob_tokens({"content": entries}, "content")
    if tokens is not None and not tokens_agree(tokens, text):
        raise UnreadableError(f"{where} spells a text other than the answer's")
    check_token_bytes(entries, where, text)


def _piece(token: str) -> bool:
    """A token that holds a piece of a character (U+FFFD, ``bytes:\\x..``, half a surrogate pair): its bytes are
    that piece, not its own UTF-8."""
    return "\ufffd" in token or bool(_BYTE_TOKEN.search(token)) or any("\ud800" <= c <= "\udfff" for c in token)


def check_token_bytes(entries: Any, where: str, text: str | None = None) -> None:
    """The ``bytes`` of logprobs entries (and of their ``top_logprobs``) say what their tokens say: a client rebuilds
    the text from the bytes (OpenAI's documented way), so bytes that say another word are text nobody checked. Each
    whole token's bytes are its UTF-8; a token that holds a piece of a character has bytes of its own, and all the
    entries' bytes together, decoded, spell (a part of) ``text`` as the tokens must."""
    if not isinstance(entries, list):
        return
    joined = bytearray()
    for k, e in enumerate(entries):
        if not isinstance(e, dict):
            continue
        tok, raw = e.get("token"), e.get("bytes")
        if raw is not None:
            if not (isinstance(raw, list) and all(type(b) is int and 0 <= b < 256 for b in raw)):
                raise UnreadableError(f"{where}[{k}].bytes are not a list of bytes")
            if isinstance(tok, str) and not _piece(tok) and bytes(raw) != tok.encode("utf-8"):
                raise UnreadableError(f"{where}[{k}].bytes are not the bytes of its token")
            if isinstance(tok, str) and len(raw) > 4 * max(len(tok), 1):
                raise UnreadableError(f"{where}[{k}].bytes are more than its token's characters can hold")
            joined += bytes(raw)
        elif isinstance(tok, str):
            joined += tok.encode("utf-8", "surrogatepass")
        check_token_bytes(e.get("top_logprobs"), f"{where}[{k}].top_logprobs")
    if text is not None and joined and not tokens_agree([joined.decode("utf-8", "replace")], text):
        raise UnreadableError(f"{where}: the tokens' bytes spell a text other than the answer's")
