"""Prompt providers for the memory tiers: entity context and semantic memories."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mindspace.engine.formation import formation_ref
from mindspace.engine.prompting import PromptBuilder, PromptInputs
from mindspace.memory.entities import EntityBook
from mindspace.memory.semantic import MemoryQuery, SemanticMemory
from mindspace.memory.working import WorkingMemoryBook
from mindspace.workspace.goals import GoalBook

if TYPE_CHECKING:
    from mindspace.engine.core import EngineCore

__all__ = ["install_memory_providers", "memory_queries"]


def memory_queries(inputs: PromptInputs) -> list[MemoryQuery]:
    """What to look up for a prompt: the pending event (or task) and the active goals.

    An event from an entity is looked up speaker-aware (see :class:`MemoryQuery`):
    what a person asks about themselves ("what do I drink?") names nobody.
    """
    queries = []
    if inputs.event is not None:
        queries.append(MemoryQuery(inputs.event.content, inputs.event.source_entity))
    elif inputs.task:
        queries.append(MemoryQuery(inputs.task))
    book = GoalBook(inputs.unit, inputs.clock, inputs.settings)
    queries += [MemoryQuery(g.description) for g in book.active()[:5]]
    return queries


def install_memory_providers(builder: PromptBuilder, assistant: EngineCore) -> None:
    """Fill entity_context and semantic_memories from the assistant's memory tiers."""

    def entity_context(inputs: PromptInputs) -> str:
        present = [inputs.entity] if inputs.entity else []
        present += list(inputs.present_entities)
        if inputs.event is not None:
            present += list(inputs.event.meta.present)
        book = EntityBook(inputs.unit, inputs.clock, inputs.settings, assistant.guard)
        parts = [book.render(present)]
        working = WorkingMemoryBook(inputs.unit, inputs.clock)
        parts += [working.render(entity) for entity in dict.fromkeys(present)]
        return "\n\n".join(p for p in parts if p)

    async def semantic_memories(inputs: PromptInputs) -> str:
        memory = SemanticMemory(
            inputs.unit, inputs.clock, inputs.settings, assistant.embedder, assistant.memory_index
        )
        event = inputs.event
        found = await memory.aretrieve_relevant(
            memory_queries(inputs),
            min_source_trust=inputs.settings.memory_min_source_trust,
            # The message's own words, formed a moment ago, are no memory to remind it of.
            skip_ref=formation_ref(event) if event is not None else None,
        )
        lines = []
        for item in found:
            m = item.memory
            who = f" (from {m.source_entity})" if m.source_entity else ""
            past = f" (no longer so since {m.valid_to[:10]})" if m.valid_to else ""
            line = f"- [{m.occurred_at[:10]}] {m.content}{who} trust {m.source_trust:.1f}{past}"
            lines.append(line)
        return "\n".join(lines)

    builder.provide("entity_context", entity_context)
    builder.provide("semantic_memories", semantic_memories)
