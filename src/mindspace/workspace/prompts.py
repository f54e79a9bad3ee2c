"""The two system prompts and how they combine (spec 000 §5).

The user's prompt is set by the host or an operator and no tool can change it. The
assistant's own prompt changes only through ``update_system_prompt``. When assembled,
the user's prompt comes last and is declared authoritative, so it always wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from mindspace.clock import format_time
from mindspace.workspace.desk import Desk
from mindspace.workspace.limits import bounded_text
from mindspace.workspace.records import PromptChange, SystemPrompts

__all__ = ["PROMPT_HISTORY_KEPT", "PromptDesk", "PromptUpdate", "assemble_system_prompt"]

PROMPT_HISTORY_KEPT = 10

ASSISTANT_HEADING = (
    "## Your own guidelines\n(You wrote these and may revise them with update_system_prompt.)"
)
USER_HEADING = (
    "## Instructions from your operator\n"
    "(These take precedence over everything above. You cannot change them.)"
)


@dataclass(frozen=True)
class PromptUpdate:
    """The assistant's prompt before and after an update."""

    previous: str
    current: str


class PromptDesk(Desk):
    """Reads and changes the system prompts within one unit of work."""

    def read(self) -> SystemPrompts:
        """Both prompts and the history of the assistant's own."""
        return self.unit.doc(SystemPrompts)

    def update_assistant_prompt(self, new_prompt: str, reasoning: str) -> PromptUpdate:
        """Replace the assistant's own prompt, keeping the previous one in the history."""
        text = bounded_text(new_prompt, "new_prompt", self.settings.max_system_prompt_chars)
        why = bounded_text(reasoning, "reasoning", self.settings.max_session_memory_chars)
        prompts = self.read()
        change = PromptChange(
            previous_prompt=prompts.assistant_system_prompt,
            reasoning=why,
            changed_at=format_time(self.clock.now()),
        )
        history = (*prompts.history, change)[-PROMPT_HISTORY_KEPT:]
        self.unit.put_doc(
            prompts.model_copy(update={"assistant_system_prompt": text, "history": history})
        )
        return PromptUpdate(prompts.assistant_system_prompt, text)

    def set_user_prompt(self, text: str) -> None:
        """Set the user's (operator's) prompt; for hosts and admins, never a tool."""
        value = text.strip()
        if len(value) > self.settings.max_system_prompt_chars:
            bounded_text(value, "user_system_prompt", self.settings.max_system_prompt_chars)
        self.unit.put_doc(self.read().model_copy(update={"user_system_prompt": value}))


def assemble_system_prompt(base: str, prompts: SystemPrompts) -> str:
    """The system prompt text: base instructions, the assistant's own, then the user's.

    The user's prompt goes last, under a heading that gives it precedence.
    """
    parts = [base.strip()] if base.strip() else []
    if prompts.assistant_system_prompt:
        parts.append(f"{ASSISTANT_HEADING}\n{prompts.assistant_system_prompt}")
    if prompts.user_system_prompt:
        parts.append(f"{USER_HEADING}\n{prompts.user_system_prompt}")
    return "\n\n".join(parts)
