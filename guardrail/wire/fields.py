"""Field rules shared by the readers: what a field that is not answer text may hold.

Every reader knows, per object, which fields are answer text (it reads them) and which are text-free (ids, enums,
counts, token lists, base64 data). A text-free field is checked by its rule; a field a reader does not know is
accepted only when it holds no string at all (numbers, booleans, null, at any depth, under keys that are
:func:`atom`\\ s). Anything else makes the body or event unreadable: a reader that lets an unknown string through
delivers text nobody checked.

Rules (``rule(value, where, sent)``; ``sent`` is the set of strings the request itself carried, or None):

- :func:`atom`: every string (and key) at any depth is one token of no whitespace, separator, control or format
  character, at most 256 characters (``id``, ``model``, ``finish_reason``, ``usage``, content-filter results);
- :func:`token`: a logprobs token: at most 64 characters and one word;
- :func:`base64`: opaque data (``audio.data``);
- :func:`skip`: known, and not the answer (a reasoning trace);
- :func:`echo`: a field that repeats the request (the Responses API's ``instructions``, ``tools``, ``metadata``):
  every string is an atom or a string the request carried;
- :func:`unknown`: the rule of every other field.

Messages name fields by their path and never quote the strings they hold: a reason is shown to the client.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

from guardrail.errors import UnreadableError

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


def is_atom(s: str) -> bool:
    """One token: no whitespace, separator, control or format character; at most 256 characters."""
    if len(s) > ATOM_MAX:
        return False
    if _PLAIN.fullmatch(s):
        return True
    return not any(ch.isspace() or unicodedata.category(ch)[0] in "ZC" for ch in s)


def is_token(s: str) -> bool:
    """A logprobs token: at most 64 characters and one word (leading or trailing whitespace allowed)."""
    return len(s) <= TOKEN_MAX and len(s.split()) <= 1


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
            else:
                for i, x in enumerate(v):
                    stack.append((x, f"{w}[{i}]", depth + 1))


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
    for path, s, _ in walk(value, where):
        if not is_atom(s):
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


def tokens_agree(tokens: list[str], text: str) -> bool:
    """The logprobs tokens spell (a part of) ``text``: joined, with whitespace and the pieces of characters a tokenizer
    splits across tokens (U+FFFD, ``bytes:\\x..``) set aside, their ASCII characters are a run of the text's, and
    their other characters are among the text's. A token list that spells anything else is text a client can show
    (token-highlighting views) that nobody checked."""
    joined = "".join(tokens)
    if joined == text or not joined.strip():
        return True
    spelled = "".join(_BYTE_TOKEN.sub("", joined).replace("\ufffd", "").split())
    target = "".join(text.split())
    if _ascii(spelled) not in _ascii(target):
        return False
    return not (Counter(c for c in spelled if ord(c) >= 128) - Counter(c for c in target if ord(c) >= 128))


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
    """The logprobs tokens of each key (``content``, ``refusal``, completions' ``tokens``) spell that text;
    UnreadableError otherwise."""
    for key, text in texts.items():
        tokens = logprob_tokens(logprobs, key)
        if tokens is not None and not tokens_agree(tokens, text):
            raise UnreadableError(f"{where}.logprobs.{key} spells a text other than the answer's")
