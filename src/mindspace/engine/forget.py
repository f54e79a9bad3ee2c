"""Forgetting one entity: everything the assistant holds about it, across every tier.

:func:`forget_entity` removes, inside one unit of work, the entity's profile (its
attributes and observations), its active conversation in working memory, the messages
of its conversation thread, the memories and journal entries whose ``source_entity`` it
is, the A-MEM links from and to those memories and the stored vectors of those journal
entries. A dry run finds the same and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mindspace.engine.records import ConversationMessage
from mindspace.journal.records import EntryVector, JournalEntry
from mindspace.journal.reflection_state import forget_reflection_entries
from mindspace.memory.records import EntityProfile, Memory, MemoryLinks, WorkingMemory
from mindspace.state.unit import Unit

__all__ = ["ForgetReport", "forget_entity"]


@dataclass
class ForgetReport:
    """What forgetting an entity removes (or, in a dry run, would remove)."""

    entity: str
    dry_run: bool
    profile: bool = False
    observations: int = 0
    working_memory: bool = False
    messages: list[str] = field(default_factory=list)
    memories: list[str] = field(default_factory=list)
    journal_entries: list[int] = field(default_factory=list)
    journal_vectors: int = 0
    memory_links: int = 0
    """Links records of the forgotten memories plus links pointing at them."""

    @property
    def total(self) -> int:
        """How many things go in all (0: nothing is known about the entity)."""
        return (
            int(self.profile)
            + int(self.working_memory)
            + len(self.messages)
            + len(self.memories)
            + len(self.journal_entries)
        )

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON: counts and the ids of what goes."""
        return {
            "entity": self.entity,
            "dry_run": self.dry_run,
            "counts": {
                "profile": int(self.profile),
                "observations": self.observations,
                "working_memory": int(self.working_memory),
                "messages": len(self.messages),
                "memories": len(self.memories),
                "journal_entries": len(self.journal_entries),
                "journal_vectors": self.journal_vectors,
                "memory_links": self.memory_links,
            },
            "memory_ids": list(self.memories),
            "journal_entry_ids": list(self.journal_entries),
            "message_ids": list(self.messages),
        }


def forget_entity(unit: Unit, entity_id: str, *, dry_run: bool) -> ForgetReport:
    """Remove (or, with ``dry_run``, only find) everything about ``entity_id`` in ``unit``."""
    report = ForgetReport(entity_id, dry_run)
    store, owner = unit.cache.store, unit.cache.assistant_id

    profile = unit.get(EntityProfile, entity_id)
    if profile is not None:
        report.profile = True
        report.observations = len(profile.observations)
        if not dry_run:
            unit.delete(EntityProfile, entity_id)

    working = unit.doc(WorkingMemory)
    if entity_id in working.conversations:
        report.working_memory = True
        if not dry_run:
            kept = {k: v for k, v in working.conversations.items() if k != entity_id}
            unit.put_doc(working.model_copy(update={"conversations": kept}))

    report.messages = [m.id for m in unit.all(ConversationMessage) if m.entity == entity_id]

    # Memories are lazy: found by the store (two small fields, streamed), then read by key.
    committed = {
        str(row["id"])
        for row in store.scan(owner, Memory.kind, ("id", "source_entity"))
        if row["source_entity"] == entity_id
    }
    pending = unit.pending(Memory)
    ids = {k for k in committed if pending.get(k, True) is not None}
    ids |= {k for k, m in pending.items() if m is not None and m.source_entity == entity_id}
    report.memories = sorted(ids, key=_natural)

    entries = [e for e in unit.all(JournalEntry) if e.source_entity == entity_id]
    report.journal_entries = sorted(e.id for e in entries)
    vectors = unit.get_many(EntryVector, [e.record_key() for e in entries])
    report.journal_vectors = len(vectors)

    gone = set(report.memories)
    outgoing = unit.get_many(MemoryLinks, report.memories)
    report.memory_links = len(outgoing)
    pointing: list[MemoryLinks] = []
    for row in store.scan(owner, MemoryLinks.kind, ("memory_id", "linked_to")):
        if str(row["memory_id"]) in gone:
            continue
        if any(str(link["id"]) in gone for link in row["linked_to"] or ()):
            links = unit.get(MemoryLinks, str(row["memory_id"]))
            if links is not None:
                pointing.append(links)
    report.memory_links += len(pointing)

    if dry_run:
        return report
    for message_id in report.messages:
        unit.delete(ConversationMessage, message_id)
    for memory_id in report.memories:
        unit.delete(Memory, memory_id)
    for links in outgoing.values():
        unit.delete(MemoryLinks, links.memory_id)
    for links in pointing:
        alive = tuple(link for link in links.linked_to if link.id not in gone)
        unit.put(links.model_copy(update={"linked_to": alive}))
    for entry in entries:
        unit.delete(JournalEntry, entry.record_key())
        unit.delete(EntryVector, entry.record_key())
    forget_reflection_entries(unit, set(report.journal_entries))
    return report


def _natural(memory_id: str) -> tuple[int, str]:
    # mem_2 before mem_10, as they were stored.
    tail = memory_id.rsplit("_", 1)[-1]
    return (int(tail), memory_id) if tail.isdigit() else (1 << 62, memory_id)
