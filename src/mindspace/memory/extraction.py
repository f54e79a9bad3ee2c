"""Persona-safe extraction of journal entries into memories (spec 003 §1, §4).

A journal entry is the assistant's own note and may speak in the first person ("I
helped Alice find her lost sword"); long-term memory keeps only facts about the world,
the people and events. Consolidation asks the model for those facts in the
``sleep_consolidate`` context; when no model answers (and for the offline model) the
rules of :func:`persona_safe_facts` extract them. Either way each fact passes the same
:class:`~mindspace.workspace.persona.PersonaGuard` as ``store_memory`` and carries the
entry's source metadata (:func:`journal_draft`).
"""

from __future__ import annotations

import re
from datetime import timedelta

from mindspace.clock import parse_time
from mindspace.journal.records import JournalEntry
from mindspace.limits import CONTEXT_NEIGHBOUR_CHARS
from mindspace.memory.chunking import chunk_text
from mindspace.memory.records import memory_key
from mindspace.memory.semantic import MemoryDraft
from mindspace.state.unit import Unit
from mindspace.text import normalized
from mindspace.workspace.persona import PersonaGuard

__all__ = ["CONTEXT_WINDOW", "journal_draft", "journal_drafts", "persona_safe_facts"]

CONTEXT_WINDOW = timedelta(minutes=10)
"""Neighbouring entries this close in time belong to the same exchange."""

_SENTENCES = re.compile(r"(?<=[.!?;])\s+")
_WHO = r"(?P<who>[A-Z][\w-]*(?: [A-Z][\w-]*)?|the [a-z]+)"
_HELPED = re.compile(
    rf"^I (?:helped|assisted|aided) {_WHO} (?:(?P<with>with) |to )?(?P<rest>[a-z].+)$"
)
_TOLD = re.compile(rf"^I (?:told|warned|reminded|informed|assured) {_WHO}(?: that)? (?P<rest>.+)$")
_GAVE = re.compile(rf"^I (?P<verb>gave|handed|sold|lent|sent) {_WHO} (?P<rest>[a-z0-9].+)$")
_RECEIVED = {"gave": "received", "handed": "received", "sent": "received", "sold": "bought"}
_LEARNED = re.compile(
    r"^I (?:learned|heard|noticed|found out|saw|observed|realised|realized) that (?P<rest>.+)$"
)


def _rewrite(sentence: str) -> str | None:
    """A first-person sentence of a known shape, in the third person; None otherwise."""
    text = sentence.rstrip(".!;").strip()
    if found := _HELPED.match(text):
        joint = "with" if found.group("with") else "to"
        return f"{_cap(found.group('who'))} needed help {joint} {found.group('rest')}"
    if found := _TOLD.match(text):
        return f"{_cap(found.group('who'))} was told that {found.group('rest')}"
    if found := _GAVE.match(text):
        verb = found.group("verb")
        got = _RECEIVED.get(verb, "borrowed")
        return f"{_cap(found.group('who'))} {got} {found.group('rest')}"
    if found := _LEARNED.match(text):
        return _cap(found.group("rest"))
    return None


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def persona_safe_facts(text: str, guard: PersonaGuard) -> list[str]:
    """The facts of a journal entry that long-term memory may keep, by rule.

    A journal entry is the assistant's own note whatever its source type: a ``direct``
    entry with a source entity ("I promised Alice a discount on ale", from Alice) is
    checked like any other. What people say reaches memory as their own words through
    :mod:`mindspace.engine.formation`, not through the journal.

    1. An entry the guard accepts is one fact, word for word.
    2. Otherwise each sentence the guard accepts is a fact, and a self-referencing
       sentence of a known shape is rewritten in the third person: "I helped Alice
       find her sword" -> "Alice needed help to find her sword"; "I told Bob (that) X"
       -> "Bob was told that X"; "I gave/sold/lent Bob X" -> "Bob received/bought/
       borrowed X"; "I learned/heard/noticed that X" -> "X".
    3. A rewrite is kept only when the guard accepts it; every other self-referencing
       sentence is dropped, so an entry may give no fact at all.
    """
    text = " ".join(text.split())
    if not text:
        return []
    if guard.is_clean(text):
        return [text]
    facts = []
    for sentence in _SENTENCES.split(text):
        sentence = sentence.strip()
        if not sentence:
            continue
        fact = sentence if guard.is_clean(sentence) else _rewrite(sentence)
        if fact and guard.is_clean(fact) and len(fact.split()) >= 3:
            facts.append(fact.rstrip(";").strip())
    return facts


def journal_draft(
    unit: Unit, entry: JournalEntry, content: str, guard: PersonaGuard, *, part: str | None = None
) -> MemoryDraft:
    """A memory of ``content`` that keeps the source metadata of ``entry`` (spec 003 §4).

    The memory is ``source="journal"`` with the entry's id, tags, source type, trust and
    entity, importance (and how it was scored), the time it happened, a ``ref:`` tag as
    its reference, and the neighbouring entries of the same exchange as its context,
    persona-safe (:func:`_conversation_context`). ``part`` (``"2/3"``) marks one piece of
    an entry too long for one memory, as a ``part:2/3`` tag. A ``direct`` entry's own
    words, whole, are ``verbatim``: what its speaker said, kept as said even when it asks
    something (:func:`mindspace.memory.reconcile.is_question`).
    """
    tags = (*entry.tags, f"part:{part}") if part else entry.tags
    return MemoryDraft(
        content=content,
        tags=tags,
        source_type=entry.source_type,
        source_trust=entry.source_trust,
        source_entity=entry.source_entity,
        importance=entry.importance,
        importance_method=entry.importance_method,
        source="journal",
        entry_id=entry.id,
        occurred_at=entry.timestamp,
        ref=next((t[4:] for t in entry.tags if t.startswith("ref:")), None),
        context=_conversation_context(
            entry, _entry(unit, entry.id - 1), _entry(unit, entry.id + 1), guard
        ),
        verbatim=entry.source_type == "direct" and normalized(content) == normalized(entry.content),
    )


def journal_drafts(
    unit: Unit, entry: JournalEntry, facts: list[str], guard: PersonaGuard, max_chars: int
) -> list[MemoryDraft]:
    """Memories of ``facts`` from ``entry``, a fact longer than ``max_chars`` in pieces.

    A journal entry may be longer than a memory (10,000 against 4,000 characters by
    default); such a fact is cut at paragraph and sentence ends
    (:func:`~mindspace.memory.chunking.chunk_text`), each piece a memory of the entry
    tagged ``part:i/n``, so the whole text is kept and every piece points at its source.
    """
    drafts = []
    for fact in facts:
        pieces = chunk_text(fact, max_chars)
        for i, piece in enumerate(pieces, 1):
            part = f"{i}/{len(pieces)}" if len(pieces) > 1 else None
            drafts.append(journal_draft(unit, entry, piece, guard, part=part))
    return drafts


def _conversation_context(
    entry: JournalEntry,
    previous: JournalEntry | None,
    following: JournalEntry | None,
    guard: PersonaGuard | None = None,
) -> str | None:
    """The entries around this one that belong to the same exchange (minutes apart).

    A line is often found by what surrounds it: an answer ("Yes, last Tuesday!") by the
    question before it, a question by the answer after it. Keeping the neighbours with
    the memory lets a search reach it through them. A neighbour is the assistant's own
    note as often as someone's words, so it passes the persona guard like the memory
    itself (spec 003 §1): a clean neighbour (or a speaker's own line) is kept as it is,
    otherwise only its persona-safe facts (:func:`persona_safe_facts`), or nothing.
    """
    guard = guard or PersonaGuard()
    parts = []
    for before, after in ((previous, entry), (entry, following)):
        other = previous if before is previous else following
        if other is None or other.is_synthesis or before is None or after is None:
            continue
        gap = parse_time(after.timestamp) - parse_time(before.timestamp)
        if not timedelta(0) <= gap <= CONTEXT_WINDOW:
            continue
        # A journal entry is the assistant's note whatever its source type, so its "I"
        # is the assistant's: a neighbour is quoted only as far as the guard allows.
        quoted = memory_key(other.content, other.source_entity)[:CONTEXT_NEIGHBOUR_CHARS]
        if not guard.is_clean(other.content):
            safe = " ".join(persona_safe_facts(other.content, guard))
            quoted = safe[:CONTEXT_NEIGHBOUR_CHARS].strip()
            if not quoted or not guard.is_clean(quoted):
                continue
        parts.append(quoted)
    return "\n".join(parts) or None


def _entry(unit: Unit, entry_id: int) -> JournalEntry | None:
    return unit.get(JournalEntry, str(entry_id)) if entry_id >= 1 else None
