"""Journal tools (spec 004 §4): add_journal_entry, search_journal, review_journal,
and search_episodic_memory (the hybrid-scored journal search of spec 004 §5)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mindspace.journal.book import JournalBook
from mindspace.journal.episodic import EpisodicWeights, search_episodic_memory
from mindspace.journal.records import JournalEntry
from mindspace.journal.search import (
    JournalFilter,
    SemanticJournal,
    filter_entries,
    search_journal,
)
from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext
from mindspace.tools.limits import Identifier, Labels, Limit, ShortText
from mindspace.workspace.limits import bounded_text

__all__ = ["AddJournalEntry", "ReviewJournal", "SearchEpisodicMemory", "SearchJournal"]

REVIEW_LISTED = 50
"""Most reviewed entries listed in review_journal's result (all are counted)."""
_PREVIEW_CHARS = 200
MAX_DAYS_BACK = 36_500
"""A hundred years: further back than any entry, and still a valid date."""


def _book(ctx: ToolContext) -> JournalBook:
    return JournalBook(ctx.unit, ctx.clock, ctx.settings)


class AddJournalEntryArgs(ToolArgs):
    content: Annotated[str, Limit("max_journal_entry_chars")] = Field(
        description="Required: the narrative text of the entry."
    )
    tags: Labels = Field(default_factory=list, description="Categories, e.g. 'combat'.")
    related_projects: Labels = Field(
        default_factory=list, description="Keys of projects the entry is about."
    )
    source_type: Literal["direct", "observation", "inference", "environmental"] = Field(
        default="observation",
        description="direct: told by someone; observation: witnessed; inference: deduced; "
        "environmental: overheard.",
    )
    source_trust: float | None = Field(
        default=None, ge=0.0, le=1.0, description="0.0-1.0; the source type's default if omitted."
    )
    source_entity: Identifier | None = Field(
        default=None, description="Who provided the information."
    )
    importance: int | None = Field(
        default=None, ge=1, le=10, description="1-10; scored automatically if omitted."
    )


class AddJournalEntry(Tool[AddJournalEntryArgs]):
    name = "add_journal_entry"
    description = (
        "Write a journal entry: what happened, was said or was inferred, with its source. "
        "Importance (1-10) is scored automatically unless given; trust defaults from the "
        "source type."
    )
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: AddJournalEntryArgs) -> dict[str, Any]:
        book = _book(ctx)
        added = book.add(
            args.content,
            tags=args.tags,
            related_projects=args.related_projects,
            source_type=args.source_type,
            source_trust=args.source_trust,
            source_entity=args.source_entity,
            importance=args.importance,
        )
        entry, state = added.entry, added.reflection
        return {
            "success": True,
            "entry_id": entry.id,
            "importance": entry.importance,
            "importance_method": entry.importance_method,
            "source_type": entry.source_type,
            "source_trust": entry.source_trust,
            "entry": entry.to_spec(),
            "total_entries": added.total_entries,
            "max_entries": book.meta().max_entries,
            "pruned_entry_ids": [e.id for e in added.pruned],
            "reflection": {
                "cumulative_importance": state.cumulative_importance,
                "threshold": state.to_spec()["threshold"],
                "reflection_due": state.cumulative_importance >= state.threshold,
            },
            "message": f"Journal entry {entry.id} added",
        }


class SearchJournalArgs(ToolArgs):
    query: ShortText = Field(default="", description="Text to look for; empty lists every entry.")
    tags: Labels = Field(default_factory=list, description="Entries must have ALL of these.")
    days_back: int | None = Field(
        default=None, ge=1, le=MAX_DAYS_BACK, description="Only the last N days."
    )
    related_to_project: Identifier | None = Field(default=None, description="Only this project's.")
    limit: int = Field(default=10, ge=1, le=100, description="Most results returned.")
    semantic: bool = Field(
        default=True, description="Use semantic search when an embedder is configured."
    )


class SearchJournal(Tool[SearchJournalArgs]):
    name = "search_journal"
    description = (
        "Search the journal by text (case-insensitive) or meaning, filtered by tags (all "
        "must match), days back and related project. Newest first in text mode."
    )
    category = ToolCategory.SAFE_CHAIN
    cacheable = True
    cache_ttl = 300.0
    reads = frozenset({JournalEntry.kind})

    async def execute(self, ctx: ToolContext, args: SearchJournalArgs) -> dict[str, Any]:
        where = JournalFilter(
            tags=tuple(args.tags), days_back=args.days_back, project=args.related_to_project
        )
        meaning = None
        if ctx.embedder is not None:
            meaning = SemanticJournal(
                ctx.embedder, ctx.journal_index, ctx.settings.journal_min_similarity
            )
        found = await search_journal(
            ctx.unit,
            ctx.clock.now(),
            args.query,
            where,
            limit=args.limit,
            semantic=args.semantic,
            meaning=meaning,
        )
        result: dict[str, Any] = {
            "success": True,
            "query": args.query,
            "mode": found.mode,
            "count": len(found.entries),
            "total_matches": found.total_matches,
            "results": [e.to_spec() for e in found.entries],
        }
        if found.scores is not None:
            result["scores"] = found.scores
        if found.note:
            result["note"] = found.note
        if not found.entries:
            result["message"] = "No journal entries match"
        return result


class ReviewJournalArgs(ToolArgs):
    synthesis: Annotated[str, Limit("max_journal_entry_chars")] = Field(
        description="Required: your insights after reviewing the entries."
    )
    days_back: int = Field(default=7, ge=1, le=MAX_DAYS_BACK, description="Days to review.")
    tags: Labels = Field(
        default_factory=list, description="Focus on entries with ANY of these tags."
    )
    save_as_entry: bool = Field(
        default=True, description="Save the synthesis as a [SYNTHESIS] journal entry."
    )


class ReviewJournal(Tool[ReviewJournalArgs]):
    name = "review_journal"
    description = (
        "Review recent journal entries and record your synthesis of them; saved as a "
        "[SYNTHESIS] entry tagged synthesis and meta_learning unless save_as_entry is false."
    )
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: ReviewJournalArgs) -> dict[str, Any]:
        book = _book(ctx)
        bounded_text(args.synthesis, "synthesis", book.synthesis_limit)
        where = JournalFilter(tags=tuple(args.tags), any_tag=True, days_back=args.days_back)
        reviewed = filter_entries(ctx.unit, ctx.clock.now(), where)
        saved = None
        if args.save_as_entry:
            cited = [e.evidence_key for e in reviewed[:REVIEW_LISTED]]
            saved = book.add_synthesis(args.synthesis, evidence_ids=cited, tags=args.tags).entry
        importances = [e.importance for e in reviewed]
        result: dict[str, Any] = {
            "success": True,
            "entries_reviewed": len(reviewed),
            "period_days": args.days_back,
            "tags": args.tags,
            "entries": [_preview(e) for e in reviewed[:REVIEW_LISTED]],
            "average_importance": (
                round(sum(importances) / len(importances), 2) if importances else None
            ),
            "synthesis_saved": saved is not None,
            "synthesis_entry_id": saved.id if saved else None,
            "message": (
                f"Reviewed {len(reviewed)} entries"
                + (f"; synthesis saved as entry {saved.id}" if saved else "")
            ),
        }
        return result


def _preview(entry: JournalEntry) -> dict[str, Any]:
    text = entry.content
    if len(text) > _PREVIEW_CHARS:
        text = text[: _PREVIEW_CHARS - 3] + "..."
    return {
        "id": entry.id,
        "timestamp": entry.timestamp,
        "importance": entry.importance,
        "tags": list(entry.tags),
        "content": text,
    }


class SearchEpisodicMemoryArgs(ToolArgs):
    query: ShortText = Field(description="What to recall.")
    limit: int = Field(default=10, ge=1, le=50, description="Most results returned.")


class SearchEpisodicMemory(Tool[SearchEpisodicMemoryArgs]):
    name = "search_episodic_memory"
    description = (
        "Recall journal entries ranked by recency, importance and keyword relevance "
        "(each part is reported with the combined score)."
    )
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: SearchEpisodicMemoryArgs) -> dict[str, Any]:
        weights = EpisodicWeights.from_settings(ctx.settings)
        hits = search_episodic_memory(ctx.unit, args.query, ctx.clock.now(), weights, args.limit)
        return {
            "success": True,
            "query": args.query,
            "count": len(hits),
            "results": [h.to_dict() for h in hits],
            "weights": {
                "alpha_recency": weights.recency,
                "alpha_importance": weights.importance,
                "alpha_relevance": weights.relevance,
                "decay_rate": weights.decay_rate,
            },
        }
