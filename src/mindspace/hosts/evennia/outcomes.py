"""What the reactor thread keeps of finished ticks, and what players and builders see of them.

A tick ends on the asyncio thread; :class:`TickReport` is the part the reactor thread
keeps. From it the runtime keeps, for the admin command:

* the prompt the model saw last (:class:`SeenPrompt`, the ``prompt`` view);
* the assistant's last private thought (:class:`Noted`): the prose of an autonomous
  tick, which nobody hears (only tools speak outside an answer);
* the last failure (:class:`Noted`), with its time and the technical message, for
  ``status`` and the server log. Players only ever get the in-character line
  (``failure_message``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from mindspace.engine import TickResult
from mindspace.hosts.evennia.config import AssistantConfig

__all__ = ["Noted", "SeenPrompt", "TickReport", "explain_error", "utc_stamp"]

_SETTING = re.compile(r"\bMINDSPACE_([A-Z][A-Z0-9_]*)\b")


def utc_stamp() -> str:
    """The wall-clock time now, as builders read it: ``2026-11-24 04:12:09 UTC``."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass(frozen=True)
class TickReport:
    """What a tick did, as the reactor thread keeps it (``runtime.last_report``)."""

    kind: str
    status: str
    rate: float
    mode: str
    event_id: str | None = None
    reply: str | None = None
    error: str | None = None
    source: str | None = None
    private: bool = False
    prompt: str | None = None

    @classmethod
    def of(
        cls, result: TickResult, source: str | None = None, *, private: bool = False
    ) -> TickReport:
        """The report of ``result``; ``source`` (and ``private``) describe its event."""
        return cls(
            kind=result.kind,
            status=result.status,
            rate=result.rate,
            mode=result.mode,
            event_id=result.event_id,
            reply=result.reply,
            error=result.error,
            source=source,
            private=private,
            prompt=result.prompt.render() if result.prompt is not None else None,
        )


@dataclass(frozen=True)
class Noted:
    """Something the runtime noted: when (reactor seconds and UTC) and what."""

    at: float
    stamp: str
    text: str


@dataclass(frozen=True)
class SeenPrompt:
    """The prompt of the last tick that called the model, as the model received it."""

    at: float
    stamp: str
    kind: str
    text: str


def explain_error(message: str, config: AssistantConfig) -> str:
    """``message`` for builders: settings named where they were actually set.

    The model adapters name the Django/environment setting (``check
    MINDSPACE_LLM_BASE_URL``); when the value came from the character's Attribute or
    its class, that is where to look, so the message says so. No ``..`` either.
    """

    def where(match: re.Match[str]) -> str:
        source = config.sources.get(match.group(1).lower(), "")
        if source.startswith(("Attribute", "class attribute")):
            return f"{match.group(0)} (here: {source})"
        return match.group(0)

    text = _SETTING.sub(where, message.strip())
    return text.rstrip(".") or "unknown error"


def ago(seconds_then: float, now: float) -> str:
    """``12s ago``, for the status view."""
    return f"{max(0.0, now - seconds_then):.0f}s ago"


def first_line(text: Any, limit: int = 300) -> str:
    """``text`` on one line, cut at ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
