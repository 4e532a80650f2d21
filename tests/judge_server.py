"""A scripted OpenAI-compatible judge (Starlette on uvicorn): deterministic JSON replies chosen from the prompt, and
scripted failures (malformed JSON, 429 with Retry-After, 500, slow replies, endpoints that ignore ``n``)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

#: every request body seen, in order
CALLS: list[dict[str, Any]] = []
#: failures to play before answering normally: ("429", seconds) / ("500", None) / ("slow", seconds) / ("garbage", n)
FAULTS: list[tuple[str, Any]] = []
#: override of the reply for a prompt: a function of the prompt text returning a JSON-able object, or a raw string
OVERRIDE: dict[str, Callable[[str, int], Any]] = {}
SETTINGS: dict[str, Any] = {"ignore_n": False, "delay_s": 0.0}


def section(prompt: str, title: str) -> str:
    m = re.search(rf"{title}:\s*\n?(.*?)(?:\n\n[A-Z][\w -]*:|\nReply with)", prompt, re.S)
    return m.group(1).strip() if m else ""


def numbered(block: str) -> list[str]:
    return [re.sub(r"^\d+\.\s*", "", line).strip() for line in block.splitlines() if re.match(r"^\d+\.", line)]


def brain(prompt: str, i: int) -> Any:
    """Rules: a claim or answer is unsupported when it mentions Mars; everything is judged from the prompt text."""
    for key, fn in OVERRIDE.items():
        if key in prompt:
            return fn(prompt, i)
    if "how completely" in prompt:
        return {"reasoning": "scripted", "completeness": 0.5}
    if "sufficient to answer" in prompt:
        return {"reasoning": "scripted", "sufficient": True}
    if "atomic claims" in prompt:
        text = section(prompt, "Text")
        return {"claims": [s.strip() + "." for s in text.rstrip(".").split(". ") if s.strip()]}
    if "directly inferred" in prompt:
        return {"verdicts": [{"claim": c, "supported": "Mars" not in c, "reason": "scripted"}
                             for c in numbered(section(prompt, "Claims"))]}
    if "fully supported by the documents" in prompt:
        return {"reasoning": "scripted", "supported": "Mars" not in section(prompt, "Answer")}
    if "relevant to the question" in prompt:
        return {"verdicts": [{"statement": c, "verdict": "no" if "weather" in c else "yes", "reason": "scripted"}
                             for c in numbered(section(prompt, "Statements"))]}
    if "named entities" in prompt:
        text = section(prompt, "Text")
        return {"entities": re.findall(r"\b[A-Z][a-z]+\b|\b\d+\b", text)}
    if "attributed to the documents" in prompt:
        return {"verdicts": [{"statement": c, "attributed": "Mars" not in c, "reason": "scripted"}
                             for c in numbered(section(prompt, "Statements"))]}
    if "was useful to arrive" in prompt:
        return {"reason": "scripted", "useful": "useless" not in section(prompt, "Document")}
    if "Write the question" in prompt:
        return {"question": "How long do I have to return an item?", "noncommittal": "know" in section(prompt, "Answer")}
    if "evaluation steps for judging" in prompt:
        return {"steps": ["Check the facts.", "Check completeness."]}
    if "Evaluation steps" in prompt:
        return {"reason": "scripted", "score": 2 if "Mars" in section(prompt, "Answer") else 4}
    if "Classify each claim" in prompt:
        return {"TP": ["a", "b", "c"], "FP": ["d"], "FN": ["e"]}
    if "keys of" in prompt:
        return {"reason": "scripted", "used": ["c0s0", "c1s1", "c9s9"]}
    return {"error": "unknown prompt"}


async def chat(request: Request) -> Response:
    body = await request.json()
    CALLS.append(body)
    if FAULTS and FAULTS[0][0] != "garbage":
        kind, arg = FAULTS.pop(0)
        if kind == "429":
            return JSONResponse({"error": {"message": "rate limited", "type": "rate_limit"}}, status_code=429,
                                headers={"retry-after": str(arg)})
        if kind == "500":
            return JSONResponse({"error": {"message": "boom", "type": "server_error"}}, status_code=500)
        if kind == "slow":
            await asyncio.sleep(arg)
        if kind == "no_choices":  # 200 with "choices": [] (or null, or a choice with no message)
            choices_of = {"empty": [], "null": None, "no_message": [{"index": 0, "finish_reason": "stop"}]}[arg]
            return JSONResponse({"id": "j", "object": "chat.completion", "created": 1, "model": body["model"],
                                 "choices": choices_of})
    if SETTINGS["delay_s"]:
        await asyncio.sleep(SETTINGS["delay_s"])  # a judge that takes its time on every call
    prompt = body["messages"][0]["content"]
    n = 1 if SETTINGS["ignore_n"] else int(body.get("n", 1))
    choices = []
    for i in range(n):
        reply = brain(prompt, len(CALLS) * 10 + i)
        if FAULTS and FAULTS[0][0] == "garbage":
            FAULTS.pop(0)
            reply = "Sure! Here is the JSON: {not valid"
        content = reply if isinstance(reply, str) else json.dumps(reply)
        choices.append({"index": i, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"})
    return JSONResponse({"id": "j", "object": "chat.completion", "created": 1, "model": body["model"], "choices": choices,
                         "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 20,
                                   "total_tokens": len(prompt) // 4 + 20}})


app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def reset() -> None:
    CALLS.clear()
    FAULTS.clear()
    OVERRIDE.clear()
    SETTINGS["ignore_n"] = False
    SETTINGS["delay_s"] = 0.0
