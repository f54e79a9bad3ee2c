"""Compacting a night: each tick takes exactly the entries the old full scan took, and
touches a number of entries that does not grow with the journal.

The reference is the filter-and-sort over every entry that the sleep tick ran before the
pending index (tests/journal/test_pending.py checks the index itself).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from mindspace import Assistant, ManualClock, Settings
from mindspace.clock import format_time
from mindspace.embeddings import HashingEmbedder
from mindspace.journal import JournalBook, JournalEntry, JournalMeta
from mindspace.journal.importance import BATCH_IMPORTANCE_HEAD
from mindspace.journal.pending import MAX_SCORING_ATTEMPTS, pending_index
from mindspace.llm import FunctionLLM
from mindspace.llm.port import Message, ToolSchema
from mindspace.memory.extraction import _conversation_context
from mindspace.memory.records import Memory
from mindspace.testing.inspect import stored_records


def scorer() -> FunctionLLM:
    """Scores every event 6, except that anything "garbled" gets an unusable answer."""

    def answer(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        asked = "\n".join(m.content or "" for m in messages)
        if "garbled" in asked:
            return "no idea"
        if BATCH_IMPORTANCE_HEAD in asked:
            return json.dumps([6] * asked.count("\nEvent "))
        return "6" if "significance" in asked else "[]"

    return FunctionLLM(answer)


def by_id(entries: list[JournalEntry]) -> dict[int, JournalEntry]:
    return {e.id: e for e in entries}


def scoring_queue(entries: dict[int, JournalEntry]) -> list[int]:
    return [
        e.id
        for e in sorted(entries.values(), key=lambda e: (e.scoring_attempts, e.id))
        if e.importance_method == "heuristic" and e.scoring_attempts < MAX_SCORING_ATTEMPTS
    ]


def consolidation_queue(entries: dict[int, JournalEntry], *, ready: bool) -> list[int]:
    pending = [e for _, e in sorted(entries.items()) if not e.consolidated and not e.is_synthesis]
    settled = [
        e
        for e in pending
        if e.importance_method != "heuristic" or e.scoring_attempts >= MAX_SCORING_ATTEMPTS
    ]
    return [e.id for e in (settled if ready else pending)]


def check_tick(
    before: dict[int, JournalEntry],
    after: dict[int, JournalEntry],
    ops: dict[str, Any],
    memories: dict[str, Memory],
    settings: Settings,
) -> None:
    """The tick scored and consolidated what the full scan would have, and said so."""
    scoring = ops["score_pending_entries"]
    scored = [s["id"] for s in scoring["scored"]]
    assert scored == scoring_queue(before)[: settings.sleep_scoring_per_tick]
    assert scoring["remaining"] == len(scoring_queue(after))
    # What consolidation saw: the entries as the scoring step of this tick left them.
    seen = dict(before)
    for entry_id in scored:
        seen[entry_id] = after[entry_id].model_copy(
            update={"consolidated": before[entry_id].consolidated, "consolidated_at": None}
        )
    consolidation = ops["run_sleep_consolidation"]
    expected = consolidation_queue(seen, ready=True)[: settings.sleep_consolidation_per_tick]
    assert consolidation["entry_ids"] == expected
    assert consolidation["remaining"] == len(consolidation_queue(seen, ready=False)) - len(expected)
    for entry_id, memory_id in zip(expected, consolidation["memory_ids"], strict=True):
        assert after[entry_id].consolidated
        entry = before[entry_id]
        context = _conversation_context(entry, before.get(entry_id - 1), before.get(entry_id + 1))
        assert memories[memory_id].entry_id == entry_id
        assert memories[memory_id].context == context


async def test_each_tick_takes_the_entries_a_full_scan_would(
    make_assistant: Callable[..., Assistant], clock: ManualClock, tmp_path: Path
) -> None:
    settings = Settings(
        data_dir=tmp_path,
        sleep_scoring_per_tick=4,
        scoring_batch_size=2,
        sleep_consolidation_per_tick=3,
    )
    assistant = make_assistant(
        "archivist", llm=scorer(), settings=settings, embedder=HashingEmbedder(64)
    )
    with assistant._core.transaction() as unit:
        book = JournalBook(unit, clock, settings)
        book.set_max_entries(500)
        for n in range(1, 41):
            clock.advance(minutes=20 if n % 7 == 0 else 3)
            if n % 9 == 0:
                book.add_synthesis(f"pattern number {n}")
            else:
                book.add(f"{'garbled ' if n % 5 == 0 else ''}Alice said thing {n}")
    await assistant.sleep("night")
    cache = assistant._core.state
    index = pending_index(cache)
    ticks = 0
    while True:
        ticks += 1
        assert ticks < 100, "compacting never finished"
        if ticks == 2:  # another unit deletes pending entries between ticks
            with assistant._core.transaction() as unit:
                head = consolidation_queue(by_id(unit.all(JournalEntry)), ready=False)
                for entry_id in (*head[:1], *scoring_queue(by_id(unit.all(JournalEntry)))[:2]):
                    unit.delete(JournalEntry, str(entry_id))
        if ticks == 3:  # ... sets an importance by hand, and consolidates one itself
            with assistant._core.transaction() as unit:
                queue = scoring_queue(by_id(unit.all(JournalEntry)))
                entry = unit.get(JournalEntry, str(queue[-1]))
                assert entry is not None
                unit.put(entry.model_copy(update={"importance": 9, "importance_method": "manual"}))
                JournalBook(unit, clock, settings).mark_consolidated([queue[-2]])
        if ticks == 4:  # another process adds entries: this cache catches up (change feed)
            other = make_assistant(
                "archivist", llm=scorer(), settings=settings, embedder=HashingEmbedder(64)
            )
            with other._core.transaction() as unit:
                JournalBook(unit, clock, settings).add("Bob arrived late")
                JournalBook(unit, clock, settings).add("garbled Bob left early")
            rebuilds = index.rebuilds
        before = by_id(assistant._core.read().all(JournalEntry))
        result = await assistant.tick()
        clock.advance(minutes=1)
        assert result.sleep is not None
        assert result.sleep.phase == "compacting"
        read = assistant._core.read()
        memories = {m.id: m for m in stored_records(assistant, Memory)}
        check_tick(
            before, by_id(read.all(JournalEntry)), result.sleep.operations, memories, settings
        )
        if ticks == 4:
            assert index.rebuilds == rebuilds  # applied in place, not rebuilt
        if result.sleep.phase_after != "compacting":
            break
    entries = assistant._core.read().all(JournalEntry)
    assert all(e.consolidated for e in entries if not e.is_synthesis)
    moved = [m.entry_id for m in stored_records(assistant, Memory) if m.source == "journal"]
    assert sorted(moved) == sorted(set(moved))  # each entry moved once
    assert any(e.scoring_attempts == MAX_SCORING_ATTEMPTS for e in entries)


class CountingDict(dict[str, JournalEntry]):
    """The cache's committed entries, counting every entry read out of it."""

    touched = 0

    def __getitem__(self, key: str) -> JournalEntry:
        CountingDict.touched += 1
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        CountingDict.touched += 1
        return super().get(key, default)

    def _count(self, items: Iterator[Any]) -> Iterator[Any]:
        for item in items:
            CountingDict.touched += 1
            yield item

    def values(self) -> Any:
        return self._count(iter(super().values()))

    def items(self) -> Any:
        return self._count(iter(super().items()))

    def keys(self) -> Any:
        return self._count(iter(super().keys()))

    def __iter__(self) -> Iterator[str]:
        return self._count(super().__iter__())


async def touches_per_tick(
    make_assistant: Callable[..., Assistant], clock: ManualClock, settings: Settings, size: int
) -> list[int]:
    assistant = make_assistant(f"size{size}", llm=scorer(), settings=settings)
    with assistant._core.transaction() as unit:
        start = clock.now()
        unit.put_all(
            JournalEntry(
                id=n,
                timestamp=format_time(start + timedelta(minutes=2 * n)),
                content=f"{'garbled ' if n % 4 == 0 else ''}Alice said thing {n}",
                importance=5,
            )
            for n in range(1, size + 1)
        )
        unit.put_doc(JournalMeta(entry_count=size, max_entries=size + 1))
    await assistant.sleep("night")
    await assistant.tick()  # the first tick builds the pending index from the cache: O(E) once
    cache = assistant._core.state
    # Instrument the cache's committed entries (the only place a tick could read them).
    cache._kinds[JournalEntry.kind] = CountingDict(cache.records(JournalEntry))
    touched = []
    for _ in range(8):
        CountingDict.touched = 0
        result = await assistant.tick()
        assert result.sleep is not None
        assert result.sleep.phase_after == "compacting"
        touched.append(CountingDict.touched)
    return touched


async def test_a_compacting_tick_touches_as_many_entries_at_any_journal_size(
    make_assistant: Callable[..., Assistant], clock: ManualClock, tmp_path: Path
) -> None:
    settings = Settings(
        data_dir=tmp_path,
        sleep_scoring_per_tick=6,
        scoring_batch_size=3,
        sleep_consolidation_per_tick=5,
        sleep_catch_up_factor=1,  # fixed budgets: the same batch at either size
    )
    small = await touches_per_tick(make_assistant, clock, settings, 60)
    large = await touches_per_tick(make_assistant, clock, settings, 1_500)
    # The batch (6 scored, 5 consolidated), their neighbours and the marking: a few dozen.
    assert max(large) <= 4 * (6 + 5), large
    assert large == small
