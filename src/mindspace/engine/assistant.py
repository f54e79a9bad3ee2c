"""The Assistant facade: one assistant's engine, as hosts and integrators use it.

Every write serialises itself: a tool call, an approval, a change of mode or prompt
waits for a running tick and commits in one short transaction, so no host ever takes a
lock or opens a unit of work. Hosts read through :attr:`Assistant.views` (the read
models) and drive ticks through :meth:`Assistant.tick` on the schedule of
:class:`~mindspace.engine.scheduler.TickPolicy`.

Example:
    >>> store = open_store(Settings(), "mindspace.db")
    >>> assistant = Assistant.open(store, "barkeep", llm=FunctionLLM(answer))
    >>> await assistant.call_tool("add_goal", {"description": "Restock the cellar"})
    {'success': True, 'goal_id': 'goal_0_0', ...}
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal

from mindspace.clock import Clock, SystemClock
from mindspace.config import Settings
from mindspace.embeddings.cache import cached
from mindspace.embeddings.port import Embedder
from mindspace.engine.approvals import Approvals, request_approval
from mindspace.engine.core import EngineCore
from mindspace.engine.edits import Edits
from mindspace.engine.executor import ToolExecutor
from mindspace.engine.history import Actor
from mindspace.engine.memory_context import install_memory_providers
from mindspace.engine.mode_tools import GoToSleep
from mindspace.engine.modes import (
    OperatingMode,
    SleepSchedule,
    perform_wake_transition,
    transition_mode,
)
from mindspace.engine.night.cycle import SleepCycle
from mindspace.engine.notices import Notice
from mindspace.engine.operator_edits import OPERATOR_EDITS, parse_operator_edit, run_operator_edit
from mindspace.engine.prompting import PromptBuilder, Provider
from mindspace.engine.records import Approval, Event
from mindspace.engine.session import Sessions
from mindspace.engine.tick import Ticker, TickResult
from mindspace.engine.views import AssistantViews
from mindspace.engine.world import World, world_tools
from mindspace.errors import (
    InvalidInputError,
    RecordNotFoundError,
    ToolError,
    ToolExecutionError,
)
from mindspace.journal.vectors import EntryVectorIndex
from mindspace.llm.port import LLM
from mindspace.memory.index import MemoryIndex
from mindspace.state.port import AssistantInfo, Store
from mindspace.state.semantic import JournalIndex, SemanticIndex, SemanticStore
from mindspace.state.unit import StateCache, Unit
from mindspace.tools import ToolRegistry, default_registry
from mindspace.tools.delegation import DelegateSubtask
from mindspace.tools.runner import ToolOutcome
from mindspace.tracing import NO_TRACER, Tracer
from mindspace.workspace.persona import PersonaGuard
from mindspace.workspace.prompts import PromptDesk
from mindspace.workspace.records import ContextUsage, SessionMetrics

__all__ = ["Assistant", "assistant_tools"]

logger = logging.getLogger("mindspace.engine")


def _memory_index(store: Store, state: StateCache, embedder: Embedder | None) -> SemanticIndex:
    """The store's own memory search when it has one (PostgreSQL), else the embedded index."""
    name = embedder.name if embedder else None
    if isinstance(store, SemanticStore):
        return store.semantic_index(state, name)
    return MemoryIndex(state, name)


def _journal_index(
    store: Store, state: StateCache, embedder: Embedder | None
) -> JournalIndex | None:
    """The store's journal vector ranking when it has one (PostgreSQL), else the embedded one."""
    if embedder is None:
        return None
    if isinstance(store, SemanticStore):
        return store.journal_index(state, embedder.name)
    return EntryVectorIndex(state, embedder.name)


def assistant_tools() -> ToolRegistry:
    """The tools every assistant starts with: the built-in ones, ``go_to_sleep`` and
    ``delegate_subtask``."""
    registry = default_registry()
    registry.register(GoToSleep())
    # Offered only where the execution pattern allows sub-agents (docs/delegation.md).
    registry.register(DelegateSubtask())
    return registry


class Assistant:
    """One assistant's engine on a store: tools, events, ticks, modes and approvals.

    Use :meth:`open` rather than the constructor.

    Args:
        store: Where the assistant's state lives.
        info: The assistant's identity in the store.
        llm: The model (the composition root, :mod:`mindspace.runtime`, picks one).
        clock: The time source (the system clock by default).
        settings: Runtime settings.
        tools: The tools it can call (every built-in tool by default).
        self_names: Names the assistant goes by, for the persona guard.
        embedder: The embedder for semantic memory (None: lexical search only).
        tracer: Where spans of ticks, tool calls and sleep operations go (none by
            default; :mod:`mindspace.runtime` passes the OpenTelemetry one when enabled).
    """

    def __init__(
        self,
        store: Store,
        info: AssistantInfo,
        *,
        llm: LLM,
        clock: Clock | None = None,
        settings: Settings | None = None,
        tools: ToolRegistry | None = None,
        self_names: tuple[str, ...] = (),
        embedder: Embedder | None = None,
        tracer: Tracer = NO_TRACER,
    ) -> None:
        settings = settings or Settings()
        registry = tools or assistant_tools()
        if "go_to_sleep" not in registry:
            registry.register(GoToSleep())
        state = StateCache(store, info.id, info.revision)
        # Each text embedded once (goals, speakers, a message stored and looked up by
        # the same key), across the assistants that share this embedder.
        embedder = cached(embedder) if embedder is not None else None
        self.core = EngineCore(
            info=info,
            store=store,
            state=state,
            clock=clock or SystemClock(),
            settings=settings,
            llm=llm,
            tools=registry,
            guard=PersonaGuard(self_names),
            embedder=embedder,
            memory_index=_memory_index(store, state, embedder),
            journal_index=_journal_index(store, state, embedder),
            prompt_builder=PromptBuilder(settings),
            tracer=tracer,
        )
        """The engine's shared state and ports (for the engine and tests; hosts use
        :attr:`views` and the methods below)."""
        install_memory_providers(self.core.prompt_builder, self.core)
        self.executor = ToolExecutor(self.core)
        sessions = Sessions(self.core, self.executor)
        self.ticker = Ticker(self.core, sessions, SleepCycle(self.core, sessions))
        self.approvals = Approvals(self.core, self.executor)
        self.views = AssistantViews(self.core, self.executor)
        """Read models of this assistant: what hosts show."""
        self.edits = Edits(self.core)
        """Update, delete and forget, each recorded in the history (docs/manage.md)."""

    @classmethod
    def open(
        cls,
        store: Store,
        key: str,
        *,
        llm: LLM,
        create: bool = True,
        clock: Clock | None = None,
        settings: Settings | None = None,
        tools: ToolRegistry | None = None,
        self_names: tuple[str, ...] = (),
        embedder: Embedder | None = None,
        tracer: Tracer = NO_TRACER,
    ) -> Assistant:
        """Open the assistant ``key``, creating it when absent (unless ``create`` is False).

        Opening writes nothing; the session's start is recorded by its first write.

        Raises:
            AssistantNotFoundError: absent and ``create`` is False.
        """
        info = store.open_assistant(key, create=create)
        return cls(
            store,
            info,
            llm=llm,
            clock=clock,
            settings=settings,
            tools=tools,
            self_names=self_names,
            embedder=embedder,
            tracer=tracer,
        )

    # -- identity and ports --------------------------------------------------------------
    @property
    def key(self) -> str:
        """The assistant's key."""
        return self.core.key

    @property
    def info(self) -> AssistantInfo:
        """The assistant's identity in the store."""
        return self.core.info

    @property
    def settings(self) -> Settings:
        """Runtime settings."""
        return self.core.settings

    @property
    def clock(self) -> Clock:
        """The time source."""
        return self.core.clock

    @property
    def llm(self) -> LLM:
        """The model."""
        return self.core.llm

    @property
    def embedder(self) -> Embedder | None:
        """The embedder (None: lexical search only)."""
        return self.core.embedder

    @property
    def tools(self) -> ToolRegistry:
        """The tools the assistant can call."""
        return self.core.tools

    @property
    def world(self) -> World | None:
        """The host's world, once attached."""
        return self.core.world

    # -- tools ---------------------------------------------------------------------------
    async def call_tool(
        self, name: str, args: Mapping[str, Any] | str | None = None
    ) -> dict[str, Any]:
        """Run a tool by name in its own transaction and return its result dict.

        Errors the model could fix (unknown tool, invalid arguments, a missing goal...)
        come back as results in the spec's error shape; nothing is stored from them.

        Raises:
            ToolExecutionError: the tool crashed (a bug); nothing was stored.
            ConcurrencyError: other processes kept changing this assistant during the
                call, even after ``conflict_retries`` redone attempts.
        """
        return (await self.run_tool(name, args)).result

    async def run_tool(self, name: str, args: Mapping[str, Any] | str | None = None) -> ToolOutcome:
        """Like :meth:`call_tool`, with the outcome (category, cache hit, the error)."""

        async def body(unit: Unit) -> ToolOutcome | ToolExecutionError:
            try:
                return await self.executor.run(unit, name, args)
            except ToolExecutionError as exc:
                # The tool's own writes died with its savepoint; the failed call is still
                # counted, so the unit commits and the crash is raised afterwards.
                return exc

        # A call that lost a race to another process committed nothing, so it is redone.
        outcome = await self.core.retrying(body)
        if isinstance(outcome, ToolExecutionError):
            raise outcome
        return outcome

    # -- world, events and ticks ---------------------------------------------------------
    def attach_world(self, world: World) -> None:
        """Connect the host's world: replies go through it and its tools are offered."""
        self.core.world = world
        for tool in world_tools(world):
            if tool.name not in self.core.tools:
                self.core.tools.register(tool)

    def provide_prompt(self, key: str, provider: Provider) -> Provider | None:
        """Fill the prompt component ``key`` with ``provider`` from now on.

        For hosts whose surroundings change between ticks (a game character's
        description, room and company): the provider runs at every prompt assembly.

        Returns:
            The provider it replaces (None for a component that had none), so the host
            can build on it.

        Raises:
            ComponentError: no prompt component is called ``key``.
        """
        builder = self.core.prompt_builder
        previous = builder.providers.get(key)
        builder.provide(key, provider)
        return previous

    def subscribe(self, listener: Callable[[Notice], None]) -> Callable[[], None]:
        """Call ``listener`` with every :class:`Notice`; returns an unsubscribe function."""
        return self.core.notifier.subscribe(listener)

    def enqueue_event(
        self,
        content: str,
        *,
        type: str = "message",
        source_entity: str | None = None,
        location: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Event:
        """Add an event to the persistent inbox; the next tick takes it.

        The inbox is written apart from the assistant's state, so this never waits for a
        running tick. A scheduler hears of it (the ``event_queued`` notice) and ticks soon.

        Raises:
            InvalidInputError: the event is malformed (the message says why).
        """
        event = self.core.queue.enqueue(
            content, type=type, source_entity=source_entity, location=location, metadata=metadata
        )
        self.core.notify(
            "event_queued",
            event_id=event.id,
            type=event.type,
            source=source_entity,
            urgent=event.urgent,
        )
        return event

    async def retry_event(self, event_id: str) -> Event:
        """Put a failed event back in the queue.

        Raises:
            RecordNotFoundError: no such event.
        """
        queue = self.core.queue
        async with self.core.lock:
            event = queue.get(event_id)
            if event is None:
                raise RecordNotFoundError(
                    f"Event {event_id!r} does not exist", "Check the event id."
                )
            event = queue.mark(event, status="pending", attempts=0, error=None)
        self.core.notify("event_queued", event_id=event.id, type=event.type, urgent=event.urgent)
        return event

    async def tick(self) -> TickResult:
        """Run one tick (see :class:`~mindspace.engine.tick.Ticker`)."""
        return await self.ticker.tick()

    async def run_context(self, context_type: str, *, task: str, entity: str = "") -> TickResult:
        """Run one LLM session in another context type (reflection, pre_compaction...).

        Raises:
            KeyError: an unknown context type.
        """
        return await self.ticker.run_context(context_type, task=task, entity=entity)

    # -- operating modes -----------------------------------------------------------------
    async def sleep(
        self, reason: str = "put to sleep", *, deep: bool = False, hours: float | None = None
    ) -> OperatingMode:
        """Put the assistant to sleep now (a host, an admin or the CLI).

        It wakes by itself at ``wake_at`` on the returned state: ``hours`` from now when
        given, else at the sleep schedule's wake hour, else after
        ``MINDSPACE_SLEEP_DEFAULT_HOURS``. Deep sleep ignores urgent events, not that time.

        Raises:
            InvalidInputError: ``hours`` is not a positive number of at most 168 (a week).
        """
        if hours is not None and not 0 < hours <= 168:
            raise InvalidInputError(
                f"Sleep hours must be more than 0 and at most 168, got {hours!r}",
                "Pass e.g. hours=8, or leave it out for the schedule's wake hour.",
            )

        async def body(unit: Unit) -> tuple[OperatingMode, bool]:
            if unit.doc(OperatingMode).mode == "sleep":
                return unit.doc(OperatingMode), False
            depth: Literal["light", "deep"] = "deep" if deep else "light"
            state = transition_mode(
                unit,
                self.core.clock,
                "sleep",
                reason,
                depth=depth,
                default_hours=self.core.settings.sleep_default_hours,
                hours=hours,
            )
            return state, True

        state, changed = await self.core.retrying(body)
        if changed:
            self.core.notify("mode_changed", mode="sleep", reason=reason)
        return state

    async def wake(self, reason: str = "woken") -> OperatingMode:
        """Wake the assistant now, even mid-phase (what is done so far is kept)."""

        async def body(unit: Unit) -> tuple[OperatingMode, bool]:
            if unit.doc(OperatingMode).mode == "awake":
                return unit.doc(OperatingMode), False
            cooldown = self.core.settings.wake_cooldown_minutes
            state = perform_wake_transition(
                unit, self.core.clock, reason, cooldown_minutes=cooldown
            )
            return state, True

        state, changed = await self.core.retrying(body)
        if changed:
            self.core.notify("mode_changed", mode="awake", reason=reason)
        return state

    async def set_sleep_schedule(self, schedule: SleepSchedule) -> None:
        """Replace the sleep schedule (waking no longer turns a paused one back on)."""

        async def body(unit: Unit) -> None:
            unit.put_doc(schedule)
            state = unit.doc(OperatingMode)
            if state.schedule_suspended:  # the operator's schedule wins over the pause
                unit.put_doc(state.model_copy(update={"schedule_suspended": False}))

        await self.core.retrying(body)

    # -- approvals -----------------------------------------------------------------------
    async def request_approval(
        self, name: str, args: Mapping[str, Any] | str | None = None, *, requested_by: str
    ) -> dict[str, Any]:
        """Record a call of ``name`` as pending approval instead of running it.

        For hosts whose callers must not run DANGEROUS tools directly (the MCP server):
        the call is checked first (an unknown tool or invalid arguments come back as the
        spec's error result and nothing is stored), then waits like the ReAct loop's
        DANGEROUS calls until :meth:`approve` runs it or :meth:`reject` drops it.

        Returns:
            ``{"success": True, "status": "awaiting_approval", "approval_id", "message"}``,
            or the error result.
        """
        try:
            if name in OPERATOR_EDITS:  # a person's edit, not a tool (engine/operator_edits.py)
                arguments = parse_operator_edit(name, args)
            else:
                tool = self.tools.get(name)
                parsed = self.tools.parse_arguments(tool, args, self.settings)
                arguments = parsed.model_dump(mode="json")
        except ToolError as exc:
            return exc.to_result()
        except InvalidInputError as exc:
            return {"success": False, "error": exc.error, "suggestion": exc.suggestion}

        async def body(unit: Unit) -> dict[str, Any]:
            return request_approval(
                unit,
                self.core.clock,
                name,
                arguments,
                reason=f"is DANGEROUS; called by {requested_by}, it awaits approval by a host "
                "or an admin",
            )

        return await self.core.retrying(body)

    async def approve(self, approval_id: str, decided_by: str) -> Approval:
        """Approve a pending call: it runs now, its outcome is stored, the model is told.

        Returns the decided approval; ``result`` is the tool's result.

        Raises:
            RecordNotFoundError: no pending approval with that id.
            InvalidInputError: ``decided_by`` is blank or too long.
        """
        pending = self.core.read().get(Approval, approval_id)
        if pending is not None and pending.status == "pending" and pending.tool in OPERATOR_EDITS:
            return await self._approve_edit(pending, decided_by)
        # A redone approval runs the tool again: acceptable only because the lost attempt
        # committed nothing (a tool with effects outside the state would repeat them).
        decided = await self.core.retrying(
            lambda unit: self.approvals.approve(unit, approval_id, decided_by)
        )
        self.approvals.announce(decided)
        return decided

    async def reject(self, approval_id: str, decided_by: str, reason: str = "") -> Approval:
        """Reject a pending call; it never runs, and the model is told on its next tick.

        Raises:
            RecordNotFoundError: no pending approval with that id.
            InvalidInputError: ``decided_by`` is blank or too long.
        """

        async def body(unit: Unit) -> Approval:
            return self.approvals.reject(unit, approval_id, decided_by, reason)

        decided = await self.core.retrying(body)
        if decided.tool not in OPERATOR_EDITS:  # the model asked for nothing else
            self.approvals.announce(decided)
        return decided

    async def _approve_edit(self, pending: Approval, decided_by: str) -> Approval:
        """Run an approved person's edit through :attr:`edits`, then store the decision."""
        who = decided_by.strip()
        if not who or len(who) > 128:
            raise InvalidInputError(
                f"Who decides must be 1-128 characters, got {decided_by!r}",
                "Pass the approver's name.",
            )
        result = await run_operator_edit(
            self.edits, pending.tool, pending.arguments, Actor("user", who)
        )

        async def body(unit: Unit) -> Approval:
            current = unit.get(Approval, pending.id)
            if current is None or current.status != "pending":  # decided meanwhile
                raise RecordNotFoundError(
                    f"No pending approval {pending.id!r}", "It was decided meanwhile."
                )
            decided = current.model_copy(
                update={
                    "status": "approved" if result.get("success") else "failed",
                    "decided_by": who,
                    "decided_at": self.core.now(),
                    "result": result,
                }
            )
            unit.put(decided)
            return decided

        return await self.core.retrying(body)

    # -- operator settings ---------------------------------------------------------------
    async def set_user_system_prompt(self, text: str) -> None:
        """Set the user's system prompt; only hosts and operators can (no tool can)."""

        async def body(unit: Unit) -> None:
            PromptDesk(unit, self.core.clock, self.core.settings).set_user_prompt(text)

        await self.core.retrying(body)

    async def record_context_usage(
        self, tokens: int, source: Literal["estimate", "provider"] = "provider"
    ) -> None:
        """Record how many tokens the context window holds (from the provider or an estimate).

        Raises:
            InvalidInputError: a negative count.
        """
        if tokens < 0:
            raise InvalidInputError(f"Token count must be >= 0, got {tokens!r}", "Pass a count.")

        async def body(unit: Unit) -> None:
            unit.put_doc(
                ContextUsage(estimated_used=tokens, source=source, recorded_at=self.core.now())
            )

        await self.core.retrying(body)

    async def start_session(self) -> None:
        """Begin a new session: metrics restart from zero at the current time."""

        async def body(unit: Unit) -> None:
            unit.put_doc(SessionMetrics(session_start=self.core.now()))

        await self.core.retrying(body)
