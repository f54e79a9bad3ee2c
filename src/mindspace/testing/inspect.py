"""Read every committed record of a kind, for tests and scripts that inspect an assistant.

Lazy kinds (memories, A-MEM links) are never all loaded by the engine; a test that
wants to see everything stored reads it straight from the store, streamed.
"""

from __future__ import annotations

from typing import TypeVar

from mindspace.engine.assistant import Assistant
from mindspace.state.models import Record

__all__ = ["stored_records"]

R = TypeVar("R", bound=Record)


def stored_records(assistant: Assistant, model: type[R]) -> list[R]:
    """Every committed record of ``model`` for ``assistant``, oldest first."""
    core = assistant._core  # the store behind the facade, for inspection only
    fields = tuple(model.model_fields)
    rows = core.store.scan(core.info.id, model.kind, fields)
    return [model.from_stored(row) for row in rows]
