"""Request bodies of the API (strict: unknown fields are refused) and shared dependencies."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator

from mindspace.hosts.http.auth import ASSISTANT_KEY_PATTERN
from mindspace.hosts.http.hub import AssistantHub
from mindspace.validation import find_invalid_text

__all__ = [
    "CreateAssistant",
    "Decision",
    "EventIn",
    "HubDep",
    "SleepIn",
    "StrictBody",
    "WakeIn",
]


def _hub(request: Request) -> AssistantHub:
    hub: AssistantHub = request.app.state.hub
    return hub


HubDep = Annotated[AssistantHub, Depends(_hub)]


class StrictBody(BaseModel):
    """The base of every request body: unknown fields are refused, text is checked."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _valid_text(cls, value: Any) -> Any:
        # the same text rule as tool arguments and events (mindspace.validation)
        found = find_invalid_text(value)
        if found is not None:
            where, problem = found
            raise ValueError(problem if where == "(value)" else f"{where} {problem}")
        return value


class CreateAssistant(StrictBody):
    """A new assistant."""

    key: str = Field(
        min_length=1,
        max_length=64,
        pattern=ASSISTANT_KEY_PATTERN,
        description="Letters, digits, '_', '.' or '-', starting with a letter or digit.",
        examples=["barkeep"],
    )


class EventIn(StrictBody):
    """Something that happened in the host, for the assistant's next tick."""

    content: str = Field(
        min_length=1, max_length=16_000, description="The text of the event.", examples=["Hi!"]
    )
    type: str = Field(
        default="message",
        pattern=r"^[a-z][a-z0-9_]{0,31}$",
        description="message, say, whisper, arrival...; whispers and direct messages are "
        "answered privately and wake a light sleeper.",
    )
    source_entity: str | None = Field(
        default=None, min_length=1, max_length=128, description="Who it came from."
    )
    location: str | None = Field(
        default=None, min_length=1, max_length=128, description="Where it happened."
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="urgent (bool), priority (0-10), classification ('ambient', "
        "'direct_message'...), topic, present (list of entity ids), event_class, ref (your "
        "id of the message; the memories formed from it keep it).",
    )


class SleepIn(StrictBody):
    """Put the assistant to sleep."""

    reason: str = Field(default="put to sleep over HTTP", min_length=1, max_length=500)
    deep: bool = Field(
        default=False,
        description="Deep sleep: urgent events do not wake it, only its wake time or a wake call.",
    )
    hours: float | None = Field(
        default=None,
        gt=0,
        le=168,
        description="Wake after this many hours; default: the sleep schedule's wake hour, "
        "else MINDSPACE_SLEEP_DEFAULT_HOURS.",
    )


class WakeIn(StrictBody):
    """Wake the assistant."""

    reason: str = Field(default="woken over HTTP", min_length=1, max_length=500)


class Decision(StrictBody):
    """Who approves or rejects a pending tool call, and why."""

    decided_by: str = Field(default="http", min_length=1, max_length=128)
    reason: str = Field(default="", max_length=500)
