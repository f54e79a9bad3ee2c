"""A slow embedder freezes nobody else: issue 18's acceptance test for "async all the way".

Two assistants on one real uvicorn server share an embedder that blocks for 2 s per
call. While assistant A waits for it (a ``recall_memories`` call, or a tick whose prompt
looks memories up), 50 cheap requests to assistant B (status and goals) and a tool call
on B that does not embed run in parallel with A's work and must answer as if nothing
were happening: their p95 at most 100 ms above the p95 of the same requests with A idle,
measured in the same run (a few ms on a quiet machine, so p95 under ~100 ms there; on a
loaded machine the load's own delay is not charged to A). Before the async boundary,
each of them waited for A's embedding (about 2 s).

B's requests are paced (one every 20 ms, all in the first second of A's wait) so that
each measures how long B waits behind A, not how long 50 simultaneous requests queue
behind one another (on a two-core machine that alone takes about a second with no
embedder at all; see bench/RESULTS.md, "Async boundary").
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Callable, Coroutine
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from mindspace import ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.hosts.http import AssistantHub, create_app
from mindspace.offline import OfflineLLM
from mindspace.runtime import Runtime
from mindspace.storage import SqlStore
from mindspace.testing import SlowEmbedder

DELAY = 2.0
PARALLEL = 50
SPACING = DELAY / 2 / PARALLEL
"""Seconds between B's requests: all 50 are sent in the first half of A's wait."""
P95_LIMIT = 0.100


async def _paced(
    after: float, request: Coroutine[Any, Any, httpx.Response]
) -> tuple[float, httpx.Response]:
    """Send ``request`` ``after`` seconds from now; its latency and response."""
    # Pacing the load generator, not waiting for behaviour: the requests overlap A's
    # work without queueing behind one another.
    await asyncio.sleep(after)
    start = time.perf_counter()
    response = await request
    return time.perf_counter() - start, response


def _p95(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=20, method="inclusive")[-1]


@pytest.mark.parametrize("work", ["recall_memories", "tick"])
async def test_a_slow_embedder_does_not_delay_another_assistant(
    store: SqlStore,
    clock: ManualClock,
    settings: Settings,
    live_server: Callable[[FastAPI], Any],
    server_settings: Callable[..., Any],
    work: str,
) -> None:
    slow = SlowEmbedder(HashingEmbedder(256), delay=DELAY)
    hub = AssistantHub(
        Runtime(
            settings,
            store,
            llm=OfflineLLM(announce=False),
            clock=clock,
            embedder=slow,
            owns_store=False,
        )
    )
    hub.create("alice")
    hub.create("bob")
    server = live_server(create_app(hub, server=server_settings(), background_ticks=False))
    a, b = f"{server.url}/v1/assistants/alice", f"{server.url}/v1/assistants/bob"
    limits = httpx.Limits(max_connections=PARALLEL + 5, max_keepalive_connections=PARALLEL + 5)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        # Open the keep-alive connections first, so the measurement is of the server.
        warm = await asyncio.gather(*(client.get(f"{b}/status") for _ in range(PARALLEL)))
        assert all(r.status_code == 200 for r in warm)
        # Earlier tests' garbage would otherwise be collected mid-measurement (a full
        # collection of it pauses every thread for ~150 ms, embedder or not).
        gc.collect()
        # The same paced requests with A idle: what this machine's load alone costs them.
        baseline = [
            seconds
            for seconds, _ in await asyncio.gather(
                *(
                    _paced(i * SPACING, client.get(f"{b}/{'status' if i % 2 else 'goals'}"))
                    for i in range(PARALLEL)
                )
            )
        ]
        gc.collect()
        if work == "tick":
            queued = await client.post(
                f"{a}/events", json={"content": "Do you remember the ale?", "source_entity": "Bo"}
            )
            assert queued.status_code == 202
            slow_work = asyncio.create_task(client.post(f"{a}/tick"))
        else:
            slow_work = asyncio.create_task(
                client.post(f"{a}/tools/recall_memories", json={"query": "the ale"})
            )
        # Measure only once A is inside the embedder (it blocks for DELAY seconds).
        assert await asyncio.to_thread(slow.entered.wait, 10)
        started = time.perf_counter()
        cheap = await asyncio.gather(
            *(
                _paced(i * SPACING, client.get(f"{b}/{'status' if i % 2 else 'goals'}"))
                for i in range(PARALLEL)
            ),
            _paced(
                PARALLEL * SPACING / 2,
                client.post(f"{b}/tools/add_goal", json={"description": "Restock the ale"}),
            ),
        )
        burst = time.perf_counter() - started
        overlapped = not slow_work.done()
        done = await slow_work

    assert done.status_code == 200, done.text
    assert slow.calls >= 1
    assert all(r.status_code == 200 for _, r in cheap), [r.text for _, r in cheap]
    latencies = [seconds for seconds, _ in cheap]
    goal_seconds, goal = cheap[-1]
    assert goal.json()["success"] is True
    idle_p95 = _p95(baseline)
    report = (
        f"p95 {_p95(latencies) * 1000:.0f} ms (A idle: {idle_p95 * 1000:.0f} ms), slowest "
        f"{max(latencies) * 1000:.0f} ms, all {burst * 1000:.0f} ms, while A waited {DELAY} s "
        "for its embedder"
    )
    # A request that waited for A's embedder took about DELAY seconds.
    assert max(latencies) < DELAY / 2, f"B waited for A's embedding: {report}"
    # On a quiet machine the idle p95 is a few ms, so this is the "p95 < 100 ms";
    # on a loaded one the machine's own delay is not charged to A's embedder.
    assert _p95(latencies) < P95_LIMIT + idle_p95, report
    assert goal_seconds < P95_LIMIT + idle_p95, f"add_goal on B took {goal_seconds * 1000:.0f} ms"
    assert overlapped, f"A finished before B's requests did, so they were not parallel: {report}"
