"""Where a fleet tick's CPU goes, stage by stage, without a profiler's distortion.

One assistant after another on a real PostgreSQL (``mindspace.testing.LocalPostgres``),
each given one event and ticked once in this process, with the OpenAI-compatible client
against the stand-in model (answering at once, in its own thread): the fleet bench's
tick (bench/fleet.py) without the queue. A few functions are wrapped to add up this
thread's CPU (``time.thread_time``) while they run; the ticks run one at a time, so the
thread's CPU during an ``await`` is the tick's own. Stages nest (a commit is inside the
tick; the memory search inside the prompt).

Run:  PYTHONPATH=src .venv/bin/python bench/fleet_tick_stages.py [--ticks 300]
Prints one JSON object: CPU ms a tick by stage, the store's statements a tick, and
PostgreSQL's CPU a tick (its backends for this database).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import event

from fleet import cpu_seconds  # bench/fleet.py, beside this script
from mindspace import Settings
from mindspace.engine import formation, prompting
from mindspace.llm.providers import sdk
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
from mindspace.state import unit as state_unit
from mindspace.storage import SqlStore
from mindspace.testing import ChatCompletionsServer
from mindspace.testing.assistants import assistant_on
from mindspace.testing.chat_server import Step
from mindspace.testing.postgres import LocalPostgres

SPENT: Counter[str] = Counter()
DEPTH: Counter[str] = Counter()


def timed(stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` adding this thread's CPU while it runs to ``SPENT[stage]``."""
    if asyncio.iscoroutinefunction(function):

        @functools.wraps(function)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            DEPTH[stage] += 1
            start = time.thread_time()
            try:
                return await function(*args, **kwargs)
            finally:
                DEPTH[stage] -= 1
                if not DEPTH[stage]:  # recursion counted once
                    SPENT[stage] += time.thread_time() - start

        return run_async

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        DEPTH[stage] += 1
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            DEPTH[stage] -= 1
            if not DEPTH[stage]:
                SPENT[stage] += time.thread_time() - start

    return run


def instrument() -> None:
    """Wrap the stages (module attributes, so every caller goes through the wrapper)."""
    prompting.PromptBuilder.build = timed("prompt building", prompting.PromptBuilder.build)  # type: ignore[method-assign]
    formation_form = formation.form_memories
    wrapped_form = timed("memory formation", formation_form)
    formation.form_memories = wrapped_form  # type: ignore[assignment]
    from mindspace.engine import intake

    intake.form_memories = wrapped_form  # type: ignore[attr-defined]
    intake.take_event = timed("taking the event (commit 1)", intake.take_event)  # type: ignore[assignment]
    from mindspace.engine import tick as tick_module

    tick_module.take_event = intake.take_event  # type: ignore[attr-defined]
    sdk.SdkAdapter.complete = timed("LLM client", sdk.SdkAdapter.complete)  # type: ignore[method-assign]
    state_unit.StateCache.commit = timed("commits (both)", state_unit.StateCache.commit)  # type: ignore[method-assign]
    for name in ("revision_and_open_events", "load", "load_keys", "changes_since", "count"):
        setattr(SqlStore, name, timed("store reads", getattr(SqlStore, name)))
    from mindspace.storage import pg_semantic

    for name in ("count", "search", "rankings", "nearest"):
        attr = getattr(pg_semantic.PgSemanticIndex, name)
        setattr(pg_semantic.PgSemanticIndex, name, timed("memory search (PostgreSQL)", attr))


def pg_backends(url: str) -> list[int]:
    """The server processes of the connections to ``url``'s database."""
    import psycopg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    conninfo = f"dbname={parsed.database} user=postgres host={parsed.query['host']}"
    with psycopg.connect(conninfo, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        ).fetchall()
    return [int(pid) for (pid,) in rows]


async def run(url: str, server_url: str, ticks: int) -> dict[str, Any]:
    store = SqlStore(url)
    statements: Counter[str] = Counter()

    @event.listens_for(store.engine, "before_cursor_execute")
    def count(*args: Any) -> None:
        statements["statements"] += 1

    llm = OpenAICompatibleLLM(base_url=server_url, model="scripted")
    settings = Settings(embedder="none")
    keys = [f"npc{n:04d}" for n in range(ticks)]
    assistants = [assistant_on(store, k, llm=llm, settings=settings) for k in keys]
    # Each assistant's first tick is not measured (it loads its records; a worker's
    # assistants stay open for the process's life): the second is.
    for round_ in (0, 1):
        for n, assistant in enumerate(assistants):
            assistant.enqueue_event(f"[{keys[n]}] <t{n}-{round_}> a pint", source_entity="Bob")
        if round_ == 0:
            for assistant in assistants:
                await assistant.tick()
    instrument()
    SPENT.clear()
    statements.clear()
    backends = pg_backends(url)
    pg_before = {pid: cpu_seconds(pid) for pid in backends}
    start = time.thread_time()
    for assistant in assistants:
        SPENT["tick (all of it)"] -= time.thread_time()
        await assistant.tick()
        SPENT["tick (all of it)"] += time.thread_time()
    total = time.thread_time() - start
    pg_cpu = sum(cpu_seconds(pid) - pg_before.get(pid, 0.0) for pid in pg_backends(url))
    await llm.aclose()
    store.close()
    return {
        "bench": "fleet_tick_stages",
        "ticks": ticks,
        "cpu_ms_per_tick": round(1000 * total / ticks, 2),
        "stages_ms_per_tick": {k: round(1000 * v / ticks, 2) for k, v in SPENT.most_common()},
        "store_statements_per_tick": round(statements["statements"] / ticks, 1),
        "postgres_cpu_ms_per_tick": round(1000 * pg_cpu / ticks, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--ticks", type=int, default=300)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="fleet-stages-") as tmp,
        LocalPostgres(Path(tmp) / "pg") as pg,
        ChatCompletionsServer(respond=lambda body: Step(content="Coming right up.")) as srv,
    ):
        url = pg.new_database("stages")
        result = asyncio.run(run(url, srv.url, args.ticks))
    result["loadavg"] = Path("/proc/loadavg").read_text().split()[:3]
    result["cpus"] = os.cpu_count()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
