"""Journal text reaches long-term memory only through persona-safe extraction (issue 13).

Consolidation runs in the ``sleep_consolidate`` context: the model sees the spec's
extraction prompt and the batch of entries, stores facts with ``store_memory`` (the
same persona guard) and each memory keeps its entry's source metadata. Without a
working model the documented rules extract the facts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console

from mindspace import Assistant, ManualClock
from mindspace.context.contexts import SLEEP_TOOLS
from mindspace.context.patterns import ExecutionConfig
from mindspace.hosts.cli.night_report import night_table
from mindspace.hosts.http.ticks import tick_record
from mindspace.llm import ScriptedLLM
from mindspace.memory.prompts import ASSISTANT_FACT_EXTRACTION_PROMPT
from mindspace.memory.records import Memory
from mindspace.testing.inspect import stored_records

SELF_REFERENCE = "I helped Alice find her lost sword"


async def _journal(assistant: Assistant, content: str, **extra: Any) -> int:
    result = await assistant.call_tool(
        "add_journal_entry",
        {"content": content, "importance": 6, "source_entity": "Alice", **extra},
    )
    assert result["success"] is True, result
    return int(result["entry_id"])


def _memories(assistant: Assistant) -> dict[str, Memory]:
    return {m.content: m for m in stored_records(assistant, Memory)}


async def test_store_memory_rejects_the_sentence_that_consolidation_used_to_copy(
    assistant: Assistant,
) -> None:
    result = await assistant.call_tool("store_memory", {"content": SELF_REFERENCE})
    assert result["success"] is False
    assert result["rejected_content"] == SELF_REFERENCE


async def test_the_model_extracts_facts_in_the_sleep_consolidate_context(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    llm = ScriptedLLM()
    assistant = make_assistant("innkeeper", llm=llm)
    # The assistant's own note (an observation): its "I" is the assistant's.
    entry_id = await _journal(assistant, SELF_REFERENCE, source_type="observation", tags=["quest"])
    await assistant.sleep("closing time")
    # The model first copies the entry (the guard rejects it), then rephrases.
    llm.enqueue(
        tool_calls=[
            {"name": "store_memory", "arguments": {"content": SELF_REFERENCE, "entry_id": entry_id}}
        ]
    )
    llm.enqueue(
        tool_calls=[
            {
                "name": "store_memory",
                "arguments": {"content": "Alice lost her sword", "entry_id": entry_id},
            }
        ]
    )
    llm.enqueue(tool_calls=[{"name": "noop", "arguments": {}}])

    tick = await assistant.tick()

    assert tick.sleep is not None
    consolidation = tick.sleep.operations["run_sleep_consolidation"]
    assert consolidation["extraction"] == "sleep_consolidate"
    assert consolidation["entry_ids"] == [entry_id]
    assert consolidation["rejected"] == [SELF_REFERENCE]
    assert consolidation["by_rules"] == []
    memories = _memories(assistant)
    assert SELF_REFERENCE not in memories
    fact = memories["Alice lost her sword"]
    assert consolidation["memory_ids"] == [fact.id]
    # The entry's source metadata travels with the fact.
    assert (fact.source, fact.entry_id, fact.source_entity) == ("journal", entry_id, "Alice")
    assert (fact.source_type, fact.source_trust, fact.importance) == ("observation", 0.8, 6)
    assert "quest" in fact.tags

    # The session ran in the spec's context: its prompt, tools and iteration limit.
    first = llm.history[0]
    assert sorted(first.tool_names) == sorted(SLEEP_TOOLS)
    system = first.messages[0]
    assert system.role == "system"
    assert ASSISTANT_FACT_EXTRACTION_PROMPT.strip() in (system.content or "")
    assert f"[{entry_id}] (observation from Alice, importance 6) {SELF_REFERENCE}" in (
        first.last_user_text
    )
    assert tick.context_type == "sleep_consolidate"
    assert tick.pattern is not None
    # The context allows 10 iterations; the static per-tick limit (5 by default) may
    # only restrict it (spec 002 §2, layer 1 over layer 2).
    static = assistant._core.read().doc(ExecutionConfig).max_iterations_per_tick
    assert tick.pattern.max_iterations == min(10, static)
    assert tick.pattern.source_layers["max_iterations"] == ("static" if static < 10 else "context")
    # ... and the context-window viewer shows it.
    record = tick_record(1, "now", tick)
    assert record["context_type"] == "sleep_consolidate"
    keys = [c["key"] for c in record["prompt"]["components"]]
    assert keys[:2] == ["system_prompt", "semantic_memories"]
    assert [c["name"] for c in record["loop"]["calls"]] == ["store_memory", "store_memory", "noop"]
    # The night report says how the facts were extracted.
    console = Console(width=300, record=True)
    console.print(night_table([tick.sleep]))
    text = " ".join(console.export_text().split())
    assert "1 entry consolidated into 1 memory" in text
    assert "facts from 1 by the model, 0 by rule, 1 self-reference rejected" in text


async def test_without_a_model_the_rules_extract_third_person_facts(
    make_assistant: Callable[..., Assistant],
) -> None:
    assistant = make_assistant("innkeeper", llm=ScriptedLLM())  # every call fails
    helped = await _journal(assistant, SELF_REFERENCE)
    owed = await _journal(assistant, "Bob owes Carol 20 gold", source_entity="Bob")
    mead = await _journal(assistant, "My favourite mead is the honey one")
    await assistant.sleep("closing time")

    tick = await assistant.tick()

    assert tick.sleep is not None
    consolidation = tick.sleep.operations["run_sleep_consolidation"]
    assert consolidation["extraction"] == "rules"
    assert "ScriptedLLM has no reply queued" in consolidation["error"]
    assert consolidation["entry_ids"] == [helped, owed, mead]
    assert consolidation["by_rules"] == [helped, owed, mead]
    memories = _memories(assistant)
    assert set(memories) == {"Alice needed help to find her lost sword", "Bob owes Carol 20 gold"}
    assert memories["Alice needed help to find her lost sword"].entry_id == helped
    assert memories["Bob owes Carol 20 gold"].source_entity == "Bob"
    # Every entry is consolidated, the one without a fact too.
    assert tick.sleep.operations["run_sleep_consolidation"]["completed"] is True


async def test_the_offline_model_consolidates_by_the_same_rules(
    make_assistant: Callable[..., Assistant],
) -> None:
    assistant = make_assistant(self_names=("Barkeep",))
    helped = await _journal(assistant, SELF_REFERENCE)
    told = await _journal(assistant, "I told Bob that the bridge is out. Carol sells rope.")
    await _journal(assistant, "Barkeep's ale is famous")  # the assistant's own name
    await assistant.sleep("closing time")

    tick = await assistant.tick()

    assert tick.sleep is not None
    assert tick.sleep.operations["run_sleep_consolidation"]["extraction"] == "sleep_consolidate"
    memories = _memories(assistant)
    assert set(memories) == {
        "Alice needed help to find her lost sword",
        "Bob was told that the bridge is out",
        "Carol sells rope.",
    }
    assert memories["Alice needed help to find her lost sword"].entry_id == helped
    assert memories["Carol sells rope."].entry_id == told
    assert all(m.source == "journal" for m in memories.values())


async def test_an_entry_the_model_gave_no_fact_for_is_extracted_by_the_rules(
    make_assistant: Callable[..., Assistant],
) -> None:
    llm = ScriptedLLM()
    assistant = make_assistant("innkeeper", llm=llm)
    owed = await _journal(assistant, "Bob owes Carol 20 gold", source_entity="Bob")
    helped = await _journal(assistant, SELF_REFERENCE)
    await assistant.sleep("closing time")
    llm.enqueue(
        tool_calls=[
            {"name": "store_memory", "arguments": {"content": "Bob owes money", "entry_id": owed}},
            {"name": "noop", "arguments": {}},
        ]
    )

    tick = await assistant.tick()

    assert tick.sleep is not None
    consolidation = tick.sleep.operations["run_sleep_consolidation"]
    assert consolidation["extraction"] == "sleep_consolidate"
    assert consolidation["by_rules"] == [helped]
    memories = _memories(assistant)
    assert set(memories) == {"Bob owes money", "Alice needed help to find her lost sword"}
    assert memories["Alice needed help to find her lost sword"].entry_id == helped


async def test_a_direct_entry_in_the_assistants_own_voice_passes_the_guard(
    make_assistant: Callable[..., Assistant],
) -> None:
    # Issue 34 item 9: a journal entry is the assistant's note whatever its source type;
    # people's own words reach memory as messages (engine/formation.py), not this way.
    assistant = make_assistant("innkeeper", llm=ScriptedLLM())  # every call fails: rules
    promised = "I promised Alice a discount on ale"
    entry = await _journal(assistant, promised, source_type="direct", source_entity="Alice")
    refused = await assistant.call_tool("store_memory", {"content": promised, "entry_id": entry})
    assert refused["success"] is False
    await assistant.sleep("closing time")

    tick = await assistant.tick()

    assert tick.sleep is not None
    assert tick.sleep.operations["run_sleep_consolidation"]["by_rules"] == [entry]
    assert _memories(assistant) == {}


async def test_a_fact_the_entry_does_not_say_is_refused_and_the_rules_keep_the_entry(
    make_assistant: Callable[..., Assistant],
) -> None:
    llm = ScriptedLLM()
    assistant = make_assistant("innkeeper", llm=llm)
    owed = await _journal(assistant, "Bob owes Carol 20 gold", source_entity="Bob")
    await assistant.sleep("closing time")
    invented = {"content": "Bob drinks dark ale every night", "entry_id": owed}
    llm.enqueue(tool_calls=[{"name": "store_memory", "arguments": invented}, {"name": "noop"}])

    tick = await assistant.tick()

    assert tick.sleep is not None
    consolidation = tick.sleep.operations["run_sleep_consolidation"]
    assert consolidation["by_rules"] == [owed]
    assert set(_memories(assistant)) == {"Bob owes Carol 20 gold"}
    (session,) = tick.sleep.sessions
    refused = session.loop.calls[0]
    assert (refused.name, refused.ok) == ("store_memory", False)
    assert f"is not in journal entry {owed}" in refused.result["error"]
    assert "drink, dark, ale, everi, night" in refused.result["error"]
