"""Assembling rendered components into chat messages, within token budgets.

Components are assembled in id order. Consecutive system-role components become one
system message (sections under their names), because several providers accept only a
single leading system message. The conversation history expands into its own messages;
it is trimmed from the oldest end, and a message with tool calls is never separated
from the tool results that answer it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from mindspace.context.components import ComponentRole
from mindspace.context.tokens import estimate_tokens
from mindspace.llm.port import Message

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


def assemble(parts: Sequence[RenderedComponent]) -> AssembledPrompt:
    """Order ``parts`` by id and turn them into chat messages within their budgets."""
    messages: list[Message] = []
    reports: list[ComponentReport] = []
    system_sections: list[str] = []

    def flush_system() -> None:
        if system_sections:
            messages.append(Message("system", "\n\n".join(system_sections)))
            system_sections.clear()

    for part in sorted(parts, key=lambda p: p.id):
        if part.messages:
            history = list(part.messages)
            if part.budget is not None:
                history = trim_history(history, part.budget)
            flush_system()
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
        if part.role in ("system", "tool", "mixed"):
            system_sections.append(content if part.id == 0 else f"## {part.name}\n{content}")
        else:
            flush_system()
            messages.append(Message("assistant" if part.role == "assistant" else "user", content))
    flush_system()
    return AssembledPrompt(tuple(messages), tuple(reports))
