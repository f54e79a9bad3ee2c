"""An awake event tick costs a bounded number of store round trips, on both backends.

Each transaction blocks the worker's event loop for a network round trip or more on
PostgreSQL; these bounds keep them from creeping back one refresh or one bookkeeping
commit at a time. Counted on the store's engine (``mindspace.testing.round_trips``)
over ticks after the first, whose loads of whole kinds happen once per process.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import pytest

from mindspace import Assistant, FunctionLLM, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.modes import SleepSchedule
from mindspace.engine.notices import Notice
from mindspace.llm.port import LLMResponse, Message, ToolCall, ToolSchema
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.testing.round_trips import RoundTrips, count_round_trips

TICKS = 6

BOUNDS = {
    # The tick's start (revision and open events, one statement), the event taken with
    # its words as memory, one read of recalled memories by key, the tick's commit.
    "sqlite": RoundTrips(transactions=5, writes=2, statements=15),
    # The same three of the tick's own, and the memory search, which runs in the
    # database: three searches for the prompt (the rules' ranking, dense alone, BM25
    # alone) and two for the new memory's neighbours, each setting its search options.
    "postgresql": RoundTrips(transactions=10, writes=2, statements=38),
}
"""Most round trips per awake event tick (a tool round, then the reply); now 4 / 2 / 13
on SQLite and 9 / 2 / 34 on PostgreSQL. Writes: the event's words (before the model is
called, so that a failed call loses nothing), then the tick's whole unit."""


def _reply(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
    # A tool round first (its writes are the tick's), then the answer.
    if messages[-1].role == "tool":
        return LLMResponse(text="Aye, I will remember that.", model="scripted")
    fact = messages[-1].content or ""
    arguments = json.dumps({"memory_type": "fact", "content": fact[-60:]})
    call = ToolCall(id="c1", name="add_session_memory", arguments=arguments)
    return LLMResponse(text=None, tool_calls=(call,), model="scripted")


@pytest.fixture
def sql(backend_url: str) -> Iterator[SqlStore]:
    store = SqlStore(backend_url)
    yield store
    store.close()


def _assistant(sql: SqlStore, clock: ManualClock, settings: Settings) -> Assistant:
    return assistant_on(
        sql,
        "barkeep",
        llm=FunctionLLM(_reply),
        clock=clock,
        settings=settings,
        embedder=HashingEmbedder(384),
    )


async def _event_ticks(assistant: Assistant, clock: ManualClock) -> RoundTrips:
    engine = assistant._core.store.engine  # type: ignore[attr-defined]
    counted = RoundTrips()
    for n in range(TICKS + 1):
        clock.advance(seconds=30)
        assistant.enqueue_event(f"My brother Tom sails the ship number {n}.", source_entity="Bob")
        with count_round_trips(engine) as tick:
            result = await assistant.tick()
        assert (result.kind, result.status) == ("event", "done"), result.error
        if n > 0:  # the first tick loads whole kinds, once per process
            counted.transactions += tick.transactions
            counted.writes += tick.writes
            counted.statements += tick.statements
    return counted


async def test_an_awake_event_tick_makes_few_round_trips(
    sql: SqlStore, clock: ManualClock, settings: Settings
) -> None:
    counted = await _event_ticks(_assistant(sql, clock, settings), clock)
    bound = BOUNDS[sql.engine.dialect.name]
    assert counted.writes <= bound.writes * TICKS, counted.per(TICKS)
    assert counted.transactions <= bound.transactions * TICKS, counted.per(TICKS)
    assert counted.statements <= bound.statements * TICKS, counted.per(TICKS)


async def test_an_event_tick_counts_toward_the_sleep_schedule_in_its_own_commit(
    sql: SqlStore, clock: ManualClock, settings: Settings
) -> None:
    clock.set(datetime(2025, 12, 6, 21, 58, tzinfo=UTC))
    assistant = _assistant(sql, clock, settings)
    await assistant.set_sleep_schedule(
        SleepSchedule(enabled=True, sleep_start_hour=22, sleep_duration_hours=4, min_awake_ticks=3)
    )
    notices: list[Notice] = []
    assistant.subscribe(notices.append)
    engine = sql.engine
    for n, minutes in enumerate((0, 3, 1)):  # 21:58, then 22:01 and 22:02: in the window
        clock.advance(minutes=minutes)
        assistant.enqueue_event(f"The cellar holds {n + 20} barrels.", source_entity="Bob")
        with count_round_trips(engine) as tick:
            result = await assistant.tick()
        assert (result.kind, result.status) == ("event", "done"), result.error
        if n > 0:  # the first also builds PostgreSQL's vector index, once per process
            assert tick.writes <= BOUNDS[engine.dialect.name].writes
        if n < 2:  # fewer than min_awake_ticks so far
            assert assistant.views.mode().mode == "awake"
            assert assistant.views.mode().awake_ticks == n + 1
    assert result.notes == ["fell asleep: scheduled sleep window 22:00-02:00"]
    assert result.mode == "sleep"
    assert assistant.views.mode().mode == "sleep"
    changed = [n.data for n in notices if n.kind == "mode_changed"]
    assert changed == [{"mode": "sleep", "reason": "scheduled sleep window 22:00-02:00"}]
