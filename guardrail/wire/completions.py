"""Legacy completions (``/v1/completions``): a choice's ``text``, in a whole answer or a stream chunk (both have
the same choice). Its other fields follow the chat rules (:data:`~guardrail.wire.chat.CHOICE_FIELDS`), ``logprobs``
(tokens, offsets, top tokens keyed by token) included."""

from __future__ import annotations

from typing import Any

from . import fields as f
from .chat import CHOICE_FIELDS


def choice_text(choice: dict[str, Any], where: str, echo: f.Echo = None) -> str:
    """The text of a completions choice (``text``); every other field text-free or unreadable."""
    f.check(choice, where, CHOICE_FIELDS, echo, read=("text",))
    text = f.text(choice.get("text"), f"{where}.text")
    if choice.get("logprobs") is not None:
        f.check_logprobs(choice["logprobs"], where, {"tokens": text})  # the tokens spell the text
    return text
