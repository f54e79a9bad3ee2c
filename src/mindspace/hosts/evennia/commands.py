"""The admin command ``assistant``, for Builders and above.

Add :class:`AssistantAdminCmdSet` (or :class:`CmdAssistant`) to your character cmdset.
Every subcommand reads or changes the assistant on mindspace's asyncio thread and
answers when that is done; the reactor never waits for it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, TypeVar

from django.conf import settings
from evennia.commands.cmdset import CmdSet
from evennia.commands.command import Command
from evennia.utils.search import search_tag

from mindspace.engine import Approval, Assistant
from mindspace.errors import MindspaceError, ToolError
from mindspace.hosts.evennia.outcomes import Noted, ago
from mindspace.hosts.evennia.runtime import AssistantRuntime
from mindspace.hosts.evennia.talk import CmdTalk
from mindspace.hosts.evennia.typeclasses import ASSISTANT_TAG, TAG_CATEGORY, TICKER_KEY
from mindspace.hosts.evennia.views import (
    TickerData,
    TickerState,
    gather_entities,
    gather_goals,
    gather_journal,
    gather_memories,
    gather_status,
    render_approval,
    render_entities,
    render_goals,
    render_journal,
    render_memories,
    render_prompt,
    render_status,
)

__all__ = [
    "SUBCOMMANDS",
    "AssistantAdminCmdSet",
    "AssistantCmdSet",
    "CmdAssistant",
    "CmdTalk",
    "find_assistants",
]

T = TypeVar("T")

SUBCOMMANDS = (
    "status",
    "goals",
    "journal",
    "memories",
    "entities",
    "sleep",
    "wake",
    "approve",
    "reject",
    "prompt",
)


class CommandError(Exception):
    """A mistake in the command line; the message tells the caller what to type."""


def on_loop(fn: Callable[[Assistant], T]) -> Callable[[Assistant], Awaitable[T]]:
    """``fn`` as a coroutine function, to run on the asyncio loop."""

    async def run(assistant: Assistant) -> T:
        return fn(assistant)

    return run


def find_assistants() -> list[Any]:
    """Every assistant character in the game."""
    return list(search_tag(ASSISTANT_TAG, category=TAG_CATEGORY))


class CmdAssistant(Command):
    """
    Inspect and steer the game's mindspace assistants.

    Usage:
      assistant
      assistant <name> status
      assistant <name> goals | journal | memories | entities
      assistant <name> sleep [deep]
      assistant <name> wake
      assistant <name> approve <N>
      assistant <name> reject <N> [reason]
      assistant <name> prompt [<text>]

    Without arguments, lists the assistants. <name> is the character's name,
    alias, #dbref or mindspace key (quote names with spaces: "Old Tom").
    'status' shows the mode, the ticker (paused, stopped, next tick), the
    last failure and thought, pending approvals and open events.
    Commands the assistant wants to run (execute_command) wait for
    'approve N'; they run as the assistant's character, so you must hold at
    least every permission it holds. 'prompt' shows exactly what the model
    saw on its last turn, and the operator's system prompt; 'prompt <text>'
    replaces the operator's system prompt.
    """

    key = "assistant"
    aliases: ClassVar[list[str]] = ["assistants"]
    locks = "cmd:perm(Builder)"
    help_category = "Building"

    def parse(self) -> None:
        """Split ``<name> <subcommand> <rest>``."""
        self.target_name = self.sub = self.rest = ""
        self.problem = ""
        text = self.args.strip()
        if text[:1] in ("'", '"'):
            end = text.find(text[0], 1)
            if end < 0:
                self.problem = f'Unclosed quote in {text!r}; write the name as "Old Tom".'
                return
            self.target_name, text = text[1:end], text[end + 1 :].strip()
        else:
            self.target_name, _, text = text.partition(" ")
        sub, _, rest = text.strip().partition(" ")
        self.sub, self.rest = sub.lower(), rest.strip()

    def func(self) -> Any:
        """Run the subcommand; returns the Deferred that answers (None when done at once)."""
        self.deferred: Any = None
        try:
            self.deferred = self._dispatch()
        except (CommandError, MindspaceError) as exc:
            self.caller.msg(f"|r{_escape(str(exc))}|n")
        return self.deferred

    # -- dispatch ----------------------------------------------------------------------
    def _dispatch(self) -> Any:
        if self.problem:
            raise CommandError(self.problem)
        if not self.target_name:
            return self._list()
        character = self._find(self.target_name)
        if not self.sub:
            self.sub = "status"
        if self.sub not in SUBCOMMANDS:
            raise CommandError(
                f"Unknown subcommand {self.sub!r}; use one of: {', '.join(SUBCOMMANDS)} "
                f"(e.g. 'assistant {character.key} status')."
            )
        runtime: AssistantRuntime = character.mindspace
        handler = getattr(self, f"_do_{self.sub}")
        deferred = handler(character, runtime)
        return deferred.addErrback(self._failed, character)

    def _list(self) -> None:
        from evennia.utils.evtable import EvTable

        found = find_assistants()
        if not found:
            self.caller.msg(
                "There are no assistants yet. Create one with: "
                "create/drop Barkeep:mindspace.hosts.evennia.AssistantCharacter"
            )
            return
        table = EvTable(
            "|wName|n", "|wKey|n", "|wLocation|n", border="header", width=self.client_width()
        )
        for obj in found:
            where = obj.location.key if obj.location else "nowhere"
            table.add_row(f"{obj.key} ({obj.dbref})", obj.attributes.get("mindspace_key"), where)
        self.caller.msg(f"|wAssistants|n\n{table}\nMore: assistant <name> status")

    def _find(self, name: str) -> Any:
        wanted = name.casefold()
        found = find_assistants()
        for obj in found:
            names = [obj.key, obj.dbref, obj.attributes.get("mindspace_key") or ""]
            names += list(obj.aliases.all())
            if wanted in (str(n).casefold() for n in names):
                return obj
        known = ", ".join(f"{o.key} ({o.dbref})" for o in found) or "none yet"
        raise CommandError(f"No assistant called {name!r}. Assistants: {known}.")

    def _failed(self, failure: Any, character: Any) -> None:
        error = failure.value
        message = str(error)
        if isinstance(error, ToolError):
            message = error.error + (f" {error.suggestion}" if error.suggestion else "")
        self.caller.msg(
            f"|rassistant {character.key} {self.sub}: {message}|n"
            if message
            else f"|rassistant {character.key} {self.sub} failed: {error!r}|n"
        )

    def _say(self, text: str) -> None:
        self.caller.msg(text)

    # -- views -------------------------------------------------------------------------
    def _do_status(self, character: Any, runtime: AssistantRuntime) -> Any:
        ticker = _ticker_data(character, runtime)
        width = self.client_width()
        return runtime.call(on_loop(gather_status)).addCallback(
            lambda data: self._say(render_status(data, ticker, width))
        )

    def _do_goals(self, character: Any, runtime: AssistantRuntime) -> Any:
        width = self.client_width()
        return runtime.call(on_loop(gather_goals)).addCallback(
            lambda goals: self._say(render_goals(runtime.key, goals, width))
        )

    def _do_journal(self, character: Any, runtime: AssistantRuntime) -> Any:
        width = self.client_width()
        return runtime.call(on_loop(gather_journal)).addCallback(
            lambda found: self._say(render_journal(runtime.key, found[0], found[1], width))
        )

    def _do_memories(self, character: Any, runtime: AssistantRuntime) -> Any:
        width = self.client_width()
        return runtime.call(on_loop(gather_memories)).addCallback(
            lambda found: self._say(render_memories(runtime.key, found[0], found[1], width))
        )

    def _do_entities(self, character: Any, runtime: AssistantRuntime) -> Any:
        width = self.client_width()
        return runtime.call(on_loop(gather_entities)).addCallback(
            lambda found: self._say(render_entities(runtime.key, found, width))
        )

    # -- changes -----------------------------------------------------------------------
    def _do_sleep(self, character: Any, runtime: AssistantRuntime) -> Any:
        if self.rest not in ("", "deep", "light"):
            raise CommandError(f"Use 'assistant {character.key} sleep [deep]', not {self.rest!r}.")
        deep = self.rest == "deep"
        reason = f"put to sleep by {self.caller.key}"

        async def sleep(assistant: Assistant) -> tuple[str, str | None]:
            state = await assistant.sleep(reason, deep=deep)
            return state.sleep_depth, state.wake_at

        def done(slept: tuple[str, str | None]) -> None:
            depth, wake_at = slept
            runtime.reschedule()
            until = f" until {wake_at}" if wake_at else ""
            self._say(
                f"{character.key} is asleep ({depth} sleep){until}; it consolidates its memory."
            )

        return runtime.call(sleep).addCallback(done)

    def _do_wake(self, character: Any, runtime: AssistantRuntime) -> Any:
        reason = f"woken by {self.caller.key}"

        async def wake(assistant: Assistant) -> None:
            await assistant.wake(reason)

        def done(_: None) -> None:
            runtime.reschedule()
            self._say(f"{character.key} is awake.")

        return runtime.call(wake).addCallback(done)

    def _do_approve(self, character: Any, runtime: AssistantRuntime) -> Any:
        approval_id = self._approval_id(character, "approve")
        self._check_rank(character)
        approver = str(self.caller.key)

        async def approve(assistant: Assistant) -> Approval:
            # The engine runs the call and tells the model the outcome on its next tick.
            return await assistant.approve(approval_id, approver)

        def done(approval: Approval) -> None:
            self._say(render_approval(approval_id, approval.result))
            runtime.nudge()

        return runtime.call(approve).addCallback(done)

    def _do_reject(self, character: Any, runtime: AssistantRuntime) -> Any:
        approval_id = self._approval_id(character, "reject")
        reason = self.rest.partition(" ")[2].strip()
        rejecter = str(self.caller.key)

        async def reject(assistant: Assistant) -> Approval:
            return await assistant.reject(approval_id, rejecter, reason)

        def done(_: Approval) -> None:
            self._say(f"Rejected {approval_id}; it will not run.")
            runtime.nudge()

        return runtime.call(reject).addCallback(done)

    def _do_prompt(self, character: Any, runtime: AssistantRuntime) -> Any:
        text = self.rest

        async def prompt(assistant: Assistant) -> str:
            if text:
                await assistant.set_user_system_prompt(text)
            return assistant.views.user_system_prompt()

        def done(current: str) -> None:
            if text:
                self._say(f"The operator prompt of {character.key} is now:\n{_escape(current)}")
            else:
                seen = runtime.last_prompt
                self._say(
                    render_prompt(
                        str(character.key),
                        current,
                        None if seen is None else (ago(seen.at, runtime.seconds()), seen),
                    )
                )

        return runtime.call(prompt).addCallback(done)

    # -- helpers -----------------------------------------------------------------------
    def _approval_id(self, character: Any, verb: str) -> str:
        number = self.rest.partition(" ")[0].strip().removeprefix("apr_")
        if not number.isdigit():
            raise CommandError(
                f"Give the number of the approval: 'assistant {character.key} {verb} 1' "
                f"('assistant {character.key} status' lists them)."
            )
        return f"apr_{int(number)}"

    def _check_rank(self, character: Any) -> None:
        hierarchy = {p.lower(): p for p in getattr(settings, "PERMISSION_HIERARCHY", [])}
        for held in character.permissions.all():
            perm = hierarchy.get(str(held).lower())
            if perm and not self.caller.locks.check_lockstring(
                self.caller, f"approve:perm({perm})"
            ):
                raise CommandError(
                    f"{character.key} holds the permission {perm!r}, above yours; commands "
                    f"it runs would act with it. Ask someone with {perm!r} or higher."
                )


def _ticker_data(character: Any, runtime: AssistantRuntime) -> TickerData:
    now = runtime.seconds()
    scripts = character.scripts.get(TICKER_KEY)
    # A paused Script (script/pause) stays "active" in Evennia: its saved pause time
    # tells it apart. A stopped one is inactive.
    paused = [s for s in scripts if s.is_active and s.db._paused_time]
    running = [s for s in scripts if s.is_active and not s.db._paused_time]
    state: TickerState = "ticking" if running else "paused" if paused else "stopped"
    notes = []
    if not scripts:
        state = "missing"
        notes.append(
            f'|rNo ticker Script on {character.key}|n: run \'py here.search("{character.key}")'
            ".mindspace_setup()' or recreate the character from the assistant typeclass."
        )

    def noted(item: Noted | None) -> tuple[str, str] | None:
        if item is None:
            return None
        return f"{ago(item.at, now)} ({item.stamp})", item.text

    return TickerData(
        character=f"{character.key} ({character.dbref})",
        location=str(character.location.key) if character.location else "nowhere",
        ticks=runtime.ticks,
        failed_ticks=runtime.failed_ticks,
        busy=runtime.busy,
        last_tick_ago=None if runtime.last_tick_at is None else now - runtime.last_tick_at,
        next_in=runtime.next_due - now,
        rate=runtime.rate,
        running=bool(running),
        state=state,
        script=str((paused or scripts)[0].dbref) if scripts else None,
        last_failure=noted(runtime.last_failure),
        last_thought=noted(runtime.last_thought),
        notes=notes,
    )


def _escape(text: str) -> str:
    return text.replace("|", "||")


class AssistantAdminCmdSet(CmdSet):
    """Only the ``assistant`` admin command (for games with a ``talk`` of their own)."""

    key = "mindspace_admin"

    def at_cmdset_creation(self) -> None:
        """Add the command."""
        self.add(CmdAssistant())


class AssistantCmdSet(CmdSet):
    """``talk`` for everyone and ``assistant`` for Builders; add it to your CharacterCmdSet."""

    key = "mindspace"

    def at_cmdset_creation(self) -> None:
        """Add the commands."""
        self.add(CmdTalk())
        self.add(CmdAssistant())
