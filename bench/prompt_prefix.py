"""Prompt tokens and the cacheable prefix per turn; a real llama-server's seconds per turn.

Two parts, printed as one JSON object:

* ``requests``: five turns of one conversation against the scripted chat-completions
  server, per tool profile: each request's estimated prompt tokens (messages and tools)
  and the share of it that repeats the previous request (``mindspace.testing.prefix``).
* ``real`` (with ``--real``): four turns against llama.cpp's ``llama-server`` serving
  SmolLM2-135M (the PyPI packages of ``mindspace.testing.llama_server``), 2 threads,
  through a recording proxy: per turn the wall seconds, and the server's own
  ``prompt_tokens`` and ``cached_tokens``. ``--src DIR`` runs the conversation with
  another checkout's ``src`` (e.g. the code before the prompt layout) against the same
  server, so before and after are measured alike.

    PYTHONPATH=src python bench/prompt_prefix.py [--real] [--src OTHER/src] [--profile compact]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

LINES = [
    "Good evening! Is the kitchen still open?",
    "Then I'll have the stew, please.",
    "My brother Tom arrives tomorrow; he likes dark ale.",
    "Can you keep a room for him?",
    "Thank you, that is all for tonight.",
]
OPERATOR = (
    "You are the barkeep of the Prancing Pony in Bree. Greet guests by name, take their "
    "orders for food, drink and rooms, and remember what they tell you about themselves."
)


async def _scripted(profile: str) -> list[dict[str, Any]]:
    from mindspace import open_assistant
    from mindspace.config import Settings
    from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
    from mindspace.testing import ChatCompletionsServer
    from mindspace.testing.prefix import request_text, shares
    from mindspace.testing.scripted_server import Step
    from mindspace.tokens import estimate_tokens

    with (
        tempfile.TemporaryDirectory() as tmp,
        ChatCompletionsServer(respond=lambda body: Step(content="Noted, Alice.")) as server,
    ):
        llm = OpenAICompatibleLLM(base_url=server.url, model="scripted", max_retries=0)
        extra = {} if profile == "full" else {"tool_profile": profile}
        settings = Settings(data_dir=Path(tmp), **extra)
        assistant = open_assistant("barkeep", db=Path(tmp) / "b.db", llm=llm, settings=settings)
        await assistant.set_user_system_prompt(OPERATOR)
        for line in LINES:
            assistant.enqueue_event(line, source_entity="Alice")
            await assistant.tick()
        await llm.aclose()
        requests = list(server.requests)
    measured = [None, *shares(requests)]
    return [
        {
            "turn": n + 1,
            "prompt_tokens": estimate_tokens(request_text(body)),
            "shared_prefix_tokens": m.shared_tokens if m else 0,
            "shared_share": round(m.share, 3) if m else None,
        }
        for n, (body, m) in enumerate(zip(requests, measured, strict=True))
    ]


class _Proxy(ThreadingHTTPServer):
    """Forwards to llama-server and keeps every chat answer's usage, with its time."""

    def __init__(self, upstream: str) -> None:
        import httpx

        self.upstream = upstream
        self.client = httpx.Client(timeout=600)
        self.answers: list[dict[str, Any]] = []
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Proxy

    def log_message(self, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        self._forward("GET", b"")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._forward("POST", body)

    def _forward(self, method: str, body: bytes) -> None:
        started = time.time()
        answer = self.server.client.request(
            method,
            self.server.upstream + self.path,
            content=body or None,
            headers={"Content-Type": "application/json"},
        )
        if self.path.endswith("/chat/completions") and answer.status_code == 200:
            data = answer.json()
            usage = data.get("usage") or {}
            self.server.answers.append(
                {
                    "at": started,
                    "seconds": round(time.time() - started, 2),
                    "prompt_tokens": usage.get("prompt_tokens"),
                    "cached_tokens": (usage.get("prompt_tokens_details") or {}).get(
                        "cached_tokens"
                    ),
                }
            )
        self.send_response(answer.status_code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer.content)))
        self.end_headers()
        self.wfile.write(answer.content)


CHILD = """
import asyncio, json, sys, tempfile, time
from pathlib import Path
from mindspace import open_assistant
from mindspace.config import Settings
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM

async def main(url, profile, lines, operator):
    with tempfile.TemporaryDirectory() as tmp:
        llm = OpenAICompatibleLLM(base_url=url, model="smollm2", timeout=600, max_retries=0)
        extra = {} if profile == "full" else {"tool_profile": profile}
        settings = Settings(data_dir=Path(tmp), model_limit=8192, llm_max_tokens=60, **extra)
        a = open_assistant("barkeep", db=Path(tmp) / "b.db", llm=llm, settings=settings)
        await a.set_user_system_prompt(operator)
        for line in lines:
            a.enqueue_event(line, source_entity="Alice")
            start = time.time()
            r = await a.tick()
            print(json.dumps({"start": start, "end": time.time(), "status": r.status}), flush=True)
        await llm.aclose()

asyncio.run(main(*json.loads(sys.argv[1])))
"""


def _real(src: str | None, profile: str, turns: int) -> dict[str, Any]:
    from mindspace.testing.llama_server import LlamaServer

    with LlamaServer(context=8192, threads=2) as server:
        proxy = _Proxy(server.root)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{proxy.server_address[1]}/v1"
        env = dict(os.environ)
        if src:
            env["PYTHONPATH"] = src
        args = json.dumps([url, profile, LINES[:turns], OPERATOR])
        done = subprocess.run(
            [sys.executable, "-c", CHILD, args],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=3600,
        )
        proxy.shutdown()
    ticks = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    out = []
    for n, tick in enumerate(ticks, start=1):
        mine = [a for a in proxy.answers if tick["start"] <= a["at"] <= tick["end"]]
        out.append(
            {
                "turn": n,
                "seconds": round(tick["end"] - tick["start"], 1),
                "status": tick["status"],
                "requests": len(mine),
                "prompt_tokens": [a["prompt_tokens"] for a in mine],
                "cached_tokens": [a["cached_tokens"] for a in mine],
            }
        )
    return {"src": src or "this checkout", "profile": profile, "turns": out}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--real", action="store_true", help="also run the real llama-server")
    parser.add_argument("--src", help="the src directory of another checkout (real part)")
    parser.add_argument("--profile", default="compact", help="tool profile (real part)")
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--no-requests", action="store_true")
    parser.add_argument(
        "--profiles", default="full,compact", help="tool profiles of the requests part"
    )
    options = parser.parse_args()
    result: dict[str, Any] = {}
    if not options.no_requests:
        profiles = options.profiles.split(",")
        result["requests"] = {p: asyncio.run(_scripted(p)) for p in profiles}
    if options.real:
        result["real"] = _real(options.src, options.profile, options.turns)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
