"""A night's work sized by the day: it keeps up, or what is left shows and carries over.

A day of entries is written, the assistant sleeps a short night on the ManualClock and
ticks until it wakes by itself. With the default settings the night scores, consolidates
and links the whole day in its window with few model calls; with the spec's fixed
budgets (``sleep_catch_up_factor=1``) it cannot, the status shows what is left, and the
next sleep finishes it. Both backends.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.night.result import SleepTickResult
from mindspace.errors import LLMError
from mindspace.journal import JournalBook, JournalEntry
from mindspace.llm import FunctionLLM
from mindspace.llm.port import LLMResponse, Message, ToolCall, ToolSchema
from mindspace.memory.records import Memory, MemoryLinks
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.testing.inspect import stored_records

PEOPLE = ("Alice", "Bob", "Carol", "Dave")
PLACES = ("Berlin", "the harbour", "the mill", "Paris", "the market")


@pytest.fixture
def backend_store(backend_url: str) -> Iterator[SqlStore]:
    store = SqlStore(backend_url)
    yield store
    store.close()


def counted_offline() -> FunctionLLM:
    """The offline model behind a FunctionLLM, so every request is in ``history``."""
    offline = OfflineLLM(announce=False)

    async def answer(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        return await offline.complete(messages, tools)

    return FunctionLLM(answer, model="offline")


def open_assistant(
    store: SqlStore, clock: ManualClock, tmp_path: Path, llm: FunctionLLM, **settings: float
) -> Assistant:
    return assistant_on(
        store,
        "innkeeper",
        llm=llm,
        clock=clock,
        # A one-hour night of a tick a minute: 60 ticks.
        settings=Settings(data_dir=tmp_path, sleep_default_hours=1, **settings),  # type: ignore[arg-type]
        embedder=HashingEmbedder(256),
    )


def write_day(assistant: Assistant, count: int) -> None:
    with assistant._core.transaction() as unit:
        book = JournalBook(unit, assistant.clock, assistant.settings)
        book.set_max_entries(10 * count)
        for n in range(count):
            who = PEOPLE[n % len(PEOPLE)]
            book.add(
                f"{who} moved to {PLACES[n % len(PLACES)]} in year {n}.",
                source_type="direct",
                source_entity=who,
            )


async def sleep_until_woken(
    assistant: Assistant, clock: ManualClock
) -> tuple[int, SleepTickResult]:
    """Sleep, tick a minute apart until the assistant wakes by itself; the ticks run and
    the last one's result."""
    await assistant.sleep("closing time")
    ticks = 0
    while True:
        result = await assistant.tick()
        ticks += 1
        assert result.sleep is not None
        if result.sleep.woke:
            return ticks, result.sleep
        assert ticks < 500, "the night never ended"
        clock.advance(minutes=1)


def links_missing(assistant: Assistant) -> int:
    linked = {links.memory_id for links in stored_records(assistant, MemoryLinks)}
    return sum(1 for m in stored_records(assistant, Memory) if m.id not in linked)


async def test_a_busy_day_is_done_within_the_night_in_few_model_calls(
    backend_store: SqlStore, clock: ManualClock, tmp_path: Path
) -> None:
    llm = counted_offline()
    assistant = open_assistant(backend_store, clock, tmp_path, llm)
    write_day(assistant, 600)  # 10 entries a tick of this 60-tick night, 2x the spec's 5
    before = assistant.views.status()["night_backlog"]
    assert before == {"unscored": 600, "unconsolidated": 600, "unlinked": 0}

    ticks, _ = await sleep_until_woken(assistant, clock)

    assert ticks == 61  # woke at its wake time, not later: nothing deferred the wake
    entries = [e for e in assistant._core.read().all(JournalEntry) if not e.is_synthesis]
    assert len(entries) == 600
    assert all(e.consolidated and e.importance_method == "llm" for e in entries)
    assert links_missing(assistant) == 0
    assert len(stored_records(assistant, Memory)) >= 600
    assert assistant.views.status()["night_backlog"] == {
        "unscored": 0,
        "unconsolidated": 0,
        "unlinked": 0,
    }
    # Scoring in batches of 25 and one consolidation session per 25 entries (the offline
    # model takes two calls a session: its store_memory calls, then noop).
    assert len(llm.history) <= 0.15 * 600, len(llm.history)


async def test_what_a_night_cannot_finish_shows_and_the_next_sleep_finishes_it(
    backend_store: SqlStore, clock: ManualClock, tmp_path: Path
) -> None:
    # The spec's fixed budgets: 16 compacting ticks, then 5 links a tick in the 44 left
    # cannot link 400 memories; a second night can.
    assistant = open_assistant(
        backend_store, clock, tmp_path, counted_offline(), sleep_catch_up_factor=1
    )
    write_day(assistant, 400)

    _, waking = await sleep_until_woken(assistant, clock)

    assert assistant.views.mode().mode == "awake"
    left = assistant.views.status()["night_backlog"]
    assert waking.to_dict()["backlog"] == left  # the waking tick reports what it leaves
    assert left["unscored"] == 0  # compacting completes before any wake
    assert left["unconsolidated"] == 0
    assert left["unlinked"] == links_missing(assistant) > 0
    assert assistant.views.summary()["night_backlog"] == left

    clock.advance(hours=2)  # past the wake cooldown: a second night, no new entries
    await sleep_until_woken(assistant, clock)
    assert links_missing(assistant) == 0
    assert assistant.views.status()["night_backlog"]["unlinked"] == 0


async def test_a_sleep_cut_short_leaves_its_entries_pending_for_the_next_one(
    backend_store: SqlStore, clock: ManualClock, tmp_path: Path
) -> None:
    assistant = open_assistant(backend_store, clock, tmp_path, counted_offline())
    write_day(assistant, 200)
    await assistant.sleep("closing time")
    await assistant.tick()  # one compacting tick, then woken by hand
    await assistant.wake("the cook knocked")

    left = assistant.views.status()["night_backlog"]
    assert 0 < left["unconsolidated"] < 200
    pending = [e for e in assistant._core.read().all(JournalEntry) if not e.consolidated]
    assert left["unconsolidated"] == len(pending)

    clock.advance(hours=2)
    await sleep_until_woken(assistant, clock)
    entries = assistant._core.read().all(JournalEntry)
    assert all(e.consolidated for e in entries if not e.is_synthesis)
    assert assistant.views.status()["night_backlog"] == {
        "unscored": 0,
        "unconsolidated": 0,
        "unlinked": 0,
    }


async def first_consolidation(
    store: SqlStore, clock: ManualClock, tmp_path: Path, llm: FunctionLLM, count: int
) -> tuple[Assistant, dict[str, Any]]:
    """A day of ``count`` entries, then the first sleep tick's consolidation report.

    A tick's 25 entries go in sessions of 10: three sessions.
    """
    assistant = open_assistant(store, clock, tmp_path, llm, sleep_consolidation_batch_size=10)
    write_day(assistant, count)
    await assistant.sleep("closing time")
    first = await assistant.tick()
    assert first.sleep is not None
    return assistant, first.sleep.operations["run_sleep_consolidation"]


async def test_a_failing_model_is_asked_once_a_tick_and_every_entry_still_moves(
    store: SqlStore, clock: ManualClock, tmp_path: Path
) -> None:
    offline = OfflineLLM(announce=False)

    async def answer(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        if any("Consolidate these journal entries" in (m.content or "") for m in messages):
            raise LLMError("the model is down")
        return await offline.complete(messages, tools)

    llm = FunctionLLM(answer)
    assistant, moved = await first_consolidation(store, clock, tmp_path, llm, 40)
    sessions_asked = [
        c for c in llm.history if "Consolidate these journal entries" in c.last_user_text
    ]
    assert moved["processed"] == 25
    assert len(sessions_asked) == 1  # not asked again after it failed
    assert sorted(moved["by_rules"]) == sorted(moved["entry_ids"])
    assert "the model is down" in moved["error"]
    from_journal = {m.entry_id for m in stored_records(assistant, Memory)}
    assert set(moved["entry_ids"]) <= from_journal  # every entry's fact is in memory


async def test_entries_the_model_covered_keep_its_facts_and_the_rest_go_to_the_rules(
    store: SqlStore, clock: ManualClock, tmp_path: Path
) -> None:
    offline = OfflineLLM(announce=False)

    async def answer(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        task = next((m.content for m in messages if "Consolidate these" in (m.content or "")), "")
        if task and not any(m.role == "tool" for m in messages):
            # One fact for the first entry of each session only; the rest is skipped.
            first = int(task.split("Journal entries:\n[", 1)[1].split("]", 1)[0])
            # Entry n says "year n-1"; the fact must be one the entry supports.
            fact = f"In year {first - 1} Dave moved to the harbour"
            call = ToolCall(
                f"c{first}", "store_memory", json.dumps({"content": fact, "entry_id": first})
            )
            return LLMResponse(tool_calls=(call,))
        return await offline.complete(messages, tools)

    assistant, moved = await first_consolidation(store, clock, tmp_path, FunctionLLM(answer), 25)
    assert moved["sessions"] == 3
    assert sorted(moved["by_rules"]) == [n for n in range(1, 26) if n not in (1, 11, 21)]
    memories = stored_records(assistant, Memory)
    by_entry: dict[int | None, list[str]] = {}
    for memory in memories:
        by_entry.setdefault(memory.entry_id, []).append(memory.content)
    assert by_entry[11] == ["In year 10 Dave moved to the harbour"]
    assert by_entry[12] == ["Dave moved to the harbour in year 11."]
    assert sorted(k for k in by_entry if k is not None) == list(range(1, 26))


async def test_long_entries_get_sessions_of_their_own_size(
    store: SqlStore, clock: ManualClock, tmp_path: Path
) -> None:
    llm = counted_offline()
    assistant = open_assistant(store, clock, tmp_path, llm)
    with assistant._core.transaction() as unit:
        book = JournalBook(unit, assistant.clock, assistant.settings)
        for n in range(7):  # seven of ~3,850 characters, then four short ones
            book.add(f"Alice described tower {n}: " + "stone and ivy. " * 255)
        for n in range(4):
            book.add(f"Bob paid {n} coins for ale.")
    await assistant.sleep("closing time")
    first = await assistant.tick()
    assert first.sleep is not None
    moved = first.sleep.operations["run_sleep_consolidation"]
    assert moved["processed"] == 11
    tasks = list(  # a session asks twice (its store_memory calls, then noop)
        dict.fromkeys(
            c.last_user_text[c.last_user_text.index("Consolidate these journal entries") :]
            for c in llm.history
            # the task is the closing turn's pending event (after the current time)
            if "Consolidate these journal entries" in c.last_user_text
        )
    )
    # 12,000 characters of entries a session: three long entries each, the short ones
    # with the last long one; every entry in exactly one session.
    assert len(tasks) == 3
    assert all(len(task) < 14_000 for task in tasks)
    shown = sorted(
        int(line[1:].split("]")[0])
        for t in tasks
        for line in t.splitlines()
        if line.startswith("[")
    )
    assert shown == list(range(1, 12))
