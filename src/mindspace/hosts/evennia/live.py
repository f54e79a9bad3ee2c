"""The character part of an assistant character's prompt: the game's state, read live."""

from __future__ import annotations

import inspect
import logging
from typing import Any

from mindspace.engine import PromptInputs, Provider
from mindspace.hosts.evennia.world import EvenniaWorld

__all__ = ["LiveContext"]

logger = logging.getLogger("mindspace.evennia")


class LiveContext:
    """The character part of every prompt: the game's state now, then the engine's part.

    A prompt provider (:meth:`Assistant.provide_prompt`); ``previous`` is the provider
    it replaced (key facts, projects...), whose text follows.
    """

    def __init__(self, world: EvenniaWorld) -> None:
        self.world = world
        self.previous: Provider | None = None

    async def __call__(self, inputs: PromptInputs) -> str:
        """Read the character in the game (on the reactor) and add the engine's part."""
        try:
            here = await self.world.character_context()
        except Exception as exc:  # the prompt goes on without it; the log says why
            logger.warning("mindspace: could not read the character in the game: %r", exc)
            here = ""
        rest: Any = self.previous(inputs) if self.previous is not None else ""
        if inspect.isawaitable(rest):
            rest = await rest
        return "\n\n".join(part for part in (here, rest) if isinstance(part, str) and part)
