"""Filling prompt components from the assistant's state, and assembling them.

Each static component has a *provider*: a function from :class:`PromptInputs` to text
(or, for the history, messages). Later features replace the providers of components
they own (entity context, semantic memories) through :meth:`PromptBuilder.provide`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from mindspace.clock import Clock, format_time
from mindspace.config import Settings
from mindspace.context.assembly import AssembledPrompt, RenderedComponent, assemble
from mindspace.context.components import (
    COMPONENT_CONVERSATION_HISTORY,
    ComponentRegistry,
    PromptComponent,
)
from mindspace.context.contexts import ContextConfig
from mindspace.engine.records import ContextBuffer, ConversationMessage, EngineState, Event
from mindspace.llm.port import Message, ToolCall
from mindspace.state.unit import Unit
from mindspace.tokens import estimate_tokens
from mindspace.workspace.goals import GoalBook
from mindspace.workspace.projects import ProjectDesk
from mindspace.workspace.prompts import assemble_system_prompt
from mindspace.workspace.records import SessionMemory, SystemPrompts

__all__ = [
    "DEFAULT_BASE_PROMPT",
    "PromptBuilder",
    "PromptInputs",
    "Provider",
    "history_messages",
]

DEFAULT_BASE_PROMPT = """You are {assistant}, a long-lived assistant who manages your own workspace.
You keep projects (pageable context), a goal tree with progress, and session memory of facts
about the world and the people in it. Act through the tools you are offered. When someone
speaks to you, answer them with a plain-text reply once you have done what is needed. Keep
replies short and in character. Store facts in the third person; never store what you did."""


@dataclass(frozen=True)
class PromptInputs:
    """What a provider may draw on for one assembly."""

    unit: Unit
    settings: Settings
    clock: Clock
    config: ContextConfig
    assistant_key: str
    entity: str
    event: Event | None = None
    task: str | None = None
    present_entities: tuple[str, ...] = ()
    reserved_tokens: int = 0
    """Tokens of the request outside the messages (the tool definitions), taken off the
    budget before the history gets its share."""
    tool_result: str | None = None
    """The tool_result component's text for a side session; None: the last awake result."""
    history: tuple[Message, ...] | None = None
    """The conversation history to show instead of the stored thread (a pre-compaction
    window: the part of the thread this session reads); None: the stored thread."""

    @property
    def now(self) -> str:
        """The current time as the prompts show it."""
        return format_time(self.clock.now())


ProvidedText = str | tuple[Message, ...]

Provider = Callable[[PromptInputs], ProvidedText | Awaitable[ProvidedText]]
"""Fills a component; an async one (e.g. semantic memories, which embed) is awaited."""


def _system_prompt(inputs: PromptInputs) -> str:
    base = inputs.config.get_component_content_override("system_prompt")
    if base is None:
        base = DEFAULT_BASE_PROMPT.format(assistant=inputs.assistant_key)
    return assemble_system_prompt(base, inputs.unit.doc(SystemPrompts))


def _character_context(inputs: PromptInputs) -> str:
    # The current time opens the turn instead (assemble's turn_header): here it would
    # change the prompt's prefix every minute and defeat every provider's prompt cache.
    memory = inputs.unit.doc(SessionMemory)
    lines = []
    if memory.key_facts:
        lines.append("Key facts:\n" + "\n".join(f"- {f}" for f in memory.key_facts))
    if memory.learned_patterns:
        lines.append("Learned patterns:\n" + "\n".join(f"- {p}" for p in memory.learned_patterns))
    if memory.completed_tasks:
        recent = memory.completed_tasks[-5:]
        lines.append("Recently completed:\n" + "\n".join(f"- {t.description}" for t in recent))
    desk = ProjectDesk(inputs.unit, inputs.clock, inputs.settings)
    active = desk.active()
    if active is not None:
        lines.append(
            f"Active project: {active.key} - {active.summary}\nProject context: "
            f"{active.context or '(none yet)'}"
        )
    paused = [p.key for p in desk.all() if p.status == "paused"]
    if paused:
        lines.append("Paused projects: " + ", ".join(paused))
    return "\n\n".join(lines)


def _context_buffer(inputs: PromptInputs) -> str:
    buffered = inputs.unit.doc(ContextBuffer).messages
    return "\n".join(f"[{m.at}] {m.source or 'someone'}: {m.text}" for m in buffered)


def _goals(inputs: PromptInputs) -> str:
    book = GoalBook(inputs.unit, inputs.clock, inputs.settings)
    lines = []
    for goal, depth in book.tree():
        if goal.status == "abandoned":
            continue
        root_done = goal.status == "completed" and depth == 0
        if root_done:
            continue
        progress = goal.to_spec()["progress"]
        lines.append(
            f"{'  ' * depth}- {goal.id} [{goal.priority}] {goal.description} - "
            f"{progress}% ({goal.status})"
        )
    return "\n".join(lines)


def _history(inputs: PromptInputs) -> tuple[Message, ...]:
    if inputs.history is not None:
        return inputs.history
    return history_messages(inputs.unit, inputs.entity)


def _pending_event(inputs: PromptInputs) -> str:
    if inputs.task:
        return inputs.task
    event = inputs.event
    if event is None:
        return ""
    who = event.source_entity or "someone"
    where = f" in {event.location}" if event.location else ""
    return f"[{event.type} from {who}{where} at {event.created_at}]\n{event.content}"


def _tool_result(inputs: PromptInputs) -> str:
    # With the conversation history in the prompt the result is already there, in place.
    if COMPONENT_CONVERSATION_HISTORY in inputs.config.enabled_components:
        return ""
    last = inputs.tool_result
    if last is None:
        last = inputs.unit.doc(EngineState).last_tool_result
    return f"Result of your previous action:\n{last}" if last else ""


def _empty(inputs: PromptInputs) -> str:
    return ""


def history_messages(unit: Unit, entity: str) -> tuple[Message, ...]:
    """The stored conversation with ``entity`` as chat messages."""
    out = []
    for m in unit.all(ConversationMessage):
        if m.entity != entity:
            continue
        calls = tuple(ToolCall(c.id, c.tool, c.arguments) for c in m.tool_calls)
        out.append(Message(m.role, m.content, calls, m.tool_call_id))
    return tuple(out)


@dataclass
class PromptBuilder:
    """Renders the enabled components of a context and assembles them."""

    settings: Settings
    components: ComponentRegistry = field(default_factory=ComponentRegistry)
    providers: dict[str, Provider] = field(default_factory=dict)

    def __post_init__(self) -> None:
        defaults: dict[str, Provider] = {
            "system_prompt": _system_prompt,
            "character_context": _character_context,
            "entity_context": _empty,
            "semantic_memories": _empty,
            "context_buffer": _context_buffer,
            "goals": _goals,
            "conversation_history": _history,
            "pending_event": _pending_event,
            "tool_result": _tool_result,
        }
        self.providers = {**defaults, **self.providers}

    def provide(self, key: str, provider: Provider) -> None:
        """Use ``provider`` to fill the component ``key``."""
        self.components.by_key(key)  # raises for an unknown key
        self.providers[key] = provider

    async def build(self, inputs: PromptInputs) -> AssembledPrompt:
        """The assembled prompt for ``inputs.config``, within its token budgets."""
        enabled = set(inputs.config.enabled_components)
        chosen = [
            c
            for c in self.components.all()
            if c.enabled and (c.id in enabled or self._plugged_after_enabled(c, enabled))
        ]
        budgets = self.settings.component_token_budgets
        parts: list[RenderedComponent] = []
        history: PromptComponent | None = None
        for component in chosen:
            if component.key == "conversation_history":
                history = component
                continue
            parts.append(await self._render(component, inputs, budgets.get(component.key)))
        if history is not None:
            messages = await self._messages(history, inputs)
            used = sum(estimate_tokens(p.content) for p in parts) + inputs.reserved_tokens
            total = inputs.config.token_budget or self.settings.context_token_budget
            budget = min(budgets.get("conversation_history", total), max(0, total - used))
            parts.append(RenderedComponent.of(history, budget, messages=messages))
        return assemble(parts, turn_header=f"Current time: {inputs.now}")

    def _plugged_after_enabled(self, component: PromptComponent, enabled: set[int]) -> bool:
        # A pluggable component rides along with the static component it follows.
        if component.is_static:
            return False
        owner = max((i for i in self.components.static_ids if i < component.id), default=0)
        return owner in enabled

    async def _render(
        self, component: PromptComponent, inputs: PromptInputs, budget: int | None
    ) -> RenderedComponent:
        override = inputs.config.get_component_content_override(component.key)
        if component.is_static and component.key != "system_prompt":
            text = override if override is not None else await self._text(component.key, inputs)
        elif component.is_static:
            text = await self._text(component.key, inputs)  # its override is the base prompt
        else:
            template = override if override is not None else component.content
            text = _fill(template, inputs)
        return RenderedComponent.of(component, budget, content=text)

    async def _text(self, key: str, inputs: PromptInputs) -> str:
        value = await self._provided(key, inputs)
        if isinstance(value, tuple):
            return "\n".join(m.content or "" for m in value)
        return value

    async def _messages(
        self, component: PromptComponent, inputs: PromptInputs
    ) -> tuple[Message, ...]:
        value = await self._provided(component.key, inputs)
        if isinstance(value, str):
            return (Message("user", value),) if value else ()
        return value

    async def _provided(self, key: str, inputs: PromptInputs) -> ProvidedText:
        value = self.providers[key](inputs)
        if inspect.isawaitable(value):
            return await value
        return value


def _fill(template: str, inputs: PromptInputs) -> str:
    values = {
        "assistant": inputs.assistant_key,
        "now": inputs.now,
        "entity": inputs.entity,
        "context_type": inputs.config.context_type,
    }
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError):
        return template
