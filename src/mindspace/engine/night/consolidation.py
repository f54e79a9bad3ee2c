"""Journal entries into semantic memory, persona-safe, in the ``sleep_consolidate`` context.

Spec 003 §4 moves journal entries into long-term memory with their source metadata;
§1 says what may be kept: objective facts about the world, users and events, never the
assistant's actions or identity. A journal entry is the assistant's own note ("I helped
Alice find her lost sword"), so it is not copied: the model reads a batch of entries in
the ``sleep_consolidate`` context (spec 002 §1: system prompt and semantic memories, the
memory and journal tools, at most 10 iterations) and stores each fact with
``store_memory(content, entry_id=...)``, which applies the persona guard and copies the
entry's metadata. For an entry the model stored no fact from (and for all of them when
the model fails) the rules of :func:`~mindspace.memory.extraction.persona_safe_facts`
extract the facts, so the night finishes and no knowledge is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mindspace.clock import Clock
from mindspace.config import Settings
from mindspace.context.components import COMPONENT_PENDING_EVENT
from mindspace.context.contexts import get_context_config
from mindspace.engine.loop import SideSession
from mindspace.errors import LLMError
from mindspace.journal.book import JournalBook
from mindspace.journal.pending import pending_entries
from mindspace.journal.records import JournalEntry
from mindspace.memory.extraction import journal_drafts, persona_safe_facts
from mindspace.memory.semantic import SemanticMemory
from mindspace.state.unit import Unit
from mindspace.workspace.persona import PersonaGuard

if TYPE_CHECKING:
    from mindspace.engine.session import Sessions

__all__ = ["CONSOLIDATION_TASK", "SESSION_CHARS", "run_sleep_consolidation", "session_chunks"]

logger = logging.getLogger("mindspace.engine")

CONSOLIDATION_TASK = """Consolidate these journal entries into long-term memory.

For each objective fact about the world, the people or events in an entry, call
store_memory with the fact in the third person and the entry's number as entry_id (the
entry's source, trust and importance are kept with it). Leave out what you did, said or
think: "I helped Alice find her lost sword" may become "Alice lost her sword", or nothing.
An entry without such a fact needs no call. Call noop when every entry is done.

Journal entries:
{entries}"""


SESSION_CHARS = 12_000
"""Most characters of entry text one ``sleep_consolidate`` session reads (~3,000 tokens):
25 chat-sized entries fit; long entries get sessions of their own."""


def _entry_line(entry: JournalEntry) -> str:
    source = entry.source_type + (f" from {entry.source_entity}" if entry.source_entity else "")
    text = " ".join(entry.content.split())
    return f"[{entry.id}] ({source}, importance {entry.importance}) {text}"


async def run_sleep_consolidation(
    unit: Unit,
    clock: Clock,
    settings: Settings,
    memory: SemanticMemory,
    max_entries_per_tick: int = 5,
    *,
    guard: PersonaGuard | None = None,
    sessions: Sessions | None = None,
    scoring_failed: bool = False,
    ran: list[SideSession] | None = None,
) -> dict[str, Any]:
    """Extract persona-safe facts from up to ``max_entries_per_tick`` journal entries.

    Only entries whose importance is settled (scored by the LLM, set by hand, or given up
    on by the scorer) move, so memories carry the accurate score; when the LLM is failing
    outright (``scoring_failed``) heuristic scores are accepted so the night can finish.
    The entries come from the journal's pending index, so a call costs O(batch).

    With ``sessions`` the model extracts the facts in the ``sleep_consolidate`` context,
    one session (one prompt, one memory recall) per ``sleep_consolidation_batch_size``
    entries or :data:`SESSION_CHARS` characters of them (:func:`session_chunks`), each
    appended to ``ran``; after a session whose model failed, the rest of
    the batch goes to the rules without asking again. The rules of
    :func:`~mindspace.memory.extraction.persona_safe_facts` extract those of every entry
    the model stored no fact from (all of them without ``sessions`` or when the model
    fails), listed in ``by_rules``. Every batch entry is marked consolidated.
    """
    guard = guard or PersonaGuard()
    pending = pending_entries(unit, "consolidation", max_entries_per_tick)
    batch = (
        pending.entries
        if scoring_failed
        else pending_entries(unit, "ready", max_entries_per_tick).entries
    )
    result: dict[str, Any] = {
        "processed": len(batch),
        "entry_ids": [e.id for e in batch],
        "memory_ids": [],
        "extraction": "rules",
        "rejected": [],
        "by_rules": [],
    }
    covered = (
        await _consolidate_in_sessions(unit, sessions, batch, settings, result, ran)
        if sessions is not None
        else set()
    )
    # An entry the model gave no fact for (it failed, skipped the entry or did not take
    # up the task) is extracted by the rules: the journal's knowledge is never lost, and
    # what the rules keep passes the same guard. An entry longer than a memory is kept
    # in pieces (limits.FLOWS: journal_entry -> memory).
    rest = [e for e in batch if e.id not in covered]
    drafts = [
        draft
        for e in rest
        for draft in journal_drafts(
            unit,
            e,
            persona_safe_facts(e.content, guard),
            guard,
            settings.max_memory_chars,
        )
    ]
    written = await memory.astore_all(drafts) if drafts else []
    # A restated fact is the memory it restated (one more source); a question, nothing.
    result["memory_ids"] += [
        w.memory.id for w in written if w.memory is not None and w.action != "restated"
    ]
    result["restated"] = [w.related[0] for w in written if w.action == "restated"]
    result["replaced"] = [key for w in written if w.action == "updated" for key in w.related]
    result["rejected"] += [
        d.content for d, w in zip(drafts, written, strict=True) if w.memory is None
    ]
    result["by_rules"] = [e.id for e in rest]
    JournalBook(unit, clock, settings).mark_consolidated(e.id for e in batch)
    remaining = pending.total - len(batch)
    result["remaining"] = remaining
    result["completed"] = remaining == 0
    return result


async def _consolidate_in_sessions(
    unit: Unit,
    sessions: Sessions,
    batch: Sequence[JournalEntry],
    settings: Settings,
    result: dict[str, Any],
    ran: list[SideSession] | None,
) -> set[int]:
    """Run one ``sleep_consolidate`` session per chunk of ``batch``; returns the ids of
    the entries the model stored a fact from (``result`` gets the memories and counts)."""
    covered: set[int] = set()
    for chunk in session_chunks(batch, settings.sleep_consolidation_batch_size):
        try:
            session = await _extract_in_context(unit, sessions, chunk)
        except LLMError as exc:
            logger.warning("Consolidation fell back to the extraction rules: %s", exc)
            result["error"] = f"{type(exc).__name__}: {exc}"
            break  # a failing model is not asked again this tick: the rules do the rest
        if ran is not None:
            ran.append(session)
        result["extraction"] = "sleep_consolidate"
        result["sessions"] = result.get("sessions", 0) + 1
        result["iterations"] = result.get("iterations", 0) + session.loop.iterations
        for call in session.loop.calls:
            if call.name != "store_memory":
                continue
            if call.ok and call.result.get("memory_id"):
                result["memory_ids"].append(call.result["memory_id"])
                entry_id = call.result.get("metadata", {}).get("entry_id")
                if isinstance(entry_id, int):
                    covered.add(entry_id)
            elif "rejected_content" in call.result:
                result["rejected"].append(call.result["rejected_content"])
    return covered


def session_chunks(
    batch: Sequence[JournalEntry], size: int, chars: int = SESSION_CHARS
) -> list[list[JournalEntry]]:
    """``batch`` in order, in chunks of at most ``size`` entries and ``chars`` characters
    of entry text (an entry longer than that alone): one session's prompt stays within
    a small model's context however long the entries are."""
    chunks: list[list[JournalEntry]] = []
    used = 0
    for entry in batch:
        if not chunks or len(chunks[-1]) >= size or used + len(entry.content) > chars:
            chunks.append([])
            used = 0
        chunks[-1].append(entry)
        used += len(entry.content)
    return chunks


async def _extract_in_context(
    unit: Unit, sessions: Sessions, batch: Sequence[JournalEntry]
) -> SideSession:
    config = get_context_config("sleep_consolidate")
    # The spec's two components (system prompt, semantic memories) carry no input: the
    # batch of entries is this session's task, shown where a task goes, the pending event.
    config = replace(
        config, enabled_components=[*config.enabled_components, COMPONENT_PENDING_EVENT]
    )
    task = CONSOLIDATION_TASK.format(entries="\n".join(_entry_line(e) for e in batch))
    pattern, prompt, loop = await sessions.run(unit, config, "", task=task, record_usage=False)
    return SideSession("sleep_consolidate", task, pattern, prompt, loop)
