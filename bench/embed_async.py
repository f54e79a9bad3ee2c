"""Cost of the async boundary for embeddings (``embed_async``), and what a cheap request costs.

1. ``embed_async`` on an embedder without ``aembed`` runs ``embed`` through one
   ``asyncio.to_thread``. This times a tiny embed (one short text) called directly and
   through ``embed_async``, for the hashing embedder (the call itself is ~free, so the
   difference is the thread hop) and for MiniLM (the default embedder, batch 1).
2. For the slow-embedder acceptance test (tests/e2e/http/test_slow_embedder.py): the
   latency of GET /status on a real uvicorn server with no embedding going on, sent one
   after another, paced (one every 20 ms, as the test does) and 50 at once.

Run:  .venv/bin/python bench/embed_async.py [--repeats 2000]
Prints one JSON object (times in microseconds, or ms for HTTP).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import uvicorn

from mindspace import ManualClock, Settings
from mindspace.embeddings import Embedder, HashingEmbedder, embed_async
from mindspace.hosts.http import AssistantHub, ServerSettings, create_app
from mindspace.offline import OfflineLLM
from mindspace.runtime import Runtime
from mindspace.storage import SqlStore


def _summary(samples: list[float], scale: float) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "median": round(statistics.median(ordered) * scale, 1),
        "p95": round(ordered[int(len(ordered) * 0.95) - 1] * scale, 1),
    }


async def _tiny_embeds(embedder: Embedder, repeats: int) -> dict[str, Any]:
    direct, boundary = [], []
    for _ in range(50):  # warm up the thread pool and the model
        await embed_async(embedder, ["warm up"])
    for i in range(repeats):
        text = [f"a short memory number {i}"]
        start = time.perf_counter()
        embedder.embed(text)
        direct.append(time.perf_counter() - start)
        start = time.perf_counter()
        await embed_async(embedder, text)
        boundary.append(time.perf_counter() - start)
    d, b = _summary(direct, 1e6), _summary(boundary, 1e6)
    return {
        "direct_us": d,
        "embed_async_us": b,
        "overhead_us": {k: round(b[k] - d[k], 1) for k in d},
    }


def _wait_started(server: uvicorn.Server) -> None:
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start within 20 s")
        time.sleep(0.01)


async def _http(requests: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        store = SqlStore.from_path(f"{tmp}/bench.db")
        hub = AssistantHub(
            Runtime(
                Settings(data_dir=tmp),
                store,
                llm=OfflineLLM(announce=False),
                clock=ManualClock(datetime(2025, 12, 6, 10, tzinfo=UTC)),
                embedder=HashingEmbedder(256),
                owns_store=False,
            )
        )
        hub.create("bob")
        app = create_app(hub, server=ServerSettings(api_token=None, api_tokens=None))
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        await asyncio.to_thread(_wait_started, server)
        port = server.servers[0].sockets[0].getsockname()[1]
        url = f"http://127.0.0.1:{port}/v1/assistants/bob/status"
        limits = httpx.Limits(max_connections=requests, max_keepalive_connections=requests)
        try:
            async with httpx.AsyncClient(limits=limits) as client:

                async def timed(after: float) -> float:
                    await asyncio.sleep(after)
                    start = time.perf_counter()
                    (await client.get(url)).raise_for_status()
                    return time.perf_counter() - start

                async def run(spacing: Callable[[int], float]) -> dict[str, float]:
                    calls: list[Awaitable[float]] = [timed(spacing(i)) for i in range(requests)]
                    return _summary(list(await asyncio.gather(*calls)), 1e3)

                await run(lambda i: 0.0)  # open the keep-alive connections
                one_by_one = [await timed(0.0) for _ in range(requests)]
                return {
                    "requests": requests,
                    "sequential_ms": _summary(one_by_one, 1e3),
                    "paced_20ms_ms": await run(lambda i: i * 0.02),
                    "all_at_once_ms": await run(lambda i: 0.0),
                }
        finally:
            server.should_exit = True
            thread.join(timeout=10)
            store.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    result: dict[str, Any] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_before": round(os.getloadavg()[0], 2),
        "hashing": await _tiny_embeds(HashingEmbedder(256), args.repeats),
    }
    try:
        from mindspace.embeddings.minilm import MiniLMEmbedder

        result["minilm"] = await _tiny_embeds(MiniLMEmbedder(), max(args.repeats // 10, 50))
    except Exception as exc:  # the model package is optional
        result["minilm"] = f"skipped: {exc}"
    result["http_status"] = await _http(args.requests)
    result["load_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
