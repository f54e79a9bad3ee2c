"""The server's assistants: opened once per process, ticked one at a time, watched live.

Every request and the background ticker reach assistants through the hub, on the server's
event loop. Writes that the engine does not serialise itself (sleep, wake, reject) run
under the assistant's lock here, so they never interleave with a tick's unit of work.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mindspace.clock import Clock, SystemClock, format_time
from mindspace.config import Settings
from mindspace.embeddings.port import Embedder
from mindspace.engine.assistant import Assistant
from mindspace.engine.modes import OperatingMode
from mindspace.engine.notices import Notice
from mindspace.engine.tick import TickResult
from mindspace.errors import AssistantNotFoundError, ConflictError
from mindspace.hosts.http.ticks import TickLog
from mindspace.llm.port import LLM
from mindspace.state.port import Store

__all__ = ["AssistantHub", "StreamItem"]

logger = logging.getLogger("mindspace.http")

StreamItem = dict[str, Any]
"""One item of the live stream: ``{"kind", "assistant", "at", "data"}``."""
Listener = Callable[[StreamItem], None]


@dataclass
class _Slot:
    assistant: Assistant
    ticking: asyncio.Lock = field(default_factory=asyncio.Lock)
    listeners: list[Listener] = field(default_factory=list)
    unsubscribe: Callable[[], None] | None = None


class AssistantHub:
    """The assistants a server serves, sharing one model, embedder and clock.

    Args:
        store: Where the assistants live.
        settings: Runtime settings for every assistant.
        llm: The model every assistant uses.
        clock: The time source (the system clock by default).
        embedder: The embedder for semantic memory (None: lexical search only).
        tick_history: Recent ticks kept per assistant for the dashboard.
        owns_store: Close the store when the hub closes.
    """

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        llm: LLM,
        clock: Clock | None = None,
        embedder: Embedder | None = None,
        tick_history: int = 20,
        owns_store: bool = False,
    ) -> None:
        self.store = store
        self.settings = settings
        self.llm = llm
        self.clock: Clock = clock or SystemClock()
        self.embedder = embedder
        self.ticks = TickLog(tick_history)
        self.owns_store = owns_store
        self._slots: dict[str, _Slot] = {}
        self._nudges: list[Callable[[str], None]] = []

    # -- assistants --------------------------------------------------------------------
    def assistant_keys(self) -> list[str]:
        """Keys of every assistant in the store, sorted."""
        return [info.key for info in self.store.list_assistants()]

    def open_keys(self) -> list[str]:
        """Keys of the assistants opened by this hub."""
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
            ConflictError: it exists already.
            ConfigError: a malformed key.
        """
        if key in self._slots or key in self.assistant_keys():
            raise ConflictError(
                f"Assistant {key!r} already exists",
                f"Use it with GET /v1/assistants/{key}, or choose another key.",
            )
        return self._open(key, create=True).assistant

    def open_all(self) -> None:
        """Open every assistant in the store (so the background ticker serves them)."""
        for key in self.assistant_keys():
            if key not in self._slots:
                try:
                    self._open(key, create=False)
                except Exception:
                    logger.exception("Could not open assistant %r; it is not served", key)

    def _open(self, key: str, *, create: bool) -> _Slot:
        assistant = Assistant.open(
            self.store,
            key,
            create=create,
            llm=self.llm,
            clock=self.clock,
            settings=self.settings,
            embedder=self.embedder,
        )
        slot = _Slot(assistant)
        slot.unsubscribe = assistant.subscribe(lambda notice: self._relay(key, notice))
        self._slots[key] = slot
        return slot

    def close(self) -> None:
        """Stop relaying notices; close the store if the hub owns it."""
        for slot in self._slots.values():
            if slot.unsubscribe is not None:
                slot.unsubscribe()
        self._slots.clear()
        close = getattr(self.store, "close", None)
        if self.owns_store and callable(close):
            close()

    # -- ticks -------------------------------------------------------------------------
    def is_ticking(self, key: str) -> bool:
        """Whether a tick of ``key`` is running now."""
        slot = self._slots.get(key)
        return slot is not None and slot.ticking.locked()

    async def tick(self, key: str) -> tuple[TickResult, dict[str, Any] | None]:
        """Run one tick of ``key`` (waiting for a running one to finish first).

        Returns the result and its record in the tick log (None for idle ticks).
        """
        self.get(key)
        slot = self._slots[key]
        async with slot.ticking:
            result = await slot.assistant.tick()
        return result, self.record(key, result)

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

    def on_nudge(self, callback: Callable[[str], None]) -> None:
        """Call ``callback(key)`` when ``key`` should tick soon (an event arrived)."""
        self._nudges.append(callback)

    def nudge(self, key: str) -> None:
        """Ask the background ticker to tick ``key`` soon."""
        for callback in self._nudges:
            callback(key)

    # -- writes the engine does not serialise ------------------------------------------
    async def sleep(self, key: str, reason: str, *, deep: bool) -> OperatingMode:
        """Put ``key`` to sleep, never in the middle of a tick's unit of work."""
        assistant = self.get(key)
        async with assistant.lock:
            return assistant.sleep(reason, deep=deep)

    async def wake(self, key: str, reason: str) -> OperatingMode:
        """Wake ``key``, never in the middle of a tick's unit of work."""
        assistant = self.get(key)
        async with assistant.lock:
            return assistant.wake(reason)

    async def reject(self, key: str, approval_id: str, decided_by: str, reason: str) -> None:
        """Reject a pending approval of ``key``."""
        assistant = self.get(key)
        async with assistant.lock:
            assistant.reject(approval_id, decided_by, reason)

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
        f"No assistant {key!r}; create it with POST /v1/assistants or check the key."
    )
