"""World tools only an Evennia game offers: whisper, move, inspect_location, execute_command.

``say``, ``look`` and ``emote`` come from the core (:func:`mindspace.engine.world.world_tools`)
once the world is attached; :func:`register_evennia_tools` adds these.

``execute_command`` runs a game command (``dig``, ``create``, ``describe``...) as the
assistant's character. It is DANGEROUS and, in this integration, *always* needs
approval: unless the engine runs it for an approval (``ctx.approved_by`` is set: the
admin command's ``approve N`` called :meth:`~mindspace.engine.assistant.Assistant.approve`),
it does not run but records a pending :class:`~mindspace.engine.records.Approval` through
:func:`~mindspace.engine.approvals.request_approval` - the same record the ReAct loop
writes when an execution pattern asks for confirmation - and tells the model it awaits
approval. This holds however the tool is reached: from a tick whose pattern does not
require confirmation, from an autonomous tick, or by name. The engine tells the model
the decision on its next tick.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from mindspace.engine import WorldTool, request_approval, required_text
from mindspace.errors import ToolFailedError
from mindspace.hosts.evennia.world import EvenniaWorld
from mindspace.tools.base import NoArgs, Tool, ToolArgs, ToolCategory, ToolContext

if TYPE_CHECKING:
    from mindspace.tools.registry import ToolRegistry

__all__ = [
    "MAX_COMMAND_CHARS",
    "ExecuteCommandTool",
    "InspectLocationTool",
    "MoveTool",
    "WhisperTool",
    "evennia_tools",
    "register_evennia_tools",
]

MAX_COMMAND_CHARS = 500


class WhisperArgs(ToolArgs):
    target: str = Field(description="Who to whisper to; they must be in the room.")
    text: str = Field(description="What to whisper.")


class WhisperTool(WorldTool[WhisperArgs, EvenniaWorld]):
    name = "whisper"
    description = "Whisper something privately to one person in the room."

    async def execute(self, ctx: ToolContext, args: WhisperArgs) -> dict[str, Any]:
        text, target = args.text.strip(), args.target.strip()
        if not text or not target:
            raise ToolFailedError(
                "Both 'target' and 'text' are needed to whisper",
                "Pass who to whisper to and what to say.",
            )
        await self.world.whisper(target, text)
        return {"success": True, "whispered": text, "target": target}


class MoveArgs(ToolArgs):
    exit: str = Field(description="The name of an exit in this room, e.g. 'north' or 'door'.")


class MoveTool(WorldTool[MoveArgs, EvenniaWorld]):
    name = "move"
    description = "Walk through an exit of the room you are in (see inspect_location)."

    async def execute(self, ctx: ToolContext, args: MoveArgs) -> dict[str, Any]:
        required_text(args.exit, "'exit' is empty", "Name one of the room's exits.")
        moved = await self.world.move(args.exit)
        return {"success": True, **moved}


class InspectLocationTool(WorldTool[NoArgs, EvenniaWorld]):
    name = "inspect_location"
    description = "Where you are as data: the room, its description, exits, people and things."

    async def execute(self, ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
        return {"success": True, **await self.world.inspect_location()}


class ExecuteCommandArgs(ToolArgs):
    command: str = Field(
        description="One game command as a player would type it, e.g. 'dig Cellar = down,up'."
    )


class ExecuteCommandTool(WorldTool[ExecuteCommandArgs, EvenniaWorld]):
    name = "execute_command"
    description = (
        "Run a game (builder) command as your character, e.g. 'dig Cellar' or 'desc here = ...'. "
        "Needs approval by a Builder: it runs only once approved, and you are told so."
    )
    category = ToolCategory.DANGEROUS

    async def execute(self, ctx: ToolContext, args: ExecuteCommandArgs) -> dict[str, Any]:
        command = _checked_command(args.command)
        if ctx.approved_by is None:
            return request_approval(
                ctx.unit,
                ctx.clock,
                self.name,
                {"command": command},
                reason="needs approval by a Builder",
            )
        ran = await self.world.execute(command)
        return {"success": True, "approved_by": ctx.approved_by, **ran}


def _checked_command(raw: str) -> str:
    command = required_text(raw, "'command' is empty", "Pass one game command, e.g. 'dig Cellar'.")
    if "\n" in command or "\r" in command:
        raise ToolFailedError(
            "'command' holds several lines",
            "Pass one command per call; call execute_command again for the next one.",
        )
    if len(command) > MAX_COMMAND_CHARS:
        raise ToolFailedError(
            f"'command' is {len(command)} characters; the limit is {MAX_COMMAND_CHARS}",
            "Shorten it, or split the work into several commands.",
        )
    return command


def evennia_tools(world: EvenniaWorld) -> list[Tool[Any]]:
    """The Evennia-only tools for ``world``."""
    return [
        WhisperTool(world),
        MoveTool(world),
        InspectLocationTool(world),
        ExecuteCommandTool(world),
    ]


def register_evennia_tools(registry: ToolRegistry, world: EvenniaWorld) -> None:
    """Add the Evennia-only tools to ``registry`` (names already taken are kept)."""
    for tool in evennia_tools(world):
        if tool.name not in registry:
            registry.register(tool)
