"""Cost of a streamed answer through the gateway in block mode, however it is chunked (issue 9's DoS cases).

The gateway (uvicorn, the shipped model, default block policy) sits in front of a scripted upstream (uvicorn) that
sends:
- one faithful answer of 1k, 4k and 16k characters, one character per SSE event;
- one 2 MB event in 1 KB pieces (over the answer limit: refused without model work, after reading it once);
- round 37: 1,000 and 4,000 events of "Ok. " (bare pleasantries, as a model in a repetition loop writes them: held for
  a claim, and the held text was re-split at every one of them).

While each runs, a client polls ``/healthz`` every 20 ms: the event loop must stay free (p50/max printed).
Prints the time per request, the time per 1k characters and the ratio to the 1k case (linear = about 1).

    python benchmarks/stream_cost.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from typing import Any

import httpx
from middleware_overhead import served
from prometheus_client import CollectorRegistry

from guardrail.checks.evaluator import Evaluator
from guardrail.guard import Guard
from guardrail.policy import Policy
from guardrail.scorers.nli import NLIScorer, default_nli_model
from guardrail.server import create_gateway
from guardrail.telemetry import Telemetry

DOCS = ["Items can be returned within 30 days of delivery. Gift cards cannot be returned. "
        "Refunds are issued to the original payment method within 5 business days."]
SENTENCES = ["Items can be returned within 30 days of delivery. ", "Gift cards cannot be returned. ",
             "Refunds are issued to the original payment method within 5 business days. "]
PLAN: dict[str, list[bytes]] = {}


def sse(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def answer(n: int) -> str:
    text, i = "", 0
    while len(text) < n:
        text += SENTENCES[i % 3]
        i += 1
    return text[:n].rsplit(". ", 1)[0] + "."


def pieces_events(pieces: list[str]) -> list[bytes]:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    out = [sse({**chunk, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}) for p in pieces]
    return out + [sse({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}), b"data: [DONE]\n\n"]


def one_char_events(text: str) -> list[bytes]:
    return pieces_events(list(text))


def big_event(size: int, piece: int) -> list[bytes]:
    body = sse({"id": "c", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"content": "word " * (size // 5)}, "finish_reason": None}]})
    return [body[i : i + piece] for i in range(0, len(body), piece)] + [b"data: [DONE]\n\n"]


async def upstream(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        msg = await receive()
        body += msg.get("body", b"")
        if not msg.get("more_body"):
            break
    pieces = PLAN[json.loads(body)["plan"]]
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    for piece in pieces:
        await send({"type": "http.response.body", "body": piece, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def run(url: str, plan: str) -> tuple[float, list[float], str]:
    health: list[float] = []
    done = threading.Event()

    def poll() -> None:
        with httpx.Client() as c:
            while not done.is_set():
                t0 = time.perf_counter()
                c.get(url + "/healthz")
                health.append(time.perf_counter() - t0)
                time.sleep(0.02)

    poller = threading.Thread(target=poll)
    poller.start()
    t0 = time.perf_counter()
    r = httpx.post(url + "/v1/chat/completions", timeout=600, json={
        "model": "m", "stream": True, "plan": plan, "contexts": DOCS,
        "messages": [{"role": "user", "content": "How do returns work?"}]})
    elapsed = time.perf_counter() - t0
    done.set()
    poller.join()
    end = "content_filter" if "content_filter" in r.text[-2000:] else "passed"
    return elapsed, health, end


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    for n in (1000, 4000, 16000):
        PLAN[f"chars{n}"] = one_char_events(answer(n))
    PLAN["big"] = big_event(2 * 1024 * 1024, 1024)
    for n in (1000, 4000):
        PLAN[f"ok{n}"] = pieces_events(["Ok. "] * n)
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="m")
    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block"), observer=telemetry)
    with served(upstream) as up, served(create_gateway(up + "/v1", guard, telemetry), lifespan="on") as url:
        run(url, "chars1000")  # warm up
        rows = []
        for plan, label, chars in [("chars1000", "1k chars, 1-char events", 1000), ("chars4000", "4k chars, 1-char events", 4000),
                                   ("chars16000", "16k chars, 1-char events", 16000),
                                   ("big", "one 2 MB event in 1 KB pieces", 2 * 1024 * 1024),
                                   ("ok1000", "'Ok. ' x 1k events (4k chars)", 4000),
                                   ("ok4000", "'Ok. ' x 4k events (16k chars)", 16000)]:
            times, healths, ends = [], [], set()
            for _ in range(args.rounds):
                elapsed, health, end = run(url, plan)
                times.append(elapsed)
                healths.extend(health)
                ends.add(end)
            rows.append((label, chars, statistics.median(times), healths, ends))
    base = rows[0][2] / rows[0][1] * 1000
    print(f"{'case':34} {'median s':>9} {'s per 1k chars':>15} {'ratio to 1k':>12} {'/healthz p50 ms':>16} {'max ms':>8}  end")
    for label, chars, t, health, ends in rows:
        per_k = t / chars * 1000
        print(f"{label:34} {t:9.3f} {per_k:15.4f} {per_k / base:12.2f} {statistics.median(health) * 1000:16.1f} "
              f"{max(health) * 1000:8.1f}  {','.join(sorted(ends))}")


if __name__ == "__main__":
    main()
