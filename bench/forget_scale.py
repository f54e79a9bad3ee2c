"""How long forgetting one entity takes as an assistant grows (it searches every record).

Fills a SQLite assistant with ``--memories`` memories (a tenth from the forgotten
entity) and as many history entries, written straight to the store, then times
``assistant.edits.forget`` (the dry run, then the real one, which also scrubs the
write-ahead log). Prints one JSON object per size.

    python bench/forget_scale.py --memories 1000 10000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from mindspace import ManualClock, Settings
from mindspace.engine.history import Actor
from mindspace.offline import OfflineLLM
from mindspace.state import Change
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

NOW = "2025-12-06T10:00:00Z"


def _memory(n: int) -> dict[str, Any]:
    who = "Eve" if n % 10 == 0 else f"p{n % 7}"
    return {
        "id": f"mem_{n}",
        "content": f"{who} said something memorable, number {n}, about the north gate",
        "source": "tool",
        "entry_id": None,
        "tags": [],
        "source_type": "direct",
        "source_trust": 0.8,
        "source_entity": who,
        "importance": 5,
        "importance_method": "heuristic",
        "created_at": NOW,
        "occurred_at": NOW,
        "ref": None,
        "context": None,
        "embedder": None,
        "embedding": None,
    }


def _history(n: int) -> dict[str, Any]:
    return {
        "id": f"h_{n}",
        "at": NOW,
        "actor_kind": "host",
        "actor": "bench",
        "action": "create",
        "target_kind": "memory",
        "target_key": f"mem_{n}",
        "before": None,
        "after": _memory(n),
        "via": "tool:store_memory",
    }


async def run(size: int, folder: Path) -> dict[str, Any]:
    """Fill an assistant of ``size`` memories and time forgetting Eve."""
    store = SqlStore(f"sqlite:///{folder / f'forget-{size}.db'}")
    aid = store.open_assistant("barkeep", create=True).id
    revision = 0
    for start in range(0, size, 1000):
        batch = range(start, min(size, start + 1000))
        changes = [Change("memory", f"mem_{n}", _memory(n), new=True) for n in batch]
        changes += [Change("history", f"h_{n}", _history(n), new=True) for n in batch]
        revision = store.commit(aid, revision, changes)
    assistant = assistant_on(
        store, "barkeep", llm=OfflineLLM(announce=False), clock=ManualClock(), settings=Settings()
    )
    await assistant.call_tool(
        "update_entity_observation", {"entity_id": "Eve", "observation": "Eve came in"}
    )
    actor = Actor("user", "bench")
    started = time.perf_counter()
    dry = await assistant.edits.forget("Eve", actor, dry_run=True)
    dry_s = time.perf_counter() - started
    started = time.perf_counter()
    done = await assistant.edits.forget("Eve", actor)
    real_s = time.perf_counter() - started
    store.close()
    return {
        "memories": size,
        "history_entries": size,
        "forgotten_memories": len(done.memories),
        "history_blanked": dry.places.get("history", 0),
        "dry_run_s": round(dry_s, 2),
        "forget_s": round(real_s, 2),
    }


def main() -> None:
    """Print one JSON line per size."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--memories", type=int, nargs="+", default=[1_000, 10_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mindspace-forget-") as scratch:
        for size in args.memories:
            print(json.dumps(asyncio.run(run(size, Path(scratch)))), flush=True)


if __name__ == "__main__":
    main()
