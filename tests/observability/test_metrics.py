"""OpenTelemetry metrics of ticks, model calls, tokens, tool calls and errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics.export import HistogramDataPoint, NumberDataPoint

from mindspace import ManualClock, ScriptedLLM, Settings, open_assistant
from mindspace.errors import LLMRateLimitError
from mindspace.llm import Usage

from .conftest import Recorded

Points = dict[str, list[tuple[dict[str, Any], float]]]


def _points(recorded: Recorded) -> Points:
    """Each metric's points as (attributes, value); a histogram's value is its count."""
    data = recorded.metrics.get_metrics_data()
    found: Points = {}
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            assert scope.scope.name == "mindspace"
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    if isinstance(point, HistogramDataPoint):
                        value: float = point.count
                    else:
                        assert isinstance(point, NumberDataPoint)
                        value = point.value
                    found.setdefault(metric.name, []).append((dict(point.attributes or {}), value))
    return found


def _total(points: Points, name: str, **where: Any) -> float:
    return sum(
        value
        for attributes, value in points.get(name, [])
        if all(attributes.get(k) == v for k, v in where.items())
    )


async def test_ticks_calls_tokens_tools_and_errors_are_counted(
    recorded: Recorded, traced_settings: Settings, tmp_path: Path, clock: ManualClock
) -> None:
    llm = ScriptedLLM(model="tavern-7b")
    assistant = open_assistant(
        "barkeep", settings=traced_settings, db=tmp_path / "m.db", llm=llm, clock=clock
    )
    # a tick with a tool call: two model calls, 120+160 tokens in, 15+7 out
    llm.enqueue(
        tool_calls=[{"name": "add_goal", "arguments": {"description": "Restock the cellar"}}],
        usage=Usage(prompt_tokens=120, completion_tokens=15),
    )
    llm.enqueue("On it.", usage=Usage(prompt_tokens=160, completion_tokens=7))
    assistant.enqueue_event("The cellar is empty!", source_entity="Alice")
    assert (await assistant.tick()).status == "done"
    # a tick whose model keeps failing
    llm.enqueue_error(LLMRateLimitError("429 after the retries"))
    assistant.enqueue_event("Hello?", source_entity="Bob")
    assert (await assistant.tick()).status == "failed"
    # a tool call that fails (bad arguments), outside any tick
    await assistant.call_tool("update_goal", {"goal_id": "no-such-goal", "progress": 50})

    points = _points(recorded)
    ticks = "mindspace.ticks"
    assert _total(points, ticks) == 2
    assert _total(points, ticks, **{"mindspace.tick.status": "done"}) == 1
    assert _total(points, ticks, **{"mindspace.tick.status": "failed"}) == 1
    assert _total(points, ticks, **{"mindspace.tick.kind": "event"}) == 2
    assert _total(points, ticks, **{"mindspace.assistant": "barkeep"}) == 2
    assert _total(points, "mindspace.tick.duration") == 2

    calls = "mindspace.llm.calls"
    model = {"gen_ai.system": "scripted", "gen_ai.request.model": "tavern-7b"}
    assert _total(points, calls, **model) == 3
    assert _total(points, calls, **{"error.type": "LLMRateLimitError"}) == 1
    assert _total(points, "gen_ai.client.operation.duration", **model) == 3

    tokens = "mindspace.llm.tokens"
    assert _total(points, tokens, **{"gen_ai.token.type": "input"}) == 280
    assert _total(points, tokens, **{"gen_ai.token.type": "output"}) == 22
    usage = "gen_ai.client.token.usage"
    assert _total(points, usage, **{"gen_ai.token.type": "input"}) == 2  # two calls reported

    tools = "mindspace.tool.calls"
    assert _total(points, tools, **{"gen_ai.tool.name": "add_goal"}) == 1
    assert _total(points, tools, **{"mindspace.tool.success": True}) == 1
    failed_update = {"gen_ai.tool.name": "update_goal", "mindspace.tool.success": False}
    assert _total(points, tools, **failed_update) == 1

    errors = "mindspace.errors"
    assert _total(points, errors, **{"mindspace.operation": "llm_call"}) == 1
    assert _total(points, errors, **{"mindspace.operation": "tick"}) == 1
    assert _total(points, errors) == 2
    # no metric carries an unbounded attribute such as an event id
    every = [attributes for values in points.values() for attributes, _ in values]
    assert not any("mindspace.event.id" in attributes for attributes in every)


async def test_sleep_operations_are_counted_by_name(
    recorded: Recorded, traced_settings: Settings, tmp_path: Path, clock: ManualClock
) -> None:
    assistant = open_assistant(
        "barkeep", settings=traced_settings, db=tmp_path / "m.db", llm=ScriptedLLM(), clock=clock
    )
    await assistant.sleep("closing time")
    assert (await assistant.tick()).kind == "sleep"

    points = _points(recorded)
    sleep = "mindspace.sleep.operations"
    assert _total(points, sleep, **{"mindspace.sleep.operation": "compacting"}) == 1
    assert _total(points, "mindspace.ticks", **{"mindspace.mode": "sleep"}) == 1
