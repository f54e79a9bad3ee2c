"""The server's assistants: opened once per process, ticked on demand or by the driver.

Every request and the engine's :class:`~mindspace.engine.scheduler.AsyncTickDriver` reach
assistants through the hub, on the server's event loop. The hub is a thin transport: the
engine serialises its own writes and ticks, so the hub orders nothing itself; it keeps
the tick log and relays the assistants' notices to the live stream. It is the driver's
:class:`~mindspace.engine.scheduler.TickSource`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mindspace.clock import Clock, SystemClock, format_time
from mindspace.config import Settings
from mindspace.engine import Assistant, Notice, TickResult
from mindspace.errors import AlreadyExistsError, AssistantNotFoundError
from mindspace.hosts.http.ticks import TickLog
from mindspace.llm.port import LLM
from mindspace.runtime import Runtime

__all__ = ["AssistantHub", "StreamItem", "assistant_missing"]

logger = logging.getLogger("mindspace.http")

StreamItem = dict[str, Any]
"""One item of the live stream: ``{"kind", "assistant", "at", "data"}``."""
Listener = Callable[[StreamItem], None]


@dataclass
class _Slot:
    assistant: Assistant
    ticks_running: int = 0
    listeners: list[Listener] = field(default_factory=list)
    unsubscribes: list[Callable[[], None]] = field(default_factory=list)


class AssistantHub:
    """The assistants a server serves, all from one composition root.

    Args:
        runtime: The composition root: the store, and the model, embedder, clock, tools
            and tracer every assistant shares. A host adds its own tools there (they are
            callable at ``POST .../tools/{name}`` too). The hub closes it.
        tick_history: Recent ticks kept per assistant for the dashboard.
    """

    def __init__(self, runtime: Runtime, *, tick_history: int = 20) -> None:
        self.runtime = runtime
        self.clock: Clock = runtime.clock or SystemClock()
        self.ticks = TickLog(tick_history)
        self._slots: dict[str, _Slot] = {}

    @property
    def settings(self) -> Settings:
        """Runtime settings of every assistant."""
        return self.runtime.settings

    @property
    def llm(self) -> LLM:
        """The model every assistant uses."""
        return self.runtime.llm

    # -- assistants --------------------------------------------------------------------
    def assistant_keys(self) -> list[str]:
        """Keys of every assistant in the store, sorted."""
        return self.runtime.keys()

    def open_keys(self) -> list[str]:
        """Keys of the assistants this hub serves (the driver schedules these).

        Assistants created in the store by another process since the last call are
        opened first, so a running server serves them too.
        """
        self.open_all()
        return list(self._slots)

    def get(self, key: str) -> Assistant:
        """The assistant ``key``, opened on first use.

        Raises:
            AssistantNotFoundError: no such assistant in the store.
            ConfigError: a malformed key.
        """
        slot = self._slots.get(key)
        if slot is None:
            try:
                slot = self._open(key, create=False)
            except AssistantNotFoundError:
                raise assistant_missing(key) from None
        return slot.assistant

    def create(self, key: str) -> Assistant:
        """Create the assistant ``key``.

        Raises:
            AlreadyExistsError: it exists already.
            ConfigError: a malformed key.
        """
        if key in self._slots or key in self.assistant_keys():
            raise AlreadyExistsError(
                f"Assistant {key!r} already exists; use it with GET /v1/assistants/{key}, "
                "or create one under another key."
            )
        return self._open(key, create=True).assistant

    def open_all(self) -> None:
        """Open every assistant in the store (so the background ticks serve them)."""
        for key in self.assistant_keys():
            if key not in self._slots:
                try:
                    self._open(key, create=False)
                except Exception:
                    logger.exception("Could not open assistant %r; it is not served", key)

    def _open(self, key: str, *, create: bool) -> _Slot:
        assistant = self.runtime.open(key, create=create)
        slot = _Slot(assistant)
        slot.unsubscribes.append(assistant.subscribe(lambda notice: self._relay(key, notice)))
        self._slots[key] = slot
        return slot

    def close(self) -> None:
        """Stop relaying notices; close the runtime (and its store, if it owns it)."""
        for slot in self._slots.values():
            for unsubscribe in slot.unsubscribes:
                unsubscribe()
        self._slots.clear()
        self.runtime.close()

    # -- ticks (the driver's TickSource) -------------------------------------------------
    def is_ticking(self, key: str) -> bool:
        """Whether a tick of ``key`` started by this hub is running now."""
        slot = self._slots.get(key)
        return slot is not None and slot.ticks_running > 0

    async def tick(self, key: str) -> TickResult:
        """Run one tick of ``key`` and keep it in the tick log (the driver calls this)."""
        result, _ = await self.run_tick(key)
        return result

    async def run_tick(self, key: str) -> tuple[TickResult, dict[str, Any] | None]:
        """Run one tick of ``key`` (the engine waits for a running one to finish first).

        Returns the result and its record in the tick log (None for idle ticks).
        """
        self.get(key)
        slot = self._slots[key]
        slot.ticks_running += 1
        try:
            result = await slot.assistant.tick()
        finally:
            slot.ticks_running -= 1
        return result, self.record(key, result)

    def watch(self, key: str, listener: Callable[[Notice], None]) -> None:
        """Call ``listener`` with every notice of ``key`` until the hub closes."""
        self.get(key)
        slot = self._slots[key]
        slot.unsubscribes.append(slot.assistant.subscribe(listener))

    def record(self, key: str, result: TickResult) -> dict[str, Any] | None:
        """Keep ``result`` in the tick log and tell the stream; returns its record."""
        record = self.ticks.add(key, format_time(self.clock.now()), result)
        if record is not None:
            self.publish(
                key,
                "tick_recorded",
                {"number": record["number"], "kind": record["kind"], "status": record["status"]},
            )
        return record

    # -- the live stream ---------------------------------------------------------------
    def subscribe(self, key: str, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every stream item of ``key``; returns an unsubscribe."""
        self.get(key)
        listeners = self._slots[key].listeners
        listeners.append(listener)

        def unsubscribe() -> None:
            if listener in listeners:
                listeners.remove(listener)

        return unsubscribe

    def publish(self, key: str, kind: str, data: dict[str, Any], at: str | None = None) -> None:
        """Send an item to the stream of ``key`` (the server's own kinds, beside notices)."""
        slot = self._slots.get(key)
        if slot is None:
            return
        item: StreamItem = {
            "kind": kind,
            "assistant": key,
            "at": at or format_time(self.clock.now()),
            "data": data,
        }
        for listener in list(slot.listeners):
            try:
                listener(item)
            except Exception:
                logger.exception("A stream listener of %r failed", key)

    def _relay(self, key: str, notice: Notice) -> None:
        self.publish(key, notice.kind, dict(notice.data), notice.at)


def assistant_missing(key: str) -> AssistantNotFoundError:
    """The error for an assistant that is not there."""
    return AssistantNotFoundError(
        f"No assistant {key!r}",
        "Create it with POST /v1/assistants, or list the assistants with GET /v1/assistants.",
    )
