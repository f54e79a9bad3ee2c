"""Pre-compaction extraction reads every conversation before it is compacted (issue 13, 3).

A compaction round queues every thread; each tick extracts from at most
``pre_compaction_per_tick`` of them and compacts only what was read, over as many ticks as
it takes, asleep (70%) and awake (80%) alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from mindspace import Assistant, ManualClock
from mindspace.clock import format_time
from mindspace.engine.night.compaction import SUMMARY_MARKER, thread_messages
from mindspace.engine.night.precompaction import CompactionRound
from mindspace.engine.records import ConversationMessage, EngineState
from mindspace.llm.port import Message, ToolSchema
from mindspace.llm.scripted import FunctionLLM

SPEAKERS = ("Alice", "Bob", "Carol", "Dave", "Erin")
_EXTRACT = re.compile(r"history with (\w+) is compacted")
_SUMMARY = re.compile(r"Summarize the following conversation with (\w+)")


class Recorder:
    """A model that notes, in order, which thread each request extracts from or summarises."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self.llm = FunctionLLM(self.answer)

    def answer(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        text = "\n".join(m.content or "" for m in messages)
        summary = _SUMMARY.search(messages[-1].content or "")
        if summary:
            self.log.append(("summary", summary.group(1)))
            return f"{summary.group(1)} ordered ale."
        extract = _EXTRACT.search(text)
        if extract:
            self.log.append(("extract", extract.group(1)))
            return "Nothing more to journal."
        return "Noted."

    def first(self, step: str, entity: str) -> int:
        return self.log.index((step, entity))


def _five_conversations(assistant: Assistant, clock: ManualClock) -> None:
    now = format_time(clock.now())
    number = 0
    with assistant._core.transaction() as unit:
        for turn in range(8):  # more than the 6 kept messages: each thread has an old part
            for speaker in SPEAKERS:
                number += 1
                role = "user" if turn % 2 == 0 else "assistant"
                text = f"{speaker} says thing {turn}" if role == "user" else f"Yes, {speaker}."
                unit.put(
                    ConversationMessage(
                        id=f"m{number}", entity=speaker, role=role, content=text, created_at=now
                    )
                )
        unit.put_doc(unit.doc(EngineState).model_copy(update={"next_message": number}))


def _assistant(make_assistant: Callable[..., Assistant], recorder: Recorder) -> Assistant:
    assistant = make_assistant(llm=recorder.llm)
    # Mining would ask the model too; this test is about extraction and compaction.
    settings = assistant.settings.model_copy(update={"mining_calls_per_tick": 0})
    return make_assistant(llm=recorder.llm, settings=settings)


def _assert_each_read_before_compacted(recorder: Recorder, assistant: Assistant) -> None:
    for speaker in SPEAKERS:
        assert recorder.first("extract", speaker) < recorder.first("summary", speaker), speaker
        thread = thread_messages(assistant._core.read())[speaker]
        assert (thread[0].content or "").startswith(SUMMARY_MARKER)
    assert assistant._core.read().doc(CompactionRound).queued == ()


async def test_sleep_extracts_from_all_five_conversations_before_compacting_each(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    clock.set(datetime(2025, 12, 6, 23, 0, tzinfo=UTC))
    recorder = Recorder()
    assistant = _assistant(make_assistant, recorder)
    _five_conversations(assistant, clock)
    await assistant.record_context_usage(int(assistant.settings.model_limit * 0.75))
    await assistant.sleep("closing time")

    reports: list[dict[str, Any]] = []
    for _ in range(6):
        tick = await assistant.tick()
        assert tick.sleep is not None
        if "run_pre_compaction_extraction" in tick.sleep.operations:
            reports.append(tick.sleep.operations["run_pre_compaction_extraction"])
    extracted = [set(r.get("threads", {})) for r in reports if r["ran"]]
    # Bounded work per tick (3 by default), every conversation in the end.
    assert [len(t) for t in extracted[:2]] == [3, 2]
    assert set().union(*extracted) == set(SPEAKERS)
    assert sorted(e for step, e in recorder.log if step == "extract") == sorted(SPEAKERS)
    _assert_each_read_before_compacted(recorder, assistant)


async def test_emergency_compaction_while_awake_extracts_first(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    recorder = Recorder()
    assistant = _assistant(make_assistant, recorder)
    _five_conversations(assistant, clock)
    await assistant.record_context_usage(int(assistant.settings.model_limit * 0.85))

    assistant.enqueue_event("Evening!", source_entity="Frank")
    first = await assistant.tick()
    assert first.status == "done"
    assert len([s for s, _ in recorder.log if s == "summary"]) == 3  # what was read so far
    assert len(assistant._core.read().doc(CompactionRound).queued) == 2
    assistant.enqueue_event("Another ale", source_entity="Frank")
    await assistant.tick()  # the round goes on, although the usage is unknown now
    _assert_each_read_before_compacted(recorder, assistant)
