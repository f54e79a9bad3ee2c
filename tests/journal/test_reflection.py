"""Reflection: the 150 trigger, reset, the three steps and the persona filter (spec 004 §3)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from rich.console import Console

from mindspace import Assistant, ManualClock, ScriptedLLM
from mindspace.engine.night.result import SleepTickResult
from mindspace.errors import LLMProviderError
from mindspace.hosts.cli.night_report import night_table
from mindspace.journal import (
    INSIGHTS_PROMPT,
    QUESTIONS_PROMPT,
    Evidence,
    JournalBook,
    JournalMeta,
    ReflectionState,
    check_reflection_trigger,
    reflect_if_due,
    reset_reflection_state,
    run_reflection,
    set_reflection_threshold,
)

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]


async def _add(assistant: Assistant, content: str, importance: int) -> dict[str, Any]:
    return await assistant.call_tool(
        "add_journal_entry", {"content": content, "importance": importance}
    )


async def test_reflection_triggers_at_cumulative_importance_150(assistant: Assistant) -> None:
    for i in range(14):
        result = await _add(assistant, f"Major event {i}", 10)
        assert result["reflection"]["reflection_due"] is False
    assert result["reflection"]["cumulative_importance"] == 140
    result = await _add(assistant, "A nearly notable event", 9)
    assert result["reflection"] == {
        "cumulative_importance": 149.0,
        "threshold": 150,
        "reflection_due": False,
    }
    assert check_reflection_trigger(assistant._core.read()) is False
    result = await _add(assistant, "The last straw", 1)
    assert result["reflection"]["reflection_due"] is True
    assert check_reflection_trigger(assistant._core.read()) is True
    state = assistant._core.read().doc(ReflectionState)
    assert state.entries_since_reflection == tuple(range(1, 17))


async def test_reset_keeps_the_threshold_and_counts_reflections(
    assistant: Assistant, clock: ManualClock
) -> None:
    with assistant._core.transaction() as unit:
        set_reflection_threshold(unit, 20)
    await _add(assistant, "Alice crowned queen", 10)
    await _add(assistant, "Bob exiled", 10)
    assert check_reflection_trigger(assistant._core.read())
    clock.advance(hours=1)
    with assistant._core.transaction() as unit:
        first = reset_reflection_state(unit, clock)
    assert first.to_spec() == {
        "cumulative_importance": 0.0,
        "threshold": 20,
        "last_reflection_time": "2025-12-06T11:00:00Z",
        "reflection_count": 1,
        "entries_since_reflection": [],
    }
    assert assistant._core.read().doc(JournalMeta).last_reflection == "2025-12-06T11:00:00Z"
    assert not check_reflection_trigger(assistant._core.read())
    await _add(assistant, "Carol returns", 10)
    with assistant._core.transaction() as unit:
        second = reset_reflection_state(unit, clock)
    assert (second.reflection_count, second.threshold) == (2, 20)


def _questions() -> str:
    return json.dumps(
        [
            "What patterns appear in how players treat newcomers?",
            "How have relationships in the village changed?",
            "What recurring challenges have emerged?",
        ]
    )


async def _village(assistant: Assistant) -> None:
    for content in (
        "Players greeted the newcomer Dana with patience",
        "Dana thanked the players for their patient guidance",
        "A quarrel between the smith and the miller was settled",
    ):
        await _add(assistant, content, 8)


async def test_a_self_referential_insight_is_rejected_and_a_world_insight_kept(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    await _village(assistant)
    scripted.enqueue(_questions())
    scripted.enqueue(
        json.dumps(
            [
                {"insight": "I should be more patient with players", "evidence": ["journal_1"]},
                {
                    "insight": "Players respond better to patient guidance",
                    "evidence": ["journal_1", "journal_2", "journal_99"],
                },
                {"insight": "Quarrels end quickly here", "evidence": []},
            ]
        )
    )
    with assistant._core.transaction() as unit:
        outcome = await run_reflection(
            unit, assistant.clock, assistant.settings, scripted, assistant._core.guard
        )

    report = outcome.to_dict()
    assert report["success"] is True
    assert report["rejected_insights"] == [
        {
            "insight": "I should be more patient with players",
            "reason": "self_reference",
            "error": "Content appears to reference assistant actions or identity",
            "matched": "I should",
        },
        {
            "insight": "Quarrels end quickly here",
            "reason": "no_evidence",
            "error": "The insight cites none of the evidence ids it was given",
        },
    ]
    assert report["insights"] == [
        {
            "entry_id": 4,
            "content": "[SYNTHESIS] Players respond better to patient guidance",
            "evidence_ids": ["journal_1", "journal_2"],  # journal_99 was never given
        }
    ]
    stored = JournalBook(assistant._core.read(), assistant.clock, assistant.settings).get(4)
    assert stored.importance == 8
    assert stored.importance_method == "manual"
    assert stored.tags == ("synthesis", "meta_learning")
    assert stored.is_synthesis
    state = assistant._core.read().doc(ReflectionState)
    assert (state.reflection_count, state.cumulative_importance) == (1, 0.0)
    assert state.entries_since_reflection == ()

    questions_prompt = scripted.history[0].last_user_text
    assert questions_prompt.startswith(QUESTIONS_PROMPT.split("\n", 1)[0])
    assert "[journal_1] (importance 8) Players greeted the newcomer Dana" in questions_prompt
    insights_prompt = scripted.history[1].last_user_text
    assert insights_prompt.startswith(INSIGHTS_PROMPT.split(" ", 1)[0])
    assert "Question 1: What patterns appear in how players treat newcomers?" in insights_prompt
    assert "[journal_2] Dana thanked the players" in insights_prompt


async def test_evidence_comes_from_the_source_up_to_10_per_question(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    await _village(assistant)

    class Library:
        def __init__(self) -> None:
            self.asked: list[tuple[str, int]] = []

        async def find(self, question: str, limit: int) -> list[Evidence]:
            self.asked.append((question, limit))
            return [Evidence(f"mem_{i}", f"Memory {i} about {question}", 0.5) for i in range(12)]

    library = Library()
    scripted.enqueue(_questions())
    scripted.enqueue(json.dumps([{"insight": "Newcomers settle in fast", "evidence": ["mem_3"]}]))
    with assistant._core.transaction() as unit:
        outcome = await run_reflection(
            unit, assistant.clock, assistant.settings, scripted, assistant._core.guard, library
        )
    assert [limit for _, limit in library.asked] == [10, 10, 10]
    assert all(len(items) == 10 for items in outcome.evidence.values())
    assert outcome.to_dict()["evidence"][library.asked[0][0]][0] == {
        "id": "mem_0",
        "content": f"Memory 0 about {library.asked[0][0]}",
        "score": 0.5,
    }
    assert [e.evidence_ids for e in outcome.stored] == [("mem_3",)]


async def test_journal_evidence_is_ranked_by_episodic_scoring(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    await _village(assistant)
    scripted.enqueue(json.dumps(["Who is the miller quarrelling with?"]))
    scripted.enqueue("[]")
    with assistant._core.transaction() as unit:
        outcome = await run_reflection(
            unit, assistant.clock, assistant.settings, scripted, assistant._core.guard
        )
    evidence = outcome.evidence["Who is the miller quarrelling with?"]
    assert evidence[0].id == "journal_3"  # "miller" is the only content word that overlaps
    assert len(evidence) == 3
    assert outcome.stored == []
    assert outcome.success  # a reflection with no accepted insight still resets
    assert assistant._core.read().doc(ReflectionState).reflection_count == 1


async def test_a_failing_llm_changes_nothing(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, stored: Snapshot
) -> None:
    assistant = make_assistant(llm=scripted)
    await _village(assistant)
    before = stored()
    scripted.enqueue(_questions())
    scripted.enqueue_error(LLMProviderError("HTTP 503"))
    with assistant._core.transaction() as unit:
        outcome = await run_reflection(
            unit, assistant.clock, assistant.settings, scripted, assistant._core.guard
        )
    assert outcome.success is False
    assert outcome.error is not None
    assert "HTTP 503" in outcome.error
    scripted.enqueue("I am not sure what to ask.")
    scripted.enqueue("Still not sure.")
    with assistant._core.transaction() as unit:
        outcome = await run_reflection(
            unit, assistant.clock, assistant.settings, scripted, assistant._core.guard
        )
    assert outcome.success is False
    assert outcome.error is None  # the model answered; its answers were unusable
    assert outcome.skipped is not None
    assert "no usable questions (after one repair)" in outcome.skipped
    report = outcome.to_dict()
    assert report["structured"] == {"questions": "fallback"}
    assert report["skipped"] == outcome.skipped
    assert stored() == before


async def test_bulleted_replies_are_refused_and_repaired_once(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    await _village(assistant)
    scripted.enqueue("Here are my questions:\n1. How do players treat newcomers?\n2. Why?")
    scripted.enqueue('["How do players treat newcomers?", "Why did the quarrel end?"]')
    scripted.enqueue("- Players welcome newcomers warmly [journal_1, journal_2]\n")
    scripted.enqueue(
        'Sure:\n```json\n[{"insight": "Players welcome newcomers warmly", '
        '"evidence": ["journal_1", "journal_2"]}]\n```'
    )
    with assistant._core.transaction() as unit:
        outcome = await run_reflection(
            unit, assistant.clock, assistant.settings, scripted, assistant._core.guard
        )
    assert outcome.success is True
    assert outcome.questions == ["How do players treat newcomers?", "Why did the quarrel end?"]
    assert [(e.content, e.evidence_ids) for e in outcome.stored] == [
        ("[SYNTHESIS] Players welcome newcomers warmly", ("journal_1", "journal_2")),
    ]
    assert outcome.to_dict()["structured"] == {"questions": "repaired", "insights": "repaired"}
    assert len(scripted.history) == 4
    assert "Answer again with only a JSON array of 3 question strings" in (
        scripted.history[1].last_user_text
    )


async def test_unusable_insights_skip_the_reflection_and_store_nothing(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, stored: Snapshot
) -> None:
    assistant = make_assistant(llm=scripted)
    await _village(assistant)
    before = stored()
    scripted.enqueue(_questions())
    scripted.enqueue("Players are patient with newcomers (journal_1).")
    scripted.enqueue('[{"insight": "Players are patient", "evidence": "journal_1"}]')
    with assistant._core.transaction() as unit:
        outcome = await run_reflection(
            unit, assistant.clock, assistant.settings, scripted, assistant._core.guard
        )
    assert outcome.success is False
    assert outcome.stored == []
    assert outcome.skipped is not None
    assert "no usable insights (after one repair)" in outcome.skipped
    assert "evidence" in outcome.skipped  # says which field was wrong
    assert outcome.to_dict()["structured"] == {"questions": "parsed", "insights": "fallback"}
    assert stored() == before  # the reflection window stays for the next try
    assert assistant._core.read().doc(ReflectionState).reflection_count == 0

    # The night report shows a skip with its reason, not a reflection done.
    console = Console(width=300, record=True)
    console.print(
        night_table(
            [SleepTickResult("dreaming", "dreaming", {"run_reflection": outcome.to_dict()})]
        )
    )
    text = " ".join(console.export_text().split())
    assert "0 reflections, 0 insights stored; 1 time skipped, last: The language model" in text


async def test_reflection_end_to_end_with_the_offline_model(
    assistant: Assistant, clock: ManualClock, make_assistant: Callable[..., Assistant]
) -> None:
    events = [
        "Player Alice asked about the dragon quest in the northern hills",
        "Player Bob joined Alice on the dragon quest",
        "The dragon attacked the northern village at dawn!",
        "Alice and Bob found dragon tracks near the old bridge",
        "Villagers fear another dragon attack on the harvest",
        "The smith forged a spear for the dragon hunt",
    ]
    for round_ in range(4):
        for text in events:
            await assistant.call_tool(
                "add_journal_entry",
                {"content": f"{text} (day {round_ + 1})", "source_type": "direct"},
            )
            clock.advance(minutes=30)
    with assistant._core.transaction() as unit:
        assert check_reflection_trigger(unit)
        outcome = await reflect_if_due(
            unit, clock, assistant.settings, assistant.llm, assistant._core.guard
        )
        assert outcome is not None
    report = outcome.to_dict()
    assert report["success"] is True
    assert len(report["questions"]) == 3
    assert report["questions"][0] == "What patterns connect the events involving 'dragon'?"
    assert all(len(items) == 10 for items in report["evidence"].values())
    assert report["insights"], report
    given = {item["id"] for items in report["evidence"].values() for item in items}
    for insight in report["insights"]:
        assert insight["content"].startswith("[SYNTHESIS] ")
        assert insight["evidence_ids"]
        assert set(insight["evidence_ids"]) <= given
    assert report["reflection_state"]["reflection_count"] == 1

    reopened = make_assistant()  # the insights were committed
    book = JournalBook(reopened._core.read(), clock, reopened.settings)
    synthesis = [e for e in book.entries() if e.is_synthesis]
    assert [e.id for e in synthesis] == [i["entry_id"] for i in report["insights"]]
    assert all(e.importance == 8 for e in synthesis)
    assert all(e.tags == ("synthesis", "meta_learning") for e in synthesis)
    with reopened._core.transaction() as unit:
        assert (
            await reflect_if_due(unit, clock, reopened.settings, reopened.llm, reopened._core.guard)
            is None
        )
