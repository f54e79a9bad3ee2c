"""The Assistant facade: one assistant's engine, as hosts and integrators use it.

Every write serialises itself: a tool call, an approval, a change of mode or prompt
waits for a running tick and commits in one short transaction, so no host ever takes a
lock or opens a unit of work. Hosts read through :attr:`Assistant.views` (the read
models) and drive ticks through :meth:`Assistant.tick` on the schedule of
:class:`~mindspace.engine.scheduler.TickPolicy`.

Hosts get an assistant from the composition root, :class:`mindspace.runtime.Runtime`,
which chooses its model, embedder, tracer and search indexes; the facade's parts (the
engine core, the tool executor, the ticker) are private.

Example:
    >>> runtime = Runtime.from_settings(Settings(), "mindspace.db")
    >>> assistant = runtime.open("barkeep")
    >>> await assistant.call_tool("add_goal", {"description": "Restock the cellar"})
    {'success': True, 'goal_id': 'goal_0_0', ...}
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal, Unpack

from mindspace.clock import Clock, SystemClock
from mindspace.config import Settings
from mindspace.embeddings.cache import cached
from mindspace.embeddings.port import Embedder
from mindspace.engine.approvals import Approvals
from mindspace.engine.controls import Controls
from mindspace.engine.core import EngineCore
from mindspace.engine.decisions import Decisions
from mindspace.engine.edits import Edits
from mindspace.engine.events import EventFields
from mindspace.engine.executor import ToolExecutor
from mindspace.engine.indexes import IndexFactory, embedded_indexes
from mindspace.engine.memory_context import install_memory_providers
from mindspace.engine.mode_tools import GoToSleep
from mindspace.engine.modes import OperatingMode, SleepSchedule
from mindspace.engine.night.cycle import SleepCycle
from mindspace.engine.notices import Notice
from mindspace.engine.prompting import PromptBuilder, Provider
from mindspace.engine.records import Approval, Event
from mindspace.engine.session import Sessions
from mindspace.engine.tick import Ticker, TickResult
from mindspace.engine.views import AssistantViews
from mindspace.engine.world import World, world_tools
from mindspace.errors import RecordNotFoundError, ToolExecutionError
from mindspace.llm.port import LLM
from mindspace.state.port import AssistantInfo, Store
from mindspace.state.unit import StateCache, Unit
from mindspace.tools import ToolRegistry, default_registry
from mindspace.tools.delegation import DelegateSubtask
from mindspace.tools.runner import ToolOutcome
from mindspace.tracing import NO_TRACER, Tracer
from mindspace.workspace.persona import PersonaGuard

__all__ = ["Assistant", "assistant_tools"]

logger = logging.getLogger("mindspace.engine")


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

    Get one from :meth:`mindspace.runtime.Runtime.open` (the composition root).

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
        indexes: Builds the memory and journal search indexes (the embedded ones by
            default; the composition root passes its store's own when it has them).
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
        indexes: IndexFactory = embedded_indexes,
    ) -> None:
        settings = settings or Settings()
        registry = tools or assistant_tools()
        if "go_to_sleep" not in registry:
            registry.register(GoToSleep())
        state = StateCache(store, info.id, info.revision)
        # Each text embedded once (goals, speakers, a message stored and looked up by
        # the same key), across the assistants that share this embedder.
        embedder = cached(embedder) if embedder is not None else None
        found = indexes(state, embedder.name if embedder else None)
        self._core = EngineCore(
            info=info,
            store=store,
            state=state,
            clock=clock or SystemClock(),
            settings=settings,
            llm=llm,
            tools=registry,
            guard=PersonaGuard(self_names),
            embedder=embedder,
            memory_index=found.memory,
            journal_index=found.journal,
            prompt_builder=PromptBuilder(settings),
            tracer=tracer,
        )
        install_memory_providers(self._core.prompt_builder, self._core)
        self._executor = ToolExecutor(self._core)
        sessions = Sessions(self._core, self._executor)
        self._ticker = Ticker(self._core, sessions, SleepCycle(self._core, sessions))
        self._approvals = Approvals(self._core, self._executor)
        self.views = AssistantViews(self._core, self._executor)
        """Read models of this assistant: what hosts show."""
        self.edits = Edits(self._core)
        """Update, delete and forget, each recorded in the history (docs/manage.md)."""
        self._controls = Controls(self._core)
        self._decisions = Decisions(self._core, self._approvals, self.edits)

    # -- identity and ports --------------------------------------------------------------
    @property
    def key(self) -> str:
        """The assistant's key."""
        return self._core.key

    @property
    def info(self) -> AssistantInfo:
        """The assistant's identity in the store."""
        return self._core.info

    @property
    def settings(self) -> Settings:
        """Runtime settings."""
        return self._core.settings

    @property
    def clock(self) -> Clock:
        """The time source."""
        return self._core.clock

    @property
    def llm(self) -> LLM:
        """The model."""
        return self._core.llm

    @property
    def embedder(self) -> Embedder | None:
        """The embedder (None: lexical search only)."""
        return self._core.embedder

    @property
    def tools(self) -> ToolRegistry:
        """The tools the assistant can call."""
        return self._core.tools

    @property
    def revision(self) -> int:
        """The revision of the assistant's state this process last saw."""
        return self._core.state.revision

    @property
    def world(self) -> World | None:
        """The host's world, once attached."""
        return self._core.world

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
                return await self._executor.run(unit, name, args)
            except ToolExecutionError as exc:
                # The tool's own writes died with its savepoint; the failed call is still
                # counted, so the unit commits and the crash is raised afterwards.
                return exc

        # A call that lost a race to another process committed nothing, so it is redone.
        outcome = await self._core.retrying(body)
        if isinstance(outcome, ToolExecutionError):
            raise outcome
        return outcome

    # -- world, events and ticks ---------------------------------------------------------
    def attach_world(self, world: World) -> None:
        """Connect the host's world: replies go through it and its tools are offered."""
        self._core.world = world
        for tool in world_tools(world):
            if tool.name not in self._core.tools:
                self._core.tools.register(tool)

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
        builder = self._core.prompt_builder
        previous = builder.providers.get(key)
        builder.provide(key, provider)
        return previous

    def subscribe(self, listener: Callable[[Notice], None]) -> Callable[[], None]:
        """Call ``listener`` with every :class:`Notice`; returns an unsubscribe function."""
        return self._core.notifier.subscribe(listener)

    def enqueue_event(self, content: str, **fields: Unpack[EventFields]) -> Event:
        """Add an event to the persistent inbox; the next tick takes it.

        ``fields`` are the event's optional ``type`` (``"message"`` unless given),
        ``source_entity``, ``location`` and ``metadata`` (see :class:`EventFields`).

        The inbox is written apart from the assistant's state, so this never waits for a
        running tick. A scheduler hears of it (the ``event_queued`` notice) and ticks soon.

        Raises:
            InvalidInputError: the event is malformed (the message says why).
        """
        event = self._core.queue.enqueue(content, **fields)
        self._core.notify(
            "event_queued",
            event_id=event.id,
            type=event.type,
            source=fields.get("source_entity"),
            urgent=event.urgent,
        )
        return event

    async def retry_event(self, event_id: str) -> Event:
        """Put a failed event back in the queue.

        Raises:
            RecordNotFoundError: no such event.
        """
        queue = self._core.queue
        async with self._core.lock:
            event = queue.get(event_id)
            if event is None:
                raise RecordNotFoundError(
                    f"Event {event_id!r} does not exist", "Check the event id."
                )
            event = queue.mark(event, status="pending", attempts=0, error=None)
        self._core.notify("event_queued", event_id=event.id, type=event.type, urgent=event.urgent)
        return event

    async def tick(self) -> TickResult:
        """Run one tick (see :class:`~mindspace.engine.tick.Ticker`)."""
        return await self._ticker.tick()

    async def run_context(self, context_type: str, *, task: str, entity: str = "") -> TickResult:
        """Run one LLM session in another context type (reflection, pre_compaction...).

        Raises:
            KeyError: an unknown context type.
        """
        return await self._ticker.run_context(context_type, task=task, entity=entity)

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
        return await self._controls.sleep(reason, deep=deep, hours=hours)

    async def wake(self, reason: str = "woken") -> OperatingMode:
        """Wake the assistant now, even mid-phase (what is done so far is kept)."""
        return await self._controls.wake(reason)

    async def set_sleep_schedule(self, schedule: SleepSchedule) -> None:
        """Replace the sleep schedule (waking no longer turns a paused one back on)."""
        await self._controls.set_sleep_schedule(schedule)

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
        return await self._decisions.request(name, args, requested_by=requested_by)

    async def approve(self, approval_id: str, decided_by: str) -> Approval:
        """Approve a pending call: it runs now, its outcome is stored, the model is told.

        Returns the decided approval; ``result`` is the tool's result.

        Raises:
            RecordNotFoundError: no pending approval with that id.
            InvalidInputError: ``decided_by`` is blank or too long.
        """
        return await self._decisions.approve(approval_id, decided_by)

    async def reject(self, approval_id: str, decided_by: str, reason: str = "") -> Approval:
        """Reject a pending call; it never runs, and the model is told on its next tick.

        Raises:
            RecordNotFoundError: no pending approval with that id.
            InvalidInputError: ``decided_by`` is blank or too long.
        """
        return await self._decisions.reject(approval_id, decided_by, reason)

    # -- operator settings ---------------------------------------------------------------
    async def set_user_system_prompt(self, text: str) -> None:
        """Set the user's system prompt; only hosts and operators can (no tool can)."""
        await self._controls.set_user_system_prompt(text)

    async def record_context_usage(
        self, tokens: int, source: Literal["estimate", "provider"] = "provider"
    ) -> None:
        """Record how many tokens the context window holds (from the provider or an estimate).

        Raises:
            InvalidInputError: a negative count.
        """
        await self._controls.record_context_usage(tokens, source)

    async def start_session(self) -> None:
        """Begin a new session: metrics restart from zero at the current time."""
        await self._controls.start_session()
