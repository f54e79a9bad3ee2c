"""Edits of session memory by people and hosts: list, add, change and delete its items.

Session memory (the facts and patterns that go into every prompt) is what Letta calls
core memory blocks: the one tier a person most needs to see and correct. Items are
addressed by their 0-based position in their list, as ``mindspace session`` and
``GET /session`` show them. Every change passes the same checks as the model's
``add_session_memory`` (length, the persona guard) and is recorded in the history
(target kind ``session_fact`` or ``session_pattern``, key the position) in the same
unit of work, so a change and its history commit together or not at all.
"""

from __future__ import annotations

from typing import Any, Literal

from mindspace.engine.core import EngineCore
from mindspace.engine.history import Actor, record_change
from mindspace.errors import (
    InvalidArgumentsError,
    InvalidInputError,
    PersonaViolationError,
    RecordNotFoundError,
)
from mindspace.state.unit import Unit
from mindspace.workspace.limits import bounded_text
from mindspace.workspace.records import SessionMemory

__all__ = ["SessionItemEdits", "SessionItemKind", "session_items"]

SessionItemKind = Literal["fact", "pattern"]
"""Which list of session memory an item is in: ``key_facts`` or ``learned_patterns``."""

_FIELDS: dict[SessionItemKind, str] = {"fact": "key_facts", "pattern": "learned_patterns"}
_HINT = "List them with `mindspace session` or GET /session (counted from 0)."


def session_items(memory: SessionMemory, kind: SessionItemKind) -> tuple[str, ...]:
    """The facts or the patterns of ``memory``."""
    items: tuple[str, ...] = getattr(memory, _FIELDS[kind])
    return items


class SessionItemEdits:
    """Add, change and delete session-memory items, each recorded in the history.

    Mixed into :class:`~mindspace.engine.edits.Edits` (``assistant.edits``).

    Args:
        core: The assistant's state and ports.
    """

    core: EngineCore

    def _checked(self, content: str) -> str:
        try:
            text = bounded_text(content, "content", self.core.settings.max_session_memory_chars)
            self.core.guard.check(text)
        except InvalidArgumentsError as exc:
            raise InvalidInputError(exc.error, exc.suggestion) from None
        except PersonaViolationError as exc:
            matched = exc.extra.get("matched")
            said = f" ({matched!r})" if matched else ""
            raise InvalidInputError(
                f"{exc.error}{said}: session memory holds facts about the world and the "
                "people in it, which go into every prompt",
                "Write it in the third person, e.g. 'Dave prefers red wine'.",
            ) from None
        return text

    async def add_session_item(self, kind: SessionItemKind, content: str, actor: Actor) -> int:
        """Append a fact or a pattern; returns its position.

        Raises:
            InvalidInputError: empty, too long, already there, or about the assistant
                itself (the persona guard's refusal, with its suggestion).
        """
        text = self._checked(content)

        async def body(unit: Unit) -> int:
            memory = unit.doc(SessionMemory)
            items = session_items(memory, kind)
            if text.casefold() in {item.casefold() for item in items}:
                raise InvalidInputError(
                    f"That {kind} is already in session memory: {text!r}",
                    "Change the existing item instead (`mindspace session edit`).",
                )
            unit.put_doc(memory.model_copy(update={_FIELDS[kind]: (*items, text)}))
            self._session_history(unit, actor, "create", kind, len(items), None, text)
            return len(items)

        return await self.core.retrying(body)

    async def update_session_item(
        self, kind: SessionItemKind, index: int, content: str, actor: Actor
    ) -> str:
        """Replace the item at ``index``; returns the text it had.

        Raises:
            RecordNotFoundError: no item at that position.
            InvalidInputError: the new text is empty, too long or about the assistant.
        """
        text = self._checked(content)

        async def body(unit: Unit) -> str:
            memory = unit.doc(SessionMemory)
            items = list(session_items(memory, kind))
            old = _at(items, index, kind)
            if old != text:
                items[index] = text
                unit.put_doc(memory.model_copy(update={_FIELDS[kind]: tuple(items)}))
                self._session_history(unit, actor, "update", kind, index, old, text)
            return old

        return await self.core.retrying(body)

    async def delete_session_item(self, kind: SessionItemKind, index: int, actor: Actor) -> str:
        """Delete the item at ``index`` (the later ones move up); returns its text.

        Raises:
            RecordNotFoundError: no item at that position.
        """

        async def body(unit: Unit) -> str:
            memory = unit.doc(SessionMemory)
            items = list(session_items(memory, kind))
            old = _at(items, index, kind)
            del items[index]
            unit.put_doc(memory.model_copy(update={_FIELDS[kind]: tuple(items)}))
            self._session_history(unit, actor, "delete", kind, index, old, None)
            return old

        return await self.core.retrying(body)

    def _session_history(
        self,
        unit: Unit,
        actor: Actor,
        action: Literal["create", "update", "delete"],
        kind: SessionItemKind,
        index: int,
        before: str | None,
        after: str | None,
    ) -> None:
        def view(text: str | None) -> dict[str, Any] | None:
            return None if text is None else {"index": index, "text": text}

        record_change(
            unit,
            self.core.clock,
            actor,
            action,
            f"session_{kind}",
            str(index),
            before=view(before),
            after=view(after),
        )


def _at(items: list[str], index: int, kind: SessionItemKind) -> str:
    if not 0 <= index < len(items):
        raise RecordNotFoundError(
            f"Session memory has no {kind} {index!r} (it has {len(items)} {kind}s)", _HINT
        )
    return items[index]
