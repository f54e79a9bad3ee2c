"""The World port: what the assistant can perceive and do in its host.

A host implements :class:`World` (``say`` and ``look`` are required; ``emote`` and
others raise ``NotImplementedError`` naming the class until a host provides them) and
attaches it to an assistant, which then offers the world tools below to the model.
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import Field

from mindspace.engine.hygiene import clean_reply
from mindspace.errors import ToolFailedError
from mindspace.tools.base import A, NoArgs, Tool, ToolArgs, ToolCategory, ToolContext
from mindspace.tools.limits import Identifier, Limit, ShortText

__all__ = [
    "EmoteTool",
    "LookTool",
    "SayTool",
    "World",
    "WorldBase",
    "WorldTool",
    "required_text",
    "world_tools",
]

MAX_UTTERANCE_CHARS = 4_000
"""Longest text the assistant may say at once."""


@runtime_checkable
class World(Protocol):
    """The assistant's surroundings in its host."""

    async def say(self, text: str, *, target: str | None = None) -> None:
        """Say ``text`` aloud, or privately to ``target`` when given."""
        ...

    async def look(self) -> str:
        """Describe where the assistant is and who is around."""
        ...


class WorldBase:
    """Convenience base for hosts: optional abilities raise until implemented."""

    async def emote(self, text: str) -> None:
        """Perform an action others can see (``"waves"``)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement emote()")


W = TypeVar("W")


class WorldTool(Tool[A], Generic[A, W]):
    """A tool that perceives or acts in the host's world, bound to that world.

    Subclasses set ``name``, ``description`` and ``args_model`` and implement
    ``execute`` with ``self.world``; they are safe to chain unless they say otherwise.
    """

    category = ToolCategory.SAFE_CHAIN

    def __init__(self, world: W) -> None:
        self.world = world


def required_text(value: str, problem: str, hint: str) -> str:
    """``value`` without surrounding space; ``ToolFailedError(problem, hint)`` if empty."""
    text = value.strip()
    if not text:
        raise ToolFailedError(problem, hint)
    return text


class SayArgs(ToolArgs):
    text: Annotated[str, Limit(MAX_UTTERANCE_CHARS)] = Field(description="What to say.")
    target: Identifier | None = Field(default=None, description="Say it privately to this entity.")


class SayTool(WorldTool[SayArgs, World]):
    name = "say"
    description = "Say something aloud where you are, or privately to one entity."

    async def execute(self, ctx: ToolContext, args: SayArgs) -> dict[str, Any]:
        # Words said through the tool reach players too: the same hygiene as a reply
        # (our own headers echoed back, a role prefix), without the prompt-echo check.
        text = clean_reply(
            args.text, assistant_key=ctx.assistant_key, max_chars=MAX_UTTERANCE_CHARS
        ).text
        if not text:
            raise ToolFailedError("Nothing to say: 'text' is empty", "Pass the words to say.")
        await self.world.say(text, target=args.target)
        return {"success": True, "said": text, "target": args.target}


class EmoteArgs(ToolArgs):
    text: ShortText = Field(description="The action, e.g. 'polishes a glass'.")


class EmoteTool(WorldTool[EmoteArgs, WorldBase]):
    name = "emote"
    description = "Perform a visible action, e.g. 'polishes a glass'."

    async def execute(self, ctx: ToolContext, args: EmoteArgs) -> dict[str, Any]:
        text = required_text(args.text, "Nothing to emote: 'text' is empty", "Describe the action.")
        await self.world.emote(text)
        return {"success": True, "emoted": text}


class LookTool(WorldTool[NoArgs, World]):
    name = "look"
    description = "Look around: where you are and who is here."

    async def execute(self, ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
        return {"success": True, "description": await self.world.look()}


def world_tools(world: World) -> list[Tool[Any]]:
    """The tools a world supports: say and look always, emote when it has one."""
    tools: list[Tool[Any]] = [SayTool(world), LookTool(world)]
    if isinstance(world, WorldBase):
        tools.append(EmoteTool(world))
    return tools
