"""Edits by people and hosts: update and delete memories, journal entries, goals and entities.

Each method is one serialised unit of work (through :meth:`EngineCore.retrying`) that
changes the record and appends a :class:`~mindspace.engine.history.HistoryEntry` saying
who did it, so a change and its history commit together or not at all. Forgetting a
whole entity lives in :mod:`mindspace.engine.forget`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import ValidationError

from mindspace.embeddings.port import embed_async
from mindspace.engine.core import EngineCore
from mindspace.engine.forget import ForgetReport, forget_entity
from mindspace.engine.history import Actor, record_change, view_of
from mindspace.engine.session_edits import SessionItemEdits
from mindspace.errors import InvalidArgumentsError, InvalidInputError, RecordNotFoundError
from mindspace.journal.records import EntryVector, JournalEntry
from mindspace.journal.reflection_state import forget_reflection_entries
from mindspace.limits import ATTRIBUTE_KEY_CHARS, ATTRIBUTE_VALUE_CHARS, MAX_LABEL_CHARS
from mindspace.memory.records import EntityProfile, Memory, memory_key
from mindspace.memory.semantic import MemoryState
from mindspace.state.models import Record
from mindspace.state.port import Scrubbing
from mindspace.state.unit import Unit
from mindspace.workspace.limits import bounded_text
from mindspace.workspace.records import Goal

__all__ = ["Edits", "memory_view"]

R = TypeVar("R", bound=Record)

_JOURNAL_HINT = "GET /journal or `mindspace journal list`"
_MEMORY_HINT = "GET /memories or `mindspace memories`"


def memory_view(memory: Memory) -> dict[str, Any]:
    """A memory as history and hosts show it: without its vector."""
    return view_of(memory)


def _text(value: str, field: str, limit: int) -> str:
    try:
        return bounded_text(value, field, limit)
    except InvalidArgumentsError as exc:
        raise InvalidInputError(exc.error, exc.suggestion) from None


def _tags(tags: Sequence[str]) -> tuple[str, ...]:
    return tuple(_text(t, "tags item", MAX_LABEL_CHARS) for t in tags)


def _changed(record: R, changes: Mapping[str, Any]) -> R:
    """``record`` with ``changes`` applied and validated (a bad value is the caller's)."""
    try:
        return type(record).model_validate({**record.model_dump(), **changes})
    except ValidationError as exc:
        problem = exc.errors()[0]
        field = ".".join(str(p) for p in problem["loc"])
        raise InvalidInputError(
            f"{field!r}: {problem['msg']} (got {problem.get('input')!r})",
            "Fix that value and send the change again.",
        ) from None


def _missing(what: str, key: object, where: str) -> RecordNotFoundError:
    return RecordNotFoundError(f"{what} {key!r} does not exist", f"List them with {where}.")


class Edits(SessionItemEdits):
    """Update, delete and forget, each recorded in the history (``assistant.edits``).

    Session memory's items are edited with the methods of :class:`SessionItemEdits`.

    Args:
        core: The assistant's state and ports.
    """

    def __init__(self, core: EngineCore) -> None:
        self.core = core

    def _record(
        self, unit: Unit, actor: Actor, action: str, before: Record | None, after: Record | None
    ) -> None:
        record = before or after
        assert record is not None  # every edit has a before or an after
        record_change(
            unit,
            self.core.clock,
            actor,
            "update" if action == "update" else "delete",
            record.kind,
            record.record_key(),
            before=None if before is None else view_of(before),
            after=None if after is None else view_of(after),
        )

    async def _update(
        self,
        actor: Actor,
        get: Callable[[Unit], R | None],
        missing: RecordNotFoundError,
        change: Callable[[R], R],
    ) -> R:
        async def body(unit: Unit) -> R:
            before = get(unit)
            if before is None:
                raise missing
            after = change(before)
            if after != before:
                unit.put(after)
                self._record(unit, actor, "update", before, after)
            return after

        return await self.core.retrying(body)

    # -- memories ------------------------------------------------------------------------
    async def update_memory(
        self,
        memory_id: str,
        actor: Actor,
        *,
        content: str | None = None,
        tags: Sequence[str] | None = None,
        importance: int | None = None,
        source_trust: float | None = None,
    ) -> Memory:
        """Change a memory's text or metadata; new text is embedded again.

        Raises:
            RecordNotFoundError: no such memory.
            InvalidInputError: an empty or oversized text, or a value out of range.
        """
        changes: dict[str, Any] = {}
        if content is not None:
            changes["content"] = _text(content, "content", self.core.settings.max_memory_chars)
        if tags is not None:
            changes["tags"] = _tags(tags)
        if importance is not None:
            changes["importance"] = importance
        if source_trust is not None:
            changes["source_trust"] = source_trust
        embedder = self.core.embedder
        current = self.core.read().get(Memory, memory_id)
        if current is None:
            raise _missing("Memory", memory_id, _MEMORY_HINT)
        if "content" in changes and embedder is not None:
            # Embedded before the unit opens, so no lock is held while the model runs.
            key = memory_key(changes["content"], current.source_entity)
            vector = (await embed_async(embedder, [key]))[0]
            changes["embedder"] = embedder.name
            changes["embedding"] = vector.astype("float32").tobytes()
        return await self._update(
            actor,
            lambda unit: unit.get(Memory, memory_id),
            _missing("Memory", memory_id, _MEMORY_HINT),
            lambda memory: _changed(memory, changes),
        )

    async def delete_memory(self, memory_id: str, actor: Actor) -> Memory:
        """Delete a memory; the night drops the A-MEM links that pointed to it.

        Raises:
            RecordNotFoundError: no such memory.
        """

        async def body(unit: Unit) -> Memory:
            memory = unit.get(Memory, memory_id)
            if memory is None:
                raise _missing("Memory", memory_id, _MEMORY_HINT)
            unit.delete(Memory, memory_id)
            state = unit.doc(MemoryState)
            unit.put_doc(state.model_copy(update={"forgotten": (*state.forgotten, memory_id)}))
            self._record(unit, actor, "delete", memory, None)
            return memory

        return await self.core.retrying(body)

    # -- journal -------------------------------------------------------------------------
    async def update_journal_entry(
        self,
        entry_id: int,
        actor: Actor,
        *,
        content: str | None = None,
        tags: Sequence[str] | None = None,
        importance: int | None = None,
    ) -> JournalEntry:
        """Change a journal entry's text, tags or importance (new text is embedded anew).

        Raises:
            RecordNotFoundError: no such entry.
            InvalidInputError: an empty or oversized text, or importance outside 1-10.
        """
        changes: dict[str, Any] = {}
        if content is not None:
            limit = self.core.settings.max_journal_entry_chars
            changes["content"] = _text(content, "content", limit)
        if tags is not None:
            changes["tags"] = _tags(tags)
        if importance is not None:
            changes["importance"] = importance
            changes["importance_method"] = "manual"
        return await self._update(
            actor,
            lambda unit: unit.get(JournalEntry, str(entry_id)),
            _missing("Journal entry", entry_id, _JOURNAL_HINT),
            lambda entry: _changed(entry, changes),
        )

    async def delete_journal_entry(self, entry_id: int, actor: Actor) -> JournalEntry:
        """Delete a journal entry and its stored vector.

        Raises:
            RecordNotFoundError: no such entry.
        """

        async def body(unit: Unit) -> JournalEntry:
            entry = unit.get(JournalEntry, str(entry_id))
            if entry is None:
                raise _missing("Journal entry", entry_id, _JOURNAL_HINT)
            unit.delete(JournalEntry, entry.record_key())
            unit.delete(EntryVector, entry.record_key())
            forget_reflection_entries(unit, {entry.id})
            self._record(unit, actor, "delete", entry, None)
            return entry

        return await self.core.retrying(body)

    # -- goals ---------------------------------------------------------------------------
    async def update_goal(
        self,
        goal_id: str,
        actor: Actor,
        *,
        description: str | None = None,
        priority: str | None = None,
        status: str | None = None,
        progress: float | None = None,
    ) -> Goal:
        """Change a goal's description, priority, status or progress.

        Raises:
            RecordNotFoundError: no such goal.
            InvalidInputError: an empty description, an unknown priority or status, or
                progress outside 0-100.
        """
        changes: dict[str, Any] = {"updated": self.core.now()}
        if description is not None:
            limit = self.core.settings.max_goal_description_chars
            changes["description"] = _text(description, "description", limit)
        for field, value in (("priority", priority), ("status", status), ("progress", progress)):
            if value is not None:
                changes[field] = value
        return await self._update(
            actor,
            lambda unit: unit.get(Goal, goal_id),
            _missing("Goal", goal_id, "GET /goals"),
            lambda goal: _changed(goal, changes),
        )

    async def delete_goal(self, goal_id: str, actor: Actor) -> list[Goal]:
        """Delete a goal with its subtasks (returned, the goal first).

        Raises:
            RecordNotFoundError: no such goal.
        """

        async def body(unit: Unit) -> list[Goal]:
            goal = unit.get(Goal, goal_id)
            if goal is None:
                raise _missing("Goal", goal_id, "GET /goals")
            doomed: list[Goal] = []
            stack = [goal]
            while stack:
                current = stack.pop()
                doomed.append(current)
                stack.extend(g for i in current.subtask_ids if (g := unit.get(Goal, i)))
            parent = unit.get(Goal, goal.parent_id) if goal.parent_id else None
            if parent is not None:
                kept = tuple(i for i in parent.subtask_ids if i != goal_id)
                unit.put(parent.model_copy(update={"subtask_ids": kept}))
            for gone in doomed:
                unit.delete(Goal, gone.id)
                self._record(unit, actor, "delete", gone, None)
            return doomed

        return await self.core.retrying(body)

    # -- entities ------------------------------------------------------------------------
    async def update_entity(
        self,
        entity_id: str,
        actor: Actor,
        *,
        attributes: Mapping[str, str | None] | None = None,
        remove_observations: Sequence[int] = (),
    ) -> EntityProfile:
        """Set or remove attributes (None removes) and delete observations by index.

        Raises:
            RecordNotFoundError: no such entity.
            InvalidInputError: an observation index out of range or an empty attribute.
        """

        def change(profile: EntityProfile) -> EntityProfile:
            merged = dict(profile.attributes)
            for name, value in (attributes or {}).items():
                if value is None:
                    merged.pop(name, None)
                else:
                    key = _text(name, "attribute name", ATTRIBUTE_KEY_CHARS)
                    merged[key] = _text(value, name, ATTRIBUTE_VALUE_CHARS)
            count = len(profile.observations)
            bad = [i for i in remove_observations if not 0 <= i < count]
            if bad:
                raise InvalidInputError(
                    f"Observation index {bad[0]!r} is out of range (the entity has {count})",
                    "Count observations from 0 in GET /entities/{name}.",
                )
            drop = set(remove_observations)
            kept = tuple(o for i, o in enumerate(profile.observations) if i not in drop)
            return _changed(profile, {"attributes": merged, "observations": kept})

        return await self._update(
            actor,
            lambda unit: unit.get(EntityProfile, entity_id),
            _missing("Entity", entity_id, "GET /entities"),
            change,
        )

    async def forget(self, entity_id: str, actor: Actor, *, dry_run: bool = False) -> ForgetReport:
        """Remove everything about one entity in one transaction (see :func:`forget_entity`).

        With ``dry_run`` nothing is written and the report lists what would go, and
        where copies of the entity's words would be blanked. Afterwards a store that
        keeps old page images (SQLite's write-ahead log) is scrubbed of them.

        Raises:
            RecordNotFoundError: nothing at all is known about the entity.
        """

        async def body(unit: Unit) -> ForgetReport:
            report = forget_entity(unit, entity_id, dry_run=dry_run)
            if report.total == 0:
                raise RecordNotFoundError(
                    f"Nothing is known about entity {entity_id!r}",
                    "Check the name with GET /entities (names are case-sensitive).",
                )
            if not dry_run:
                record_change(
                    unit,
                    self.core.clock,
                    actor,
                    "forget",
                    "entity",
                    entity_id,
                    before=report.to_dict(),
                    after=None,
                )
            else:
                unit.clear()  # a dry run never commits, even by accident
            return report

        report = await self.core.retrying(body)
        if not dry_run:
            store, owner = self.core.store, self.core.info.id
            for event_id, fields in report.events.items():
                # Field by field, after the unit: a worker may be marking the event done.
                store.update_event(owner, event_id, fields)
            if isinstance(store, Scrubbing):
                store.scrub()
        return report
