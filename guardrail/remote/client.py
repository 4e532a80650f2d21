"""Remote scorers: the NLI and embedding scorers' forward passes on a shared scorer pool, by URL.

>>> nli, embedder = scorers_from_url("http://127.0.0.1:8100")                # doctest: +SKIP
>>> Evaluator(nli=nli, embedder=embedder)                                     # doctest: +SKIP

:class:`RemoteNLIScorer` and :class:`RemoteEmbeddingScorer` are an :class:`~guardrail.scorers.nli.NLIScorer` and an
:class:`~guardrail.scorers.embedding.EmbeddingScorer` whose forward passes run on a server speaking the Open Inference
Protocol v2 (``guardrail serve-scorer``, its Ray Serve deployment, or MLServer / KServe / Triton hosting the models,
see :mod:`guardrail.remote.protocol`). The tokenizer stays local (the package ships it), so sentence splitting and
premise windowing are the same as in process; labels, ``max_length`` and the model's threshold and calibration come
from the server's model metadata when it gives them (else from the local model directory). A server whose tokenizer
differs from the local one is refused at load.

Requests go through one pooled ``httpx.Client`` with a timeout per attempt and bounded retries (connection errors,
timeouts, 429 and 5xx; inference is idempotent). Anything else (a 4xx, a body of the wrong shape, length or type) is
a :class:`~guardrail.errors.RemoteScorerError` at once, naming the URL and what went wrong: the guard applies
``on_error`` to it (block mode: the answer is blocked, never delivered unchecked).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import httpx
import numpy as np

from guardrail.errors import ConfigurationError, InputError, RemoteScorerError
from guardrail.remote.protocol import EMBEDDING, NLI, ProtocolError, infer_request, read_output, tokenizer_sha256
from guardrail.scorers.backends import Backend
from guardrail.scorers.cache import pair_key, text_key
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.scorers.hub import resolve_model_dir
from guardrail.scorers.nli import LabelMap, NLIScorer, default_nli_model
from guardrail.scorers.tokenizer import Tokenizer

__all__ = ["OIPClient", "RemoteEmbeddingScorer", "RemoteNLIScorer", "ScorerObserver", "scorers_from_url"]


class ScorerObserver(Protocol):
    """Told of every HTTP attempt (e.g. :class:`guardrail.telemetry.Telemetry`)."""

    def scorer_request(self, scorer: str, seconds: float, error: str | None = None) -> None: ...


class _Retry(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class OIPClient:
    """A pooled HTTP client of one OIP v2 server: ``timeout`` seconds per attempt, ``retries`` more attempts after a
    connection error, a timeout, a 429 or a 5xx (``backoff`` seconds, doubling, between them). Thread-safe."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 10.0,
        retries: int = 2,
        backoff: float = 0.05,
        observer: ScorerObserver | None = None,
        max_connections: int = 64,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        parts = httpx.URL(url)
        if parts.scheme not in ("http", "https") or not parts.host:
            raise ConfigurationError(f"scorer URL {url!r} is not an http(s) URL; give the scorer server's base URL, "
                                     "e.g. http://127.0.0.1:8100")
        if timeout <= 0 or retries < 0 or backoff < 0:
            raise ConfigurationError(f"scorer client: timeout must be > 0, retries and backoff >= 0 (got {timeout}, "
                                     f"{retries}, {backoff})")
        self.url = url.rstrip("/")
        self.retries = retries
        self.backoff = backoff
        self.observer = observer
        self._http = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 5.0)), transport=transport,
            limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections),
        )

    def __repr__(self) -> str:
        return f"OIPClient({self.url!r})"

    def close(self) -> None:
        self._http.close()

    def _error(self, model: str, reason: str, what: str) -> RemoteScorerError:
        return RemoteScorerError(f"remote scorer {self.url} (model {model!r}): {what}", url=self.url, model=model,
                                 reason=reason)

    def _attempt(self, model: str, method: str, path: str, body: Any) -> Any:
        """One HTTP exchange: the JSON body of a 200, or _Retry (retryable), or RemoteScorerError (final)."""
        try:
            r = self._http.request(method, self.url + path, json=body)
        except httpx.TimeoutException as exc:
            raise _Retry("timeout", f"no answer in time ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise _Retry("connect", f"cannot connect ({type(exc).__name__}: {exc})") from None
        if r.status_code != 200:
            detail = f"HTTP {r.status_code}: {_error_text(r)}"
            if r.status_code >= 500 or r.status_code == 429:
                raise _Retry("status", detail)
            raise self._error(model, "status", f"refused the request ({detail})")
        try:
            return r.json()
        except (ValueError, UnicodeDecodeError):
            raise self._error(model, "protocol", f"answered 200 with a body that is not JSON: {r.text[:200]!r}") from None

    def _call(self, model: str, method: str, path: str, body: Any, read: Any) -> Any:
        attempts = self.retries + 1
        last = ""
        for attempt in range(attempts):
            start = time.perf_counter()
            try:
                out = read(self._attempt(model, method, path, body))
            except _Retry as exc:
                self._observe(model, start, exc.reason)
                last = exc.detail
                if attempt + 1 < attempts:
                    time.sleep(self.backoff * 2**attempt)
                    continue
                raise self._error(model, exc.reason, f"{last} (after {attempts} attempt{'s' * (attempts > 1)})") from None
            except ProtocolError as exc:
                self._observe(model, start, "protocol")
                raise self._error(model, "protocol", f"answered with the wrong shape: {exc}") from None
            except RemoteScorerError as exc:
                self._observe(model, start, exc.reason)
                raise
            self._observe(model, start, None)
            return out
        raise AssertionError("unreachable")  # pragma: no cover

    def _observe(self, model: str, start: float, error: str | None) -> None:
        if self.observer is not None:
            self.observer.scorer_request(model, time.perf_counter() - start, error)

    def infer(self, model: str, columns: Sequence[Sequence[str]], width: int | None = None) -> tuple[np.ndarray, int]:
        """The model's output for the text columns: float32 ``(n, k)`` (``k == width`` when given) and the tokens run."""
        rows = len(columns[0])
        return self._call(model, "POST", f"/v2/models/{model}/infer", infer_request(model, *columns),  # type: ignore[no-any-return]
                          lambda body: read_output(model, body, rows, width))

    def metadata(self, model: str) -> dict[str, Any]:
        """The model metadata (``GET /v2/models/{model}``)."""
        def read(body: Any) -> dict[str, Any]:
            if not isinstance(body, Mapping) or "name" not in body:
                raise ProtocolError("the model metadata has no 'name'")
            return dict(body)
        return self._call(model, "GET", f"/v2/models/{model}", None, read)  # type: ignore[no-any-return]

    def ready(self) -> bool:
        """The server says it is ready (``GET /v2/health/ready`` answers 200)."""
        try:
            return self._http.get(self.url + "/v2/health/ready").status_code == 200
        except httpx.HTTPError:
            return False


def _error_text(r: httpx.Response) -> str:
    try:
        body = r.json()
    except (ValueError, UnicodeDecodeError):
        return r.text[:200] or r.reason_phrase
    if isinstance(body, Mapping) and isinstance(body.get("error"), str):
        return str(body["error"])[:500]
    return json.dumps(body)[:200]


class _RemoteBackend:
    """Stands where a local backend would: the forward passes of a remote scorer never run here."""

    def run(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        raise RuntimeError("a remote scorer runs no forward pass locally")


def _parameters(meta: Mapping[str, Any]) -> dict[str, Any]:
    params = meta.get("parameters")
    return dict(params) if isinstance(params, Mapping) else {}


def _same_tokenizer(client: OIPClient, model: str, params: Mapping[str, Any], model_dir: Path) -> None:
    remote = params.get("tokenizer_sha256")
    local = tokenizer_sha256(model_dir)
    if isinstance(remote, str) and local is not None and remote != local:
        raise ConfigurationError(
            f"remote scorer {client.url} (model {model!r}) splits text with another tokenizer than the local "
            f"{model_dir}: point the local model option at the directory of the model the server runs")


class RemoteNLIScorer(NLIScorer):
    """An :class:`NLIScorer` whose forward passes run on the OIP v2 server at ``url`` (model ``nli``).

    ``model`` is the local directory of the same model, for its tokenizer (default: the shipped model). The
    probabilities of a pair are cached here as in process (exact: each pair is scored alone on the server).
    """

    def __init__(
        self,
        url: str,
        *,
        model: str | Path | None = None,
        timeout: float = 10.0,
        retries: int = 2,
        client: OIPClient | None = None,
        observer: ScorerObserver | None = None,
        cache_size: int = 8192,
        name: str = NLI,
    ) -> None:
        super().__init__(model if model is not None else default_nli_model(), cache_size=cache_size)
        self.client = client or OIPClient(url, timeout=timeout, retries=retries, observer=observer)
        self.url = self.client.url
        self.name = name

    def __repr__(self) -> str:
        return f"RemoteNLIScorer({self.url!r})"

    def _load(self) -> tuple[Path, Tokenizer, Backend, LabelMap, int, dict[str, Any]]:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                model_dir = resolve_model_dir(self.model_ref)
                params = _parameters(self.client.metadata(self.name))
                _same_tokenizer(self.client, self.name, params, model_dir)
                config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
                names = params.get("labels")
                id2label = dict(enumerate(names)) if isinstance(names, list) and names else config.get("id2label")
                if not id2label:
                    raise ConfigurationError(f"remote scorer {self.url}: no label order in its metadata nor in "
                                             f"{model_dir}/config.json")
                labels = LabelMap.from_id2label(id2label, f"{self.url} model {self.name!r} metadata")
                extra_path = model_dir / "guardrail.json"
                extra = params.get("guardrail")
                if not isinstance(extra, dict):
                    extra = json.loads(extra_path.read_text(encoding="utf-8")) if extra_path.exists() else {}
                positions = int(config.get("max_position_embeddings", 512))
                max_length = params.get("max_length")
                if not isinstance(max_length, int):
                    max_length = min(int(extra.get("max_length", 512)), positions)
                self._loaded = (model_dir, Tokenizer(model_dir), _RemoteBackend(), labels, max_length, extra)
            return self._loaded

    def probabilities(self, premises: Sequence[str], hypotheses: Sequence[str]) -> tuple[np.ndarray, int]:
        if len(premises) != len(hypotheses):
            raise InputError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
        labels = self._load()[3]
        probs = np.empty((len(premises), labels.num_labels), dtype=np.float32)
        todo: list[int] = []
        keys = [pair_key(p, h) for p, h in zip(premises, hypotheses)] if self.cache.size else []
        for i, key in enumerate(keys or [None] * len(premises)):
            hit = self.cache.get(key) if key is not None else None
            if hit is None:
                todo.append(i)
            else:
                probs[i] = hit
        if not todo:
            return probs, 0
        values, tokens = self.client.infer(self.name, [[premises[i] for i in todo], [hypotheses[i] for i in todo]],
                                           labels.num_labels)
        for i, row in zip(todo, values):
            probs[i] = row
            if keys:
                self.cache.put(keys[i], row)
        return probs, tokens

    def close(self) -> None:
        self.client.close()


def _local_embedding_max_length(model_dir: Path) -> int:
    """What :class:`EmbeddingScorer` reads as its max_length from a model directory."""
    st_cfg = model_dir / "sentence_bert_config.json"
    length = json.loads(st_cfg.read_text(encoding="utf-8")).get("max_seq_length") if st_cfg.exists() else None
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    return min(int(length or 512), int(config.get("max_position_embeddings", 512)))


class RemoteEmbeddingScorer(EmbeddingScorer):
    """An :class:`EmbeddingScorer` whose forward passes run on the OIP v2 server at ``url`` (model ``embedding``).

    ``model`` is the local directory of the same model, for its tokenizer (default: the shipped all-MiniLM-L6-v2).
    Vectors are cached here for the 1,024 most recent texts (an in-process scorer keeps 8,192): the scorer pool keeps
    its own cache for every gateway, so a miss here costs one hop, not a forward pass.
    """

    def __init__(
        self,
        url: str,
        *,
        model: str | Path | None = None,
        timeout: float = 10.0,
        retries: int = 2,
        client: OIPClient | None = None,
        observer: ScorerObserver | None = None,
        cache_size: int = 1024,
        name: str = EMBEDDING,
    ) -> None:
        super().__init__(model, cache_size=cache_size)
        self.client = client or OIPClient(url, timeout=timeout, retries=retries, observer=observer)
        self.url = self.client.url
        self.name = name
        self._dim: int | None = None

    def __repr__(self) -> str:
        return f"RemoteEmbeddingScorer({self.url!r})"

    def _load(self) -> tuple[Tokenizer, Backend, int]:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                model_dir = resolve_model_dir(self.model_ref)
                meta = self.client.metadata(self.name)
                params = _parameters(meta)
                _same_tokenizer(self.client, self.name, params, model_dir)
                outputs = meta.get("outputs")
                if isinstance(outputs, list) and outputs and isinstance(outputs[0], Mapping):
                    shape = outputs[0].get("shape")
                    if isinstance(shape, list) and len(shape) == 2 and isinstance(shape[1], int) and shape[1] > 0:
                        self._dim = shape[1]
                max_length = params.get("max_length")
                if not isinstance(max_length, int):
                    max_length = _local_embedding_max_length(model_dir)
                self._loaded = (Tokenizer(model_dir), _RemoteBackend(), max_length)
            return self._loaded

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised embeddings, shape ``(len(texts), dim)``, from the server (recent texts from the cache)."""
        self._load()
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        keys = [text_key(t) for t in texts] if self.cache.size else []
        cached = [self.cache.get(k) for k in keys] if keys else [None] * len(texts)
        todo = [i for i, v in enumerate(cached) if v is None]
        if not todo:
            return np.stack(cached)  # type: ignore[arg-type]
        fresh, _ = self.client.infer(self.name, [[texts[i] for i in todo]], self._dim)
        out = np.empty((len(texts), fresh.shape[1]), dtype=np.float32)
        for j, i in enumerate(todo):
            out[i] = fresh[j]
            if keys:
                self.cache.put(keys[i], fresh[j])
        for i, v in enumerate(cached):
            if v is not None:
                if v.shape[0] != out.shape[1]:
                    raise RemoteScorerError(f"remote scorer {self.url} (model {self.name!r}): embeddings changed "
                                            f"width ({v.shape[0]} then {out.shape[1]})", url=self.url,
                                            model=self.name, reason="protocol")
                out[i] = v
        return out

    def close(self) -> None:
        self.client.close()


def scorers_from_url(
    url: str,
    *,
    nli_model: str | Path | None = None,
    embedding_model: str | Path | None = None,
    timeout: float = 10.0,
    retries: int = 2,
    observer: ScorerObserver | None = None,
) -> tuple[RemoteNLIScorer, RemoteEmbeddingScorer]:
    """The NLI and embedding scorers of the OIP v2 server at ``url``, sharing one pooled HTTP client. The local
    model directories give the tokenizers (default: the shipped models)."""
    client = OIPClient(url, timeout=timeout, retries=retries, observer=observer)
    return (RemoteNLIScorer(url, model=nli_model, client=client),
            RemoteEmbeddingScorer(url, model=embedding_model, client=client))
