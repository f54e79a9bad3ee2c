"""``mindspace chat``: talk to an assistant in the terminal, as an entity of its world.

Each line you type becomes a direct-message event from you; the assistant's tick runs
the ReAct loop and its reply comes back through the terminal world. Slash commands
inspect it: ``/status``, ``/goals``, ``/help``, ``/quit``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from mindspace.engine.assistant import Assistant
from mindspace.engine.world import WorldBase
from mindspace.hosts.cli.render import goal_tree, status_view
from mindspace.llm.offline import OFFLINE_NOTICE, OfflineLLM

__all__ = ["TerminalWorld", "run_chat"]

HELP = "Type to talk. Commands: /status, /goals, /help, /quit."


class TerminalWorld(WorldBase):
    """The terminal as the assistant's world: it prints what the assistant says and does."""

    def __init__(self, console: Console, assistant: str, user: str) -> None:
        self.console = console
        self.assistant = assistant
        self.user = user

    async def say(self, text: str, *, target: str | None = None) -> None:
        """Print the assistant's words."""
        verb = f"says to {target}" if target else "says"
        line = Text(f"{self.assistant} {verb}: ", style="bold cyan")
        line.append(text, style="")
        self.console.print(line)

    async def emote(self, text: str) -> None:
        """Print the assistant's action."""
        self.console.print(Text(f"* {self.assistant} {text}", style="italic cyan"))

    async def look(self) -> str:
        """A terminal session: you and the user."""
        return f"A quiet terminal session. {self.user} is here, typing to you."


def run_chat(
    assistant: Assistant,
    *,
    user: str,
    console: Console,
    read_line: Callable[[], str],
    database: str,
) -> int:
    """The REPL; returns how many messages were sent."""
    world = TerminalWorld(console, assistant.key, user)
    assistant.attach_world(world)
    if isinstance(assistant.llm, OfflineLLM):
        console.print(Text(OFFLINE_NOTICE, style="yellow"))
    console.print(Text(f"Talking to {assistant.key!r} as {user!r}. {HELP}", style="dim"))
    sent = 0
    while True:
        try:
            line = read_line().strip()
        except (EOFError, KeyboardInterrupt):
            console.print()
            break
        if not line:
            continue
        if line.startswith("/"):
            if not _command(line, assistant, console, database):
                break
            continue
        sent += 1
        assistant.enqueue_event(
            line,
            type="message",
            source_entity=user,
            location="terminal",
            metadata={"classification": "direct_message"},
        )
        with console.status("thinking...", spinner="dots"):
            result = asyncio.run(assistant.tick())
        if result.status == "failed":
            console.print(Text(f"error: {result.error}", style="red"))
        elif not result.reply:
            console.print(Text(f"({assistant.key} did not reply)", style="dim"))
    return sent


def _command(line: str, assistant: Assistant, console: Console, database: str) -> bool:
    command = line.split()[0].lower()
    if command in ("/quit", "/exit"):
        return False
    if command == "/status":
        model = getattr(assistant.llm, "model", type(assistant.llm).__name__)
        console.print(
            status_view(
                assistant.status(), assistant=assistant.key, model=str(model), database=database
            )
        )
    elif command == "/goals":
        book = assistant.goals()
        if not book.all():
            console.print("No goals yet.")
        else:
            console.print(goal_tree(book, title=f"Goals of {assistant.key!r}", show_all=False)[0])
    else:
        if command != "/help":
            console.print(Text(f"Unknown command {command!r}.", style="red"))
        console.print(HELP)
    return True
