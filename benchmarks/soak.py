"""Soak (not a test): 64 concurrent streaming clients for M minutes through the gateway, in front of a slow upstream,
with the models in process and/or on a remote scorer (`guardrail serve-scorer`, OIP v2 over HTTP on localhost).

Every process is separate: the upstream (tests/llm_server.py under uvicorn: the reference answer of load.py in
5-character chunks, --chunk-delay seconds before each), the gateway (`python -m guardrail serve --action block`),
in remote mode the scorer (`python -m guardrail serve-scorer`), and this load generator (asyncio + httpx). Each
client loops: a `stream: true` chat completion with a question of its own and the reference chunks made new for every
request (load.py's contexts_for(i, True): nothing is answered from a cache, the embeddings and NLI pairs are new).
Per request: time to first content, time to the end of the stream, status, whether it ended with [DONE]. RSS (VmRSS
of the gateway's and the scorer's process trees) is sampled every 10 s. Requests are bucketed by the minute they
started; requests still running at the end are waited for (and counted).

Before each soak, a calibration pass: 10 sequential streams straight from the upstream (its own first content and
end of sentence 1: block mode holds sentence 1 until it is checked) and 10 through the idle gateway.

    python benchmarks/soak.py [--mode inprocess|remote|both] [--minutes 10] [--concurrency 64] [--chunk-delay 0.02]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from load import ANSWER, contexts_for  # noqa: E402

FIRST_SENTENCE = ANSWER[: ANSWER.index(". ") + 1]
#: --blocked: the reference answer with its second sentence unsupported (45 days, in cash): block mode cuts every stream
#: there, while the upstream is still sending; what the client must get is sentence 1 (with its space) and the stop
BLOCKED_ANSWER = ANSWER.replace("within 5 business days", "within 45 business days, in cash")
SENT = {"answer": ANSWER, "expected": ANSWER}
OUT: list[str] = []


def say(line: str = "") -> None:
    print(line, flush=True)
    OUT.append(line)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, proc: subprocess.Popen, what: str, timeout: float = 180) -> None:
    deadline = time.time() + timeout
    while True:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.time() > deadline or proc.poll() is not None:
            raise SystemExit(f"{what} did not start")
        time.sleep(0.3)


def tree_rss_mb(pid: int) -> float:
    """VmRSS of pid and its descendants, in MB."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(d))
            except (OSError, IndexError, ValueError):
                pass
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def body(i: int, delay: float) -> dict:
    return {"model": "m", "stream": True, "answer": SENT["answer"], "contexts": contexts_for(i, True), "delay": delay,
            "messages": [{"role": "user", "content": f"How do returns and refunds work? (ticket {i})"}]}


async def one(client: httpx.AsyncClient, url: str, i: int, delay: float) -> dict:
    t0 = time.perf_counter()
    rec = {"start": t0, "status": None, "done": False, "ttft": None, "sentence": None, "total": None, "error": None}
    text = ""
    try:
        async with client.stream("POST", url + "/v1/chat/completions", json=body(i, delay)) as r:
            rec["status"] = r.status_code
            if r.status_code != 200:
                rec["body"] = (await r.aread())[:300].decode(errors="replace")
            async for line in r.aiter_lines():
                if line.strip() == "data: [DONE]":
                    rec["done"] = True
                if not line.startswith("data: {"):
                    continue
                for choice in json.loads(line[6:]).get("choices", []):
                    text += (choice.get("delta") or {}).get("content") or ""
                if rec["ttft"] is None and text:
                    rec["ttft"] = time.perf_counter() - t0
                if rec["sentence"] is None and len(text) >= len(FIRST_SENTENCE):
                    rec["sentence"] = time.perf_counter() - t0
    except Exception as e:  # noqa: BLE001 - any exception is an error of the soak
        rec["error"] = f"{type(e).__name__}: {e}"[:200]
    rec["total"] = time.perf_counter() - t0
    rec["text_ok"] = text == SENT["expected"]
    return rec


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))] if xs else float("nan")


def is_error(r: dict) -> bool:
    return r["error"] is not None or r["status"] != 200 or not r["done"]


async def calibrate(url: str, n: int, delay: float, base: int) -> tuple[float, float, float]:
    """Medians (first content, sentence 1, end) of n sequential streams."""
    async with httpx.AsyncClient(timeout=120) as client:
        rs = [await one(client, url, base + k, delay) for k in range(n)]
    bad = [r for r in rs if is_error(r)]
    if bad:
        say(f"  calibration errors: {bad[:2]}")
    ok = [r for r in rs if not is_error(r)]
    return tuple(statistics.median(r[k] for r in ok) for k in ("ttft", "sentence", "total"))  # type: ignore[return-value]


async def soak(url: str, minutes: float, concurrency: int, delay: float, pids: dict[str, int]) -> tuple[list, list]:
    records: list[dict] = []
    rss: list[tuple[float, dict[str, float]]] = []
    t_start = time.perf_counter()
    t_end = t_start + minutes * 60
    counter = iter(range(10**9))

    async def client_loop(client: httpx.AsyncClient) -> None:
        while time.perf_counter() < t_end:
            rec = await one(client, url, 1_000_000 + next(counter), delay)
            rec["start"] -= t_start
            records.append(rec)

    async def sampler() -> None:
        while True:
            rss.append((time.perf_counter() - t_start, {k: tree_rss_mb(p) for k, p in pids.items()}))
            if time.perf_counter() >= t_end:
                return
            await asyncio.sleep(10)

    limits = httpx.Limits(max_connections=concurrency + 8, max_keepalive_connections=concurrency + 8)
    async with httpx.AsyncClient(timeout=httpx.Timeout(120), limits=limits) as client:
        await asyncio.gather(sampler(), *(client_loop(client) for _ in range(concurrency)))
    rss.append((time.perf_counter() - t_start, {k: tree_rss_mb(p) for k, p in pids.items()}))
    return records, rss


def report(mode: str, records: list[dict], rss: list, calib: dict, minutes: float) -> dict:
    say(f"-- {mode}: {len(records)} streams")
    say(f"{'minute':>6} {'streams':>8} {'err':>4} {'TTFT p50':>9} {'TTFT p99':>9} {'end p50':>8} {'end p99':>8}   (ms)")
    rows = []
    for m in range(int(minutes + 0.999)):
        rs = [r for r in records if m * 60 <= r["start"] < (m + 1) * 60]
        ok = [r for r in rs if not is_error(r)]
        tt = [r["ttft"] * 1000 for r in ok if r["ttft"] is not None]
        en = [r["total"] * 1000 for r in ok]
        row = (m + 1, len(rs), sum(is_error(r) for r in rs), pct(tt, .5), pct(tt, .99), pct(en, .5), pct(en, .99))
        rows.append(row)
        say(f"{row[0]:>6} {row[1]:>8} {row[2]:>4} {row[3]:>9.0f} {row[4]:>9.0f} {row[5]:>8.0f} {row[6]:>8.0f}")
    errs = [r for r in records if is_error(r)]
    ok = [r for r in records if not is_error(r)]
    wrong_text = sum(not r["text_ok"] for r in ok)
    say(f"errors: {len(errs)} of {len(records)} (non-200 {sum(r['status'] != 200 for r in errs)}, "
        f"no [DONE] {sum(not r['done'] for r in errs)}, exceptions {sum(r['error'] is not None for r in errs)}); "
        f"streams whose text is not the whole answer: {wrong_text}")
    for r in errs[:5]:
        say(f"  e.g. status {r['status']} done {r['done']} error {r['error']} body {r.get('body')}")
    tt = [r["ttft"] for r in ok if r["ttft"] is not None]
    en = [r["total"] for r in ok]
    wall = max(r["start"] + r["total"] for r in records)
    say(f"overall: {len(ok) / wall:.2f} streams/s, TTFT p50 {pct(tt, .5) * 1000:.0f} ms p99 {pct(tt, .99) * 1000:.0f} ms, "
        f"end p50 {pct(en, .5) * 1000:.0f} ms p99 {pct(en, .99) * 1000:.0f} ms")
    first, last = rows[0], rows[-1]
    say(f"p99 first vs last minute: TTFT {first[4]:.0f} -> {last[4]:.0f} ms ({last[4] / first[4]:.2f}x), "
        f"end {first[6]:.0f} -> {last[6]:.0f} ms ({last[6] / first[6]:.2f}x)")
    growth = {}
    for name in rss[0][1]:
        at1 = next((s[name] for t, s in rss if t >= 60), rss[-1][1][name])
        end = rss[-1][1][name]
        growth[name] = (end - at1) / at1 * 100
        series = " ".join(f"{s[name]:.0f}" for t, s in rss[::6])
        say(f"RSS {name}: start {rss[0][1][name]:.0f} MB, minute 1 {at1:.0f} MB, end {end:.0f} MB, "
            f"growth from minute 1 {growth[name]:+.1f}% (every minute: {series} MB)")
    up_ttft, up_sentence, _ = calib["upstream"]
    gw_ttft, _, gw_end = calib["gateway"]
    say(f"calibration (10 sequential, medians): upstream first content {up_ttft * 1000:.0f} ms, sentence 1 "
        f"{up_sentence * 1000:.0f} ms; idle gateway first content {gw_ttft * 1000:.0f} ms, end {gw_end * 1000:.0f} ms "
        f"-> guard's added time idle {(gw_ttft - up_sentence) * 1000:.0f} ms")
    say(f"guard's added time under the soak (TTFT p50 - upstream's sentence 1): {(pct(tt, .5) - up_sentence) * 1000:.0f} ms")
    return {"ttft_p50": pct(tt, .5), "end_p50": pct(en, .5), "idle_ttft": gw_ttft, "up_sentence": up_sentence,
            "errors": len(errs), "growth": growth, "rows": rows}


def run_mode(mode: str, args: argparse.Namespace, upstream: str) -> dict:
    procs: list[subprocess.Popen] = []
    pids: dict[str, int] = {}
    try:
        gw_port = free_port()
        cmd = [sys.executable, "-m", "guardrail", "serve", "--upstream", upstream + "/v1", "--port", str(gw_port),
               "--action", "block", "--log-level", "warning"]
        if mode == "remote":
            sc_port = free_port()
            scorer = subprocess.Popen([sys.executable, "-m", "guardrail", "serve-scorer", "--port", str(sc_port)])
            procs.append(scorer)
            wait_ready(f"http://127.0.0.1:{sc_port}/v2/health/ready", scorer, "the scorer")
            pids["scorer"] = scorer.pid
            cmd += ["--scorer-url", f"http://127.0.0.1:{sc_port}"]
        gw = subprocess.Popen(cmd)
        procs.append(gw)
        pids["gateway"] = gw.pid
        url = f"http://127.0.0.1:{gw_port}"
        wait_ready(url + "/healthz", gw, "the gateway")
        calib = {"upstream": asyncio.run(calibrate(upstream, 10, args.chunk_delay, 0)),
                 "gateway": asyncio.run(calibrate(url, 12, args.chunk_delay, 100))}  # the first 2 warm the models up
        say(f"== {mode}: gateway pid {gw.pid}" + (f", scorer pid {pids['scorer']}" if "scorer" in pids else ""))
        records, rss = asyncio.run(soak(url, args.minutes, args.concurrency, args.chunk_delay, pids))
        return report(mode, records, rss, calib, args.minutes)
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", default="both", choices=["inprocess", "remote", "both"])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--chunk-delay", type=float, default=0.02)
    ap.add_argument("--blocked", action="store_true",
                    help="every answer's sentence 2 is unsupported: every stream is cut there by block mode")
    ap.add_argument("--out", default=str(HERE / "results" / "soak.txt"))
    args = ap.parse_args()
    if args.blocked:
        SENT.update(answer=BLOCKED_ANSWER, expected=FIRST_SENTENCE + " ")
    say(f"soak: {args.concurrency} concurrent streaming clients, {args.minutes:g} min per mode, upstream streams the "
        f"reference answer ({len(ANSWER)} chars) in 5-character chunks with {args.chunk_delay * 1000:.0f} ms before each; "
        f"new chunks in every request; gateway --action block"
        + ("; sentence 2 unsupported: every stream blocked there" if args.blocked else "")
        + f"; {len(os.sched_getaffinity(0))} CPUs, everything on this machine")
    port = free_port()
    upstream_proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "llm_server:app", "--app-dir",
                                      str(HERE.parent / "tests"), "--port", str(port), "--log-level", "warning"])
    upstream = f"http://127.0.0.1:{port}"
    results = {}
    try:
        deadline = time.time() + 30
        while True:
            try:
                httpx.get(upstream + "/", timeout=1)
                break
            except httpx.HTTPError:
                if time.time() > deadline:
                    raise SystemExit("upstream did not start") from None
                time.sleep(0.2)
        for mode in (["inprocess", "remote"] if args.mode == "both" else [args.mode]):
            results[mode] = run_mode(mode, args, upstream)
            say()
    finally:
        upstream_proc.terminate()
        upstream_proc.wait(10)
    if len(results) == 2:
        a, b = results["inprocess"], results["remote"]
        say(f"remote / in process (p50): TTFT under soak {b['ttft_p50'] / a['ttft_p50']:.2f}x "
            f"({b['ttft_p50'] * 1000:.0f} vs {a['ttft_p50'] * 1000:.0f} ms), end of stream {b['end_p50'] / a['end_p50']:.2f}x, "
            f"guard's added time idle {(b['idle_ttft'] - b['up_sentence']) * 1000:.0f} vs "
            f"{(a['idle_ttft'] - a['up_sentence']) * 1000:.0f} ms")
    Path(args.out).write_text("\n".join(OUT) + "\n")


if __name__ == "__main__":
    main()
