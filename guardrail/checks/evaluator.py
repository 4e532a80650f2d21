"""The sans-IO entry point: question + contexts + response in, typed scores and evidence out."""

from __future__ import annotations

import contextvars
import dataclasses
import re
import functools
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from guardrail.checks.faithfulness import (
    ContextRef,
    FaithfulnessCheck,
    FaithfulnessConfig,
    FaithfulnessResult,
    StopBelow,
    _validate,
    check_sizes,
)
from guardrail.checks.relevance import (
    RelevanceCheck,
    RelevanceConfig,
    RetrievalRelevance,
)
from guardrail.errors import ConfigurationError, UnreadableError
from guardrail.render import Rendered, render, render_shown
from guardrail.render.markup import stylesheet
from guardrail.render.unicode import terminal_controls
from guardrail.scorers.cache import LRUCache
from guardrail.scorers.embedding import EmbeddingScorer
from guardrail.scorers.nli import NLIScorer
from guardrail.scorers.pool import check_priority
from guardrail.text import content_stems, label_title, offer_topics, strip_enumerator, words

CheckName = Literal["faithfulness", "retrieval_relevance", "response_relevance"]
CHECKS: tuple[CheckName, ...] = ("faithfulness", "retrieval_relevance", "response_relevance")


@dataclass(frozen=True, slots=True)
class CheckTimings:
    """Seconds spent in each check (0.0 for a check that did not run). Retrieval and response relevance
    share one embedding batch; its time is split by the number of texts each check embeds (question and chunks vs
    the answer). ``response_relevance`` also holds the answer-similarity time."""

    faithfulness: float = 0.0
    retrieval_relevance: float = 0.0
    response_relevance: float = 0.0

    @property
    def total(self) -> float:
        return self.faithfulness + self.retrieval_relevance + self.response_relevance


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Scores and evidence for one response. ``None`` means "not computed" (check off, or no input)."""

    faithfulness: FaithfulnessResult | None
    retrieval: RetrievalRelevance | None
    response_relevance: float | None
    answer_similarity: float | None
    timings: CheckTimings

    @property
    def faithfulness_score(self) -> float | None:
        return self.faithfulness.score if self.faithfulness else None

    def headline(self, name: str) -> float | None:
        """A headline score by name: ``faithfulness``, ``retrieval_relevance`` (the best chunk) or
        ``response_relevance``."""
        if name == "faithfulness":
            return self.faithfulness_score
        if name == "retrieval_relevance":
            return self.retrieval.top if self.retrieval else None
        return self.response_relevance

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict with the headline scores at the top level."""
        return {
            "faithfulness": self.faithfulness_score,
            "retrieval_relevance": self.retrieval.top if self.retrieval else None,
            "context_precision": self.retrieval.context_precision if self.retrieval else None,
            "context_relevancy": self.retrieval.context_relevancy if self.retrieval else None,
            "response_relevance": self.response_relevance,
            "answer_similarity": self.answer_similarity,
            "details": {
                "faithfulness": dataclasses.asdict(self.faithfulness) if self.faithfulness else None,
                "retrieval": dataclasses.asdict(self.retrieval) if self.retrieval else None,
            },
            "timings": dataclasses.asdict(self.timings),
        }


# --------------------------------------------------------------------------- text as a reader sees it
#: the question is read from its last this-many characters (see :class:`Reader`)
MAX_QUESTION_CHARS = 4000


class Reader:
    """Renders question, contexts and answer as a reader sees them (:func:`guardrail.render.render`: struck text
    removed, entities decoded, tables read as statements, decorated letters as their base letters, invisible
    characters dropped), with caches: the guard validates, then scores the same texts, and a stream scores every
    sentence against the same contexts.

    The question is read from its last ``max_question_chars`` characters (from a word start): the last user message
    of a chat may hold pages of pasted text before the question, and every character of it would be embedded (about
    0.3 ms of CPU each) for nothing the checks use (the embedding model reads 256 tokens, a short answer's statement
    is built from the question's last sentence)."""

    def __init__(self, max_question_chars: int = MAX_QUESTION_CHARS) -> None:
        if max_question_chars < 1:
            raise ConfigurationError(f"max_question_chars must be at least 1, got {max_question_chars}")
        self.max_question_chars = max_question_chars
        self._texts: LRUCache[Rendered] = LRUCache(64)
        self._shown: LRUCache[tuple[Rendered | None]] = LRUCache(64)
        self._contexts: LRUCache[tuple[Rendered, ...]] = LRUCache(64)

    def question(self, question: str) -> Rendered:
        cut = len(question) - self.max_question_chars
        if cut > 0:
            space = question.find(" ", cut, cut + 100)
            question = question[space + 1 :] if space >= 0 else question[cut:]
        return self.text(question)

    def text(self, text: str) -> Rendered:
        got = self._texts.get(text)
        if got is None:
            got = render(text)
            self._texts.put(text, got)
        return got

    def shown(self, text: str) -> Rendered | None:
        """``text`` as a client that renders HTML shows it, when that differs from :meth:`text` (comments and hidden
        elements removed: :func:`guardrail.render.render_shown`), else None."""
        got = self._shown.get(text)
        if got is None:
            shown = render_shown(text)
            got = (shown if shown is not None and shown.text != self.text(text).text else None,)
            self._shown.put(text, got)
        return got[0]

    def contexts(self, contexts: Sequence[str]) -> tuple[Rendered, ...]:
        key = tuple(contexts)
        got = self._contexts.get(key)
        if got is None:
            got = tuple(render(c) for c in key)
            self._contexts.put(key, got)
        return got


def _ref(ref: ContextRef | None, contexts: tuple[Rendered, ...]) -> ContextRef | None:
    if ref is None or not contexts[ref.chunk].changed:
        return ref
    chunk = contexts[ref.chunk]
    start, end = chunk.to_source(ref.start, ref.end)
    return ContextRef(ref.chunk, start, end, chunk.source[start:end])


def _in_source(result: FaithfulnessResult, response: Rendered, contexts: tuple[Rendered, ...]) -> FaithfulnessResult:
    """Evidence computed on rendered texts, pointed back into the texts as sent: ``start``/``end``/``text`` of each
    sentence and the context spans are the original's (``hypothesis`` stays what the model read)."""
    if not response.changed and not any(c.changed for c in contexts):
        return result
    sentences = []
    for ev in result.sentences:
        start, end = response.to_source(ev.start, ev.end)
        sentences.append(dataclasses.replace(ev, start=start, end=end, text=response.source[start:end],
                                             premise=_ref(ev.premise, contexts), sentence=_ref(ev.sentence, contexts)))
    return dataclasses.replace(result, sentences=tuple(sentences))


def _titles(response: Rendered, question: Rendered, contexts: Sequence[Rendered]) -> Callable[[int, int], bool]:
    """Which spans of the rendered answer claim nothing by their form: an offer of more help whose topics are the
    question's or the contexts' words (:func:`~guardrail.text.offer_topics`), or whole lines of the answer as sent
    that are titles
    (:func:`~guardrail.text.label_title`: a heading, a line in bold, a source's link); the marks that make one are
    gone once rendered, so the lines are read as sent. A heading, a line in bold or a link's text is a title only
    where all its words are the question's or the contexts' ("### Return policy" for "What is the return policy?"):
    a title of its own words may say what the answer claims ("### Lifetime warranty", "[Complimentary return
    shipping](...)")."""
    source = response.source
    marked = any(ch in source for ch in "#*_[<:")  # once per answer: no mark, no title line
    vocabulary: set[str] = set()

    def known(title: str) -> bool:
        if not vocabulary:
            vocabulary.update(content_stems(question.text))
            for c in contexts:
                vocabulary.update(content_stems(c.text))
            vocabulary.add("")
            vocabulary.update(content_stems(" ".join(SECTION_WORDS)))
        return set(content_stems(strip_enumerator(title))) <= vocabulary

    def is_title(start: int, end: int) -> bool:
        topics = offer_topics(response.text[start:end])
        if topics:  # "Feel free to reach out if you need help with a return."
            return all(known(t) for t in topics)
        if not marked:
            return False
        s, e = response.to_source(start, end)
        a = source.rfind("\n", 0, s) + 1
        b = source.find("\n", e)
        lines = [line for line in source[a : len(source) if b == -1 else b].split("\n") if line.strip()]
        titles = [label_title(line) for line in lines]
        if not titles or None in titles:
            return False
        if not all(_BARE_URL.match(line) or known(t or "") for line, t in zip(lines, titles)):
            return False
        said = [words(strip_enumerator(t)) for t in titles if t]
        return [w for ws in said for w in ws] == words(strip_enumerator(response.text[start:end].strip()))

    return is_title


#: words of a section title that name no thing of the answer ("## Benefits overview", "### Key points"): a title of
#: them and the question's or the contexts' words claims nothing
SECTION_WORDS = ("overview", "summary", "details", "detail", "key", "points", "notes", "note", "steps", "faq",
                 "introduction", "background", "conclusion", "highlights", "glance", "breakdown", "basics", "guide",
                 "info", "information", "options", "tips", "answer", "short", "quick", "takeaways", "recap", "explained",
                 "general", "important", "things", "know", "main", "more", "additional", "related", "sources", "references",
                 "next", "summary", "what", "need")


#: a line that is a bare URL (in a list or not): its path is screened by label_title, its words need not be the
#: question's or the contexts'
_BARE_URL = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?<?https?://")


class ReaderFaithfulnessCheck(FaithfulnessCheck):
    """:class:`FaithfulnessCheck` on the texts as a reader sees them (see :class:`Reader`); the evidence points into
    the texts as sent. Every caller of ``run`` (the guard, the stream checker, the CLI) scores rendered text."""

    def __init__(self, nli: NLIScorer, config: FaithfulnessConfig | None = None, *, reader: Reader | None = None) -> None:
        super().__init__(nli, config)
        self.reader = reader or Reader()

    def run(self, question: str, contexts: Sequence[str], response: str, *, preceding: str = "",
            titles: Callable[[int, int], bool] | None = None, preceding_title: str | None = None,
            stop_below: StopBelow = None) -> FaithfulnessResult:
        """``titles`` (spans of the rendered answer) defaults to the lines of the answer as sent that are titles;
        ``preceding_title`` to the title line that ends ``preceding`` as sent."""
        check_sizes(question, contexts, response, self.config)
        rq, rc, rr = self.reader.question(question), self.reader.contexts(contexts), self.reader.text(response)
        before = self.reader.text(preceding).text if preceding else ""
        # a stream checks the sentence after a title apart from it: the title line as sent (its marks are gone once
        # rendered) is what a pronoun there may point at ("### Gift cards" ... "They can be returned.")
        lines = [line for line in preceding.split("\n") if line.strip()]
        ended = "\n" in preceding[len(preceding.rstrip()):]
        lead = preceding_title or (label_title(lines[-1]) if lines and ended else None)
        result = _in_source(super().run(rq.text, [c.text for c in rc], rr.text, preceding=before,
                                        titles=titles or _titles(rr, rq, rc), preceding_title=lead,
                                        stop_below=stop_below), rr, rc)
        shown = self.reader.shown(response)
        if shown is None:
            return result
        # a client that renders HTML hides comments and hidden elements: the answer it shows is judged too, and the
        # worse reading decides ("Gift cards can<!-- not --> be returned." reads "can not" in plain text only)
        other = _in_source(super().run(rq.text, [c.text for c in rc], shown.text, preceding=before,
                                       titles=_titles(shown, rq, rc), preceding_title=lead, stop_below=stop_below),
                            shown, rc)
        return _worse(result, other)


def _worse(a: FaithfulnessResult, b: FaithfulnessResult) -> FaithfulnessResult:
    """The reading that fares worse: one with an unsupported sentence, else the lower least sentence score, else the
    lower mean (a reading with nothing checked fares best: the other one is judged); its mean is the lower of the two
    readings' means, so that a verdict on the mean (``aggregate="mean"``) fails when either reading's does (hidden
    sentences that pad the plain-text reading's mean do not lift the shown one's)."""
    def rank(r: FaithfulnessResult) -> tuple[bool, float, float]:
        scores = [s.score for s in r.sentences if s.score is not None]
        return (not r.unsupported, min(scores, default=1.0), 1.0 if r.score is None else r.score)

    worse = b if rank(b) < rank(a) else a
    means = [r.score for r in (a, b) if r.score is not None]
    nli = [r.nli_score for r in (a, b) if r.nli_score is not None]
    return dataclasses.replace(worse, score=min(means) if means else None, nli_score=min(nli) if nli else None)


class ReaderRelevanceCheck(RelevanceCheck):
    """:class:`RelevanceCheck` on the texts as a reader sees them."""

    def __init__(self, embedder: EmbeddingScorer, config: RelevanceConfig | None = None, *,
                 reader: Reader | None = None) -> None:
        super().__init__(embedder, config)
        self.reader = reader or Reader()

    def evaluate(self, question: str, contexts: Sequence[str] | None, response: str | None, *,
                 context_relevancy: bool | None = None) -> tuple[RetrievalRelevance | None, float | None]:
        r = self.reader
        return super().evaluate(
            r.question(question).text,
            None if contexts is None else [c.text for c in r.contexts(contexts)],
            None if response is None else r.text(response).text,
            context_relevancy=context_relevancy,
        )

    def answer_similarity(self, response: str, ground_truth: str) -> float | None:
        return super().answer_similarity(self.reader.text(response).text, self.reader.text(ground_truth).text)


class Evaluator:
    """Runs the checks on one (question, contexts, response). Models are passed in; no globals.

    The checks read the texts as a reader sees them (``render=True``, the default; :mod:`guardrail.render`): a
    hallucination spelled in decorated letters or hidden behind markup is read as what it says, and a faithful
    answer in a markdown table or with HTML entities is read as the statements it makes. Evidence offsets point into
    the texts as sent; the answer itself is never changed. The question is read from its last
    ``max_question_chars`` characters (see :class:`Reader`).

    >>> ev = Evaluator(nli=NLIScorer("path/to/nli"), embedder=EmbeddingScorer())   # doctest: +SKIP
    >>> result = ev.evaluate("When was it founded?", ["Acme was founded in 1990."], "In 1990.")  # doctest: +SKIP
    >>> round(result.faithfulness.score, 2)                                          # doctest: +SKIP
    0.97

    Thread-safe: scorers load lazily under a lock and onnxruntime sessions serve concurrent calls.
    """

    def __init__(
        self,
        *,
        nli: NLIScorer | None = None,
        embedder: EmbeddingScorer | None = None,
        checks: Iterable[str] = CHECKS,
        faithfulness: FaithfulnessConfig | None = None,
        relevance: RelevanceConfig | None = None,
        render: bool = True,
        max_question_chars: int = MAX_QUESTION_CHARS,
    ) -> None:
        chosen = tuple(dict.fromkeys(checks))
        unknown = [c for c in chosen if c not in CHECKS]
        if unknown:
            raise ConfigurationError(f"unknown checks {unknown}; choose from {', '.join(CHECKS)}")
        self.checks: tuple[str, ...] = chosen
        self.faithfulness_config = faithfulness or FaithfulnessConfig()
        self.reader: Reader | None = Reader(max_question_chars) if render else None
        self._faith: FaithfulnessCheck | None = None
        self._rel: RelevanceCheck | None = None
        if "faithfulness" in chosen:
            if nli is None:
                raise ConfigurationError(
                    "the faithfulness check needs an NLI model: pass nli=NLIScorer('path/to/model-dir') "
                    "(any Hugging Face NLI model) or leave 'faithfulness' out of checks"
                )
            self._faith = (ReaderFaithfulnessCheck(nli, self.faithfulness_config, reader=self.reader) if self.reader
                           else FaithfulnessCheck(nli, self.faithfulness_config))
        if {"retrieval_relevance", "response_relevance"} & set(chosen):
            self._rel = self._relevance(embedder or EmbeddingScorer(), relevance)

    def _relevance(self, embedder: EmbeddingScorer, config: RelevanceConfig | None = None) -> RelevanceCheck:
        if self.reader is None:
            return RelevanceCheck(embedder, config)
        return ReaderRelevanceCheck(embedder, config, reader=self.reader)

    @property
    def faithfulness_check(self) -> FaithfulnessCheck | None:
        return self._faith

    @property
    def relevance_check(self) -> RelevanceCheck | None:
        return self._rel

    def validate(self, question: str, contexts: Sequence[str], response: str) -> None:
        """Raise InputError (UncheckableError for text the model cannot judge or over the limits) before any model
        work: types and sizes of the texts as sent, then broken Unicode and scripts the model was not trained on in
        the texts as read (a word in mathematical bold is English)."""
        cfg = self.faithfulness_config
        check_sizes(question, contexts, response, cfg)
        control = terminal_controls(response)
        if control is not None:
            raise UnreadableError(f"the answer holds {control}: a terminal hides, moves or overwrites text with it, "
                                  "so what a reader sees is not what the guard would read; send the answer without "
                                  "terminal control sequences")
        sheet = stylesheet(response)
        if sheet is not None:
            raise UnreadableError(f"the answer holds {sheet}: it may hide, add or reorder text a browser shows, which "
                                  "the guard does not evaluate; send the answer without style sheets or right-to-left "
                                  "layout")
        if self.reader is not None:
            question = self.reader.question(question).text
            contexts = [c.text for c in self.reader.contexts(contexts)]
            response = self.reader.text(response).text
        _validate(question, contexts, response, cfg)

    def evaluate(
        self,
        question: str,
        contexts: Sequence[str],
        response: str,
        ground_truth: str | None = None,
        *,
        checks: Iterable[str] | None = None,
        context_relevancy: bool | None = None,
        stop_below: StopBelow = None,
    ) -> Evaluation:
        """Run the checks (all of this evaluator's, or the subset ``checks``) on one answer.

        ``context_relevancy=False`` skips embedding every context sentence (the guard does: no policy
        threshold uses it); None follows ``RelevanceConfig.context_relevancy``. ``stop_below``: faithfulness reads
        no further than the first sentences that score below it (:meth:`FaithfulnessCheck.run`; the guard's block
        mode, where one failing sentence decides).
        """
        self.validate(question, contexts, response)
        run = self.checks if checks is None else tuple(checks)
        extra = [c for c in run if c not in self.checks]
        if extra:
            raise ConfigurationError(f"checks {extra} were not configured on this Evaluator (it runs {list(self.checks)})")
        contexts = list(contexts)
        with check_priority():  # this check's forward passes queue at its start time (see ForwardPool)
            return self._evaluate(question, contexts, response, ground_truth, run, context_relevancy, stop_below)

    def _evaluate(self, question: str, contexts: list[str], response: str, ground_truth: str | None,
                  run: tuple[str, ...], context_relevancy: bool | None, stop_below: StopBelow = None) -> Evaluation:
        relevance: Callable[[], tuple[RetrievalRelevance | None, float | None]] | None = None
        if self._rel is not None and ("retrieval_relevance" in run or "response_relevance" in run):
            relevance = functools.partial(
                self._rel.evaluate, question, contexts if "retrieval_relevance" in run else None,
                response if "response_relevance" in run else None, context_relevancy=context_relevancy,
            )
        side = None
        if relevance is not None and self._faith is not None and "faithfulness" in run and self._shared_pool():
            # both checks' passes queue in the shared pool at once: the cores stay busy through the tail of each
            side = _Timed(relevance, background=True)
        t0 = time.perf_counter()
        faith = self._faith.run(question, contexts, response, stop_below=stop_below) \
            if self._faith and "faithfulness" in run else None
        faith_s = time.perf_counter() - t0
        if side is None and relevance is not None:
            side = _Timed(relevance, background=False)
        retrieval, resp_rel = side.result() if side is not None else (None, None)
        shared = side.seconds if side is not None else 0.0
        similarity = None
        t2 = time.perf_counter()
        if ground_truth is not None:
            rel = self._rel or self._relevance(EmbeddingScorer())
            self._rel = rel
            similarity = rel.answer_similarity(response, ground_truth)
        t3 = time.perf_counter()
        # retrieval and response relevance share one embedding batch: its time is split by the texts each needs
        # (the question and the chunks for retrieval, the answer for response relevance; the answer-similarity
        # time goes to response relevance)
        retr_texts = 1 + len(contexts) if "retrieval_relevance" in run else 0
        resp_texts = 1 if "response_relevance" in run else 0
        total = retr_texts + resp_texts
        retr_s = shared * retr_texts / total if total else 0.0
        resp_s = shared - retr_s + (t3 - t2)
        return Evaluation(faith, retrieval, resp_rel, similarity, CheckTimings(faith_s, retr_s, resp_s))

    def _shared_pool(self) -> bool:
        """Both checks run and their scorers share a forward pool (then they run side by side)."""
        if self._faith is None or self._rel is None:
            return False
        pool = getattr(self._faith.nli, "pool", None)
        return pool is not None and pool is getattr(self._rel.embedder, "pool", None)


_T = TypeVar("_T")


class _Timed(Generic[_T]):
    """``fn()`` with its own wall time, run now or on a thread of its own (carrying the caller's context: the check's
    queue priority). ``result()`` waits and returns it, or raises what it raised."""

    def __init__(self, fn: Callable[[], _T], *, background: bool) -> None:
        self._fn = fn
        self.seconds = 0.0
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if background:
            context = contextvars.copy_context()
            self._thread = threading.Thread(target=context.run, args=(self._call,), name="guardrail-relevance",
                                            daemon=True)
            self._thread.start()
        else:
            self._call()

    def _call(self) -> None:
        t0 = time.perf_counter()
        try:
            self._value = self._fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread by result()
            self._error = exc
        self.seconds = time.perf_counter() - t0

    def result(self) -> _T:
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]
