"""Does reading one large upstream answer stall the gateway's other requests? (round 20, R1)

The gateway (uvicorn, the shipped model, default block policy) sits in front of a scripted upstream that sends:
- a 30 MB JSON answer whose text-free ``usage`` holds an array of 15M zeros (under the 32 MB cap);
- a stream of 2M keep-alive comments (6 MB) between a faithful answer's events (over the 100,000-event cap now);
- a small faithful JSON answer (the baseline);
- round 37: a 20 KB JSON answer holding 2,000 "`<style>`" code spans (every one made the guard find the answer's
  code again), and a stream of 300 events that each hold one (every one had the whole text looked at for a style
  sheet, on the event loop); a 20 KB answer that opens as a JSON document ('{"a":' x 4,000, a URL pattern that tried
  every start of the run to its end).

While each request runs, a client thread polls ``/healthz`` every 50 ms. Prints, per case, the median and worst
``/healthz`` latency, the median request time and the status. Run it on the tree to measure (before: a checkout of
the parent commit on PYTHONPATH):

    python benchmarks/healthz_stall.py [--rounds 3]
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

DOCS = ["Items can be returned within 30 days of delivery for a full refund. Gift cards cannot be returned."]
GOOD = "Items can be returned within 30 days of delivery."
PLAN: dict[str, tuple[str, list[bytes]]] = {}


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    payload = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def plans() -> None:
    head = ('{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":'
            '{"role":"assistant","content":"%s"},"finish_reason":"stop"}],"usage":{"x":[0' % GOOD).encode()
    PLAN["json30mb"] = ("application/json", [head] + [b",0" * 500_000] * 30 + [b"]}}"])
    PLAN["comments2m"] = ("text/event-stream", [chunk({"role": "assistant", "content": GOOD})]
                          + [b":\n\n" * 100_000] * 20 + [chunk({}, "stop"), b"data: [DONE]\n\n"])
    small = {"id": "c1", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": GOOD}, "finish_reason": "stop"}]}
    PLAN["small"] = ("application/json", [json.dumps(small).encode()])
    for name, text in [("style_json", "Gift cards cannot be returned. " + "`<style>` " * 2000),
                       ("json_doc", '{"a":' * 4000)]:
        answer = {**small, "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                        "finish_reason": "stop"}]}
        PLAN[name] = ("application/json", [json.dumps(answer).encode()])
    PLAN["style_stream"] = ("text/event-stream", [b"".join(
        [chunk({"role": "assistant", "content": ""}), chunk({"content": "Gift cards cannot be returned. "})]
        + [chunk({"content": "`<style>` "})] * 300 + [chunk({}, "stop"), b"data: [DONE]\n\n"])])


async def upstream(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = b""
    while True:
        msg = await receive()
        body += msg.get("body", b"")
        if not msg.get("more_body"):
            break
    ctype, pieces = PLAN[json.loads(body)["plan"]]
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", ctype.encode())]})
    for piece in pieces:
        await send({"type": "http.response.body", "body": piece, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


def run(url: str, plan: str) -> tuple[float, list[float], int]:
    health: list[float] = []
    done = threading.Event()

    def poll() -> None:
        with httpx.Client(timeout=120) as c:
            while not done.is_set():
                t0 = time.perf_counter()
                c.get(url + "/healthz")
                health.append(time.perf_counter() - t0)
                time.sleep(0.05)

    poller = threading.Thread(target=poll)
    poller.start()
    time.sleep(0.2)
    t0 = time.perf_counter()
    r = httpx.post(url + "/v1/chat/completions", timeout=900, json={
        "model": "m", "stream": PLAN[plan][0] == "text/event-stream", "plan": plan, "contexts": DOCS,
        "messages": [{"role": "user", "content": "Can I return a gift card?"}]})
    elapsed = time.perf_counter() - t0
    done.set()
    poller.join()
    return elapsed, health, r.status_code


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    plans()
    telemetry = Telemetry(CollectorRegistry(), route="gateway", model="m")
    guard = Guard(Evaluator(nli=NLIScorer(default_nli_model())), Policy(action="block"), observer=telemetry)
    rows = []
    with served(upstream) as up, served(create_gateway(up + "/v1", guard, telemetry), lifespan="on") as url:
        run(url, "small")  # warm up
        for plan, label in [("small", "small faithful JSON answer"), ("json30mb", "30 MB JSON answer (15M zeros)"),
                            ("comments2m", "2M keep-alive comments (6 MB)"),
                            ("style_json", "JSON, 2,000 `<style>` spans (20 KB)"),
                            ("style_stream", "stream, 300 `<style>` events"),
                            ("json_doc", "JSON, '{\"a\":' x 4,000 (20 KB)")]:
            times, healths, statuses = [], [], set()
            for _ in range(args.rounds):
                elapsed, health, status = run(url, plan)
                times.append(elapsed)
                healths.extend(health)
                statuses.add(status)
            rows.append((label, statistics.median(times), healths, statuses))
    print(f"{'case':36} {'request median s':>17} {'/healthz median ms':>19} {'worst ms':>9}  status")
    for label, t, health, statuses in rows:
        print(f"{label:36} {t:17.2f} {statistics.median(health) * 1000:19.1f} {max(health) * 1000:9.1f}  "
              f"{','.join(map(str, sorted(statuses)))}")


if __name__ == "__main__":
    main()
