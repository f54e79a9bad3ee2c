"""Store round trips of an awake event tick, on SQLite and PostgreSQL. Prints JSON.

Counts what the store's engine runs during each tick (``mindspace.testing.round_trips``):
transactions, the writing ones among them, and statements; and the CPU of each store
commit (median). The tick answers a player's
message with one tool round (``add_session_memory``) and then a reply, with the hashing
embedder, on a new assistant; the first tick, which loads whole kinds once per process,
is not counted. The same scenario as tests/engine/test_store_round_trips.py, whose
bounds keep these figures from growing.

``--store FILE`` adds the figures on a copy of an existing SQLite store (the 100k
store of bench/awake_tick.py: its assistant ``old``), with ``--embedder minilm`` to
query as that benchmark does.

Usage::

    python bench/tick_round_trips.py [--ticks 10] [--store FILE --embedder minilm]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mindspace import FunctionLLM, ManualClock
from mindspace.embeddings import HashingEmbedder
from mindspace.embeddings.port import Embedder
from mindspace.llm.port import LLMResponse, Message, ToolCall, ToolSchema
from mindspace.state import Change
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.testing.postgres import LocalPostgres
from mindspace.testing.round_trips import RoundTrips, count_round_trips

START = datetime(2025, 12, 6, 10, 0, tzinfo=UTC)


def _reply(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
    if messages[-1].role == "tool":
        return LLMResponse(text="Aye, I will remember that.", model="bench")
    fact = (messages[-1].content or "")[-60:]
    arguments = json.dumps({"memory_type": "fact", "content": fact})
    call = ToolCall(id="c1", name="add_session_memory", arguments=arguments)
    return LLMResponse(tool_calls=(call,), model="bench")


def _embedder(name: str) -> Embedder:
    if name == "minilm":
        from mindspace.embeddings.minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    return HashingEmbedder(384)


async def _ticks(store: SqlStore, key: str, ticks: int, embedder: Embedder) -> dict[str, float]:
    commits: list[float] = []
    commit = store.commit

    def timed(assistant_id: int, expected: int, changes: Sequence[Change]) -> int:
        started = time.process_time()
        try:
            return commit(assistant_id, expected, changes)
        finally:
            commits.append(time.process_time() - started)

    store.commit = timed  # type: ignore[method-assign]
    clock = ManualClock(START)
    assistant = assistant_on(
        store,
        key,
        llm=FunctionLLM(_reply),
        clock=clock,
        embedder=embedder,
    )
    total = RoundTrips()
    for n in range(ticks + 1):
        clock.advance(seconds=30)
        assistant.enqueue_event(f"My brother Tom sails the ship number {n}.", source_entity="Bob")
        with count_round_trips(store.engine) as tick:
            result = await assistant.tick()
        if (result.kind, result.status) != ("event", "done"):
            raise SystemExit(f"tick {n}: {result.kind} {result.status} {result.error}")
        if n == 0:
            commits.clear()
        else:
            total.transactions += tick.transactions
            total.writes += tick.writes
            total.statements += tick.statements
    # CPU of the store's commit (SQLAlchemy, the driver, SQLite's own work), per commit.
    cpu = {"commit_cpu_ms_p50": round(statistics.median(commits) * 1000, 2)}
    return {**total.per(ticks), **cpu}


def _measure(url: str, key: str, ticks: int, embedder: Embedder) -> dict[str, float]:
    store = SqlStore(url)
    try:
        return asyncio.run(_ticks(store, key, ticks, embedder))
    finally:
        store.close()


def main() -> None:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--ticks", type=int, default=10)
    parser.add_argument("--store", type=Path, default=None, help="also tick a copy of this")
    parser.add_argument("--embedder", choices=["hashing", "minilm"], default="hashing")
    args = parser.parse_args()
    report: dict[str, Any] = {"benchmark": "tick_round_trips", "ticks": args.ticks}
    with tempfile.TemporaryDirectory(prefix="round-trips-") as tmp_dir:
        tmp = Path(tmp_dir)
        os.chmod(tmp, 0o755)
        hashing = HashingEmbedder(384)
        report["sqlite"] = _measure(f"sqlite:///{tmp / 'new.db'}", "barkeep", args.ticks, hashing)
        with LocalPostgres(tmp / "pg") as pg:
            url = pg.new_database("roundtrips")
            report["postgresql"] = _measure(url, "barkeep", args.ticks, hashing)
        if args.store is not None:
            copy = tmp / "store.db"
            shutil.copyfile(args.store, copy)
            embedder = _embedder(args.embedder)
            report["sqlite_store"] = {
                "store": str(args.store),
                "embedder": args.embedder,
                **_measure(f"sqlite:///{copy}", "old", args.ticks, embedder),
            }
    report["load"] = os.getloadavg()
    json.dump(report, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
