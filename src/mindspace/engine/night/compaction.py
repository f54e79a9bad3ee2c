"""Conversation compaction: old messages become a summary behind a marker (spec 003 §5).

Each entity's thread keeps its newest messages; everything older is summarised by the
LLM, the summary is stored in the journal as a synthesis entry, and the thread becomes
``[summary_marker] <summary>`` followed by the preserved messages. The split never falls
between a tool call and its results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mindspace.clock import Clock
from mindspace.config import Settings
from mindspace.engine.records import ConversationMessage
from mindspace.errors import LLMError, MindspaceError
from mindspace.journal.book import JournalBook
from mindspace.llm.port import LLM, Message, clean_response
from mindspace.state.unit import Unit
from mindspace.tokens import estimate_tokens
from mindspace.workspace.records import ContextUsage

__all__ = [
    "SUMMARY_MARKER",
    "SUMMARY_PROMPT",
    "CompactionResult",
    "compact_conversation_history",
    "context_usage_percent",
    "message_number",
    "split_for_compaction",
    "thread_messages",
]

SUMMARY_MARKER = "[summary_marker]"
SUMMARY_PROMPT = """Summarize the following conversation with {entity} as a few short,
third-person facts about the world, the people and what was agreed. Do not describe
your own actions.

{transcript}"""
KEEP_MESSAGES = 6


@dataclass
class CompactionResult:
    """What a compaction did."""

    compacted: bool
    usage_percentage: float
    threshold: float
    threads: dict[str, dict[str, int]] = field(default_factory=dict)
    summary_entry_ids: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The result as a plain dict."""
        return {
            "compacted": self.compacted,
            "usage_percentage": round(self.usage_percentage, 1),
            "threshold": self.threshold,
            "threads": self.threads,
            "summary_entry_ids": self.summary_entry_ids,
            "errors": self.errors,
        }


def thread_messages(unit: Unit) -> dict[str, list[ConversationMessage]]:
    """Every entity's thread, oldest message first."""
    threads: dict[str, list[ConversationMessage]] = {}
    for message in sorted(unit.all(ConversationMessage), key=message_number):
        threads.setdefault(message.entity, []).append(message)
    return threads


def message_number(message: ConversationMessage) -> int:
    """The message's place in the history (``m12`` is 12; 0 for an unnumbered id)."""
    digits = message.id.lstrip("m")
    return int(digits) if digits.isdigit() else 0


def context_usage_percent(unit: Unit, settings: Settings) -> float:
    """The last known context usage, or the whole history's estimate, as a percentage."""
    used = unit.doc(ContextUsage).estimated_used
    if used is None:
        used = sum(estimate_tokens(m.content or "") for m in unit.all(ConversationMessage))
    return used / settings.model_limit * 100


def split_for_compaction(
    messages: Sequence[ConversationMessage], keep: int = KEEP_MESSAGES
) -> tuple[list[ConversationMessage], list[ConversationMessage]]:
    """``(to_compact, to_preserve)``: about ``keep`` newest messages stay, pairs intact."""
    if len(messages) <= keep:
        return [], list(messages)
    cut = len(messages) - keep
    # Never start the preserved part with tool results whose call would be compacted.
    while cut > 0 and messages[cut].role == "tool":
        cut -= 1
    return list(messages[:cut]), list(messages[cut:])


async def compact_conversation_history(
    unit: Unit,
    clock: Clock,
    settings: Settings,
    llm: LLM,
    *,
    threshold: float,
    force: bool = False,
    keep: int = KEEP_MESSAGES,
    through: Mapping[str, int] | None = None,
) -> CompactionResult:
    """Compact every thread when usage reaches ``threshold`` percent (or when forced).

    ``through`` limits the work to the threads it names, each up to (and including) the
    message numbered by its value: the part pre-compaction extraction has read.
    """
    usage = context_usage_percent(unit, settings)
    result = CompactionResult(False, usage, threshold)
    if not force and usage < threshold:
        return result
    journal = JournalBook(unit, clock, settings)
    for entity, messages in thread_messages(unit).items():
        if through is not None and entity not in through:
            continue
        old, kept = split_for_compaction(messages, keep)
        if through is not None:
            # A prefix of a valid cut: the message after it was there when it was read.
            limit = through[entity]
            kept = [m for m in old if message_number(m) > limit] + kept
            old = [m for m in old if message_number(m) <= limit]
        if not old:
            continue
        transcript = "\n".join(f"{m.role}: {m.content}" for m in old if m.content)
        prompt = SUMMARY_PROMPT.format(entity=entity or "no one", transcript=transcript)
        try:
            reply = await llm.complete([Message("user", prompt)])
        except LLMError as exc:
            result.errors.append(f"{entity or '(own thread)'}: {exc}")
            continue
        reply, _ = clean_response(reply)  # not text becomes U+FFFD (validation.py)
        summary = " ".join((reply.text or "").split()) or "Earlier conversation (no summary)."
        try:
            added = journal.add_synthesis(
                f"Conversation summary ({entity or 'own thread'}): {summary}",
                tags=["conversation_summary"],
            )
            result.summary_entry_ids.append(added.entry.id)
        except MindspaceError as exc:  # the summary is kept in history even if refused here
            result.errors.append(f"{entity or '(own thread)'}: journal refused summary: {exc}")
        for message in old:
            unit.delete(ConversationMessage, message.id)
        # The marker takes the first compacted message's id, so it sorts before the rest.
        unit.put(
            ConversationMessage(
                id=old[0].id,
                entity=entity,
                role="system",
                content=f"{SUMMARY_MARKER} {summary}",
                created_at=old[-1].created_at,
            )
        )
        result.threads[entity] = {"removed": len(old), "kept": len(kept)}
        result.compacted = True
    if result.compacted:
        unit.put_doc(ContextUsage())  # unknown until the next prompt is measured
    return result
