"""Session memory: persistent facts and patterns behind the persona guard (spec 000 §3)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from mindspace.clock import Clock, format_time
from mindspace.config import Settings
from mindspace.state.unit import Unit
from mindspace.workspace.desk import Desk
from mindspace.workspace.limits import bounded_text
from mindspace.workspace.persona import PersonaGuard
from mindspace.workspace.records import CompletedTask, Goal, SessionMemory

__all__ = [
    "AddOutcome",
    "CompactOutcome",
    "MemoryType",
    "SessionMemoryBook",
    "record_completed_tasks",
]

MemoryType = Literal["fact", "pattern"]


@dataclass(frozen=True)
class AddOutcome:
    """The result of adding one item."""

    memory: SessionMemory
    added: str
    duplicate: bool


@dataclass(frozen=True)
class CompactOutcome:
    """Counts before and after a compaction."""

    before: SessionMemory
    after: SessionMemory


class SessionMemoryBook(Desk):
    """Session memory operations within one unit of work.

    Args:
        unit: Where reads and writes go.
        clock: The time source for ``last_compacted``.
        settings: Length limits.
        guard: The persona guard every stored item passes.
    """

    def __init__(self, unit: Unit, clock: Clock, settings: Settings, guard: PersonaGuard) -> None:
        super().__init__(unit, clock, settings)
        self.guard = guard

    def read(self) -> SessionMemory:
        """The current session memory."""
        return self.unit.doc(SessionMemory)

    def add(self, memory_type: MemoryType, content: str) -> AddOutcome:
        """Add a fact or a pattern; an item already present (ignoring case) is not repeated.

        Raises:
            InvalidArgumentsError: empty or too long.
            PersonaViolationError: the content refers to the assistant.
        """
        text = bounded_text(content, "content", self.settings.max_session_memory_chars)
        self.guard.check(text)
        memory = self.read()
        field = "key_facts" if memory_type == "fact" else "learned_patterns"
        items: tuple[str, ...] = getattr(memory, field)
        if text.casefold() in {item.casefold() for item in items}:
            return AddOutcome(memory, text, duplicate=True)
        memory = memory.model_copy(update={field: (*items, text)})
        self.unit.put_doc(memory)
        return AddOutcome(memory, text, duplicate=False)

    def compact(self, new_facts: Sequence[str], new_patterns: Sequence[str]) -> CompactOutcome:
        """Replace facts and patterns with the compacted lists; completed tasks are kept.

        Every new item passes the same checks as :meth:`add`; if any fails, nothing changes.
        """
        limit = self.settings.max_session_memory_chars
        facts = _dedupe(bounded_text(f, "new_facts item", limit) for f in new_facts)
        patterns = _dedupe(bounded_text(p, "new_patterns item", limit) for p in new_patterns)
        self.guard.check_all([*facts, *patterns])
        before = self.read()
        after = before.model_copy(
            update={
                "key_facts": tuple(facts),
                "learned_patterns": tuple(patterns),
                "last_compacted": format_time(self.clock.now()),
            }
        )
        self.unit.put_doc(after)
        return CompactOutcome(before, after)


def record_completed_tasks(unit: Unit, goals: Sequence[Goal], clock: Clock, keep: int) -> None:
    """Append completed goals to session memory's ``completed_tasks`` (newest ``keep`` kept)."""
    if not goals:
        return
    memory = unit.doc(SessionMemory)
    now = format_time(clock.now())
    added = tuple(
        CompletedTask(description=g.description, timestamp=now, goal_id=g.id) for g in goals
    )
    unit.put_doc(
        memory.model_copy(update={"completed_tasks": (*memory.completed_tasks, *added)[-keep:]})
    )


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    result: list[str] = []
    for item in items:
        if item.casefold() not in seen:
            seen.add(item.casefold())
            result.append(item)
    return result
