"""OpenTelemetry spans of one tick, through the public API (open_assistant, tick)."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from mindspace import ManualClock, ScriptedLLM, Settings, open_assistant
from mindspace.errors import LLMProviderError
from mindspace.llm import Usage
from mindspace.runtime import use_telemetry

from .conftest import Recorded

ROOT_NAME = "mindspace.tick"


def _children(spans: tuple[ReadableSpan, ...], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    found = [
        s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id
    ]
    return sorted(found, key=lambda s: s.start_time or 0)


async def test_one_tick_is_a_span_tree_of_model_and_tool_calls(
    recorded: Recorded, traced_settings: Settings, tmp_path: Path, clock: ManualClock
) -> None:
    llm = ScriptedLLM(model="tavern-7b")
    llm.enqueue(
        tool_calls=[{"name": "add_goal", "arguments": {"description": "Restock the cellar"}}],
        usage=Usage(prompt_tokens=120, completion_tokens=15),
    )
    llm.enqueue(
        "I'll restock the cellar.",
        usage=Usage(prompt_tokens=160, completion_tokens=7, cached_tokens=120),
    )
    assistant = open_assistant(
        "barkeep", settings=traced_settings, db=tmp_path / "m.db", llm=llm, clock=clock
    )
    event = assistant.enqueue_event("The cellar is empty!", source_entity="Alice")

    result = await assistant.tick()

    assert result.status == "done"
    spans = recorded.spans.get_finished_spans()
    roots = [s for s in spans if s.parent is None]
    assert [r.name for r in roots] == [ROOT_NAME]
    tick = roots[0]
    assert dict(tick.attributes or {}) == {
        "mindspace.assistant": "barkeep",
        "mindspace.mode": "awake",
        "mindspace.tick.kind": "event",
        "mindspace.tick.status": "done",
        "mindspace.event.id": event.id,
        # The tick's requests together, and what the provider read from its cache.
        "gen_ai.usage.input_tokens": 280,
        "gen_ai.usage.cache_read.input_tokens": 120,
    }
    assert tick.status.status_code == StatusCode.UNSET

    # tick > (chat, execute_tool, chat): the tool runs between the two model calls
    children = _children(spans, tick)
    assert [c.name for c in children] == [
        "chat tavern-7b",
        "execute_tool add_goal",
        "chat tavern-7b",
    ]
    first_call, tool, second_call = children
    assert first_call.end_time is not None
    assert tool.end_time is not None
    assert first_call.end_time <= (tool.start_time or 0)
    assert tool.end_time <= (second_call.start_time or 0)

    assert first_call.kind == SpanKind.CLIENT
    call = dict(first_call.attributes or {})
    assert call["gen_ai.operation.name"] == "chat"
    assert call["gen_ai.system"] == "scripted"
    assert call["gen_ai.request.model"] == "tavern-7b"
    assert call["gen_ai.response.model"] == "tavern-7b"
    assert call["gen_ai.usage.input_tokens"] == 120
    assert call["gen_ai.usage.output_tokens"] == 15
    assert call["gen_ai.request.max_tokens"] == traced_settings.llm_max_tokens
    assert call["mindspace.llm.tool_calls"] == 1
    assert dict(second_call.attributes or {})["gen_ai.usage.input_tokens"] == 160
    assert dict(second_call.attributes or {})["gen_ai.usage.cache_read.input_tokens"] == 120
    assert call["gen_ai.usage.cache_read.input_tokens"] == 0

    assert dict(tool.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add_goal",
        "mindspace.assistant": "barkeep",
        "mindspace.tool.category": "SAFE_CHAIN",
        "mindspace.tool.success": True,
    }
    # nothing else was traced: the spans are exactly the tick's tree
    assert len(spans) == 4
    # and the goal the traced tool call made is really there
    assert "Restock the cellar" in str(assistant.views.goal_tree())


async def test_a_failing_model_marks_its_call_and_the_tick_failed(
    recorded: Recorded, traced_settings: Settings, tmp_path: Path, clock: ManualClock
) -> None:
    llm = ScriptedLLM(model="tavern-7b")
    llm.enqueue_error(LLMProviderError("upstream said 500"))
    assistant = open_assistant(
        "barkeep", settings=traced_settings, db=tmp_path / "m.db", llm=llm, clock=clock
    )
    assistant.enqueue_event("Hello?", source_entity="Alice")

    result = await assistant.tick()

    assert result.status == "failed"
    spans = recorded.spans.get_finished_spans()
    tick = next(s for s in spans if s.name == ROOT_NAME)
    assert tick.status.status_code == StatusCode.ERROR
    assert dict(tick.attributes or {})["error.type"] == "LLMProviderError"
    assert dict(tick.attributes or {})["mindspace.tick.status"] == "failed"
    (call,) = _children(spans, tick)
    assert call.status.status_code == StatusCode.ERROR
    assert dict(call.attributes or {})["error.type"] == "LLMProviderError"
    assert [e.name for e in call.events] == ["exception"]


async def test_a_sleep_tick_traces_its_phase(
    recorded: Recorded, traced_settings: Settings, tmp_path: Path, clock: ManualClock
) -> None:
    assistant = open_assistant(
        "barkeep", settings=traced_settings, db=tmp_path / "m.db", llm=ScriptedLLM(), clock=clock
    )
    await assistant.sleep("closing time")

    result = await assistant.tick()

    assert result.kind == "sleep"
    spans = recorded.spans.get_finished_spans()
    tick = next(s for s in spans if s.name == ROOT_NAME)
    assert dict(tick.attributes or {})["mindspace.mode"] == "sleep"
    names = [c.name for c in _children(spans, tick)]
    assert names == ["mindspace.sleep compacting"]
    (phase,) = _children(spans, tick)
    assert dict(phase.attributes or {})["mindspace.sleep.operation"] == "compacting"


async def test_nothing_is_traced_when_telemetry_is_off(
    recorded: Recorded, traced_settings: Settings, tmp_path: Path, clock: ManualClock
) -> None:
    use_telemetry(None)  # MINDSPACE_OTEL is unset in traced_settings
    llm = ScriptedLLM()
    llm.enqueue("Hello!")
    assistant = open_assistant(
        "barkeep", settings=traced_settings, db=tmp_path / "m.db", llm=llm, clock=clock
    )
    assistant.enqueue_event("Hi", source_entity="Alice")
    assert (await assistant.tick()).status == "done"
    assert assistant.llm is llm  # not even wrapped
    assert recorded.spans.get_finished_spans() == ()
