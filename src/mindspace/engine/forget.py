"""Forgetting one entity: everything the assistant holds about it, across every tier.

:func:`forget_entity` removes, inside one unit of work, the entity's profile (its
attributes and observations), its active conversation in working memory, the messages
of its conversation thread, the memories and journal entries whose ``source_entity`` it
is, the A-MEM links from and to those memories and the stored vectors of those journal
entries. A dry run finds the same and writes nothing.

Its words are then looked for everywhere else they were copied (:mod:`.redaction`):
session facts and patterns that name the entity are dropped; history entries about a
forgotten record keep who, when and what but lose ``before``/``after``; every other
record and document has verbatim copies of the forgotten texts replaced; the entity's
events lose their text and reply (written after the unit commits, see
:attr:`ForgetReport.events`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mindspace.engine.history import HistoryEntry
from mindspace.engine.records import ConversationMessage, Event
from mindspace.engine.redaction import FORGOTTEN_RECORD, REDACTED, Redactor
from mindspace.journal.records import EntryVector, JournalEntry
from mindspace.journal.reflection_state import forget_reflection_entries
from mindspace.memory.records import (
    Conversation,
    EntityProfile,
    Memory,
    MemoryLinks,
    WorkingMemory,
)
from mindspace.state.models import DOC_KIND, Record, document_model, record_kinds
from mindspace.state.unit import Unit
from mindspace.workspace.records import SessionMemory

__all__ = ["ForgetReport", "forget_entity"]

_EVENT_TEXT = ("content", "reply", "error")
_NOT_SCANNED = frozenset({"embedding"})
"""Fields never searched for words (vectors: large, opaque bytes)."""


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
    session_facts: int = 0
    """Session facts, patterns and completed tasks that named the entity or held its words."""
    places: dict[str, int] = field(default_factory=dict)
    """Other places its words were copied to (a kind or a document's name): records changed."""
    events: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    """Event id -> its redacted fields (events are written after the unit, field by field)."""
    own_events: list[str] = field(default_factory=list, repr=False)
    """The ids of the entity's own events (ticks that answered them hold its words)."""
    redactor: Redactor | None = field(default=None, repr=False, compare=False)
    """The entity's words, for hosts that keep copies in memory (the server's tick log)."""

    @property
    def total(self) -> int:
        """How many things go in all (0: nothing is known about the entity)."""
        return (
            int(self.profile)
            + int(self.working_memory)
            + len(self.messages)
            + len(self.memories)
            + len(self.journal_entries)
            + self.session_facts
            + len(self.events)
        )

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON: counts, the ids of what goes and where words were blanked.

        It holds no forgotten words (it is what the history keeps of a forgetting).
        """
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
                "session_facts": self.session_facts,
                "events": len(self.events),
            },
            "redacted": dict(sorted(self.places.items())),
            "memory_ids": list(self.memories),
            "journal_entry_ids": list(self.journal_entries),
            "message_ids": list(self.messages),
        }

    def _count(self, place: str) -> None:
        self.places[place] = self.places.get(place, 0) + 1


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
    conversation = working.conversations.get(entity_id)
    if conversation is not None:
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

    words = _words(profile, conversation, unit.get_many(Memory, report.memories), entries)
    words += [m.content or "" for m in unit.all(ConversationMessage) if m.entity == entity_id]
    words += _event_words(unit, report)
    redactor = report.redactor = Redactor(entity_id, words)

    if not dry_run:
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

    _drop_session_facts(unit, report, redactor)
    targets = {
        ("entity", entity_id),
        *(("memory", k) for k in report.memories),
        *(("journal_entry", str(k)) for k in report.journal_entries),
        *(("journal_vector", str(k)) for k in report.journal_entries),
        *(("memory_links", k) for k in report.memories),
        *(("message", k) for k in report.messages),
    }
    _redact_records(unit, report, redactor, targets)
    _redact_events(unit, report, redactor)
    _redact_documents(unit, report, redactor)
    return report


def _words(
    profile: EntityProfile | None,
    conversation: Conversation | None,
    memories: dict[str, Memory],
    entries: Iterable[JournalEntry],
) -> list[str]:
    """The texts that go with the entity: its words, searched for everywhere else."""
    words: list[str] = []
    if profile is not None:
        words += [o.text for o in profile.observations]
        words += list(profile.attributes.values())
    if conversation is not None:
        words += [*conversation.messages, *conversation.pending_actions]
    words += [m.content for m in memories.values()]
    words += [e.content for e in entries]
    return words


def _event_words(unit: Unit, report: ForgetReport) -> list[str]:
    """The entity's events: marked for blanking; their text and replies are its words."""
    store, owner = unit.cache.store, unit.cache.assistant_id
    words: list[str] = []
    for row in store.scan(owner, Event.kind, ("id", "source_entity", "content", "reply")):
        if row["source_entity"] == report.entity and (row["content"], row["reply"]) != (
            REDACTED,
            None,
        ):
            words += [str(row["content"]), str(row["reply"] or "")]
            report.own_events.append(str(row["id"]))
            report.events[str(row["id"])] = {"content": REDACTED, "reply": None, "error": None}
    return words


def _redact_events(unit: Unit, report: ForgetReport, redactor: Redactor) -> None:
    """Other events lose the copies of the entity's words they hold."""
    if not redactor.searching:
        return
    store, owner = unit.cache.store, unit.cache.assistant_id
    for row in store.scan(owner, Event.kind, ("id", *_EVENT_TEXT)):
        key = str(row["id"])
        if key in report.events:
            continue
        redacted, hits = redactor.value({name: row[name] for name in _EVENT_TEXT})
        if hits:
            report.events[key] = redacted


def _drop_session_facts(unit: Unit, report: ForgetReport, redactor: Redactor) -> None:
    """Session facts, patterns and completed tasks naming the entity go (they are in every
    prompt, and a fact about someone rarely carries a ``source_entity``)."""
    memory = unit.doc(SessionMemory)
    facts = tuple(f for f in memory.key_facts if not redactor.names(f))
    patterns = tuple(p for p in memory.learned_patterns if not redactor.names(p))
    tasks = tuple(t for t in memory.completed_tasks if not redactor.names(t.description))
    report.session_facts = (
        len(memory.key_facts)
        - len(facts)
        + len(memory.learned_patterns)
        - len(patterns)
        + len(memory.completed_tasks)
        - len(tasks)
    )
    if report.session_facts and not report.dry_run:
        changes = {"key_facts": facts, "learned_patterns": patterns, "completed_tasks": tasks}
        unit.put_doc(memory.model_copy(update=changes))


def _redact_records(
    unit: Unit, report: ForgetReport, redactor: Redactor, targets: set[tuple[str, str]]
) -> None:
    """Every record of every kind (but events) loses the copies of the entity's words.

    History entries about a forgotten record lose ``before`` and ``after`` whole (they
    may hold tags, ids or short words no search finds); the entry itself stays, so the
    history still says who did what when.
    """
    store, owner = unit.cache.store, unit.cache.assistant_id
    for kind, model in sorted(record_kinds().items()):
        if kind == Event.kind:
            continue
        fields = [name for name in model.model_fields if name not in _NOT_SCANNED]
        for row in store.scan(owner, kind, fields):
            # Built unvalidated: only read for its key and history target (no vectors).
            record: Record = model.model_construct(**row)
            key = record.record_key()
            if (kind, key) in targets:
                continue  # goes with the entity
            if (
                isinstance(record, HistoryEntry)
                and record.action != "forget"  # an earlier forget's report holds no words
                and (record.target_kind, record.target_key) in targets
            ):
                if record.before is None and record.after is None:
                    continue
                if record.before == FORGOTTEN_RECORD or record.after == FORGOTTEN_RECORD:
                    continue
                report._count(kind)
                if not report.dry_run:
                    blank = {
                        "before": None if record.before is None else FORGOTTEN_RECORD,
                        "after": None if record.after is None else FORGOTTEN_RECORD,
                    }
                    unit.put(record.model_copy(update=blank))
                continue
            if not redactor.holds(row):
                continue
            report._count(kind)
            if report.dry_run:
                continue
            current = unit.get(model, key)
            if current is not None:
                redacted, _ = redactor.value(current.model_dump())
                unit.put(model.model_validate(redacted))


def _redact_documents(unit: Unit, report: ForgetReport, redactor: Redactor) -> None:
    """Every stored document (working memory, buffers, prompts...) loses the copies."""
    if not redactor.searching:
        return
    store, owner = unit.cache.store, unit.cache.assistant_id
    for row in store.scan(owner, DOC_KIND, ("name",)):
        model = document_model(str(row["name"]))
        if model is None:
            continue  # a document this process never imported: nothing reads it here
        current = unit.doc(model)
        redacted, hits = redactor.value(current.model_dump(mode="json"))
        if not hits:
            continue
        report._count(model.name)
        if not report.dry_run:
            unit.put_doc(model.from_value(redacted))


def _natural(memory_id: str) -> tuple[int, str]:
    # mem_2 before mem_10, as they were stored.
    tail = memory_id.rsplit("_", 1)[-1]
    return (int(tail), memory_id) if tail.isdigit() else (1 << 62, memory_id)
