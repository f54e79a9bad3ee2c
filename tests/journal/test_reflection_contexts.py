"""Reflection while asleep runs in the reflection contexts (issue 13, item 6, spec 002 §1).

Step 1 (questions) is a session of the ``reflection`` context: the spec's system prompt,
the task as pending event, the journal tools, at most 3 iterations. Step 3 (insights) is a
session of ``reflection_cont``: the evidence arrives as the tool result, at most 2
iterations. Both show in the tick's record for the context-window viewer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from mindspace import Assistant, ManualClock
from mindspace.context.contexts import REFLECTION_PROMPT, REFLECTION_TOOLS
from mindspace.engine.night.result import SleepTickResult
from mindspace.engine.tick import TickResult
from mindspace.hosts.http.ticks import tick_record, tick_summary
from mindspace.journal import INSIGHTS_PROMPT, QUESTIONS_PROMPT
from mindspace.llm.port import LLMResponse, Message, ToolSchema
from mindspace.llm.scripted import FunctionLLM
from mindspace.offline import OfflineLLM

EVENTS = (
    "Player Alice asked about the dragon quest in the northern hills",
    "The dragon attacked the northern village at dawn!",
    "Villagers fear another dragon attack on the harvest",
)


class Recording:
    """The offline model, with every request kept (messages and offered tool names)."""

    def __init__(self) -> None:
        self.offline = OfflineLLM(announce=False)
        self.requests: list[tuple[list[Message], list[str]]] = []
        self.llm = FunctionLLM(self.answer)

    async def answer(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        self.requests.append((list(messages), [t["function"]["name"] for t in tools]))
        return await self.offline.complete(messages, tools)

    def asking(self, head: str) -> list[tuple[list[Message], list[str]]]:
        # The request closes the last message, under the pending event's heading.
        return [
            r
            for r in self.requests
            if (r[0][-1].content or "").split("## Pending Event\n")[-1].startswith(head[:40])
        ]


async def _sleep_until_reflected(assistant: Assistant, clock: ManualClock) -> SleepTickResult:
    await assistant.sleep("night", hours=12)
    for _ in range(40):
        tick = await assistant.tick()
        assert tick.sleep is not None
        reflection = tick.sleep.operations.get("run_reflection")
        if reflection is not None and reflection.get("triggered") is not False:
            return tick.sleep
        clock.advance(minutes=1)
    raise AssertionError("no reflection in 40 sleep ticks")


async def test_sleep_reflection_runs_in_the_reflection_contexts(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    clock.set(datetime(2025, 12, 6, 22, 0, tzinfo=UTC))
    model = Recording()
    assistant = make_assistant(llm=model.llm)
    for day in range(1, 9):  # 24 entries at importance 7: past the 150 trigger
        for text in EVENTS:
            await assistant.call_tool(
                "add_journal_entry",
                {"content": f"{text} (day {day})", "importance": 7, "source_type": "direct"},
            )
            clock.advance(minutes=10)

    night = await _sleep_until_reflected(assistant, clock)
    reflection = night.operations["run_reflection"]
    assert reflection["success"] is True, reflection
    assert reflection["insights"]

    # The sessions, in their contexts, with the spec's iteration limits.
    kinds = [(s.context_type, s.pattern.max_iterations) for s in night.sessions]
    assert ("reflection", 3) in kinds
    assert ("reflection_cont", 2) in kinds

    # Step 1: the spec's system prompt override, the task as the pending event, the
    # journal tools only.
    [(questions, offered)] = model.asking(QUESTIONS_PROMPT)
    assert questions[0].role == "system"
    assert (questions[0].content or "").startswith(REFLECTION_PROMPT)
    assert set(offered) <= set(REFLECTION_TOOLS)
    assert offered
    # Step 3: the evidence is the tool result (in the closing turn, before the task; it
    # changes every time, so never in the cached system message), not the task.
    [(insights, offered)] = model.asking(INSIGHTS_PROMPT)
    evidence, task = (insights[-1].content or "").split("## Pending Event\n")
    assert "## Tool Result" in evidence
    assert "Question 1: " in evidence
    assert "Question 1: " not in task
    assert "Question 1: " not in (insights[0].content or "")
    assert set(offered) <= set(REFLECTION_TOOLS)

    # The context-window viewer's record of the tick shows both sessions' components.
    record = tick_record(1, "2025-12-06T23:00:00Z", TickResult(kind="sleep", sleep=night))
    shown = {s["context_type"]: s for s in record["side_sessions"]}
    assert {"reflection", "reflection_cont"} <= set(shown)
    keys = [c["key"] for c in shown["reflection"]["prompt"]["components"]]
    assert keys == ["system_prompt", "pending_event", "tool_result"]
    keys = [c["key"] for c in shown["reflection_cont"]["prompt"]["components"]]
    assert keys == ["system_prompt", "tool_result"]
    assert {"reflection", "reflection_cont"} <= set(tick_summary(record)["side_sessions"])
