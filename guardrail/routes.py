"""One path normalizer: every spelling of a route that some HTTP client or server would read as that route maps to
the same canonical path, so a guarded route cannot be reached by a spelling the guard did not match.

:func:`normalize_path` implements RFC 3986 section 6 (syntax-based normalization) and what common clients and
servers do beyond it, applied until nothing changes:

- percent-decoding of **every** escape, not only of unreserved characters (``%2e`` -> ``.``, ``%2f`` -> ``/``,
  ``%5c`` -> ``\\``; upper- and lower-case hex alike), repeated for double encodings (``%252e``), at most
  :data:`MAX_DECODE_ROUNDS` times (more is refused); IIS-style ``%uXXXX`` escapes too. Servers such as uvicorn,
  Starlette and most frameworks route on the fully decoded path, so an encoded slash is a slash here;
- dot-segment removal (RFC 3986 5.2.4: ``/./``, ``/../``, a ``..`` never climbs above the root), also of segments
  that Windows servers read as dots (``...``, ``.. ``: trailing dots and spaces of a segment are dropped);
- backslashes are slashes (the WHATWG URL parser and IIS do this), runs of slashes are one slash, a trailing slash is
  dropped;
- ``;`` path parameters are dropped from each segment (``/chat;x=1/completions``: Tomcat, Jetty and Spring do this);
- NFKC compatibility forms (a fullwidth solidus or full stop is a slash or a dot, as Windows "best fit" mapping
  reads them).

The result keeps the case of its letters: routes are case-sensitive, as in the OpenAI API and the common upstreams
(vLLM, llama.cpp, Ollama, OpenAI); whether a case variant of a guarded route is guarded or refused is the caller's
choice (:func:`match_route` finds it either way). A path that cannot be read (not UTF-8 after decoding, control
characters, over :data:`MAX_PATH_LENGTH` characters, encoded more than :data:`MAX_DECODE_ROUNDS` times) raises
:class:`PathError` with the HTTP status to answer (400 or 414).

The canonical path is a fixed point (``normalize_path(p) == p``) and :func:`encode_path` turns it into a request
target that any server decodes back to exactly that path: what is forwarded is what was matched.

This module knows nothing else of guardrail (text layer).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

__all__ = ["MAX_DECODE_ROUNDS", "MAX_PATH_LENGTH", "PathError", "encode_path", "match_route", "normalize_path",
           "request_path"]

#: a request path longer than this (raw, before decoding) is refused with 414
MAX_PATH_LENGTH = 4096
#: percent-decoding rounds; a path still changing after this many (``%25252e...``) is refused with 400
MAX_DECODE_ROUNDS = 4

_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})|%[uU]([0-9A-Fa-f]{4})")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\x80-\x9f]")
_SLASHES = re.compile(r"[/\\]+")


class PathError(ValueError):
    """A request path that cannot be normalized; ``status`` is the HTTP status to answer with (400 or 414)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _decode_once(path: str) -> str:
    """Decode every ``%XX`` (as UTF-8 bytes) and ``%uXXXX`` escape once."""
    if "%" not in path:
        return path
    out = bytearray()
    pos = 0
    for m in _ESCAPE.finditer(path):
        out += path[pos : m.start()].encode("utf-8", "surrogatepass")
        if m.group(1) is not None:
            out.append(int(m.group(1), 16))
        else:
            out += chr(int(m.group(2), 16)).encode("utf-8", "surrogatepass")
        pos = m.end()
    out += path[pos:].encode("utf-8", "surrogatepass")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise PathError("the request path is not valid UTF-8 once percent-decoded") from None


def _segments(path: str) -> list[str]:
    out: list[str] = []
    for seg in _SLASHES.split(path):
        seg = seg.split(";", 1)[0]  # path parameters
        if seg.strip(". ") == "":  # "", ".", "..", and what Windows servers read as dots ("...", ".. ")
            if seg.count(".") >= 2 and out:
                out.pop()
            continue
        out.append(seg.rstrip(". "))  # "completions." and "completions " are "completions" to Windows servers
    return out


def _normalize_once(path: str) -> str:
    path = unicodedata.normalize("NFKC", path)
    return "/" + "/".join(_segments(path))


def normalize_path(path: str | bytes, *, max_length: int = MAX_PATH_LENGTH) -> str:
    """The canonical form of a request path (without its query string), see the module docs.

    >>> normalize_path("/v1/chat/%2e/completions"), normalize_path("/v1/x/..%2Fchat//completions/")
    ('/v1/chat/completions', '/v1/chat/completions')
    >>> normalize_path("/v1\\\\chat;jsessionid=1/%252e/completions")
    '/v1/chat/completions'
    """
    if isinstance(path, (bytes, bytearray)):
        try:
            path = bytes(path).decode("utf-8")
        except UnicodeDecodeError:
            raise PathError("the request path is not valid UTF-8") from None
    if len(path) > max_length:
        raise PathError(f"the request path is {len(path):,} characters long, over the limit of {max_length:,}", 414)
    current = path
    for _ in range(MAX_DECODE_ROUNDS + 1):
        decoded = _decode_once(current)
        if _CONTROL.search(decoded):
            raise PathError("the request path holds control characters once percent-decoded")
        nxt = _normalize_once(decoded)
        if nxt == current:
            return nxt
        current = nxt
    raise PathError(f"the request path is percent-encoded more than {MAX_DECODE_ROUNDS} times over")


def encode_path(canonical: str) -> str:
    """A canonical path as a request target: escapes only what a path cannot hold as is (``%``, ``?``, ``#``,
    spaces, non-ASCII), so one decoding, by any server, gives back exactly ``canonical``."""
    return quote(canonical, safe="/!$&'()*+,=:@-._~")


def request_path(scope: Mapping[str, Any]) -> str:
    """The canonical path of an ASGI request: from ``raw_path`` (the bytes the client sent) when the server gives it,
    else from ``path``. Raises :class:`PathError`."""
    raw = scope.get("raw_path")
    if isinstance(raw, (bytes, bytearray)) and raw:
        raw = bytes(raw).split(b"?", 1)[0]  # some servers leave the query in raw_path
        return normalize_path(raw)
    return normalize_path(str(scope.get("path") or "/"))


def match_route(path: str, routes: Iterable[str], *, case_sensitive: bool = False) -> str | None:
    """The route of ``routes`` that the canonical ``path`` names (routes are normalized too), or None. Without
    ``case_sensitive`` a case variant (``/V1/Chat/Completions``) matches its route."""
    key = path if case_sensitive else path.casefold()
    for route in routes:
        norm = normalize_path(route)
        if (norm if case_sensitive else norm.casefold()) == key:
            return norm
    return None


def routed_path(scope: Mapping[str, Any], path: str) -> str:
    """``path`` without the ``root_path`` a Mount (or a proxy) put in front of the app, as Starlette's router strips
    it: a middleware mounted at ``/api`` with ``routes=["/ask"]`` guards ``/api/ask``."""
    root = str(scope.get("root_path") or "")
    if not root:
        return path
    try:
        prefix = normalize_path(root).rstrip("/")
    except PathError:
        return path
    if prefix and path.casefold().startswith(prefix.casefold() + "/"):
        return path[len(prefix):]
    return path
