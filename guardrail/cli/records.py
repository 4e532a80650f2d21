"""Reading rows: ``guardrail check`` records (JSON, a list, or JSON Lines) and ``guardrail eval`` rows.

A record is ``{"id", "question", "contexts": [str], "response"}`` (optional ``ground_truth``); the field names of Ragas
(``user_input``, ``retrieved_contexts``, ``response``, ``reference``) and of DeepEval (``input``, ``actual_output``,
``retrieval_context``, ``expected_output``) are read too. Every error names the file and the line (or list item).
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from guardrail.errors import InputError

__all__ = ["FIELDS", "Record", "decode", "read_path", "read_records", "read_rows", "to_record"]

#: each field of a record, and the names it is read from (ours, then Ragas, then DeepEval): the first present wins
FIELDS: dict[str, tuple[str, ...]] = {
    "question": ("question", "user_input", "input"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context"),
    "response": ("response", "actual_output"),
    "ground_truth": ("ground_truth", "reference", "expected_output"),
}


@dataclass(frozen=True, slots=True)
class Record:
    id: Any
    question: str
    contexts: list[str]
    response: str
    ground_truth: str | None
    #: the line of a JSON Lines file, or the item number of a JSON list (1-based)
    line: int
    #: "line 3" or "item 3": where the record stands, for messages
    where: str = ""


def decode(data: bytes, name: str) -> str:
    """UTF-8 (a BOM is dropped); an error names the line of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"{name}: line {line} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "re-encode the file as UTF-8"
        ) from None


def _field(obj: dict[str, Any], name: str) -> tuple[str, Any]:
    """(the key it was found under, its value); (our name, None) when absent."""
    for key in FIELDS[name]:
        if key in obj:
            return key, obj[key]
    return name, None


def _also(name: str) -> str:
    return " or ".join(repr(k) for k in FIELDS[name][1:])


def _contexts(obj: dict[str, Any], where: str, max_context_chars: int) -> list[str]:
    key, contexts = _field(obj, "contexts")
    if contexts is None:
        raise InputError(f"{where}: 'contexts' is missing (also read from {_also('contexts')}); give the retrieved "
                         "chunks as a list of strings ([] for none)")
    if isinstance(contexts, str):
        raise InputError(f"{where}: {key!r} must be a list of strings, got one string; wrap it: [\"...\"]")
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        raise InputError(f"{where}: {key!r} must be a list of strings")
    total = sum(len(c) for c in contexts)
    if total > max_context_chars:
        raise InputError(
            f"{where}: contexts total {total:,} characters, over the limit of {max_context_chars:,}; "
            "pass --max-context-chars to raise it"
        )
    return contexts


def _record(obj: Any, where: str, line: int, max_context_chars: int) -> Record:
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object with question, contexts and response, got {type(obj).__name__}")
    key, response = _field(obj, "response")
    if not isinstance(response, str):
        missing = "" if key in obj else f" (missing; also read from {_also('response')})"
        raise InputError(f"{where}: {key!r} must be a string{missing}")
    key, question = _field(obj, "question")
    question = "" if question is None else question
    if not isinstance(question, str):
        raise InputError(f"{where}: {key!r} must be a string")
    contexts = _contexts(obj, where, max_context_chars)
    key, truth = _field(obj, "ground_truth")
    if truth is not None and not isinstance(truth, str):
        raise InputError(f"{where}: {key!r} must be a string")
    position = where.rpartition(": ")[2]
    return Record(obj.get("id", line), question, contexts, response, truth, line, position)


def to_record(obj: Any, where: str, line: int, *, max_context_chars: int) -> Record:
    """One record from a decoded JSON object (a row of a Ray Dataset, ...), read and refused as a file's rows are;
    ``where`` names it in messages, ``line`` is its position (its id when it has none)."""
    return _record(obj, where, line, max_context_chars)


def _lines(text: str) -> list[str]:
    """JSON Lines' lines: split at LF (and CRLF) only. ``str.splitlines`` also splits at U+2028, U+2029, U+0085 and
    other breaks that JSON strings may hold unescaped (``json.dumps(..., ensure_ascii=False)`` writes them so)."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def _unreadable(exc: ValueError | RecursionError, where: str) -> InputError:
    """What is wrong with JSON that ``json.loads`` refused, naming ``where``: invalid JSON, a number past Python's
    digit limit, nesting past its recursion limit (never a traceback, round 49)."""
    if isinstance(exc, json.JSONDecodeError):
        return InputError(f"{where}: invalid JSON ({exc.msg} at column {exc.colno})")
    if isinstance(exc, RecursionError):
        return InputError(f"{where}: the JSON is nested too deeply to read; flatten the row")
    # an integer longer than sys.get_int_max_str_digits() allows
    return InputError(f"{where}: the JSON holds a number too long to read ({exc}); write it as a string")


def _json(text: str, where: str) -> Any:
    """``text`` parsed as JSON, or an :class:`InputError` that names ``where`` and says what is wrong."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise _unreadable(exc, where) from None


def read_records(stream: BinaryIO, name: str, *, max_context_chars: int) -> list[Record]:
    """JSON (an object or a list of objects) or JSONL. Errors name the file and line."""
    text = decode(stream.read(), name)
    stripped = text.lstrip()
    if not stripped:
        raise InputError(f"{name}: no input")
    if stripped[0] == "[":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{name}: line {exc.lineno}: invalid JSON ({exc.msg})") from None
        except (ValueError, RecursionError) as exc:
            raise _unreadable(exc, name) from None
        return [_record(o, f"{name}: item {i}", i, max_context_chars) for i, o in enumerate(data, 1)]
    if stripped[0] == "{":
        try:
            data = json.loads(text)
            return [_record(data, f"{name}: line 1", 1, max_context_chars)]
        except (ValueError, RecursionError):  # (JSONDecodeError is a ValueError)
            pass  # not one JSON document: JSON Lines, read below line by line, which names a bad line and what is wrong
    records = []
    for n, line in enumerate(_lines(text), 1):
        if not line.strip():
            continue
        obj = _json(line, f"{name}: line {n}")
        records.append(_record(obj, f"{name}: line {n}", n, max_context_chars))
    return records


def read_path(file: str, *, max_context_chars: int) -> list[Record]:
    """``guardrail check``'s input: a file, or ``-`` for stdin."""
    import sys

    if file == "-":
        return read_records(sys.stdin.buffer, "<stdin>", max_context_chars=max_context_chars)
    path = Path(file)
    if path.is_dir():
        raise InputError(f"{path} is a directory; give a JSON or JSON Lines file (or - for stdin)")
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    with path.open("rb") as fh:
        return read_records(fh, str(path), max_context_chars=max_context_chars)


def read_rows(path: Path, subset: str | None, limit: int | None) -> list[dict[str, Any]]:
    """``guardrail eval``'s rows: JSON list or JSON Lines, optionally gzipped; ``subset`` keeps rows where that field
    is true, ``limit`` the first rows."""
    if not path.is_file():
        raise InputError(f"{path}: no such file" + (" (it is a directory)" if path.is_dir() else ""))
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    text = decode(raw, str(path))
    if text.lstrip().startswith("["):
        rows = _json(text, str(path))
    else:
        rows = []
        for n, line in enumerate(_lines(text), 1):
            if line.strip():
                rows.append(_json(line, f"{path}: line {n}"))
    if not all(isinstance(r, dict) for r in rows):
        raise InputError(f"{path}: every row must be a JSON object")
    if subset:
        rows = [r for r in rows if r.get(subset)]
    return list(rows[:limit] if limit else rows)  # rows came from JSON (Any): a list of dicts, checked above
