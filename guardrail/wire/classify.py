"""What a response is, by its content and not its label, and every answer text of a whole one.

- :class:`Sniffer`: fed a 2xx body's first pieces (as they come, still encoded), says whether it is an event stream
  or JSON. A JSON answer labelled ``text/event-stream`` is read as JSON, an event stream labelled JSON is read as
  one; the label decides only for a body that holds nothing but whitespace.
- :func:`read_answers`: every choice's text of a chat completion, completion or Responses API object. Two answer
  shapes at once (``choices`` and ``output``; a Responses label on chat choices; a choice with ``message`` and
  ``text``; chat messages and completion texts in one answer) are unreadable: a client may read either.
- :func:`request_strings`: the strings a request carried, which an answer may repeat (``echo=``).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal

from guardrail.errors import UnreadableError

from . import completions, responses
from . import fields as f
from .body import MAX_BODY_BYTES, Decoder, sniff
from .fields import MAX_CHOICES
from .chat import TOP_FIELDS, Answer, answer_shape, choice_text

Kind = Literal["sse", "json"]

_BLANK = b" \t\r\n\xef\xbb\xbf"


def is_event_stream(content_type: str | None) -> bool:
    return "text/event-stream" in (content_type or "").lower()


class Sniffer:
    """The kind of a 2xx body from its first decoded bytes: :meth:`feed` each piece as it comes; it returns None
    while the bytes so far are blank, then ``"sse"`` or ``"json"`` (a body that is neither is ``"json"``: its
    reader refuses it, with the reason). An encoding it cannot decode leaves the choice to the label: the reader
    chosen refuses the body for it."""

    def __init__(self, content_type: str | None, content_encoding: str | None = None) -> None:
        self.labelled_sse = is_event_stream(content_type)
        self.size = 0
        self._head = b""
        try:
            self._decoder: Decoder | None = Decoder(content_encoding)
        except UnreadableError:
            self._decoder = None

    def _label(self) -> Kind:
        return "sse" if self.labelled_sse else "json"

    def feed(self, data: bytes, more: bool) -> Kind | None:
        self.size += len(data)
        if self._decoder is None:
            return self._label()
        try:
            out = self._decoder.decode(data)
            if not more:
                out += self._decoder.flush()
        except UnreadableError:
            return self._label()
        self._head = (self._head + out).lstrip(_BLANK)[:64]
        kind = sniff(self._head)
        if kind == "":
            return None if more and self.size <= MAX_BODY_BYTES else self._label()
        return "sse" if kind == "sse" else "json"


def read_answers(body: Any, *, echo: Collection[str] | None = None) -> list[Answer]:
    """Every choice's text of a chat completion, completion or Responses API object; UnreadableError otherwise.
    ``echo``: the strings the request carried (:func:`request_strings`), which request echoes may repeat."""
    if not isinstance(body, dict):
        raise UnreadableError(f"the answer is a JSON {type(body).__name__}, not an object")
    if "choices" in body and ("output" in body or body.get("object") == "response"):
        raise UnreadableError("the answer carries two answer shapes at once (chat 'choices' and a Responses API "
                              "object)")
    if "output" in body or body.get("object") == "response":
        return [Answer(0, responses.response_text(body, echo))]
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise UnreadableError("the answer has no 'choices' list (not an OpenAI chat/completions/responses object)")
    if len(choices) > MAX_CHOICES:  # every choice costs a check: an upstream may not set the request's CPU cost
        raise UnreadableError(f"the answer has {len(choices)} choices; at most {MAX_CHOICES} are checked per answer")
    f.check(body, "the answer", TOP_FIELDS, echo, read=("choices",))
    out = []
    shapes = set()
    for i, choice in enumerate(choices):
        where = f"choices[{i}]"
        if not isinstance(choice, dict):
            raise UnreadableError(f"{where} is {f.describe(choice)}, not an object")
        shape = answer_shape(choice, where)
        shapes.add(shape)
        if shape == "message":
            out.append(Answer(i, choice_text(choice, where, echo)))
        elif shape == "text":
            out.append(Answer(i, completions.choice_text(choice, where, echo)))
        else:
            raise UnreadableError(f"{where} has neither 'message' nor 'text'")
    if len(shapes) > 1:
        raise UnreadableError("the answer mixes chat messages and completion texts (two answer shapes at once)")
    return out


def request_strings(request: Any) -> frozenset[str]:
    """Every string of a request body (parsed JSON): what an answer may echo without it being new text."""
    return f.strings(request)
