"""Edits that wait for approval: a client that may not change the mind directly asks.

The MCP server offers ``edit_memory``, ``delete_memory`` and ``forget_entity`` (Mem0's MCP
server offers add/search/update/delete). They are not the model's tools: they are a
person's edits (:class:`~mindspace.engine.edits.Edits`), and since they cannot be undone
they are DANGEROUS, so a call is recorded as a pending
:class:`~mindspace.engine.records.Approval` like any DANGEROUS tool call. An operator
approves it where every approval is decided (the dashboard, ``POST .../approve``); it then
runs through ``assistant.edits``, which records it in the history as made by the person
who approved it, on behalf of the client that asked (``via``-style note in the
approval's result). The model is not told: it asked for nothing.

An approved edit and the approval's new status are two commits: the edit first. If the
process stops in between, the approval stays pending and approving it again answers
with the edit's own error (the memory is gone): nothing is applied twice.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mindspace.engine.edits import Edits, memory_view
from mindspace.engine.history import Actor
from mindspace.errors import InvalidInputError, RecordNotFoundError

__all__ = ["OPERATOR_EDITS", "OperatorEdit", "parse_operator_edit", "run_operator_edit"]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class EditMemoryArgs(_Args):
    """What to change in a memory; fields left out stay as they are."""

    memory_id: str = Field(min_length=1, max_length=40, description="The memory's id (mem_...).")
    content: str | None = Field(default=None, min_length=1, max_length=4_000)
    tags: list[str] | None = Field(default=None, max_length=20)
    importance: int | None = Field(default=None, ge=1, le=10)


class DeleteMemoryArgs(_Args):
    """The memory to delete."""

    memory_id: str = Field(min_length=1, max_length=40, description="The memory's id (mem_...).")


class ForgetEntityArgs(_Args):
    """The entity to forget everywhere."""

    entity_id: str = Field(min_length=1, max_length=128, description="The entity's name.")


Runner = Callable[[Edits, Any, Actor], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class OperatorEdit:
    """One edit a client may ask for: its description, arguments and how it runs."""

    description: str
    args_model: type[_Args]
    run: Runner

    def schema(self) -> dict[str, Any]:
        """The arguments' JSON schema (what an MCP client sees)."""
        return self.args_model.model_json_schema()


async def _edit_memory(edits: Edits, args: EditMemoryArgs, actor: Actor) -> dict[str, Any]:
    memory = await edits.update_memory(
        args.memory_id, actor, content=args.content, tags=args.tags, importance=args.importance
    )
    return {"success": True, "memory": memory_view(memory)}


async def _delete_memory(edits: Edits, args: DeleteMemoryArgs, actor: Actor) -> dict[str, Any]:
    memory = await edits.delete_memory(args.memory_id, actor)
    return {"success": True, "deleted": memory.id}


async def _forget_entity(edits: Edits, args: ForgetEntityArgs, actor: Actor) -> dict[str, Any]:
    report = await edits.forget(args.entity_id, actor)
    return {"success": True, **report.to_dict()}


OPERATOR_EDITS: dict[str, OperatorEdit] = {
    "edit_memory": OperatorEdit(
        "Change a semantic memory's text (embedded again), tags or importance.",
        EditMemoryArgs,
        _edit_memory,
    ),
    "delete_memory": OperatorEdit(
        "Delete a semantic memory; it is gone from recall at once.",
        DeleteMemoryArgs,
        _delete_memory,
    ),
    "forget_entity": OperatorEdit(
        "Forget everything about an entity: its profile, the memories and journal entries "
        "it is the source of, its conversation.",
        ForgetEntityArgs,
        _forget_entity,
    ),
}


def parse_operator_edit(name: str, arguments: Any) -> dict[str, Any]:
    """The validated arguments of edit ``name`` as JSON values.

    Raises:
        InvalidInputError: the arguments do not fit (the message names the field).
    """
    edit = OPERATOR_EDITS[name]
    try:
        parsed = edit.args_model.model_validate(arguments or {})
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "(arguments)"
        raise InvalidInputError(
            f"Invalid arguments for {name!r}: {where!r} {problem['msg']}",
            "Pass an object with the fields of the tool's input schema: "
            f"{', '.join(edit.schema()['properties'])}.",
        ) from None
    return parsed.model_dump(mode="json", exclude_none=True)


async def run_operator_edit(
    edits: Edits, name: str, arguments: str, actor: Actor
) -> dict[str, Any]:
    """Run an approved edit; its result, or the spec's error shape when it cannot run."""
    edit = OPERATOR_EDITS[name]
    try:
        args = edit.args_model.model_validate(json.loads(arguments))
        return await edit.run(edits, args, actor)
    except (InvalidInputError, RecordNotFoundError) as exc:
        return {"success": False, "error": exc.error, "suggestion": exc.suggestion}
    except (ValidationError, json.JSONDecodeError) as exc:
        return {"success": False, "error": f"The stored arguments no longer fit: {exc}"}
