"""The judge: one OpenAI-compatible chat model asked for JSON, with the robustness the peers' users keep asking for.

- JSON: ``response_format={"type": "json_object"}`` where the endpoint takes it (turned off once if it refuses),
  tolerant parsing (code fences, text around the object), one repair turn that shows the model its parse error, then a
  clear :class:`JudgeError` for that row: never a silent NaN or a silent 0.
- Retries: the openai SDK's own bounded retries with backoff on 429/5xx and connection errors, honouring
  ``Retry-After`` (``max_retries``); a ``timeout`` per request.
- A concurrency limit (a semaphore shared by every thread using this judge).
- ``n`` polls in one request where the endpoint returns ``n`` choices, else the missing ones as more requests.
- A result cache keyed by (model, temperature, n, messages): a re-run costs nothing (SQLite, thread-safe).
- Token accounting per metric (:class:`Usage`).
- Prompts are versioned files (``guardrail/judge/prompts/*.md``: a ``version:`` header, ``---``, the template); a
  ``prompts_dir`` overrides any of them by file name.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guardrail.errors import GuardrailError, MissingDependencyError

PROMPTS = Path(__file__).with_name("prompts")


class JudgeError(GuardrailError):
    """The judge could not give a usable answer for this row (after the repair turn); the message says why."""


@dataclass
class Usage:
    """Tokens spent (cached calls count as calls but spend nothing)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0

    def add(self, other: "Usage") -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.calls += other.calls
        self.cached_calls += other.cached_calls

    def cost(self, prompt_per_million: float, completion_per_million: float) -> float:
        return (self.prompt_tokens * prompt_per_million + self.completion_tokens * completion_per_million) / 1e6

    def to_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens, "calls": self.calls,
                "cached_calls": self.cached_calls}


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    template: str

    def render(self, **values: Any) -> str:
        return self.template.format(**values)


def load_prompt(name: str, prompts_dir: Path | None = None) -> Prompt:
    for folder in ([prompts_dir] if prompts_dir else []) + [PROMPTS]:
        path = folder / f"{name}.md"
        if path.exists():
            head, sep, body = path.read_text(encoding="utf-8").partition("\n---\n")
            m = re.search(r"version:\s*(\S+)", head)
            if not sep or not m:
                raise JudgeError(f"prompt file {path} needs a 'version: N' header, a line '---', then the template")
            return Prompt(name, m.group(1), body.strip() + "\n")
    raise JudgeError(f"no prompt {name!r} in {prompts_dir or PROMPTS}")


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def parse_json_object(text: str | None) -> dict[str, Any]:
    """The JSON object in a model's reply: the whole text, a fenced block, or the outermost {...}."""
    if not text or not text.strip():
        raise ValueError("the reply is empty")
    candidates = [text.strip()]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    error = "no JSON object in the reply"
    for c in candidates:
        try:
            value = json.loads(c)
        except (json.JSONDecodeError, RecursionError) as exc:
            error = f"invalid JSON ({exc})"
            continue
        if isinstance(value, dict):
            return value
        error = f"the reply is a JSON {type(value).__name__}, not an object"
    raise ValueError(error)


class _Cache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("CREATE TABLE IF NOT EXISTS judgments (key TEXT PRIMARY KEY, value TEXT)")
            self._db.commit()

    def get(self, key: str) -> Any:
        with self._lock:
            row = self._db.execute("SELECT value FROM judgments WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO judgments VALUES (?, ?)", (key, json.dumps(value)))
            self._db.commit()


@dataclass
class JudgeReply:
    objects: list[dict[str, Any]]
    usage: Usage
    #: per choice: {token: probability} of the first score token, when the endpoint returned logprobs
    logprobs: list[dict[str, float]] = field(default_factory=list)


class Judge:
    """An LLM judge on the openai SDK (any ``base_url``: OpenAI, vLLM, Ollama, llama.cpp, our gateway)."""

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_concurrency: int = 8,
        cache_path: str | Path | None = None,
        prompts_dir: str | Path | None = None,
        json_mode: bool = True,
    ) -> None:
        if client is None:
            try:
                import openai
            except ImportError as exc:
                raise MissingDependencyError("LLM judges need the openai SDK: pip install 'rag-guardrail[openai]'") from exc
            client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout,
                                   max_retries=max_retries)
        self.client = client
        self.model = model
        self.temperature = temperature
        self.json_mode = json_mode
        self.prompts_dir = Path(prompts_dir) if prompts_dir else None
        self._slots = threading.BoundedSemaphore(max_concurrency)
        self._cache = _Cache(Path(cache_path)) if cache_path else None
        self._prompts: dict[str, Prompt] = {}

    def prompt(self, name: str) -> Prompt:
        if name not in self._prompts:
            self._prompts[name] = load_prompt(name, self.prompts_dir)
        return self._prompts[name]

    def ask(self, prompt_name: str, *, n: int = 1, temperature: float | None = None, logprobs: bool = False,
            check: Callable[[dict[str, Any]], None] | None = None, **values: Any) -> JudgeReply:
        """Render a prompt, ask for ``n`` JSON objects, validate each with ``check`` (raise to reject)."""
        prompt = self.prompt(prompt_name)
        messages = [{"role": "user", "content": prompt.render(**values)}]
        temp = self.temperature if temperature is None else temperature
        key = hashlib.sha256(json.dumps([self.model, prompt_name, prompt.version, temp, n, logprobs, messages],
                                        sort_keys=True).encode()).hexdigest()
        if self._cache is not None:
            hit = self._cache.get(key)
            if hit is not None:
                return JudgeReply(hit["objects"], Usage(calls=1, cached_calls=1), hit.get("logprobs", []))
        usage = Usage()
        objects: list[dict[str, Any]] = []
        probs: list[dict[str, float]] = []
        while len(objects) < n:
            want = n - len(objects)
            response = self._create(messages, want, temp, logprobs)
            usage.calls += 1
            if response.usage is not None:
                usage.prompt_tokens += response.usage.prompt_tokens or 0
                usage.completion_tokens += response.usage.completion_tokens or 0
            choices = _reply_choices(response, self.model)
            for choice in choices[:want]:
                objects.append(self._parse(messages, _content(choice, self.model), check, usage, temp))
                probs.append(_first_token_probs(choice) if logprobs else {})
        if self._cache is not None:
            self._cache.put(key, {"objects": objects, "logprobs": probs})
        return JudgeReply(objects, usage, probs)

    def _create(self, messages: list[dict[str, str]], n: int, temperature: float, logprobs: bool) -> Any:
        import openai

        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": temperature}
        if n > 1:
            kwargs["n"] = n
        if logprobs:
            kwargs.update(logprobs=True, top_logprobs=5)
        with self._slots:
            try:
                if self.json_mode:
                    try:
                        return self.client.chat.completions.create(**kwargs, response_format={"type": "json_object"})
                    except openai.BadRequestError as exc:
                        if "response_format" not in str(exc) and "json" not in str(exc).lower():
                            raise
                        self.json_mode = False  # the endpoint does not take it: tolerant parsing from now on
                return self.client.chat.completions.create(**kwargs)
            except openai.APITimeoutError as exc:
                raise JudgeError(f"the judge {self.model!r} did not answer in time ({exc}); raise --timeout") from None
            except openai.APIStatusError as exc:
                raise JudgeError(f"the judge endpoint answered {exc.status_code} after retries: {exc.message}") from None
            except openai.APIConnectionError as exc:
                base = getattr(self.client, "base_url", None)
                at = f" {base}" if base else ""
                raise JudgeError(f"the judge endpoint{at} is unreachable ({exc})") from None

    def _parse(self, messages: list[dict[str, str]], content: str | None, check: Callable[[dict[str, Any]], None] | None,
               usage: Usage, temperature: float) -> dict[str, Any]:
        try:
            obj = parse_json_object(content)
            if check:
                check(obj)
            return obj
        except (ValueError, KeyError, TypeError) as first:
            problem = str(first)
        # one repair turn: the model sees its reply and what was wrong with it
        repair = [*messages, {"role": "assistant", "content": content or ""},
                  {"role": "user", "content": f"That reply could not be used: {problem}. Reply again with only the "
                                              "JSON object, in the format asked for."}]
        response = self._create(repair, 1, temperature, False)
        usage.calls += 1
        if response.usage is not None:
            usage.prompt_tokens += response.usage.prompt_tokens or 0
            usage.completion_tokens += response.usage.completion_tokens or 0
        try:
            obj = parse_json_object(_content(_reply_choices(response, self.model)[0], self.model))
            if check:
                check(obj)
            return obj
        except (ValueError, KeyError, TypeError) as second:
            raise JudgeError(f"the judge {self.model!r} gave no usable JSON after a repair turn: {second} "
                             f"(first reply: {problem})") from None


def _reply_choices(response: Any, model: str) -> list[Any]:
    """The choices of a judge's reply; JudgeError for a reply with none (an empty list would ask again forever,
    round 56) or with no list at all."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        given = "null" if choices is None else type(choices).__name__ if not isinstance(choices, list) else "[]"
        raise JudgeError(f"the judge {model!r} answered with no choices ({given}): the endpoint is not a chat "
                         "completions API, or it failed without an error status")
    return choices


def _content(choice: Any, model: str) -> str | None:
    """A choice's message text; JudgeError for a choice with no message."""
    message = getattr(choice, "message", None)
    if message is None:
        raise JudgeError(f"the judge {model!r} answered a choice with no message")
    content = getattr(message, "content", None)
    return content if isinstance(content, str) or content is None else str(content)


def _first_token_probs(choice: Any) -> dict[str, float]:
    """Probabilities of the candidate digits at the first digit token of the reply (for G-Eval's weighting)."""
    import math

    content = getattr(getattr(choice, "logprobs", None), "content", None) or []
    for tok in content:
        if tok.token.strip().isdigit():
            out = {t.token.strip(): math.exp(t.logprob) for t in (tok.top_logprobs or []) if t.token.strip().isdigit()}
            return out or {tok.token.strip(): math.exp(tok.logprob)}
    return {}


def require(obj: Mapping[str, Any], key: str, kind: type) -> Any:
    """``obj[key]`` of type ``kind`` or a ValueError naming what is wrong (used by the metrics' checks)."""
    if key not in obj:
        raise ValueError(f"the JSON object has no {key!r}")
    value = obj[key]
    if kind in (int, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{key!r} must be a number, got {type(value).__name__}")
        return kind(value)
    if not isinstance(value, kind):
        raise ValueError(f"{key!r} must be {kind.__name__}, got {type(value).__name__}")
    return value
