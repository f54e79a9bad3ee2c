"""The Assistant facade: open an assistant by key on a store and call its tools.

Example:
    >>> store = SqlStore.from_path("mindspace.db")
    >>> assistant = Assistant.open(store, "barkeep")
    >>> await assistant.call_tool("add_goal", {"description": "Restock the cellar"})
    {'success': True, 'goal_id': 'goal_0_0', ...}
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal

from mindspace.clock import Clock, SystemClock, format_time
from mindspace.config import Settings
from mindspace.embeddings.port import Embedder
from mindspace.engine.memory_context import install_memory_providers
from mindspace.engine.mode_tools import GoToSleep
from mindspace.engine.modes import (
    OperatingMode,
    SleepSchedule,
    perform_wake_transition,
    transition_mode,
)
from mindspace.engine.notices import Notice, NoticeKind, Notifier
from mindspace.engine.prompting import PromptBuilder
from mindspace.engine.records import Approval, Event
from mindspace.engine.tick import Ticker, TickResult
from mindspace.engine.world import World, world_tools
from mindspace.errors import NotFoundError, ToolExecutionError
from mindspace.llm.offline import OfflineLLM
from mindspace.llm.port import LLM
from mindspace.memory.index import MemoryIndex
from mindspace.state.port import AssistantInfo, Store
from mindspace.state.unit import StateCache, Unit
from mindspace.tools import ToolRegistry, default_registry
from mindspace.tools.base import ToolContext
from mindspace.tools.runner import ToolOutcome, ToolResultCache, ToolRunner
from mindspace.workspace.goals import GoalBook
from mindspace.workspace.persona import PersonaGuard
from mindspace.workspace.projects import ProjectDesk
from mindspace.workspace.prompts import PromptDesk
from mindspace.workspace.records import ContextUsage, SessionMemory, SessionMetrics
from mindspace.workspace.status import LoopSnapshot, build_status

__all__ = ["Assistant", "assistant_tools"]

logger = logging.getLogger("mindspace.engine")


def assistant_tools() -> ToolRegistry:
    """The tools every assistant starts with: the built-in ones and ``go_to_sleep``."""
    registry = default_registry()
    registry.register(GoToSleep())
    return registry


class Assistant:
    """One assistant's workspace on a store, with its tools.

    Use :meth:`open` rather than the constructor.

    Args:
        store: Where the assistant's state lives.
        info: The assistant's identity in the store.
        llm: The model used by tools that need one (the offline model by default).
        clock: The time source (the system clock by default).
        settings: Runtime settings.
        tools: The tools it can call (every built-in tool by default).
        self_names: Names the assistant goes by, for the persona guard.
    """

    def __init__(
        self,
        store: Store,
        info: AssistantInfo,
        *,
        llm: LLM | None = None,
        clock: Clock | None = None,
        settings: Settings | None = None,
        tools: ToolRegistry | None = None,
        self_names: tuple[str, ...] = (),
        embedder: Embedder | None = None,
    ) -> None:
        self.store = store
        self.info = info
        self.settings = settings or Settings()
        self.clock: Clock = clock or SystemClock()
        self.llm: LLM = llm or OfflineLLM()
        self.tools = tools or assistant_tools()
        if "go_to_sleep" not in self.tools:
            self.tools.register(GoToSleep())
        self.guard = PersonaGuard(self_names)
        self.state = StateCache(store, info.id, info.revision)
        self.embedder = embedder
        self.memory_index = MemoryIndex(self.state, embedder.name if embedder else None)
        self.runner = ToolRunner(
            self.tools, ToolResultCache(self.clock, self.settings.tool_cache_ttl)
        )
        self.prompt_builder = PromptBuilder(self.settings)
        install_memory_providers(self.prompt_builder, self)
        self.world: World | None = None
        self.lock = asyncio.Lock()
        self.notifier = Notifier()
        self.ticker = Ticker(self)

    @classmethod
    def open(
        cls,
        store: Store,
        key: str,
        *,
        create: bool = True,
        llm: LLM | None = None,
        clock: Clock | None = None,
        settings: Settings | None = None,
        tools: ToolRegistry | None = None,
        self_names: tuple[str, ...] = (),
        embedder: Embedder | None = None,
    ) -> Assistant:
        """Open the assistant ``key``, creating it when absent (unless ``create`` is False).

        Raises:
            AssistantNotFoundError: absent and ``create`` is False.
        """
        info = store.open_assistant(key, create=create)
        assistant = cls(
            store,
            info,
            llm=llm,
            clock=clock,
            settings=settings,
            tools=tools,
            self_names=self_names,
            embedder=embedder,
        )
        with assistant.transaction() as unit:
            metrics = unit.doc(SessionMetrics)
            if metrics.session_start is None:
                unit.put_doc(metrics.model_copy(update={"session_start": assistant._now()}))
        return assistant

    @property
    def key(self) -> str:
        """The assistant's key."""
        return self.info.key

    # -- tools ---------------------------------------------------------------------------
    async def call_tool(
        self, name: str, args: Mapping[str, Any] | str | None = None
    ) -> dict[str, Any]:
        """Run a tool by name in its own transaction and return its result dict.

        Errors the model could fix (unknown tool, invalid arguments, a missing goal...)
        come back as results in the spec's error shape; nothing is stored from them.

        Raises:
            ToolExecutionError: the tool crashed (a bug); nothing was stored.
            ConcurrencyError: another process changed this assistant during the call.
        """
        outcome = await self.run_tool(name, args)
        return outcome.result

    async def run_tool(
        self,
        name: str,
        args: Mapping[str, Any] | str | None = None,
        *,
        unit: Unit | None = None,
        loop: LoopSnapshot | None = None,
    ) -> ToolOutcome:
        """Run a tool and return the full outcome.

        With ``unit`` the call joins that unit of work (the engine's tick) and the caller
        commits; without it the call is its own transaction.
        """
        if unit is not None:
            return await self._run(unit, name, args, loop or LoopSnapshot())
        async with self.lock:
            self.state.refresh_if_stale()
            own = self.state.begin()
            try:
                return await self._run(own, name, args, loop or LoopSnapshot())
            finally:
                self.state.commit(own)

    async def _run(
        self, unit: Unit, name: str, args: Mapping[str, Any] | str | None, loop: LoopSnapshot
    ) -> ToolOutcome:
        try:
            outcome = await self.runner.run(unit, name, args, lambda u: self._context(u, loop))
        except Exception:
            self._count(unit, ok=False)
            raise
        self._count(unit, ok=outcome.ok)
        return outcome

    def _context(self, unit: Unit, loop: LoopSnapshot) -> ToolContext:
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
        )

    def _count(self, unit: Unit, *, ok: bool) -> None:
        metrics = unit.doc(SessionMetrics)
        unit.put_doc(
            metrics.model_copy(
                update={
                    "total_tool_calls": metrics.total_tool_calls + 1,
                    "successful_calls": metrics.successful_calls + (1 if ok else 0),
                    "failed_calls": metrics.failed_calls + (0 if ok else 1),
                }
            )
        )

    async def loop_tool_runner(
        self, name: str, arguments: str, unit: Unit, loop: LoopSnapshot
    ) -> tuple[bool, dict[str, Any]]:
        """Run a tool for the ReAct loop inside the tick's unit; a crash becomes an error."""
        try:
            outcome = await self.run_tool(name, arguments, unit=unit, loop=loop)
        except ToolExecutionError as exc:
            logger.exception("Tool %r crashed during a tick", name)
            return False, {
                "success": False,
                "error": f"Tool {name!r} failed with an internal error: {exc.__cause__!r}",
                "suggestion": "Try a different approach; the error was logged for the developer.",
            }
        self.notify("tool_called", tool=name, ok=outcome.ok, iteration=loop.iteration)
        return outcome.ok, outcome.result

    # -- notices -------------------------------------------------------------------------
    def subscribe(self, listener: Callable[[Notice], None]) -> Callable[[], None]:
        """Call ``listener`` with every :class:`Notice`; returns an unsubscribe function."""
        return self.notifier.subscribe(listener)

    def notify(self, kind: NoticeKind, **data: Any) -> None:
        """Emit a notice (the engine calls this; hosts may too)."""
        self.notifier.emit(Notice(kind, self.key, self._now(), data))

    # -- world, events and ticks ---------------------------------------------------------
    def attach_world(self, world: World) -> None:
        """Connect the host's world: replies go through it and its tools are offered."""
        self.world = world
        for tool in world_tools(world):
            if tool.name not in self.tools:
                self.tools.register(tool)

    def enqueue_event(
        self,
        content: str,
        *,
        type: str = "message",
        source_entity: str | None = None,
        location: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Event:
        """Add an event to the persistent queue; the next tick takes it.

        Raises:
            InvalidArgumentsError: the event is malformed (the message says why).
        """
        event = self.ticker.queue.enqueue(
            content, type=type, source_entity=source_entity, location=location, metadata=metadata
        )
        self.notify("event_queued", event_id=event.id, type=event.type, source=source_entity)
        return event

    def open_events(self) -> list[Event]:
        """Events not yet processed, most urgent first."""
        return self.ticker.queue.open()

    def event(self, event_id: str) -> Event | None:
        """An event by id, with its status and reply."""
        return self.ticker.queue.get(event_id)

    def retry_event(self, event_id: str) -> Event:
        """Put a failed event back in the queue.

        Raises:
            NotFoundError: no such event.
        """
        queue = self.ticker.queue
        event = queue.get(event_id)
        if event is None:
            raise NotFoundError(f"Event {event_id!r} does not exist", "Check the event id.")
        return queue.mark(event, status="pending", attempts=0, error=None)

    async def tick(self) -> TickResult:
        """Run one awake tick (see :class:`~mindspace.engine.tick.Ticker`)."""
        return await self.ticker.tick()

    async def run_context(self, context_type: str, *, task: str, entity: str = "") -> TickResult:
        """Run one LLM session in another context type (reflection, pre_compaction...).

        Raises:
            KeyError: an unknown context type.
            LLMError: never; a failing model gives a result with status ``failed``.
        """
        return await self.ticker.run_context(context_type, task=task, entity=entity)

    # -- operating modes -----------------------------------------------------------------
    def mode(self) -> OperatingMode:
        """The operating mode and, while asleep, the sleep phase."""
        return self.read().doc(OperatingMode)

    def tick_rate(self) -> float:
        """Seconds until the next tick should run, by the current mode."""
        unit = self.read()
        if unit.doc(OperatingMode).mode == "sleep":
            scheduled = unit.doc(SleepSchedule).tick_rate_sleep
            return scheduled if scheduled is not None else self.settings.tick_rate_sleep
        return self.settings.tick_rate_awake

    def sleep(self, reason: str = "put to sleep", *, deep: bool = False) -> OperatingMode:
        """Put the assistant to sleep now (a host, an admin or the CLI)."""
        with self.transaction() as unit:
            if unit.doc(OperatingMode).mode == "sleep":
                return unit.doc(OperatingMode)
            state = transition_mode(
                unit, self.clock, "sleep", reason, depth="deep" if deep else "light"
            )
        self.notify("mode_changed", mode="sleep", reason=reason)
        return state

    def wake(self, reason: str = "woken") -> OperatingMode:
        """Wake the assistant now, even mid-phase (what is done so far is kept)."""
        with self.transaction() as unit:
            if unit.doc(OperatingMode).mode == "awake":
                return unit.doc(OperatingMode)
            state = perform_wake_transition(
                unit, self.clock, reason, cooldown_minutes=self.settings.wake_cooldown_minutes
            )
        self.notify("mode_changed", mode="awake", reason=reason)
        return state

    def set_sleep_schedule(self, schedule: SleepSchedule) -> None:
        """Replace the sleep schedule."""
        with self.transaction() as unit:
            unit.put_doc(schedule)

    # -- approvals -----------------------------------------------------------------------
    def pending_approvals(self) -> list[Approval]:
        """DANGEROUS tool calls waiting for a decision."""
        return [a for a in self.read().all(Approval) if a.status == "pending"]

    async def approve(self, approval_id: str, decided_by: str) -> dict[str, Any]:
        """Approve a pending call: it runs now, and its result is returned and stored.

        Raises:
            NotFoundError: no pending approval with that id.
        """
        async with self.lock:
            self.state.refresh_if_stale()
            unit = self.state.begin()
            approval = self._pending(unit, approval_id)
            outcome = await self._run(unit, approval.tool, approval.arguments, LoopSnapshot())
            unit.put(
                approval.model_copy(
                    update={
                        "status": "approved" if outcome.ok else "failed",
                        "decided_by": decided_by,
                        "decided_at": self._now(),
                        "result": outcome.result,
                    }
                )
            )
            self.state.commit(unit)
            return outcome.result

    def reject(self, approval_id: str, decided_by: str, reason: str = "") -> None:
        """Reject a pending call; it never runs.

        Raises:
            NotFoundError: no pending approval with that id.
        """
        with self.transaction() as unit:
            approval = self._pending(unit, approval_id)
            unit.put(
                approval.model_copy(
                    update={
                        "status": "rejected",
                        "decided_by": decided_by,
                        "decided_at": self._now(),
                        "result": {"success": False, "error": reason or "Rejected"},
                    }
                )
            )

    def _pending(self, unit: Unit, approval_id: str) -> Approval:
        approval = unit.get(Approval, approval_id)
        if approval is None or approval.status != "pending":
            raise NotFoundError(
                f"No pending approval {approval_id!r}",
                "List them with Assistant.pending_approvals().",
                pending=[a.id for a in unit.all(Approval) if a.status == "pending"],
            )
        return approval

    # -- state for hosts -----------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Unit]:
        """A unit of work committed on success and discarded on an exception."""
        self.state.refresh_if_stale()
        unit = self.state.begin()
        yield unit
        self.state.commit(unit)

    def read(self) -> Unit:
        """A unit for reading the current state; never commit it."""
        self.state.refresh_if_stale()
        return self.state.begin()

    def goals(self) -> GoalBook:
        """The goal tree, for reading."""
        return GoalBook(self.read(), self.clock, self.settings)

    def projects(self) -> ProjectDesk:
        """The projects, for reading."""
        return ProjectDesk(self.read(), self.clock, self.settings)

    def session_memory(self) -> SessionMemory:
        """The session memory."""
        return self.read().doc(SessionMemory)

    def status(self, loop: LoopSnapshot | None = None) -> dict[str, Any]:
        """What ``get_system_status`` reports, without counting as a tool call."""
        return build_status(self.read(), self.clock, self.settings, loop or LoopSnapshot())

    def set_user_system_prompt(self, text: str) -> None:
        """Set the user's system prompt; only hosts and operators can (no tool can)."""
        with self.transaction() as unit:
            PromptDesk(unit, self.clock, self.settings).set_user_prompt(text)

    def record_context_usage(
        self, tokens: int, source: Literal["estimate", "provider"] = "provider"
    ) -> None:
        """Record how many tokens the context window holds (from the provider or an estimate)."""
        if tokens < 0:
            raise ValueError(f"Token count must be >= 0, got {tokens!r}")
        with self.transaction() as unit:
            unit.put_doc(
                ContextUsage(estimated_used=tokens, source=source, recorded_at=self._now())
            )

    def start_session(self) -> None:
        """Begin a new session: metrics restart from zero at the current time."""
        with self.transaction() as unit:
            unit.put_doc(SessionMetrics(session_start=self._now()))

    def _now(self) -> str:
        return format_time(self.clock.now())
