"""Memory tools: store_memory, recall_memories, update_entity_observation."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any, Literal

from pydantic import Field

from mindspace.errors import InvalidArgumentsError
from mindspace.journal.records import JournalEntry
from mindspace.memory.extraction import journal_draft
from mindspace.memory.semantic import MemoryDraft
from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext
from mindspace.tools.limits import Identifier, Labels, Limit, ShortText

__all__ = ["RecallMemories", "StoreMemory", "UpdateEntityObservation"]

SourceTypeArg = Literal["direct", "observation", "inference", "environmental"]


class StoreMemoryArgs(ToolArgs):
    content: Annotated[str, Limit("max_memory_chars")] = Field(
        description="A fact about the world, players or events (third person)."
    )
    tags: Labels = Field(default_factory=list)
    source_type: SourceTypeArg = "observation"
    source_trust: float | None = Field(
        default=None, ge=0, le=1, description="0-1; defaults from source_type."
    )
    source_entity: Identifier | None = Field(default=None, description="Who it came from.")
    importance: int = Field(default=5, ge=1, le=10)
    entry_id: int | None = Field(
        default=None,
        ge=1,
        description=(
            "The journal entry the fact comes from; its source, trust, entity and "
            "importance are kept with the memory (the arguments above are then ignored)."
        ),
    )


class StoreMemory(Tool[StoreMemoryArgs]):
    name = "store_memory"
    description = "Store a long-term fact in semantic memory, with its source and trust."
    category = ToolCategory.SAFE_CHAIN
    args_model = StoreMemoryArgs

    async def execute(self, ctx: ToolContext, args: StoreMemoryArgs) -> dict[str, Any]:
        if args.entry_id is not None:
            entry = ctx.unit.get(JournalEntry, str(args.entry_id))
            if entry is None:
                raise InvalidArgumentsError(
                    f"No journal entry has entry_id {args.entry_id!r}",
                    "Use the number of an entry from the list, or leave entry_id out.",
                )
            # The entry is the assistant's note whatever its source: no "I" is exempt.
            ctx.guard.check(args.content)
            draft = journal_draft(ctx.unit, entry, args.content)
            tags = tuple(dict.fromkeys([*draft.tags, *args.tags]))
            memory = await ctx.semantic.astore(replace(draft, tags=tags))
        else:
            ctx.guard.check(args.content)
            memory = await ctx.semantic.astore(
                MemoryDraft(
                    content=args.content,
                    tags=args.tags,
                    source_type=args.source_type,
                    source_trust=args.source_trust,
                    source_entity=args.source_entity,
                    importance=args.importance,
                )
            )
        return {
            "success": True,
            "memory_id": memory.id,
            "content": memory.content,
            "metadata": memory.metadata(),
        }


class RecallMemoriesArgs(ToolArgs):
    query: ShortText = Field(description="What to remember.")
    limit: int = Field(default=5, ge=1, le=100)
    min_source_trust: float = Field(default=0.0, ge=0, le=1)
    tags: Labels = Field(default_factory=list, description="Every tag must match.")


class RecallMemories(Tool[RecallMemoriesArgs]):
    name = "recall_memories"
    description = "Search semantic memory; results are ranked best first, each with its score."
    category = ToolCategory.SAFE_CHAIN
    args_model = RecallMemoriesArgs

    async def execute(self, ctx: ToolContext, args: RecallMemoriesArgs) -> dict[str, Any]:
        query = args.query.strip()
        if not query:
            return {
                "success": False,
                "error": "'query' is empty",
                "suggestion": "Say what to remember, e.g. 'what Alice likes to drink'.",
            }
        found = await ctx.semantic.arecall(
            query, limit=args.limit, min_source_trust=args.min_source_trust, tags=args.tags
        )
        return {"success": True, "memories": [r.to_result() for r in found]}


class UpdateEntityObservationArgs(ToolArgs):
    entity_id: Identifier = Field(description="Who the observation is about.")
    observation: Annotated[str, Limit("max_session_memory_chars")] = Field(
        description="What was observed, in the third person."
    )
    source_type: SourceTypeArg = "observation"
    favorability_change: float = Field(
        default=0.0, ge=-1, le=1, description="How the exchange changed your standing."
    )
    entity_type: Identifier | None = Field(default=None, description="player, npc, ...")


class UpdateEntityObservation(Tool[UpdateEntityObservationArgs]):
    name = "update_entity_observation"
    description = (
        "Record an observation about an entity (player or NPC) in its profile; "
        "optionally adjust how favourably it regards you."
    )
    category = ToolCategory.SAFE_CHAIN
    args_model = UpdateEntityObservationArgs

    async def execute(self, ctx: ToolContext, args: UpdateEntityObservationArgs) -> dict[str, Any]:
        entity_id = args.entity_id.strip()
        if not entity_id:
            return {
                "success": False,
                "error": "'entity_id' is empty",
                "suggestion": "Name the entity.",
            }
        profile = ctx.entities.observe(
            entity_id,
            args.observation,
            source_type=args.source_type,
            favorability_change=args.favorability_change,
            entity_type=args.entity_type,
        )
        r = profile.relationship
        return {
            "success": True,
            "entity_id": profile.entity_id,
            "observations": len(profile.observations),
            "relationship": {
                "state": r.state,
                "favorability": r.favorability,
                "interaction_count": r.interaction_count,
            },
        }
