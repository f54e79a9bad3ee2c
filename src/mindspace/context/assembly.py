"""Assembling rendered components into chat messages, within token budgets.

Components are assembled by placement, then id (:mod:`mindspace.context.components`):

1. the *prefix*: one system message of the stable components (sections under their
   names), because several providers accept only a single leading system message;
2. the conversation *history*, as its own messages, trimmed from the oldest end (a
   message with tool calls is never separated from the tool results that answer it);
3. the *turn*: one closing user message with what changes every turn (the current
   time, the turn's context sections, then the pending event), because chat templates
   refuse a system message after the conversation has begun.

The last message of the prefix and of the history are *cache points*: everything up to
them is byte-identical on the next turn of the same conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from mindspace.context.components import (
    STATIC_COMPONENTS,
    ComponentRole,
    Placement,
    PromptComponent,
)
from mindspace.llm.port import Message
from mindspace.tokens import estimate_tokens

__all__ = [
    "TRUNCATION_MARK",
    "AssembledPrompt",
    "RenderedComponent",
    "assemble",
    "message_tokens",
    "trim_history",
    "truncate_to_tokens",
]

TRUNCATION_MARK = "\n[...truncated to fit the token budget]"


@dataclass(frozen=True)
class RenderedComponent:
    """A component filled with content (text, or messages for the history)."""

    id: int
    key: str
    name: str
    role: ComponentRole
    content: str = ""
    messages: tuple[Message, ...] = ()
    budget: int | None = None
    placement: Placement | None = None
    """None: the static component's with this id, else ``turn``."""

    @classmethod
    def of(
        cls,
        component: PromptComponent,
        budget: int | None,
        *,
        content: str = "",
        messages: tuple[Message, ...] = (),
    ) -> RenderedComponent:
        """``component`` filled with ``content`` (or ``messages``), within ``budget`` tokens."""
        return cls(
            component.id,
            component.key,
            component.name,
            component.role,
            content=content,
            messages=messages,
            budget=budget,
            placement=component.placement,
        )

    @property
    def zone(self) -> Placement:
        """Where the component goes in the prompt."""
        if self.placement is not None:
            return self.placement
        static = next((c for c in STATIC_COMPONENTS if c.id == self.id), None)
        return static.placement if static is not None else "turn"


@dataclass(frozen=True)
class ComponentReport:
    """What one component contributed, for inspection."""

    id: int
    key: str
    tokens: int
    content: str
    truncated: bool = False


@dataclass(frozen=True)
class AssembledPrompt:
    """The chat messages to send, and what each component contributed."""

    messages: tuple[Message, ...]
    components: tuple[ComponentReport, ...] = field(default=())

    @property
    def estimated_tokens(self) -> int:
        """Estimated tokens of every message."""
        return sum(message_tokens(m) for m in self.messages)

    def render(self) -> str:
        """A readable transcript (for snapshots and debugging)."""
        lines: list[str] = []
        for message in self.messages:
            head = f"--- {message.role}"
            if message.tool_call_id:
                head += f" (for {message.tool_call_id})"
            if message.cache_point:
                head += " [cache point]"
            lines.append(head + " ---")
            if message.content:
                lines.append(message.content)
            for call in message.tool_calls:
                lines.append(f"[tool call {call.id}] {call.name}({call.arguments})")
        return "\n".join(lines) + "\n"


def message_tokens(message: Message) -> int:
    """Estimated tokens of one message, including a small per-message overhead."""
    total = 4 + estimate_tokens(message.content or "")
    for call in message.tool_calls:
        total += estimate_tokens(call.name) + estimate_tokens(call.arguments) + 3
    return total


def truncate_to_tokens(text: str, budget: int) -> tuple[str, bool]:
    """``text`` cut (at a line or word boundary) to about ``budget`` tokens."""
    if estimate_tokens(text) <= budget:
        return text, False
    keep = estimate_tokens(TRUNCATION_MARK)
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits
        middle = (low + high + 1) // 2
        if estimate_tokens(text[:middle]) + keep <= budget:
            low = middle
        else:
            high = middle - 1
    cut = text[:low]
    boundary = max(cut.rfind("\n"), cut.rfind(" "))
    if boundary > len(cut) // 2:
        cut = cut[:boundary]
    return cut.rstrip() + TRUNCATION_MARK, True


def trim_history(messages: Sequence[Message], budget: int) -> list[Message]:
    """The newest messages that fit ``budget``, keeping tool calls with their results."""
    groups: list[list[Message]] = []
    for message in messages:
        if message.role == "tool" and groups and _answers(groups[-1], message):
            groups[-1].append(message)
        else:
            groups.append([message])
    kept: list[list[Message]] = []
    used = 0
    for group in reversed(groups):
        cost = sum(message_tokens(m) for m in group)
        if used + cost > budget:
            break
        kept.append(group)
        used += cost
    # A tool result whose call was trimmed away would confuse the model: drop it too.
    result = [m for group in reversed(kept) for m in group]
    while result and result[0].role == "tool":
        result.pop(0)
    return result


def _answers(group: list[Message], message: Message) -> bool:
    calls = {c.id for m in group for c in m.tool_calls}
    return message.tool_call_id in calls


_RANK: dict[Placement, int] = {"prefix": 0, "history": 1, "turn": 2}


def assemble(parts: Sequence[RenderedComponent], *, turn_header: str = "") -> AssembledPrompt:
    """Turn ``parts`` into chat messages within their budgets: prefix, history, turn.

    Args:
        parts: The rendered components, in any order.
        turn_header: A line that opens the turn (the current time); it changes every
            turn, so it never goes in the prefix.
    """
    messages: list[Message] = []
    reports: list[ComponentReport] = []
    sections: list[str] = []
    turn: list[str] = [turn_header] if turn_header else []

    def flush_prefix() -> None:
        if sections:
            messages.append(Message("system", "\n\n".join(sections), cache_point=True))
            sections.clear()

    def flush_turn() -> None:
        if turn:
            messages.append(Message("user", "\n\n".join(turn)))
            turn.clear()

    for part in sorted(parts, key=lambda p: (_RANK[p.zone], p.id)):
        if part.messages:
            history = list(part.messages)
            if part.budget is not None:
                history = trim_history(history, part.budget)
            flush_prefix()
            if history:
                history[-1] = replace(history[-1], cache_point=True)
            messages.extend(history)
            tokens = sum(message_tokens(m) for m in history)
            shown = AssembledPrompt(tuple(history)).render() if history else ""
            trimmed = len(history) < len(part.messages)
            reports.append(ComponentReport(part.id, part.key, tokens, shown, trimmed))
            continue
        if not part.content.strip():
            reports.append(ComponentReport(part.id, part.key, 0, ""))
            continue
        content, truncated = part.content, False
        if part.budget is not None:
            content, truncated = truncate_to_tokens(content, part.budget)
        reports.append(
            ComponentReport(part.id, part.key, estimate_tokens(content), content, truncated)
        )
        section = content if part.id == 0 else f"## {part.name}\n{content}"
        if part.zone == "prefix" and part.role in ("system", "tool", "mixed"):
            sections.append(section)
        elif part.zone == "prefix":
            flush_prefix()
            messages.append(Message("assistant" if part.role == "assistant" else "user", content))
        elif part.role == "assistant":
            flush_prefix()
            flush_turn()
            messages.append(Message("assistant", content))
        else:
            flush_prefix()
            turn.append(section)
    flush_prefix()
    flush_turn()
    reports.sort(key=lambda r: r.id)
    return AssembledPrompt(tuple(messages), tuple(reports))
