"""What the engine's steps share for one assistant: its state, ports and settings.

:class:`EngineCore` is built once per assistant by the
:class:`~mindspace.engine.assistant.Assistant` facade (which the composition root,
:class:`mindspace.runtime.Runtime`, opens) and handed to the parts that need it (the
tool executor, the sessions, the ticker, the sleep cycle, the read models), so none of
them knows the facade. It is the engine's own and private to the facade (``_core``):
hosts reach an assistant through the facade and its read models, never through a unit
of work.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mindspace.clock import Clock, format_time
from mindspace.config import Settings
from mindspace.embeddings.port import Embedder
from mindspace.engine.events import EventQueue
from mindspace.engine.notices import Notice, NoticeKind, Notifier
from mindspace.engine.prompting import PromptBuilder
from mindspace.engine.world import World
from mindspace.errors import ConcurrencyError
from mindspace.llm.port import LLM
from mindspace.state.port import AssistantInfo, Store
from mindspace.state.semantic import JournalIndex, SemanticIndex
from mindspace.state.unit import StateCache, Unit
from mindspace.tools.base import ToolContext
from mindspace.tools.registry import ToolRegistry
from mindspace.tools.side import SideSessions
from mindspace.tracing import NO_TRACER, Tracer
from mindspace.workspace.persona import PersonaGuard
from mindspace.workspace.status import LoopSnapshot

__all__ = ["EngineCore"]

logger = logging.getLogger("mindspace.engine")

T = TypeVar("T")


@dataclass
class EngineCore:
    """One assistant's state and ports, shared by the engine's parts.

    Every write to the assistant's state goes through :meth:`retrying` (or :meth:`write`,
    or runs inside a tick, which holds :attr:`lock` for its whole unit of work), so writes
    from hosts, ticks and tool calls never interleave.
    """

    info: AssistantInfo
    store: Store
    state: StateCache
    clock: Clock
    settings: Settings
    llm: LLM
    tools: ToolRegistry
    guard: PersonaGuard
    embedder: Embedder | None
    memory_index: SemanticIndex
    prompt_builder: PromptBuilder
    notifier: Notifier = field(default_factory=Notifier)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    world: World | None = None
    journal_index: JournalIndex | None = None
    """Ranks journal entries by their stored vectors (None: no embedder)."""
    tracer: Tracer = NO_TRACER
    """Spans around ticks, tool calls and sleep operations (none by default)."""

    @property
    def key(self) -> str:
        """The assistant's key."""
        return self.info.key

    @property
    def queue(self) -> EventQueue:
        """The assistant's event inbox."""
        return EventQueue(self.store, self.info.id, self.clock)

    def now(self) -> str:
        """The current time as stored."""
        return format_time(self.clock.now())

    def notify(self, kind: NoticeKind, **data: Any) -> None:
        """Tell subscribed hosts what happened."""
        self.notifier.emit(Notice(kind, self.key, self.now(), data))

    def read(self) -> Unit:
        """A unit for reading the current state; never commit it."""
        self.state.refresh_if_stale()
        return self.state.begin()

    @contextmanager
    def transaction(self, *, refresh: bool = True) -> Iterator[Unit]:
        """A unit committed on success, discarded on an exception (caller holds the lock).

        Args:
            refresh: Catch up with other processes' commits first (a round trip to the
                store). A tick that refreshed under the lock passes False: a commit from
                elsewhere since then fails the commit's revision check instead.
        """
        if refresh:
            self.state.refresh_if_stale()
        unit = self.state.begin()
        yield unit
        self.state.commit(unit)

    async def retrying(self, body: Callable[[Unit], Awaitable[T]]) -> T:
        """Run ``body`` in a serialised unit of work, redone when another process wins.

        A :class:`~mindspace.errors.ConcurrencyError` means nothing of the attempt was
        written, so the whole body is run again on a fresh state after a short, jittered
        pause (the lock is released meanwhile), at most ``conflict_retries`` times. The
        body must therefore keep everything it does in ``unit`` (or be safe to repeat).

        Raises:
            ConcurrencyError: every attempt lost the race.
        """
        retries = self.settings.conflict_retries
        for attempt in range(retries + 1):
            async with self.lock:
                try:
                    with self.transaction() as unit:
                        # Returning from inside the block commits the unit on the way out.
                        return await body(unit)
                except ConcurrencyError as exc:
                    if attempt >= retries:
                        raise
                    logger.debug("Write to %r lost a race (%s); retrying", self.key, exc)
            await asyncio.sleep(self._conflict_pause(attempt))
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _conflict_pause(self, attempt: int) -> float:
        # Exponential backoff with full jitter, so racing writers spread out instead of
        # colliding again in step.
        low = self.settings.conflict_backoff_min_ms
        high = max(low, min(self.settings.conflict_backoff_max_ms, low * 2 ** (attempt + 1)))
        return random.uniform(low, high) / 1000

    def tool_context(
        self,
        unit: Unit,
        loop: LoopSnapshot,
        *,
        approved_by: str | None = None,
        side: SideSessions | None = None,
    ) -> ToolContext:
        """What a tool may use while it runs in ``unit``."""
        return ToolContext(
            unit=unit,
            clock=self.clock,
            settings=self.settings,
            llm=self.llm,
            guard=self.guard,
            assistant_key=self.key,
            loop=loop,
            embedder=self.embedder,
            memory_index=self.memory_index,
            journal_index=self.journal_index,
            approved_by=approved_by,
            side=side,
        )
