"""Response bodies as bytes: strict JSON loading, ``Content-Encoding`` decoding, sniffing JSON from SSE, size limits."""

from __future__ import annotations

import json
import zlib
from typing import Any

from guardrail.errors import UnreadableError

#: an answer (or one SSE event) larger than this is not read
MAX_BODY_BYTES = 32 * 1024 * 1024


# --------------------------------------------------------------------------- JSON bodies
class _DuplicateKey(ValueError):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKey
    return out


#: JSON longer than this has its numbers made by Python calls (see :func:`loads`)
_LONG_JSON_BYTES = 256 * 1024


def _int(text: str) -> int:
    return int(text)


def _float(text: str) -> float:
    return float(text)


class _NonFinite(Exception):
    pass


def _no_constant(name: str) -> Any:
    """``NaN``, ``Infinity``, ``-Infinity``: Python's reader takes them, JSON and JavaScript's ``JSON.parse`` do not."""
    raise _NonFinite(name)


def loads(data: bytes) -> Any:
    """Strict JSON: UTF-8, one value, no trailing bytes, bounded nesting, no key twice in an object (parsers differ
    on which one wins: the guard would read one and the client the other).

    A long text (read in a worker thread by the integrations) has its numbers made by Python calls: the C parser holds
    the GIL for as long as it reads an array of numbers (2 s for 15M zeros, 4 s for 7M floats), so the event loop
    would wait for it all the same; each call lets the loop run (3x slower for such an array, in the thread)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableError(f"the answer is not valid UTF-8 (byte offset {exc.start})") from None
    if text.startswith("\ufeff"):  # a byte order mark: skipped by WHATWG's UTF-8 decode, requests and httpx alike
        text = text[1:]
    try:
        if len(data) > _LONG_JSON_BYTES:
            return json.loads(text, object_pairs_hook=_unique, parse_int=_int, parse_float=_float,
                              parse_constant=_no_constant)
        return json.loads(text, object_pairs_hook=_unique, parse_constant=_no_constant)
    except _DuplicateKey:
        raise UnreadableError("the answer's JSON has an object with the same key twice") from None
    except _NonFinite as exc:
        raise UnreadableError(f"the answer's JSON holds {exc.args[0]}, which is no JSON: Python reads it, "
                              "JavaScript's JSON.parse refuses it, so clients would not read the same answer") from None
    except json.JSONDecodeError as exc:
        raise UnreadableError(f"the answer is not valid JSON ({exc.msg} at offset {exc.pos})") from None
    except RecursionError:
        raise UnreadableError("the answer's JSON is nested too deeply to read") from None
    except ValueError:  # an integer past Python's digit limit (sys.get_int_max_str_digits)
        raise UnreadableError("the answer's JSON holds a number too long to read") from None


# --------------------------------------------------------------------------- content encodings
#: the charsets whose reading of a body is the guard's (UTF-8 and its ASCII subset)
_UTF8_CHARSETS = frozenset({"utf-8", "utf8", "us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us"})


def check_charset(content_type: str | None) -> None:
    """Refuse (:class:`UnreadableError`) an answer whose ``Content-Type`` declares a charset other than UTF-8.

    The guard reads every answer as UTF-8; a client that honours ``charset=utf-7`` (requests, httpx, aiohttp) reads
    the same bytes as other text ("+ACA-..." is a hidden sentence in UTF-7), so the guard's reading and the client's
    must be the same one or the answer is not delivered as checked."""
    for param in (content_type or "").split(";")[1:]:
        name, _, value = param.partition("=")
        # as lenient parsers read a name: quotes and spaces around it dropped ("'charset'=utf-7"), and RFC 2231's
        # extended and continued forms ("charset*=''utf-7", "charset*0=utf; charset*1=-7") refused outright
        key = name.strip().strip('"').strip("'").strip().lower()
        if not key.startswith("charset"):
            continue
        charset = value.strip().strip('"').strip("'").strip().lower()
        if key != "charset" or charset not in _UTF8_CHARSETS:
            raise UnreadableError(f"the answer is labelled charset={value.strip()!s}, and guardrail reads answers as "
                                  "UTF-8 only (a client would decode the bytes as other text than the guard checked); "
                                  "have the upstream send UTF-8")


class Decoder:
    """Incremental ``Content-Encoding`` decoder (identity, gzip, deflate in zlib or raw form); errors raise
    :class:`UnreadableError`. Output is bounded to ``limit`` bytes (a zip bomb is unreadable, not a crash)."""

    def __init__(self, encoding: str | None, limit: int = MAX_BODY_BYTES) -> None:
        # a list of codings, in the order they were applied ("identity, gzip": two header fields, read as one):
        # identity changes nothing; one other coding is decoded, several in a row are refused below
        codings = [c.strip() for c in (encoding or "").lower().split(",") if c.strip() not in ("", "identity")]
        enc = codings[0] if len(codings) == 1 else ", ".join(codings) or "identity"
        self.encoding = enc
        self.limit = limit
        self._out = 0
        self._raw_deflate = False
        self._pending = b""
        if enc == "identity":
            self._z = None
        elif enc in ("gzip", "x-gzip"):
            self._z = zlib.decompressobj(wbits=31)
        elif enc == "deflate":
            self._z = zlib.decompressobj(wbits=15)
        else:
            raise UnreadableError(f"the answer is compressed with {encoding!r}, which guardrail cannot read; "
                                  "ask the upstream for identity, gzip or deflate")

    def decode(self, data: bytes) -> bytes:
        if self._z is None or not data:
            self._out += len(data)  # an uncompressed answer has the same bound as one that inflates
            if self._out > self.limit:
                raise UnreadableError(f"the answer is over {self.limit:,} bytes")
            return data
        if self._z.eof:  # bytes after the end of the compressed data
            return self._after_end(data)
        try:
            out = self._z.decompress(data, self.limit - self._out + 1)
        except zlib.error as exc:
            if self.encoding == "deflate" and not self._raw_deflate and self._out == 0:
                # many servers send raw deflate (no zlib header) as "deflate"
                self._raw_deflate = True
                self._z = zlib.decompressobj(wbits=-15)
                return self.decode(data)
            raise UnreadableError(f"the answer's {self.encoding} data is corrupt ({exc})") from None
        self._out += len(out)
        if self._out > self.limit or self._z.unconsumed_tail:
            raise UnreadableError(f"the decompressed answer is over {self.limit:,} bytes")
        if self._z.eof and self._z.unused_data:
            return out + self._after_end(self._z.unused_data)
        return out

    def _after_end(self, data: bytes) -> bytes:
        """Bytes after a complete compressed stream: gzip's next member (a gzip body may hold several, which
        browsers and curl decode one after another; so does the guard, or it would miss what they show); anything
        else is unreadable, never silently dropped."""
        self._pending += data
        if self.encoding not in ("gzip", "x-gzip"):
            raise UnreadableError(f"the answer has data after the end of its {self.encoding} stream")
        if len(self._pending) < 2:
            return b""  # maybe the first byte of the next member's header: wait
        if not self._pending.startswith(b"\x1f\x8b"):
            raise UnreadableError("the answer has data after the end of its gzip stream that is no gzip member")
        rest, self._pending = self._pending, b""
        self._z = zlib.decompressobj(wbits=31)
        return self.decode(rest)

    def flush(self) -> bytes:
        if self._z is None:
            return b""
        try:
            out = self._z.flush()
        except zlib.error as exc:
            raise UnreadableError(f"the answer's {self.encoding} data is corrupt ({exc})") from None
        if not self._z.eof or self._pending:
            raise UnreadableError(f"the answer's {self.encoding} data is truncated")
        return out


def sniff(prefix: bytes) -> str | None:
    """'sse', 'json' or None (unknown) from the first bytes of a decoded body; '' while there are too few."""
    head = prefix.lstrip(b" \t\r\n\xef\xbb\xbf")
    if not head:
        return ""
    if head[:1] in (b"{", b"["):
        return "json"
    for field in (b"data", b"event", b"id", b"retry", b":"):
        if head.startswith(field):
            return "sse"
        if len(head) < len(field) and field.startswith(head):
            return ""
    return None
