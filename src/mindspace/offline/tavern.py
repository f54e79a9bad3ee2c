"""The demo's own lines for the offline model: the tavern scenario's skills.

The offline model (:mod:`mindspace.offline.model`) knows no story; a scenario teaches it
its own wording through the documented extension point, ``OfflineLLM(skills=...)``,
whose skills are tried before the built-in ones. ``mindspace demo`` passes
:data:`TAVERN_SKILLS`.

Example:
    >>> from mindspace.offline import OfflineLLM
    >>> llm = OfflineLLM(TAVERN_SKILLS, announce=False)
"""

from __future__ import annotations

from collections.abc import Sequence

from mindspace.llm.port import Message, ToolSchema
from mindspace.offline import Skill
from mindspace.offline.memory import summary_skill

__all__ = ["TAVERN_SKILLS", "tavern_summary_skill"]

_SMALL_TALK = " and I exchanged a few words."


def tavern_summary_skill(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str | None:
    """Summarise a conversation as the built-in skill does, small talk in the tavern's voice.

    Args:
        messages: The request.
        tools: The offered tools (unused: a summary calls none).

    Returns:
        The summary, or None when the request is not a summary request.
    """
    answer = summary_skill(messages, tools)
    if answer is not None and answer.endswith(_SMALL_TALK):
        return answer.removesuffix(_SMALL_TALK) + " and the tavern exchanged a few words."
    return answer


TAVERN_SKILLS: tuple[Skill, ...] = (tavern_summary_skill,)
"""The skills ``mindspace demo`` adds to the offline model."""
