"""Memory tools: store_memory, recall_memories, update_entity_observation."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any, Literal

from pydantic import Field

from mindspace.errors import InvalidArgumentsError
from mindspace.journal.records import JournalEntry
from mindspace.memory.extraction import journal_draft
from mindspace.memory.semantic import MemoryDraft
from mindspace.memory.support import is_supported, unsupported_words
from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext, empty_argument
from mindspace.tools.limits import EntityType, Identifier, Labels, Limit, ShortText

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
            _check_supported(args.content, entry)
            draft = journal_draft(ctx.unit, entry, args.content, ctx.guard)
            tags = tuple(dict.fromkeys([*draft.tags, *args.tags]))
            draft = replace(draft, tags=tags)
        else:
            ctx.guard.check(args.content)
            draft = MemoryDraft(
                content=args.content,
                tags=args.tags,
                source_type=args.source_type,
                source_trust=args.source_trust,
                source_entity=args.source_entity,
                importance=args.importance,
            )
        # Reconciled with the nearest memories: a restatement is one more source of the
        # memory it restates, a newer value replaces the old one, a question is refused.
        (written,) = await ctx.semantic.astore_all([draft])
        if written.memory is None:
            raise InvalidArgumentsError(
                f"{args.content[:120]!r} is a question, not a fact; nothing was stored",
                "Store what is known as a statement (e.g. 'Dave drinks red wine'), or "
                "call recall_memories to look the answer up.",
            )
        memory = written.memory
        return {
            "success": True,
            "memory_id": memory.id,
            "content": memory.content,
            "metadata": memory.metadata(),
            **written.to_result(),
        }


def _check_supported(content: str, entry: JournalEntry) -> None:
    """A fact stored from an entry must be in it (memory.support), not invented.

    Raises:
        InvalidArgumentsError: too few of the fact's words are in the entry.
    """
    names = [entry.source_entity] if entry.source_entity else []
    if is_supported(content, [entry.content], names=names):
        return
    missing = ", ".join(unsupported_words(content, [entry.content], names=names)[:8])
    raise InvalidArgumentsError(
        f"The fact {content[:80]!r} is not in journal entry {entry.id}: the entry does not "
        f"say {missing}",
        "Store what the entry itself says, in the third person, or leave the entry out.",
    )


class RecallMemoriesArgs(ToolArgs):
    query: ShortText = Field(description="What to remember.")
    limit: int = Field(default=5, ge=1, le=100)
    min_source_trust: float = Field(default=0.0, ge=0, le=1)
    tags: Labels = Field(default_factory=list, description="Every tag must match.")


class RecallMemories(Tool[RecallMemoriesArgs]):
    name = "recall_memories"
    description = "Search semantic memory; results are ranked best first, each with its score."
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: RecallMemoriesArgs) -> dict[str, Any]:
        query = args.query.strip()
        if not query:
            hint = "Say what to remember, e.g. 'what Alice likes to drink'."
            return empty_argument("query", hint)
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
    entity_type: EntityType | None = Field(default=None, description="player, npc, ...")


class UpdateEntityObservation(Tool[UpdateEntityObservationArgs]):
    name = "update_entity_observation"
    description = (
        "Record an observation about an entity (player or NPC) in its profile; "
        "optionally adjust how favourably it regards you."
    )
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: UpdateEntityObservationArgs) -> dict[str, Any]:
        entity_id = args.entity_id.strip()
        if not entity_id:
            return empty_argument("entity_id", "Name the entity.")
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
