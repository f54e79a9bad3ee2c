"""Prompt components and the 1000-point ID scheme (spec 002 §2).

Static components sit at fixed ids; pluggable components take the free slots after a
static id (``after_static_id + 1`` up to ``+ 999``, skipping any static id in that
range).

Assembly orders components by *placement* first, then by id (a deviation from the
spec's pure id order, for prompt caching; docs/architecture.md): the ``prefix``
components (system prompt, character context, goals) change rarely and open the
prompt byte-identical from turn to turn, so llama.cpp, vLLM, OpenAI and Anthropic can
reuse their cached prefix; the ``history`` follows; the ``turn`` components (entity
context, recalled memories, ambient messages, the pending event, the tool result)
change every turn and close the prompt. A pluggable component is placed in the turn
unless it says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from mindspace.errors import ComponentError

__all__ = [
    "COMPONENT_CHARACTER_CONTEXT",
    "COMPONENT_CONTEXT_BUFFER",
    "COMPONENT_CONVERSATION_HISTORY",
    "COMPONENT_ENTITY_CONTEXT",
    "COMPONENT_GOALS",
    "COMPONENT_PENDING_EVENT",
    "COMPONENT_SEMANTIC_MEMORIES",
    "COMPONENT_SYSTEM_PROMPT",
    "COMPONENT_TOOL_RESULT",
    "STATIC_COMPONENTS",
    "ComponentRegistry",
    "ComponentRole",
    "Placement",
    "PromptComponent",
]

ComponentRole = Literal["system", "user", "assistant", "tool", "mixed"]
Placement = Literal["prefix", "history", "turn"]
"""Where a component goes: the stable prefix, the conversation, or the changing turn."""

COMPONENT_SYSTEM_PROMPT = 0
COMPONENT_CHARACTER_CONTEXT = 1000
COMPONENT_ENTITY_CONTEXT = 1500
COMPONENT_SEMANTIC_MEMORIES = 2000
COMPONENT_CONTEXT_BUFFER = 3000
COMPONENT_GOALS = 4000
COMPONENT_CONVERSATION_HISTORY = 5000
COMPONENT_PENDING_EVENT = 6000
COMPONENT_TOOL_RESULT = 7000

SLOTS_PER_STATIC = 999


@dataclass(frozen=True)
class PromptComponent:
    """One building block of the context window."""

    id: int
    key: str
    name: str
    description: str
    content: str = ""
    is_static: bool = False
    enabled: bool = True
    role: ComponentRole = "system"
    placement: Placement = "turn"
    """``prefix`` only for content that stays byte-identical over many turns: anything
    there that changes every turn makes every provider re-read the whole prompt."""


def _static(
    cid: int,
    key: str,
    name: str,
    description: str,
    role: ComponentRole,
    placement: Placement = "turn",
) -> PromptComponent:
    return PromptComponent(
        cid, key, name, description, is_static=True, role=role, placement=placement
    )


STATIC_COMPONENTS: tuple[PromptComponent, ...] = (
    _static(0, "system_prompt", "System Prompt", "Core LLM instructions", "system", "prefix"),
    _static(
        1000,
        "character_context",
        "Character Context",
        "User/assistant persona, session memory",
        "system",
        "prefix",
    ),
    _static(
        1500,
        "entity_context",
        "Entity Context",
        "O-Mem entity profiles and working memory",
        "system",
    ),
    _static(
        2000, "semantic_memories", "Semantic Memories", "Retrieved facts from memory", "system"
    ),
    _static(3000, "context_buffer", "Context Buffer", "Ambient room messages", "system"),
    _static(4000, "goals", "Goals", "Active goals with hierarchy", "system", "prefix"),
    _static(
        5000,
        "conversation_history",
        "Conversation History",
        "Recent chat (token-budgeted)",
        "mixed",
        "history",
    ),
    _static(6000, "pending_event", "Pending Event", "Current event from queue", "user"),
    _static(7000, "tool_result", "Tool Result", "Previous tool execution result", "tool"),
)


class ComponentRegistry:
    """The static components plus pluggable ones registered in free slots."""

    def __init__(self) -> None:
        self._by_id: dict[int, PromptComponent] = {c.id: c for c in STATIC_COMPONENTS}

    @property
    def static_ids(self) -> list[int]:
        """Ids of the static components, ascending."""
        return sorted(c.id for c in STATIC_COMPONENTS)

    def all(self) -> list[PromptComponent]:
        """Every component in id order."""
        return [self._by_id[i] for i in sorted(self._by_id)]

    def get(self, component_id: int) -> PromptComponent:
        """The component with ``component_id``.

        Raises:
            ComponentError: no such component.
        """
        try:
            return self._by_id[component_id]
        except KeyError:
            raise ComponentError(
                f"No prompt component has id {component_id!r}; known ids: {sorted(self._by_id)!r}"
            ) from None

    def by_key(self, key: str) -> PromptComponent:
        """The component whose key is ``key``."""
        for component in self._by_id.values():
            if component.key == key:
                return component
        raise ComponentError(f"No prompt component has key {key!r}")

    def register(
        self,
        component: PromptComponent,
        *,
        after_static_id: int,
        component_id: int | None = None,
    ) -> PromptComponent:
        """Place a pluggable component after ``after_static_id`` and return it with its id.

        Args:
            component: The component; its ``id`` is ignored and its ``is_static`` must be False.
            after_static_id: The static component it follows.
            component_id: A specific slot; the first free one when omitted.

        Raises:
            ComponentError: ``after_static_id`` is not static, the slot is outside the
                999 slots or taken, the key is taken, or every slot is full.
        """
        if after_static_id not in self.static_ids:
            raise ComponentError(
                f"{after_static_id!r} is not a static component id; use one of {self.static_ids!r}"
            )
        if any(c.key == component.key for c in self._by_id.values()):
            raise ComponentError(f"A prompt component with key {component.key!r} already exists")
        slots = self._slots(after_static_id)
        if component_id is None:
            free = [i for i in slots if i not in self._by_id]
            if not free:
                raise ComponentError(
                    f"All {len(slots)} pluggable slots after component {after_static_id!r} are "
                    "taken; register after another static component."
                )
            component_id = free[0]
        elif component_id not in slots:
            what = (
                f"the static component {self._by_id[component_id].key!r}"
                if component_id in self.static_ids
                else f"not a pluggable slot after {after_static_id!r}"
            )
            raise ComponentError(f"Slot {component_id!r} is {what}; use {_ranges(slots)}.")
        elif component_id in self._by_id:
            taken = self._by_id[component_id]
            raise ComponentError(
                f"Slot {component_id!r} is taken by {taken.key!r}; omit component_id to get "
                "the next free slot."
            )
        placed = replace(component, id=component_id, is_static=False)
        self._by_id[component_id] = placed
        return placed

    def unregister(self, key: str) -> None:
        """Remove a pluggable component by key (static components cannot be removed)."""
        component = self.by_key(key)
        if component.is_static:
            raise ComponentError(f"{key!r} is a static component and cannot be removed")
        del self._by_id[component.id]

    def _slots(self, after_static_id: int) -> list[int]:
        static = set(self.static_ids)
        end = after_static_id + SLOTS_PER_STATIC
        return [i for i in range(after_static_id + 1, end + 1) if i not in static]


def _ranges(ids: list[int]) -> str:
    """``1001-1499 or 1501-1999``: ascending ids as runs of consecutive numbers."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return " or ".join(f"{a}-{b}" if a != b else str(a) for a, b in runs)
