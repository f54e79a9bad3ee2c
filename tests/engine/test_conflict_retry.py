"""A write that loses a race to another process is redone, so the caller never sees it."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from mindspace import Assistant, ConcurrencyError
from mindspace.clock import ManualClock
from mindspace.config import Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.assistant import assistant_tools
from mindspace.engine.modes import SleepSchedule
from mindspace.engine.records import Event
from mindspace.engine.tick import TickResult
from mindspace.errors import LLMError
from mindspace.llm import FunctionLLM
from mindspace.llm.port import Message, ToolSchema
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.tools.base import ToolContext
from mindspace.tools.goals import AddGoal, AddGoalArgs


class HeldAddGoal(AddGoal):
    """``add_goal`` that waits, on its first run, until the test lets it finish."""

    name = "held_add_goal"

    def __init__(self) -> None:
        self.running = asyncio.Event()
        self.release = asyncio.Event()
        self.runs = 0

    async def execute(self, ctx: ToolContext, args: AddGoalArgs) -> dict[str, Any]:
        self.runs += 1
        self.running.set()
        await self.release.wait()
        return await super().execute(ctx, args)


@pytest.fixture
def other_store(db_path: Path) -> Iterator[SqlStore]:
    """A second connection to the same SQLite file: another process's view of it."""
    s = SqlStore.from_path(db_path)
    yield s
    s.close()


def _other_process(other_store: SqlStore, clock: ManualClock, settings: Settings) -> Assistant:
    """The same assistant opened through ``other_store``, with a model that needs no server."""
    return assistant_on(
        other_store, "barkeep", llm=OfflineLLM(announce=False), clock=clock, settings=settings
    )


def _open(store: SqlStore, clock: ManualClock, settings: Settings, tool: HeldAddGoal) -> Assistant:
    tools = assistant_tools()
    tools.register(tool)
    return assistant_on(
        store,
        "barkeep",
        llm=OfflineLLM(announce=False),
        clock=clock,
        settings=settings,
        tools=tools,
    )


async def _race(
    store: SqlStore, other_store: SqlStore, clock: ManualClock, settings: Settings
) -> tuple[Assistant, Assistant, HeldAddGoal, asyncio.Task[dict[str, Any]]]:
    tool = HeldAddGoal()
    mine = _open(store, clock, settings, tool)
    theirs = _other_process(other_store, clock, settings)
    call = asyncio.create_task(mine.call_tool("held_add_goal", {"description": "Wash the mugs"}))
    await asyncio.wait_for(tool.running.wait(), timeout=10)
    # Another process commits while the call's unit of work is open.
    added = await theirs.call_tool("add_goal", {"description": "Restock the cellar"})
    assert added["success"] is True
    tool.release.set()
    return mine, theirs, tool, call


async def test_a_call_that_loses_a_race_is_redone_and_both_writes_are_kept(
    store: SqlStore, other_store: SqlStore, clock: ManualClock, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, conflict_backoff_min_ms=0, conflict_backoff_max_ms=0)
    mine, theirs, tool, call = await _race(store, other_store, clock, settings)

    result = await asyncio.wait_for(call, timeout=10)

    assert result["success"] is True
    assert tool.runs == 2  # the first attempt lost the race and was redone from fresh state
    for assistant in (mine, theirs):
        goals = assistant.views.goals().all()
        assert sorted(g.description for g in goals) == ["Restock the cellar", "Wash the mugs"]
        assert len({g.id for g in goals}) == 2


async def test_the_conflict_reaches_the_caller_only_when_retries_run_out(
    store: SqlStore, other_store: SqlStore, clock: ManualClock, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, conflict_retries=0)
    mine, theirs, tool, call = await _race(store, other_store, clock, settings)

    with pytest.raises(ConcurrencyError):
        await asyncio.wait_for(call, timeout=10)

    assert tool.runs == 1
    # Nothing of the lost call was written; the winner's goal is intact.
    assert [g.description for g in theirs.views.goals().all()] == ["Restock the cellar"]
    assert [g.description for g in mine.views.goals().all()] == ["Restock the cellar"]


class HeldModel:
    """A model whose first answer waits until the test lets it through."""

    def __init__(self) -> None:
        self.thinking = asyncio.Event()
        self.release = asyncio.Event()
        self.calls = 0

    async def __call__(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        self.calls += 1
        self.thinking.set()
        await self.release.wait()
        return "Coming right up."


async def _write_while_the_model_thinks(
    mine: Assistant, theirs: Assistant, model: HeldModel
) -> tuple[Event, TickResult]:
    """A tick of ``mine``; ``theirs`` adds a goal while its model call is held."""
    event = mine.enqueue_event("An ale, please", source_entity="Alice")
    tick = asyncio.create_task(mine.tick())
    await asyncio.wait_for(model.thinking.wait(), timeout=10)
    added = await theirs.call_tool("add_goal", {"description": "Restock the cellar"})
    assert added["success"] is True
    model.release.set()
    return event, await asyncio.wait_for(tick, timeout=10)


async def test_a_tick_that_loses_its_commit_is_redone_at_once(
    store: SqlStore, other_store: SqlStore, clock: ManualClock, settings: Settings
) -> None:
    model = HeldModel()
    mine = assistant_on(store, "barkeep", llm=FunctionLLM(model), clock=clock, settings=settings)
    theirs = _other_process(other_store, clock, settings)
    event, result = await _write_while_the_model_thinks(mine, theirs, model)

    assert result.status == "done"
    assert result.reply == "Coming right up."
    assert model.calls == 2  # the first session lost the commit and was run again
    for assistant in (mine, theirs):
        stored = assistant.views.event(event.id)
        assert stored is not None
        assert stored.status == "done"
        assert stored.attempts == 1  # a redo is not an interrupted attempt
        goals = assistant.views.goals().all()
        assert [g.description for g in goals] == ["Restock the cellar"]


class HeldEmbedder:
    """The hashing embedder, whose first call waits (in its worker thread) for the test."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(64)
        self.name, self.dim = self.inner.name, self.inner.dim
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Sequence[str]) -> Any:
        if not self.entered.is_set():
            self.entered.set()
            self.release.wait(timeout=10)
        return self.inner.embed(texts)


async def test_a_tick_whose_first_commit_loses_a_race_takes_the_event_again_at_once(
    store: SqlStore,
    other_store: SqlStore,
    clock: ManualClock,
    settings: Settings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mindspace.engine")
    # The tick reads the revision once, at its start: another process's commit while the
    # event's words are embedded fails the revision check of the tick's first commit
    # (the event taken, its words kept), which is redone on fresh state.
    embedder = HeldEmbedder()
    mine = assistant_on(
        store,
        "barkeep",
        llm=OfflineLLM(announce=False),
        clock=clock,
        settings=settings,
        embedder=embedder,
    )
    theirs = _other_process(other_store, clock, settings)
    event = mine.enqueue_event("My brother Tom sails the Wren.", source_entity="Bob")
    tick = asyncio.create_task(mine.tick())
    assert await asyncio.to_thread(embedder.entered.wait, 10)
    added = await theirs.call_tool("add_goal", {"description": "Restock the cellar"})
    assert added["success"] is True
    embedder.release.set()

    result = await asyncio.wait_for(tick, timeout=10)

    assert (result.kind, result.status) == ("event", "done")
    assert "A commit of 'barkeep''s tick lost a race" in caplog.text  # and was redone
    for assistant in (mine, theirs):
        stored = assistant.views.event(event.id)
        assert stored is not None
        assert (stored.status, stored.attempts) == ("done", 1)
        kept = [m.content for m in assistant.views.memory.listing().memories]
        assert kept == ["My brother Tom sails the Wren."]  # once
        assert [g.description for g in assistant.views.goals().all()] == ["Restock the cellar"]


class FailingHeldModel(HeldModel):
    """A model that fails, once the test lets its first call through."""

    async def __call__(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        await super().__call__(messages, tools)
        raise LLMError("The model is down")


async def test_a_failed_tick_counts_toward_the_schedule_even_after_another_process_wrote(
    store: SqlStore, other_store: SqlStore, clock: ManualClock, settings: Settings
) -> None:
    # A failed tick commits nothing of its own; its awake tick is counted apart, after a
    # model call that may have taken long: a write from elsewhere meanwhile is no crash.
    model = FailingHeldModel()
    mine = assistant_on(store, "barkeep", llm=FunctionLLM(model), clock=clock, settings=settings)
    theirs = _other_process(other_store, clock, settings)
    await mine.set_sleep_schedule(SleepSchedule(enabled=True, min_awake_ticks=100))
    event, result = await _write_while_the_model_thinks(mine, theirs, model)

    assert (result.kind, result.status) == ("event", "failed")
    for assistant in (mine, theirs):
        assert assistant.views.mode().awake_ticks == 1
        failed = assistant.views.event(event.id)
        assert failed is not None
        assert failed.status == "failed"
        assert [g.description for g in assistant.views.goals().all()] == ["Restock the cellar"]
