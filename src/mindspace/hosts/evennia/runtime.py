"""The runtime of one assistant character: its mindspace Assistant, events and ticks.

Two threads meet here, and every attribute says which one owns it:

* **reactor thread** (Evennia, Django): :meth:`AssistantRuntime.enqueue`,
  :meth:`~AssistantRuntime.poll`, :meth:`~AssistantRuntime.nudge`,
  :meth:`~AssistantRuntime.call` and the ticker state (the schedule, ``ticks``...).
  They never wait: they hand coroutines to the bridge and get Deferreds.
* **asyncio thread** (mindspace): the :class:`~mindspace.engine.Assistant`, opened
  lazily on first use from the composition root of its database
  (:mod:`mindspace.hosts.evennia.roots`). It never touches Django; the world it acts
  on (:class:`~mindspace.hosts.evennia.world.EvenniaWorld`) hops to the reactor.

The ticker. A persistent Script calls :meth:`poll` every second; the engine's
:class:`~mindspace.engine.scheduler.TickPolicy` (the same rules every host drives) says
whether a tick is due. It never lets two ticks of the assistant overlap
(``Script.at_repeat`` ignores return values, so nothing else would stop them), spaces
ticks by the rate of the mode the last tick reported (awake: ``tick_rate_awake``, 5 s;
asleep: the sleep schedule's rate, 60 s), follows an event tick at once (a backlog
drains without waiting), makes an awake assistant due at once for an addressed event
(:meth:`nudge`; a sleeper only for an urgent one) and backs off after failed ticks.
A reload kills the server process mid-tick: the engine's queue is persistent and
at-least-once, the interrupted event is still ``processing`` and nothing of the tick
was committed, so the first tick after the restart runs it again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mindspace.engine import Assistant, Event, TickPolicy, TickResult
from mindspace.hosts.evennia.bridge import Bridge, get_bridge
from mindspace.hosts.evennia.config import AssistantConfig, resolve_config
from mindspace.hosts.evennia.live import LiveContext
from mindspace.hosts.evennia.logs import forward_logs, log_error, log_warning
from mindspace.hosts.evennia.outcomes import (
    Noted,
    SeenPrompt,
    TickReport,
    explain_error,
    first_line,
    utc_stamp,
)
from mindspace.hosts.evennia.perception import Perceived
from mindspace.hosts.evennia.roots import close_stores, root_for
from mindspace.hosts.evennia.tools import register_evennia_tools
from mindspace.hosts.evennia.world import (
    EvenniaWorld,
    say_in_character,
    show_reaction,
)
from mindspace.runtime import Runtime

__all__ = [
    "AssistantRuntime",
    "TickReport",
    "config_fingerprint",
    "forget_runtime",
    "install_runtime",
    "open_runtime",
    "runtime_for",
]

logger = logging.getLogger("mindspace.evennia")

T = TypeVar("T")


_RUNTIMES: dict[int, AssistantRuntime] = {}


class AssistantRuntime:
    """One assistant character's mindspace side.

    Args:
        character: The Evennia character (touched on the reactor thread only).
        config: Its resolved configuration.
        bridge: The reactor/asyncio bridge (the process-wide one by default).
        runtime: The composition root to open the assistant from (by default the one
            shared by every character on the configuration's database, with a model and
            an embedder built from the configuration).
        now: The ticker's time source in seconds (the reactor's by default).
    """

    def __init__(
        self,
        character: Any,
        config: AssistantConfig,
        *,
        bridge: Bridge | None = None,
        runtime: Runtime | None = None,
        now: Callable[[], float] | None = None,
    ) -> None:
        self.config = config
        self.fingerprint = config_fingerprint(character)
        self.bridge = bridge or get_bridge()
        self.bridge.at_stop(close_stores)  # the stores close when the server stops
        self.world = EvenniaWorld(character, self.bridge, self.cancel_thinking)
        self._runtime = runtime
        self._now = now or (lambda: float(self.bridge.reactor.seconds()))
        # reactor thread
        self.policy = TickPolicy(awake_rate=config.settings.tick_rate_awake)
        """When this assistant ticks (the engine's rules; touched on the reactor only)."""
        self.policy.add(config.key)
        self.closed = False
        self.ticks = 0
        self.failed_ticks = 0
        self.last_tick_at: float | None = None
        self.last_report: TickReport | None = None
        self.last_prompt: SeenPrompt | None = None
        """What the model saw on the last tick that called it (the ``prompt`` view)."""
        self.last_thought: Noted | None = None
        """The prose of the last autonomous tick: a private thought, never said."""
        self.last_failure: Noted | None = None
        """The last failed or crashed tick, for builders (``status``)."""
        self._poll_after = False
        # asyncio thread
        self._opening: asyncio.Future[Assistant] | None = None
        self._thinking: asyncio.TimerHandle | None = None
        self._thinking_tasks: set[asyncio.Task[None]] = set()

    @property
    def character(self) -> Any:
        """The Evennia character."""
        return self.world.character

    @property
    def key(self) -> str:
        """The assistant's key in the mindspace store."""
        return self.config.key

    def seconds(self) -> float:
        """The ticker's clock (the reactor's time, in seconds)."""
        return self._now()

    @property
    def busy(self) -> bool:
        """Whether a tick is running."""
        return self.policy.is_running(self.key)

    @property
    def next_due(self) -> float:
        """When the next tick is due, in :meth:`seconds` (``-inf``: now)."""
        return self.policy.next_due(self.key)

    @property
    def rate(self) -> float:
        """Seconds between ticks in the mode the last tick reported."""
        return self.policy.rate(self.key)

    @property
    def mode(self) -> str | None:
        """The operating mode the last tick reported (None before the first tick)."""
        return self.last_report.mode if self.last_report is not None else None

    # -- asyncio thread ----------------------------------------------------------------
    async def assistant(self) -> Assistant:
        """The assistant, opened (and created) on first use. Call on the loop.

        Callers arriving while it opens share the one opening; a failed opening is tried
        again by the next caller.
        """
        opening = self._opening
        if opening is None or (opening.done() and (opening.cancelled() or opening.exception())):
            opening = self._opening = asyncio.ensure_future(self._open())
        return await asyncio.shield(opening)

    async def _open(self) -> Assistant:
        config = self.config
        if self._runtime is not None:
            assistant = self._runtime.open(config.key, self_names=config.names)
        else:
            root = root_for(config.settings)
            assistant = root.open(config.key, self_names=config.names, settings=config.settings)
        assistant.attach_world(self.world)
        register_evennia_tools(assistant.tools, self.world)
        live = LiveContext(self.world)
        live.previous = assistant.provide_prompt("character_context", live)
        if not assistant.views.user_system_prompt():
            await assistant.set_user_system_prompt(self.config.system_prompt)
        logger.info(
            "mindspace: assistant %r opened on %s", self.config.key, assistant.views.store_url()
        )
        return assistant

    async def _enqueue(self, perceived: Perceived) -> tuple[Event, str | None]:
        assistant = await self.assistant()
        event = assistant.enqueue_event(
            perceived.content,
            type=perceived.type,
            source_entity=perceived.source,
            location=perceived.location,
            metadata=perceived.metadata(),
        )
        reaction = None
        state = assistant.views.mode()
        if perceived.addressed and state.mode == "sleep":
            # Spec 003: an urgent event (anything addressed to it) wakes a light sleeper
            # (after compacting, if it is compacting); a deep sleeper sleeps on.
            options = self.config.options
            light = state.sleep_depth == "light"
            reaction = options.wake_message if light else options.sleep_message
        return event, reaction

    async def _tick(self) -> tuple[TickResult, str | None, bool]:
        assistant = await self.assistant()
        self._arm_thinking(assistant)
        try:
            result = await assistant.tick()
        finally:
            self.cancel_thinking()
        source, private = None, False
        if result.status == "failed" and result.event_id:
            event = assistant.views.event(result.event_id)
            if event is not None:
                source, private = event.source_entity, event.private
        return result, source, private

    def _arm_thinking(self, assistant: Assistant) -> None:
        delay = self.config.options.thinking_delay
        if delay <= 0 or assistant.views.mode().mode != "awake":
            return
        event = next((e for e in assistant.views.open_events() if not e.ambient), None)
        if event is None:
            return
        loop = asyncio.get_running_loop()
        self._thinking = loop.call_later(delay, self._think, event.source_entity, event.private)

    def _think(self, speaker: str | None, private: bool) -> None:
        self._thinking = None
        template = self.config.options.thinking_message
        task = asyncio.ensure_future(self.world.thinking(template, speaker, private))
        self._thinking_tasks.add(task)
        task.add_done_callback(self._thought)

    def _thought(self, task: asyncio.Task[None]) -> None:
        self._thinking_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.warning("mindspace: the thinking emote failed: %r", task.exception())

    def cancel_thinking(self) -> None:
        """Drop a pending "thinking..." emote (the assistant is about to say something)."""
        if self._thinking is not None:
            self._thinking.cancel()
            self._thinking = None

    # -- reactor thread ----------------------------------------------------------------
    def enqueue(self, perceived: Perceived) -> Any:
        """Store ``perceived`` as an event; an addressed one nudges the ticker.

        Returns:
            A Deferred firing with the stored :class:`Event`, or with None when storing
            failed (the failure is logged with the reason).
        """
        deferred = self.bridge.run(self._enqueue(perceived), finish_at_shutdown=True)

        def queued(stored: tuple[Event, str | None]) -> Event:
            event, reaction = stored
            if reaction:
                try:
                    show_reaction(self.character, reaction, perceived.source, perceived.private)
                except Exception:
                    log_error(f"mindspace: could not show {self.key!r} asleep")
            if perceived.addressed:
                self.nudge(urgent=event.urgent)
            return event

        def failed(failure: Any) -> None:
            log_error(
                f"mindspace: could not store what {perceived.source} did for "
                f"{self.key!r}: {failure.getErrorMessage()}"
            )

        return deferred.addCallbacks(queued, failed)

    def poll(self) -> bool:
        """Start a tick if the policy says one is due; returns whether it started."""
        if self.closed or self.key not in self.policy.due(self._now()):
            return False
        self.policy.start(self.key)
        try:
            deferred = self.bridge.run(self._tick())
        except BaseException:
            self.policy.crash(self.key, self._now())  # or the slot would stay "running"
            raise
        deferred.addCallbacks(self._ticked, self._tick_failed)
        deferred.addBoth(self._release)
        return True

    def nudge(self, *, urgent: bool = False) -> None:
        """A new event for the assistant: tick at once if the policy makes it due.

        An awake assistant is due at once (right after a running tick); a sleeping one
        only for an ``urgent`` event (so that it can wake).
        """
        if self.closed or not self.policy.nudge(self.key, urgent=urgent):
            return
        if self.busy:
            self._poll_after = True  # the Script would only look again a second later
        else:
            self.poll()

    def reschedule(self) -> None:
        """Make the next tick due now: the mode changed outside a tick (an admin's command).

        The tick then reports the new mode and its rate; the Script starts it within a
        second.
        """
        if not self.closed:
            self.policy.nudge(self.key, urgent=True)

    def call(self, fn: Callable[[Assistant], Awaitable[T]]) -> Any:
        """Run ``fn(assistant)`` on the loop; returns a Deferred fired on the reactor."""

        async def run() -> T:
            return await fn(await self.assistant())

        return self.bridge.run(run())

    def close(self) -> None:
        """Stop ticking and drop this runtime (deleted character, changed configuration)."""
        self.closed = True
        key = getattr(self.character, "id", None)
        if key is not None and _RUNTIMES.get(key) is self:
            del _RUNTIMES[key]

    def _ticked(self, ticked: tuple[TickResult, str | None, bool]) -> None:
        result, source, private = ticked
        now = self._now()
        self.policy.finish(self.key, now, result)
        report = TickReport.of(result, source, private=private)
        before = self.mode
        self.ticks += 1
        self.last_tick_at = now
        self.last_report = report
        if before is not None and before != report.mode:
            self._show_mode_change(report.mode)
        if report.prompt is not None:
            self.last_prompt = SeenPrompt(now, utc_stamp(), report.kind, report.prompt)
        if report.kind != "event" and report.reply:
            # Only tools speak outside an answer: this prose is a thought, kept for builders.
            self.last_thought = Noted(now, utc_stamp(), report.reply)
            logger.info("mindspace: %r thought (not said): %s", self.key, first_line(report.reply))
        if report.status == "failed":
            self._report_failure(report)

    def _show_mode_change(self, mode: str) -> None:
        # The room sees the assistant fall asleep or wake, as it would see a person do so.
        options = self.config.options
        template = options.doze_message if mode == "sleep" else options.awake_message
        try:
            show_reaction(self.character, template, None, False)
        except Exception:
            log_error(f"mindspace: could not show {self.key!r} falling asleep or waking")

    def _tick_failed(self, failure: Any) -> None:
        from twisted.internet.defer import CancelledError

        self.policy.crash(self.key, self._now())
        if failure.check(CancelledError, asyncio.CancelledError):
            return  # the server is shutting down; the event is retried after the restart
        self.failed_ticks += 1
        message = f"the tick crashed ({failure.type.__name__}: {failure.getErrorMessage()})"
        self.last_failure = Noted(self._now(), utc_stamp(), message)
        log_error(
            f"mindspace: a tick of {self.key!r} crashed; its event is retried next tick.\n"
            + failure.getTraceback()
        )

    def _release(self, _result: Any) -> None:
        if self._poll_after and not self.closed:
            self._poll_after = False
            self.bridge.reactor.callLater(0, self.poll)

    def _report_failure(self, report: TickReport) -> None:
        # Builders get the technical error (status, log); the speaker an in-character line.
        error = first_line(explain_error(report.error or "unknown error", self.config))
        self.last_failure = Noted(self._now(), utc_stamp(), error)
        whom = f" {report.source}" if report.source else ""
        log_warning(f"mindspace: {self.key!r} could not answer{whom}: {error}.")
        if report.source:
            try:
                say_in_character(
                    self.character,
                    self.config.options.failure_message,
                    report.source,
                    report.private,
                )
            except Exception:
                log_error(f"mindspace: could not tell {report.source} that {self.key!r} failed")


def config_fingerprint(character: Any) -> str:
    """What the character's configuration depends on: its names and mindspace_* Attributes."""
    attributes = sorted(
        (str(a.key), repr(a.value))
        for a in character.attributes.all()
        if str(a.key).startswith("mindspace_")
    )
    aliases = sorted(str(a) for a in character.aliases.all())
    return repr((str(character.key), aliases, attributes))


def runtime_for(character: Any) -> AssistantRuntime:
    """The runtime of ``character``, created (with its configuration) on first use.

    When the character's ``mindspace_*`` Attributes, key or aliases change, the next call
    (once no tick is running) opens the assistant again with the new configuration, so
    ``set Barkeep/mindspace_llm_model = ...`` takes effect within a second. Call on the
    reactor thread.

    Raises:
        ConfigError: the character's mindspace configuration is invalid.
    """
    runtime = _RUNTIMES.get(character.id)
    if (
        runtime is not None
        and not runtime.busy
        and runtime.fingerprint != config_fingerprint(character)
    ):
        logger.info("mindspace: the configuration of %r changed; reopening it", runtime.key)
        runtime.close()
    if runtime is None or runtime.closed:
        previous = runtime
        runtime = AssistantRuntime(character, resolve_config(character))
        if previous is not None:
            # What builders read in `status` and `prompt` outlives a configuration change.
            runtime.last_prompt = previous.last_prompt
            runtime.last_thought = previous.last_thought
            runtime.last_failure = previous.last_failure
        _RUNTIMES[character.id] = runtime
        forward_logs()
    else:
        runtime.world.character = character  # the idmapper may have reloaded the object
    return runtime


def open_runtime(character: Any) -> AssistantRuntime | None:
    """``character``'s runtime if one is open (never opens one: for looks and listings)."""
    runtime = _RUNTIMES.get(character.id)
    return runtime if runtime is not None and not runtime.closed else None


def forget_runtime(character: Any) -> None:
    """Close and drop ``character``'s runtime; the next use resolves its config again."""
    runtime = _RUNTIMES.pop(character.id, None)
    if runtime is not None:
        runtime.close()


def install_runtime(character: Any, runtime: AssistantRuntime) -> None:
    """Use ``runtime`` for ``character`` (tests and games that build their own)."""
    _RUNTIMES[character.id] = runtime
