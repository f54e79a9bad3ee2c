"""Session memory tools: add_session_memory, compact_session_memory."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext
from mindspace.tools.limits import Limit, SessionItems, ShortText

__all__ = ["AddSessionMemory", "CompactSessionMemory"]


class AddSessionMemoryArgs(ToolArgs):
    memory_type: Literal["fact", "pattern"] = Field(
        description="'fact' for world or player facts, 'pattern' for behavioural patterns."
    )
    content: Annotated[str, Limit("max_session_memory_chars")] = Field(
        description="Third-person, about the world, players or events."
    )


class AddSessionMemory(Tool[AddSessionMemoryArgs]):
    name = "add_session_memory"
    description = (
        "Remember a fact or a pattern about the WORLD, PLAYERS or EVENTS (third person; "
        "content about yourself is rejected)."
    )
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: AddSessionMemoryArgs) -> dict[str, Any]:
        outcome = ctx.session_memory.add(args.memory_type, args.content)
        result: dict[str, Any] = {
            "success": True,
            "memory_type": args.memory_type,
            "added": outcome.added,
            "total_facts": len(outcome.memory.key_facts),
            "total_patterns": len(outcome.memory.learned_patterns),
        }
        if outcome.duplicate:
            result["duplicate"] = True
            result["message"] = "Already remembered; nothing added"
        return result


class CompactSessionMemoryArgs(ToolArgs):
    new_facts: SessionItems = Field(description="The consolidated facts (replace all facts).")
    new_patterns: SessionItems = Field(description="The consolidated patterns (replace all).")
    summary: ShortText = Field(description="What was consolidated.")


class CompactSessionMemory(Tool[CompactSessionMemoryArgs]):
    name = "compact_session_memory"
    description = (
        "Replace session memory's facts and patterns with a consolidated, deduplicated set. "
        "Completed tasks are kept."
    )
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: CompactSessionMemoryArgs) -> dict[str, Any]:
        outcome = ctx.session_memory.compact(args.new_facts, args.new_patterns)
        before, after = outcome.before, outcome.after
        return {
            "success": True,
            "before": {"facts": len(before.key_facts), "patterns": len(before.learned_patterns)},
            "after": {"facts": len(after.key_facts), "patterns": len(after.learned_patterns)},
            "summary": args.summary.strip(),
            "completed_tasks_kept": len(after.completed_tasks),
        }
