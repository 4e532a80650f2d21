"""Checking a streamed answer, one choice: each sentence scored once, the stream's verdict at the end.

- flag / pass policies: every chunk is released at once (time to first token is untouched); the whole answer is
  checked when the stream ends.
- block / fallback policies: a sentence is released only after it passed. The first failing sentence stops the
  stream: nothing of it, or after it, is released. With ``aggregate="mean"`` no sentence decides alone, so nothing is
  released before the end, where the whole answer is delivered or blocked.

Released text is always an exact prefix of the generated text (chunks are never rewritten). Every decision is
:mod:`guardrail.decision`'s; the guard is reached through the :class:`StreamChecker` protocol, so this module
imports nothing of ``guard.py``.

>>> s = guard.stream(question, contexts)                      # doctest: +SKIP
>>> for chunk in llm_chunks:                                  # doctest: +SKIP
...     send(s.feed(chunk))
...     if s.stopped: break
>>> end = s.finish(); send(end.text); end.verdict             # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import functools
import re
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np

from guardrail.checks.evaluator import CheckTimings, Evaluation, Evaluator
from guardrail.checks.faithfulness import FaithfulnessResult, SentenceEvidence, heads_list
from guardrail.checks.relevance import RetrievalRelevance
from guardrail.checks.claims import makes_claim, polarity, yes_no_answer, yes_no_only, yes_no_statement
from guardrail.checks.lexicon import looks_verb, tokenize
from guardrail.text import is_courtesy, remarks_to_reader
from guardrail.decision import decide, faithfulness_limit, mean_fails, sentence_fails, streams_hold_to_end
from guardrail.errors import OverloadedError, UncheckableError, UnreadableError
from guardrail.policy import Action, Policy
from guardrail.render import ECHO_TAIL_CHARS, echo_span, render
from guardrail.render.markup import stylesheet
from guardrail.render.unicode import terminal_controls
from guardrail.stream.assembler import Sentence, SentenceAssembler
from guardrail.stream.state import ReleaseState
from guardrail.verdict import Scores, Timings, Verdict

__all__ = ["StreamChecker", "StreamEnd", "StreamGuard"]

T = TypeVar("T")
STREAMING, HOLDING, STOPPED, FINISHED = (ReleaseState.STREAMING, ReleaseState.HOLDING, ReleaseState.STOPPED,
                                         ReleaseState.FINISHED)

#: the answer before a sentence that its check reads (for what a verbless sentence or a pronoun points at): a few
#: sentences; rendering and reading it costs every sentence of a stream
PRECEDING_CHARS = 1200


class StreamChecker(Protocol):
    """The calls a stream makes to its guard (:class:`guardrail.guard.Guard` implements them)."""

    policy: Policy
    evaluator: Evaluator

    def score(self, fn: Callable[..., T], *args: Any, admitted: bool = False, size: int | None = None) -> T: ...

    def tracking(self) -> AbstractContextManager[None]: ...

    def start(self, fn: Callable[..., T], *args: Any, admitted: bool = False) -> Future[T]: ...

    def check(self, question: str, contexts: Sequence[str], response: str, *,
              time_to_first_token: float | None = None, generation: float | None = None) -> Verdict: ...

    def classify(self, exc: BaseException) -> tuple[str, str]: ...

    def error_verdict(self, exc: BaseException, response: str, *, timings: Timings) -> Verdict: ...

    def report(self, verdict: Verdict, question: str | None = None,
               contexts: Sequence[str] | None = None) -> Verdict: ...


class StreamEnd(NamedTuple):
    #: text released by finish() (the checked tail of the answer; "" if the stream was stopped)
    text: str
    verdict: Verdict


#: the marks around a line's text: a heading's hashes, quote marks, a list marker, bold, a "Q:" / "A:" label
_MARKS = re.compile(r"^\s*(?:#{1,6}\s+|>\s*)*(?:[-*+]\s+|\d{1,3}[.)]\s+)?[*_]*(?:(?:Q|A|Question|Answer)[*_]*\s*:[*_]*\s+)?"
                    r"|[*_\s]+$")


def _span_like(text: str) -> bool:
    """A short span with no verb ("Webhooks.", "Litware Inc.", "99.9%."): read alone, it answers a wh-question."""
    toks = tokenize(text)
    return 0 < len(toks) <= 6 and not any(looks_verb(t) for t in toks) and not yes_no_answer(text) and \
        not is_courtesy(text) and not text.rstrip().endswith("?")


def _claims(text: str) -> bool:
    """A sentence (as a reader sees it) that makes a claim, not a remark to the reader ("Oh nice!")."""
    shown = render(text).text
    return makes_claim(shown) and not remarks_to_reader(shown)


def _bare(text: str) -> str:
    """A sentence's words without the markup around them ("### Can gift cards be returned?", "**A:** No.")."""
    return _MARKS.sub("", text)


@dataclass
class _Tally:
    """What the checked sentences add up to."""

    evidence: list[SentenceEvidence] = field(default_factory=list)
    pairs: int = 0
    tokens: int = 0
    faithfulness_s: float = 0.0
    retrieval_s: float = 0.0


#: what may start a style sheet in a streamed answer, and how much of the text before a chunk is kept to find one cut
#: over two chunks (the whole text is then looked at: :func:`~guardrail.render.markup.stylesheet`)
#: the end of the answer's first paragraph after an echoed prompt (a blank line, then text): inline markup does not
#: span it, so the prompt's last sentence is read with all of the answer that can finish it
_PARAGRAPH_END = re.compile(r"\n[ \t]*\n[ \t\n]*\S")
_NON_SPACE = re.compile(r"\S")
_STYLE_START = re.compile(r"<(?:style|link)|\sdir\s*=", re.I)
_STYLE_TAIL = 8
#: how much a held stream re-reads, as a multiple of the text fed. A chunk that may end a sentence has the held text
#: re-split and its sentences read again, and one that may start a style sheet has the whole text looked at: each
#: costs the length of what it reads, so a stream that holds much ("Ok. Ok. ..." pleasantries held for a claim, an
#: unclosed comment before many sentences) or holds "`<style>`" in every chunk cost time quadratic (or cubic) in its
#: length (round 37: 16 KB of "Ok. " took over a minute, 300 "`<style>`" chunks held the event loop for seconds). A
#: re-read that would take the total over this multiple waits, its text held, until the text grew enough (at the latest
#: the end): as a larger chunk would, it moves when a sentence is judged, never how
_REREAD = 8


class StreamGuard:
    """Per-stream state; one instance per generated answer (not shared between requests).

    ``state`` (:class:`~guardrail.stream.state.ReleaseState`) says where it stands: ``STREAMING`` (flag / pass mode,
    or unchecked from here on after an error with ``on_error: fail_open``), ``HOLDING`` (block / fallback mode),
    ``STOPPED`` or ``FINISHED``. Sentences come from a :class:`~guardrail.stream.assembler.SentenceAssembler` and
    are scored once each; the decision is :func:`guardrail.decision.decide`'s.
    """

    def __init__(self, guard: StreamChecker, question: str, contexts: Sequence[str], *,
                 max_sentence_chars: int = 2000, echo: str = "") -> None:
        self.guard = guard
        self.policy = guard.policy
        self.question = question
        self.contexts = list(contexts)
        #: what one scoring call of this stream reads, about (its lane: Guard's quick lane for small checks)
        self._size = sum(len(c) for c in self.contexts if isinstance(c, str)) + PRECEDING_CHARS
        #: the mode: hold text back until it passed (block / fallback); the state may leave it (fail open)
        self.holds = self.policy.action in ("block", "fallback")
        self.state = HOLDING if self.holds else STREAMING
        self._sentences = SentenceAssembler(max_sentence_chars)
        self._parts: list[str] = []  # every chunk fed, in order
        self._length = 0
        #: characters of the answer released so far (an exact prefix)
        self.released = 0
        self._cr = ""  # carriage returns that end the text so far (a CRLF once a line feed follows)
        self._tail = ""  # the end of the text so far (a "<style" or "<link" cut over two chunks)
        #: a chunk may have started a style sheet: the text is looked at (in :meth:`release`, off the event loop)
        #: before any more of it goes out
        self._sheet_owed = False
        self._sheet_read = 0  # characters looked at for a style sheet so far (see _REREAD)
        self._held_read = 0  # characters of held text re-split so far (see _REREAD)
        self._deferred = False  # a re-split waits for its budget: a later chunk is due even if it ends no sentence
        self._mean: float | None = None  # the mean of the last text judged (aggregate="mean": the whole answer)
        #: a sentence of the answer made a claim: a bare yes/no pleasantry after it ("👍", "Absolutely!") signs off
        self._claimed = False
        self._tally = _Tally()
        #: the caller's prompt the answer repeats first (``echo: true``): not the answer, not judged; once the text
        #: starts with it, the answer starts after it (``_base``); a text that departs from it is judged whole
        self._echo = echo
        self._base = 0
        self._retrieval: tuple[RetrievalRelevance | None] | None = None  # (result,) once the check ran
        self._stop_reason: str | None = None  # stopped from outside the text (:meth:`stop`)
        self._error: BaseException | None = None  # scoring failed, or part of the answer went out unchecked
        self._failed = False  # a real failure was found (it wins over any error)
        self._end: StreamEnd | None = None
        #: admission control counts a stream once: refused (if at all) at its first check, never mid-way
        self._admitted = False
        # hold mode: the retrieval check needs only the question and the chunks, so it starts now and runs while the
        # model writes its first sentence, instead of after it (it is the larger part of the first sentence's wait)
        self._retrieval_started: Future[RetrievalRelevance | None] | BaseException | None = None
        self._retrieval_t0 = time.perf_counter()
        if self.holds and self.policy.retrieval_relevance is not None and guard.evaluator.relevance_check is not None:
            try:
                self._retrieval_started = guard.start(self._timed_retrieval)
                self._admitted = True
            except Exception as exc:  # noqa: BLE001 - e.g. overload: raised where the check's result is needed
                self._retrieval_started = exc

    # ----------------------------------------------------------------- state
    @property
    def hold(self) -> bool:
        """Text is held back until it passed."""
        return self.state is HOLDING

    @property
    def stopped(self) -> bool:
        return self.state is STOPPED

    @property
    def max_sentence_chars(self) -> int:
        return self._sentences.max_sentence_chars

    @property
    def text(self) -> str:
        """Everything generated so far."""
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    @property
    def answer(self) -> str:
        """The answer generated so far: the text after the echoed prompt, if it repeats one."""
        text = self.text
        if self._echo and text.startswith(self._echo):
            return text[len(self._echo):]
        return text[self._base:]

    def _echo_pending(self, final: bool = False) -> bool:
        """The text so far may still be the echoed prompt arriving (held, not yet split into sentences); once it
        holds the whole prompt and the answer's first word (or ended), the answer starts after the prompt, or at its
        last sentence when the answer finishes that (:func:`~guardrail.render.echo_span`)."""
        if not self._echo:
            return False
        text = self.text
        if text.startswith(self._echo):
            if not final and not self._answer_settled(text):
                # what follows the prompt decides where a sentence ends ("U.S. " + "can be ..."; "\n**can be
                # returned. Other items ...**" once its markup closes): it is read once the answer's first paragraph
                # has ended (or its first ECHO_TAIL_CHARS characters came, all answer_start reads), or at the end
                return True
            (self._base, finished), self._echo = echo_span(self._echo, text), ""
            if finished > self._base:  # the prompt's last sentence, finished by the answer: one sentence, as rendered
                self._sentences.join_until(finished)
            return False
        if self._echo.startswith(text):
            return True
        self._echo = ""  # it departs from the prompt: the text is the answer, judged whole
        return False

    def _answer_settled(self, text: str) -> bool:
        """The answer after the echoed prompt has ended its first paragraph, or is longer than what
        :func:`~guardrail.render.echo_span` reads (each look reads at most that much: a stream of many small chunks
        costs linear time)."""
        start = len(self._echo)
        if len(text) - start > ECHO_TAIL_CHARS:
            return True
        first = _NON_SPACE.search(text, start)
        return first is not None and _PARAGRAPH_END.search(text, first.start()) is not None

    # ----------------------------------------------------------------- feeding
    @property
    def judged(self) -> bool:
        """Some sentence of the answer was judged (a claim or a yes/no answer, not only pleasantries)."""
        return any(e.score is not None for e in self._tally.evidence)

    def feed(self, chunk: str) -> str:
        """Add generated text; return the text that may be delivered now ("" while held back)."""
        if not self.state.open or not chunk:
            return ""
        if self.add(chunk):
            return self.release()
        return chunk if self.state is STREAMING else ""

    def add(self, chunk: str) -> bool:
        """Cheap part of :meth:`feed` (fine on an event loop): append the text; True when :meth:`release` (which
        scores; run it in a thread) has work to do. In flag mode always False."""
        if not self.state.open or not chunk:
            return False
        self._parts.append(chunk)
        self._length += len(chunk)
        if self.state is STREAMING:
            self.released = self._length
            return False
        due = self._sentences.feed(chunk)
        limit = self.guard.evaluator.faithfulness_config.max_response_chars
        # a terminal control anywhere in the text, between sentences too (a lone CR overwrites the line it ends: it
        # waits for the next character, which may make it a CRLF); the whole-answer check refuses the same
        probe = self._cr + chunk
        control = terminal_controls(probe)
        self._cr = probe[len(probe.rstrip("\r")):]
        problem = None if control is None else (
            f"the streamed answer holds {control.split(' at offset')[0]}: a terminal hides, moves or overwrites text "
            "with it, so what a reader sees is not what the guard would read; send the answer without terminal "
            "control sequences")
        if problem is None and _STYLE_START.search(self._tail + chunk):
            self._sheet_owed = True  # the whole text is looked at, by release() (off the event loop) or finish()
        self._tail = (self._tail + chunk)[-_STYLE_TAIL:]
        if problem is not None or self._length > limit:  # unchecked from here, refused before any more model work
            return self._refuse(UncheckableError(
                f"the streamed answer is over {limit:,} characters (max_response_chars); raise the limit to check it"
            ) if problem is None else UnreadableError(problem))
        if self._echo and (self._echo_pending() or self._base):
            return bool(self._base)  # the prompt is all here: it goes out (the caller's own text); or it is arriving
        if self._sheet_owed:  # release() looks at the text first, when its budget allows (before, nothing goes out)
            return self._affords(self._sheet_read, self._length)
        due = (due or self._deferred) and not streams_hold_to_end(self.policy)  # mean: decided at the end
        if due and not self._affords(self._held_read, self._sentences.held):
            self._deferred = True
            return False
        return due

    def _affords(self, spent: int, cost: int) -> bool:
        """A re-read of ``cost`` characters keeps what was ``spent`` on its kind within :data:`_REREAD` times the text
        fed so far."""
        return spent + cost <= _REREAD * self._length

    def _refuse(self, error: Exception) -> bool:
        """The answer can not be checked from here (``error``: logged and counted, once): held and failing closed,
        the stream stops; failing open, it is delivered unchecked from here on. True when :meth:`release` hands out
        the held text."""
        self._error = error
        self.guard.error_verdict(error, "", timings=Timings(0.0))
        if self.policy.on_error == "fail_closed":
            self.state = STOPPED
            return False
        self.state = STREAMING
        return True

    def _look_for_sheet(self) -> None:
        """Look at the whole text for a style sheet outside code (a chunk may have started one): one makes the answer
        unreadable (:meth:`_refuse`)."""
        self._sheet_owed = False
        self._sheet_read += self._length
        sheet = stylesheet(self.text)
        if sheet is not None:
            self._refuse(UnreadableError(
                f"the streamed answer holds {sheet.split(' at offset')[0]}: it may hide, add or reorder text a browser "
                "shows, which the guard does not evaluate; send the answer without style sheets or right-to-left "
                "layout"))

    def release(self) -> str:
        """Check the sentences completed so far; return the newly released text."""
        if self.state is STREAMING:  # e.g. switched to fail-open delivery: the held text goes out unchecked
            self.released = self._length
            return self._sentences.release(self._length)
        if self.state is not HOLDING:
            return ""
        if self._sheet_owed:
            if not self._affords(self._sheet_read, self._length):
                return ""  # the text is looked at once the budget allows; until then nothing more goes out
            self._look_for_sheet()
            if self.state is not HOLDING:
                return self.release()  # failing open the held text goes out unchecked; stopped, nothing
        prompt = self._release_echo()
        if streams_hold_to_end(self.policy):
            return prompt
        held = self._sentences.held
        if not self._affords(self._held_read, held):
            self._deferred = True
            return prompt
        self._held_read += held
        self._deferred = False
        return prompt + self._check(self._sentences.sentences(), final=False)

    def _release_echo(self) -> str:
        """The echoed prompt, once it arrived whole: released as it is (it is the caller's text, not the answer)."""
        if self._base and self.released < self._base:
            self.released = self._base
            return self._sentences.release(self._base)
        return ""

    async def afeed(self, chunk: str) -> str:
        """As :meth:`feed`; in hold mode the splitting and scoring run off the event loop."""
        if self.state is not HOLDING:
            return self.feed(chunk)
        import asyncio  # in the async paths only: sync users' cold start does not pay for asyncio

        return await asyncio.to_thread(self.feed, chunk)

    def finish(self, *, time_to_first_token: float | None = None, generation: float | None = None) -> StreamEnd:
        """End of the generation: check what is left and return the final verdict (reported once)."""
        if self._end is not None:
            return self._end
        if not self.holds:  # flag / pass mode: the whole answer is checked now
            self._echo_pending(final=True)
            verdict = self.guard.check(self.question, self.contexts, self.answer,
                                       time_to_first_token=time_to_first_token, generation=generation)
            self.state = FINISHED
            self._end = StreamEnd("", verdict)
            return self._end
        tail = ""
        if self.state is HOLDING and self._sheet_owed:
            self._look_for_sheet()
        if self.state is HOLDING:
            self._echo_pending(final=True)
            tail = self._release_echo()
            tail += self._check(self._sentences.sentences(final=True), final=True)
        elif self.state is STREAMING:
            tail = self.release()
        verdict = self.guard.report(self._verdict(time_to_first_token, generation), self.question, self.contexts)
        if self.state is not STOPPED:
            self.state = FINISHED
        self._end = StreamEnd(tail, verdict)
        return self._end

    async def afinish(self, *, time_to_first_token: float | None = None, generation: float | None = None) -> StreamEnd:
        import asyncio

        return await asyncio.to_thread(lambda: self.finish(time_to_first_token=time_to_first_token, generation=generation))

    def stop(self, reason: str, check: str = "format") -> None:
        """Stop the stream for a reason found outside the text (e.g. an unreadable upstream event): the answer is
        unchecked from there on, and a hold-mode stream follows ``on_error`` (the caller decides to call this)."""
        self.state = STOPPED
        self._stop_reason = reason
        self.guard.error_verdict(UnreadableError(reason), "", timings=Timings(0.0))  # logged and counted

    def halt(self) -> None:
        """Stop taking text in because another choice of the same answer stopped: the verdict covers what was checked
        (nothing more is scored), and nothing more is released."""
        if self.state.open:
            self.state = STOPPED

    def note_unchecked(self, exc: BaseException) -> None:
        """Part of the answer went out unread (``on_error: fail_open``; counted by the caller): unless a real failure
        is found, the verdict is an error, not a pass. Held streams only (a flag-mode verdict is the guard's)."""
        if self._error is None:
            self._error = exc

    # ----------------------------------------------------------------- checking
    def _check(self, sentences: Sequence[Sentence], final: bool) -> str:
        """Score sentences in order while they pass; release the passed ones (at the end, with what follows them)."""
        if streams_hold_to_end(self.policy):
            return self._check_whole(sentences) if final else ""
        end = self.released
        pending: list[Sentence] = []  # claimless sentences after a bare yes/no word ("Absolutely!"): read later
        sentences = list(sentences)
        skip = 0  # sentences before this index were read with the one before them
        for k, s in enumerate(sentences):
            if skip > k:  # read with the bare reply before it
                continue
            if _bare(s.text).endswith("?") and yes_no_statement(_bare(s.text), True) is not None:
                # a yes/no question of the answer's own ("Can gift cards be returned?") claims nothing when a reply
                # follows ("No."): the reply is judged as its answer. Held (unreleased) until the sentence after it
                # completes; judged as written when no reply follows
                after = sentences[k + 1] if k + 1 < len(sentences) else None
                if after is None and not final:
                    break
                if after is not None and (yes_no_answer(_bare(after.text)) or polarity(_bare(after.text))[0] is not None):
                    continue  # "No." / "No, gift cards cannot be returned.": the reply is judged, as its answer
            # a bare "Yes." right after a question of the answer's own ("Gift cards? Yes.") answers that question: it
            # is judged now, never taken for a pleasantry
            if pending or (yes_no_only(s.text) and self._last_before(s.start) != "?"):
                if makes_claim(s.text):  # a claim follows: "Sure!" was a pleasantry, the claim is what is judged
                    pending = []
                else:
                    pending.append(s)
                    continue
            judged = s
            shown = render(s.text).text  # "Yes[^1].": the reply a reader sees
            if not self._claimed and remarks_to_reader(shown):
                # "Oh nice!", "Have you been?" before any claim: it claims nothing beside one, so it is read with the
                # sentences up to the first claim after it, as the whole answer reads it (held until that completes);
                # at the end, with what there is
                claim = next((i for i in range(k + 1, len(sentences)) if _claims(sentences[i].text)
                              and not heads_list(render(sentences[i].text).text)), None)  # a head: its item
                if claim is None and not final:
                    break
                last = claim if claim is not None else len(sentences) - 1
                if last > k:
                    judged, skip = sentences[last], last + 1
            if judged is s and self.question and not self._last_before(s.start) and _span_like(shown):
                # a short span first ("Webhooks.", "Litware Inc.") is the answer when it is all the answer, and the
                # topic of what follows otherwise (as the whole answer reads it): held until the next sentence
                # completes, then read with it; at the end, alone
                if len(sentences) == k + 1 and not final:
                    break
                if len(sentences) > k + 1:
                    judged, skip = sentences[k + 1], k + 2
            if judged is s and heads_list(shown):
                # a list's head ("You'll need to bring:") is judged with the item after it, as the whole answer reads
                # it (its claim is judged whole in each item it completes): held until that item completes; at the
                # end, alone
                if len(sentences) == k + 1 and not final:
                    break
                if len(sentences) > k + 1:
                    judged, skip = sentences[k + 1], k + 2
            if yes_no_answer(shown) and not makes_claim(shown) and self._last_before(s.start) != "?":
                # a bare reply ("Yes.", "They can't.") is read with what follows it up to the first sentence that
                # makes a claim, as the whole answer reads it: "Yes. It removes 99.9% of lead." is judged on its
                # claim ("Yes. Here are the details:" + a list too), while "Yes." alone to "Can I return it?"
                # (nothing names "it") cannot be judged. Held (unreleased) until that sentence completes
                claim = next((i for i in range(k + 1, len(sentences)) if makes_claim(render(sentences[i].text).text)),
                             None)
                if claim is None and not final:
                    break
                last = claim if claim is not None else len(sentences) - 1
                if last > k:
                    judged, skip = sentences[last], last + 1
            if not self._passes(self.text[s.start : judged.end], s.start):
                self.state = STOPPED
                break
            self._claimed = self._claimed or _claims(judged.text)
            end = self._sentences.past_space(judged.end)  # released now, its trailing whitespace with it
        if pending and final and self.state is HOLDING and self._claimed:
            # a yes/no pleasantry after the answer's claims signs off ("... cannot be returned. 👍"), as in a whole
            # answer (FaithfulnessCheck judges it only when the answer makes no claim at all)
            end = pending[-1].end
        elif pending and final and self.state is HOLDING:
            # the answer ends without a claim: its yes/no word is the answer, read with the question (as a whole
            # answer is: FaithfulnessCheck judges "Great question! Absolutely!" as "yes")
            first = pending[0]
            text = self.text[first.start : pending[-1].end]
            if self._passes(text, first.start):
                end = pending[-1].end
            else:
                self.state = STOPPED
        if final and self.state is HOLDING:
            end = self._length  # trailing whitespace
        self.released = max(self.released, end)
        return self._sentences.release(end)

    def _last_before(self, offset: int) -> str:
        """The answer's last character before ``offset`` that is not whitespace ("" at its start); read back from
        there, not by slicing the answer up to it (that cost every sentence the length of the answer before it)."""
        text, i = self.text, offset
        while i > self._base and text[i - 1].isspace():
            i -= 1
        return text[i - 1] if i > self._base else ""

    def _check_whole(self, sentences: Sequence[Sentence]) -> str:
        """``aggregate="mean"``: at the end the answer is judged as a whole answer is (every reading a client may
        show, the lower mean of them), and the mean decides for the whole answer (delivered whole, or blocked
        whole)."""
        if sentences and not self._passes(self.answer, self._base):
            self.state = STOPPED
            return ""
        checked = [self._mean] if self._mean is not None else []
        if mean_fails(self.policy, checked, faithfulness_limit(self.policy, 0.5)):
            self._failed = True
            self.state = STOPPED
            return ""
        self.released = self._length
        return self._sentences.release(self._length)

    def _passes(self, sentence: str, offset: int) -> bool:
        policy = self.policy
        evaluator = self.guard.evaluator
        tally = self._tally
        check = evaluator.faithfulness_check
        try:
            if policy.faithfulness is None or check is None:
                return self._retrieval_passes()
            t0 = time.perf_counter()
            evaluator.validate(self.question, self.contexts, sentence)
            # a sentence is read after the answer before it: a verbless one ("Gift cards too.", "Those too.") claims
            # what the sentence before it claims, a pronoun points at what was named before it ("### Gift cards" ...
            # "They can be returned."), a reply answers the question just asked ("Gift cards? Yes.")
            first = self._base  # the answer's start: the echoed prompt before it is not read as the answer
            run = functools.partial(check.run, preceding=self.text[max(first, offset - PRECEDING_CHARS) : offset]) \
                if offset > first else check.run
            result: FaithfulnessResult = self._score(run, self.question, self.contexts, sentence)
            tally.faithfulness_s += time.perf_counter() - t0
        except Exception as exc:  # noqa: BLE001 - logged, counted and applied per on_error at the end
            return self._scoring_failed(exc, sentence)
        tally.pairs += result.pairs
        tally.tokens += result.model_tokens
        self._mean = result.score
        ok = True
        limit = faithfulness_limit(policy, 0.5)
        # the sentence's number in the whole answer (the parts of a split sentence share it)
        base = (tally.evidence[-1].index + 1) if tally.evidence else 0
        for ev in result.sentences:
            at = offset - self._base  # offsets in the answer, as a whole answer's evidence gives them
            ev = dataclasses.replace(ev, index=base + ev.index, start=at + ev.start, end=at + ev.end)
            tally.evidence.append(ev)
            if sentence_fails(policy, ev.score, limit):
                ok = False
                self._failed = True
        # retrieval relevance gates the first sentence that makes a claim (decision.gate_failures); its evidence is
        # in the tally first, so the final decision sees the claim that was gated
        if ok and any(ev.checked for ev in result.sentences):
            try:
                ok = self._retrieval_passes()
            except Exception as exc:  # noqa: BLE001 - as above
                return self._scoring_failed(exc, sentence)
        return ok

    def _score(self, fn: Callable[..., T], *args: Any) -> T:
        """One scoring call of this stream: the first one passes the guard's admission bound, the later ones belong
        to an answer already admitted (a refusal raises :class:`OverloadedError` and leaves the stream unadmitted)."""
        try:
            with self.guard.tracking():  # a stream's check runs sentence by sentence: each counts while it runs
                result = self.guard.score(fn, *args, admitted=self._admitted, size=self._size)
        except OverloadedError:
            raise
        except BaseException:
            self._admitted = True  # submitted, then failed or overran: admitted all the same
            raise
        self._admitted = True
        return result

    def _scoring_failed(self, exc: Exception, sentence: str) -> bool:
        """A scoring error: logged and counted now, applied per ``on_error`` (and again at the end)."""
        self._error = exc
        self.guard.error_verdict(exc, sentence, timings=Timings(0.0))
        return self.policy.on_error == "fail_open"

    def _retrieval_passes(self) -> bool:
        """The retrieval-relevance gate (once per stream; True when the policy has none)."""
        policy = self.policy
        if policy.retrieval_relevance is None:
            return True
        if self._retrieval is None:
            self._retrieval = (self._retrieval_result(),)
        if self._retrieval[0] is None:  # no question: not checked, as in the whole answer's decision
            return True
        top = self._retrieval[0].top
        if top is None or top < policy.retrieval_relevance:
            self._failed = True
            return False
        return True

    def _timed_retrieval(self) -> RetrievalRelevance | None:
        t0 = time.perf_counter()
        try:
            relevance = self.guard.evaluator.relevance_check
            assert relevance is not None
            return relevance.retrieval(self.question, self.contexts)
        finally:
            self._tally.retrieval_s += time.perf_counter() - t0

    def _retrieval_result(self) -> RetrievalRelevance | None:
        started, self._retrieval_started = self._retrieval_started, None
        if isinstance(started, BaseException):
            raise started
        if started is None:
            return self._score(self._timed_retrieval)
        # the latency budget counts from the check's start, as for any other check
        budget = self.policy.latency_budget_s
        remaining = None if budget is None else max(budget - (time.perf_counter() - self._retrieval_t0), 0.0)
        return started.result(timeout=remaining)

    def _verdict(self, ttft: float | None, generation: float | None) -> Verdict:
        """The guard's decision over the checked sentences; scoring errors follow ``on_error`` unless a real
        failure was found, which always wins."""
        tally = self._tally
        timings = Timings(tally.faithfulness_s + tally.retrieval_s, ttft, generation)
        response = self.text[self._base : self.released]
        if self._stop_reason is not None:
            reason = self._stop_reason
            action: Action = self.policy.action if self.policy.on_error == "fail_closed" else "pass"
            return Verdict(action if self.stopped else "pass", "error", Scores(), (reason,), (), timings,
                           error=reason, response=response)
        verdict = decide(self.policy, self._evaluation(), response, timings)
        if self._error is not None and not self._failed:
            reason, message = self.guard.classify(self._error)
            applied: Action = self.policy.action if self.stopped else "pass"
            shown = getattr(self._error, "shown", None)
            return dataclasses.replace(
                verdict, action=applied, outcome="error", error=message, error_reason=reason,
                reasons=(f"scoring failed ({reason}): {message}; applied {self.policy.on_error}",),
                wire_reasons=None if shown is None else
                (f"scoring failed ({reason}): {shown}; applied {self.policy.on_error}",), wire_error=shown,
            )
        return verdict

    def _evaluation(self) -> Evaluation:
        tally = self._tally
        checked = [e.score for e in tally.evidence if e.score is not None]
        entailments = [e.entailment for e in tally.evidence if e.entailment is not None]
        faith = None
        check = self.guard.evaluator.faithfulness_check
        limit = faithfulness_limit(self.policy, 0.5)
        if limit is not None and tally.evidence and check is not None:
            # aggregate="mean": the whole answer was judged at once, and its mean is the lower of its readings'
            whole = self._mean if streams_hold_to_end(self.policy) and self._mean is not None else None
            faith = FaithfulnessResult(
                score=whole if whole is not None else float(np.mean(checked)) if checked else None,
                nli_score=float(np.mean(entailments)) if checked and entailments else None,
                calibrated=check.calibrator is not None,
                sentences=tuple(tally.evidence),
                mode=self.guard.evaluator.faithfulness_config.mode,
                threshold=limit,
                pairs=tally.pairs,
                model_tokens=tally.tokens,
                context_sentences=0,
            )
        retrieval = self._retrieval[0] if self._retrieval is not None else None
        return Evaluation(faith, retrieval, None, None,
                          CheckTimings(tally.faithfulness_s, tally.retrieval_s, 0.0))
