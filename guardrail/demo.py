"""A built-in demo: bundled documents, a tiny retriever and a deterministic OpenAI-compatible answerer that
sometimes answers unfaithfully on purpose, so ``guardrail serve --demo`` shows pass / flag / block offline.

The answerer quotes the document sentence that best matches the question. With ``model="demo-hallucinate"``
it quotes it, then goes on with the next sentence with its numbers changed and an unsupported claim added; with ``model="demo"`` it does so for about one question
in three (decided by the question's text, so the same question always gets the same answer);
``model="demo-faithful"`` never does.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import time
from collections import Counter
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from guardrail.text import content_stems, split_sentences

DOCUMENTS = [
    "Acme Outfitters accepts returns within 30 days of delivery. Items must be unused and in their original "
    "packaging. Refunds are issued to the original payment method within 5 business days.",
    "Opened electronics can be returned within 14 days and are subject to a 15% restocking fee. "
    "Gift cards and final-sale items cannot be returned.",
    "Standard shipping is free on orders over $50 and takes 3 to 5 business days. Express shipping costs $15 "
    "and arrives in 1 to 2 business days.",
    "Acme Outfitters stores are open from 9 am to 8 pm Monday to Saturday, and from 10 am to 6 pm on Sunday.",
    "All tents and backpacks carry a two-year warranty against manufacturing defects. The warranty does not "
    "cover normal wear, misuse or accidents.",
    "Members of the Acme Rewards program earn 1 point per dollar spent. 100 points can be redeemed for a $5 "
    "discount on a future purchase.",
]


def retrieve(question: str, k: int = 2) -> list[str]:
    """The ``k`` bundled documents sharing most (IDF-weighted) words with the question."""
    docs = [set(content_stems(d)) for d in DOCUMENTS]
    df: Counter[str] = Counter(w for d in docs for w in d)
    q = content_stems(question)
    scores = [sum(math.log(1 + len(docs) / df[w]) for w in q if w in d) for d in docs]
    order = sorted(range(len(DOCUMENTS)), key=lambda i: (-scores[i], i))
    return [DOCUMENTS[i] for i in order[:k]]


def _best_sentence(question: str, documents: list[str]) -> str:
    """The sentence of the best-ranked document that shares most words with the question."""
    q = set(content_stems(question))
    for doc in documents:
        sentences = [s.of(doc) for s in split_sentences(doc)]
        if sentences and any(q & set(content_stems(s)) for s in sentences):
            return max(sentences, key=lambda s: len(q & set(content_stems(s))))
    return "I could not find that in the documents."


def _distort(sentence: str) -> str:
    def bump(m: re.Match[str]) -> str:
        return str(int(m.group()) * 3)

    changed = re.sub(r"\d+", bump, sentence)
    if changed == sentence:
        changed = sentence.rstrip(".") + ", with no exceptions"
    return changed.rstrip(".") + ". You can also get a full cash refund at any partner store worldwide."


def _next_sentence(sentence: str, documents: list[str]) -> str:
    """The sentence after ``sentence`` in its document (or the sentence itself at the end)."""
    for doc in documents:
        sentences = [s.of(doc) for s in split_sentences(doc)]
        if sentence in sentences:
            i = sentences.index(sentence)
            return sentences[i + 1] if i + 1 < len(sentences) else sentence
    return sentence


def _hallucinated(sentence: str, documents: list[str]) -> str:
    """A faithful first sentence, then the hallucination (so a stream shows sentences passing, then the stop)."""
    return sentence + " " + _distort(_next_sentence(sentence, documents))


def answer(question: str, documents: list[str], model: str) -> str:
    sentence = _best_sentence(question, documents)
    if model == "demo-faithful":
        return sentence
    if model == "demo-hallucinate":
        return _hallucinated(sentence, documents)
    digest = hashlib.sha1(question.strip().lower().encode()).digest()
    return _hallucinated(sentence, documents) if digest[0] % 3 == 0 else sentence


def _question_and_documents(body: dict[str, object]) -> tuple[str, list[str]]:
    """The user's question and the documents the gateway put in the system message ("[1] ...")."""
    messages = body.get("messages") or []
    question, documents = "", []
    for m in messages if isinstance(messages, list) else []:
        if isinstance(m, dict) and m.get("role") == "system":
            documents += [line.split("] ", 1)[1] for line in str(m.get("content", "")).splitlines()
                          if re.match(r"\[\d+\] ", line)]
        if isinstance(m, dict) and m.get("role") == "user":
            question = str(m.get("content", ""))
    return question, documents or retrieve(question)


async def _chat(request: Request) -> Response:
    body = await request.json()
    question, documents = _question_and_documents(body)
    model = str(body.get("model", "demo"))
    text = answer(question, documents, model)
    created = int(time.time())
    if not body.get("stream"):
        return JSONResponse({
            "id": "chatcmpl-demo", "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        })

    async def events() -> AsyncIterator[str]:
        def chunk(delta: dict[str, object], finish: str | None = None) -> str:
            return "data: " + json.dumps({"id": "chatcmpl-demo", "object": "chat.completion.chunk", "created": created,
                                          "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"

        yield chunk({"role": "assistant", "content": ""})
        for i in range(0, len(text), 8):
            await asyncio.sleep(0.01)
            yield chunk({"content": text[i : i + 8]})
        yield chunk({}, "stop")
        yield "data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


async def _models(request: Request) -> Response:
    return JSONResponse({"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": "guardrail-demo"}
                                                    for m in ("demo", "demo-faithful", "demo-hallucinate")]})


upstream_app = Starlette(routes=[Route("/v1/chat/completions", _chat, methods=["POST"]),
                                 Route("/v1/models", _models, methods=["GET"])])
