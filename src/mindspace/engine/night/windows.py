"""A thread's old part in windows that each fit a prompt's history budget.

Pre-compaction extraction must read everything it compacts (spec 003 §5: a last chance
to journal). A prompt shows at most the history component's token budget and drops the
oldest messages past it, so a long history is cut into consecutive *windows*, each
shown to one extraction session. A tool call stays in the window of its results. A
message that alone exceeds the budget (a long tool result) is shown in pieces, one per
window, cut at paragraph and sentence ends (:func:`~mindspace.memory.chunking.chunk_text`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from mindspace.config import Settings
from mindspace.context.assembly import message_tokens
from mindspace.engine.night.compaction import message_number
from mindspace.engine.records import ConversationMessage
from mindspace.llm.port import Message, ToolCall
from mindspace.memory.chunking import chunk_text

__all__ = ["WINDOW_SHARE", "Window", "window_budget", "windows"]

WINDOW_SHARE = 0.75
"""Share of the history budget a window fills: the estimate is not the model's tokenizer,
and the system prompt and task come off the prompt's total first."""


@dataclass(frozen=True)
class Window:
    """Messages one extraction session reads.

    Attributes:
        messages: The history to show.
        through: The number of the last message it finishes (a piece that is not the
            last of its message finishes only the messages before it).
        continues: It is a later piece of a message an earlier window began.
    """

    messages: tuple[Message, ...]
    through: int
    continues: bool = False


def window_budget(settings: Settings) -> int:
    """Tokens of history one extraction window may hold under ``settings``."""
    history = settings.component_token_budgets.get(
        "conversation_history", settings.context_token_budget
    )
    return max(1, int(min(history, settings.context_token_budget // 2) * WINDOW_SHARE))


def _as_message(m: ConversationMessage) -> Message:
    calls = tuple(ToolCall(c.id, c.tool, c.arguments) for c in m.tool_calls)
    return Message(m.role, m.content, calls, m.tool_call_id)


def _groups(messages: Sequence[ConversationMessage]) -> list[list[ConversationMessage]]:
    """Messages with each tool call's results kept together."""
    groups: list[list[ConversationMessage]] = []
    for m in messages:
        calls = {c.id for g in groups[-1:] for x in g for c in x.tool_calls}
        if m.role == "tool" and m.tool_call_id in calls:
            groups[-1].append(m)
        else:
            groups.append([m])
    return groups


def _pieces(m: ConversationMessage, budget: int) -> list[str]:
    """The message's text in pieces whose messages each fit ``budget`` tokens."""
    text = m.content or ""
    size = max(1, budget * 2)
    while True:
        pieces = chunk_text(text, size)
        label = f"[{m.role} message, part 99 of {len(pieces)}] "
        if size == 1 or all(message_tokens(Message("user", label + p)) <= budget for p in pieces):
            return pieces
        size //= 2


def windows(old: Sequence[ConversationMessage], after: int, budget: int) -> Iterator[Window]:
    """Windows over the messages of ``old`` numbered above ``after``, oldest first."""
    unread = [m for m in old if message_number(m) > after]
    shown: list[Message] = []
    used = 0
    through = after
    for group in _groups(unread):
        cost = sum(message_tokens(_as_message(m)) for m in group)
        if shown and used + cost > budget:
            yield Window(tuple(shown), through)
            shown, used = [], 0
        if cost <= budget:
            shown += [_as_message(m) for m in group]
            if group[0].role == "tool":
                # Its call was read in an earlier window: a lone result would break the
                # pairing (and be trimmed), so it is shown as what it is.
                shown[-len(group)] = Message("user", f"[tool result] {group[0].content or ''}")
            used += cost
            through = message_number(group[-1])
            continue
        # Too long for any window: each message alone, the longest in pieces, as user
        # turns that say what they are (a lone tool result would break the pairing).
        for m in group:
            pieces = _pieces(m, budget)
            for i, piece in enumerate(pieces, 1):
                label = f"[{m.role} message, part {i} of {len(pieces)}] "
                done = i == len(pieces)
                yield Window(
                    (Message("user", label + piece),),
                    message_number(m) if done else through,
                    continues=i > 1,
                )
            through = message_number(m)
    if shown:
        yield Window(tuple(shown), through)
