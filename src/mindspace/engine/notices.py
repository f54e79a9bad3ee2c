"""Notices: what happens inside an assistant, for hosts that want to show it live.

A host subscribes a callback (``Assistant.subscribe``); the engine calls it on the
caller's thread at each step. A callback that raises is logged and ignored: a broken
listener never breaks a tick.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Notice", "NoticeKind", "Notifier"]

logger = logging.getLogger("mindspace.engine")

NoticeKind = Literal[
    "tick_started",
    "tick_finished",
    "tool_called",
    "reply",
    "mode_changed",
    "event_queued",
]


@dataclass(frozen=True)
class Notice:
    """One thing that happened, with details depending on its kind."""

    kind: NoticeKind
    assistant: str
    at: str
    data: dict[str, Any] = field(default_factory=dict)


Listener = Callable[[Notice], None]


class Notifier:
    """Fans notices out to subscribed listeners."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add ``listener``; returns a function that removes it again."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def emit(self, notice: Notice) -> None:
        """Tell every listener; failures are logged, never raised."""
        for listener in list(self._listeners):
            try:
                listener(notice)
            except Exception:
                logger.exception("A notice listener failed on %r", notice.kind)
