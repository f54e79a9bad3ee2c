"""``mindspace chat``: talk to an assistant in the terminal, as an entity of its world.

Each line you type becomes a direct-message event from you; the assistant's tick runs
the ReAct loop and its reply comes back through the terminal world. Slash commands
inspect it: ``/status``, ``/goals``, ``/help``, ``/quit``.

The whole session runs on one event loop: the model's HTTP client keeps its connections
open between messages (as Ollama, llama.cpp, vLLM and OpenAI expect), and a client must
never outlive the loop it was used on. Lines are read on a daemon thread so waiting for
the keyboard never blocks the loop, and the model is closed on that loop at the end.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import queue
import re
import sys
import threading
from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from mindspace.engine import Assistant, WorldBase
from mindspace.hosts.cli.render import goal_tree, status_view
from mindspace.llm.port import close_llm
from mindspace.runtime import is_offline, offline_notice

__all__ = ["LineReader", "TerminalWorld", "chat_session", "run_chat"]

HELP = "Type to talk. Commands: /status, /goals, /help, /quit."
MAX_TICKS_PER_LINE = 8
"""Most ticks run for one line: a wake-up, earlier queued messages, then the line."""


class TerminalWorld(WorldBase):
    """The terminal as the assistant's world: it prints what the assistant says and does.

    While :attr:`answering` names an earlier line (the tick answers a message that was
    still queued), a reply says which line it answers, so no line shows another's reply.
    """

    def __init__(self, console: Console, assistant: str, user: str) -> None:
        self.console = console
        self.assistant = assistant
        self.user = user
        self.answering: str | None = None

    async def say(self, text: str, *, target: str | None = None) -> None:
        """Print the assistant's words."""
        verb = f"says to {target}" if target else "says"
        line = Text(f"{self.assistant} {verb}: ", style="bold cyan")
        if self.answering is not None:
            line.append(f"(to your earlier {_quoted(self.answering)}) ", style="dim")
        line.append(text, style="")
        self.console.print(line)

    async def emote(self, text: str) -> None:
        """Print the assistant's action."""
        self.console.print(Text(f"* {self.assistant} {text}", style="italic cyan"))

    async def look(self) -> str:
        """A terminal session: you and the user."""
        return f"A quiet terminal session. {self.user} is here, typing to you."


class LineReader:
    """Reads one line per :meth:`read` on a daemon thread, without blocking the event loop.

    A daemon thread (not ``asyncio.to_thread``) because a read blocked on the keyboard when
    the user presses Ctrl+C must not keep the process alive: the loop's default executor
    joins its threads on shutdown, a daemon thread is simply left behind.

    Args:
        read_line: Blocking function returning the next line; raises EOFError at the end.
    """

    def __init__(self, read_line: Callable[[], str]) -> None:
        self._read_line = read_line
        self._requests: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, asyncio.Future[str]]] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None

    async def next_line(self) -> str:
        """The next line; raises what ``read_line`` raised (EOFError at end of input)."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._serve, name="mindspace-chat-input", daemon=True
            )
            self._thread.start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()
        self._requests.put((loop, future))
        return await future

    def _serve(self) -> None:
        while True:
            loop, future = self._requests.get()
            try:
                line = self._read_line()
            except BaseException as exc:  # EOFError, or KeyboardInterrupt from a test's reader
                _deliver(loop, future, None, exc)
            else:
                _deliver(loop, future, line, None)


def read_terminal_line(prompt: str = "you> ") -> str:
    """One line from standard input, read from the file descriptor itself.

    Not ``input()``: the line reader waits on a daemon thread, and a thread blocked inside
    ``sys.stdin`` holds the buffered reader's lock, so a Ctrl+C at the prompt ended the
    process with "Fatal Python error: could not acquire lock for <stdin> at interpreter
    shutdown". ``os.read`` holds no Python lock while it waits.

    Raises:
        EOFError: standard input ended before a line began.
    """
    sys.stdout.write(prompt)
    sys.stdout.flush()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    chars: list[str] = []
    fd = sys.stdin.fileno()
    while True:
        byte = os.read(fd, 1)  # one byte: nothing past the newline is taken from the stream
        if not byte:
            if not chars:
                raise EOFError
            break
        text = decoder.decode(byte)
        if text == "\n":
            break
        chars.append(text)
    return _typed("".join(chars).removesuffix("\r"))


_CLEAR_SCREEN = "\x1b[H\x1b[2J"
# C0 control characters a terminal passes through in a line (not tab): never sent on.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _typed(line: str) -> str:
    """The line as meant: Ctrl+L (form feed) clears the screen, control characters go.

    The terminal hands over a line at Enter, so a Ctrl+L typed in it clears the screen
    then (the ``^L`` it echoed goes with it) instead of reaching the assistant.
    """
    if "\x0c" in line:
        sys.stdout.write(_CLEAR_SCREEN)
        sys.stdout.flush()
    return _CONTROL.sub("", line)


def _deliver(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[str],
    line: str | None,
    error: BaseException | None,
) -> None:
    def settle() -> None:
        if future.done():  # the reader was cancelled (Ctrl+C) while the thread waited
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(line or "")

    # A closed loop (the session ended meanwhile) raises RuntimeError: nobody waits.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(settle)


def run_chat(
    assistant: Assistant,
    *,
    user: str,
    console: Console,
    read_line: Callable[[], str],
    database: str,
) -> int:
    """The REPL on one event loop for the whole session; returns how many messages were sent.

    The assistant's model is closed before the loop ends.
    """
    restore = _quiet_control_echo()
    try:
        return asyncio.run(
            chat_session(
                assistant,
                user=user,
                console=console,
                reader=LineReader(read_line),
                database=database,
            )
        )
    finally:
        restore()


def _quiet_control_echo() -> Callable[[], None]:
    """Stop the terminal echoing control keys as ``^L``; returns what puts it back.

    Ctrl+L then prints nothing while the line is typed, and clears the screen at Enter
    (:func:`_typed`). Not a terminal (a pipe, a test): nothing to change.
    """
    try:
        import termios
    except ImportError:  # pragma: no cover - Windows
        return lambda: None
    try:
        fd = sys.stdin.fileno()
        if not os.isatty(fd):
            return lambda: None
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        return lambda: None
    quiet = list(saved)
    quiet[3] = quiet[3] & ~termios.ECHOCTL
    termios.tcsetattr(fd, termios.TCSANOW, quiet)

    def restore() -> None:
        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)

    return restore


async def chat_session(
    assistant: Assistant,
    *,
    user: str,
    console: Console,
    reader: LineReader,
    database: str,
) -> int:
    """The REPL as a coroutine: read a line, tick, print; then close the model.

    Ctrl+C at the prompt ends the session normally; during a tick it stops the tick (the
    message stays queued and runs again on the next one) and ends the session.
    """
    try:
        return await _converse(assistant, user, console, reader, database)
    finally:
        await close_llm(assistant.llm)


async def _converse(
    assistant: Assistant, user: str, console: Console, reader: LineReader, database: str
) -> int:
    world = TerminalWorld(console, assistant.key, user)
    assistant.attach_world(world)
    if is_offline(assistant.llm):
        console.print(Text(offline_notice(), style="yellow"))
    console.print(Text(f"Talking to {assistant.key!r} as {user!r}. {HELP}", style="dim"))
    sent = 0
    while True:
        try:
            line = (await reader.next_line()).strip()
        except (EOFError, KeyboardInterrupt, asyncio.CancelledError):
            _uncancel()
            console.print()
            break
        if not line:
            continue
        if line.startswith("/"):
            if not _command(line, assistant, console, database):
                break
            continue
        sent += 1
        event = assistant.enqueue_event(
            line,
            type="message",
            source_entity=user,
            location="terminal",
            metadata={"classification": "direct_message"},
        )
        try:
            with console.status("thinking...", spinner="dots"):
                await _answer(assistant, world, event.id, line, console)
        except asyncio.CancelledError:
            _uncancel()
            console.print(
                Text(
                    "Interrupted: the message stays queued and is answered on the next tick "
                    "(the next line you send in mindspace chat).",
                    style="yellow",
                )
            )
            break
        finally:
            world.answering = None
    return sent


async def _answer(
    assistant: Assistant, world: TerminalWorld, event_id: str, line: str, console: Console
) -> None:
    """Tick until the event of ``line`` is answered or failed, and say which.

    A tick may first do something else: wake up after ``mindspace sleep --run``, or
    answer a message still queued from before (its reply names that message). At most
    :data:`MAX_TICKS_PER_LINE` ticks run; while the assistant stays asleep none do.
    """
    key = assistant.key
    for _ in range(MAX_TICKS_PER_LINE):
        # The next tick takes the first open message: an earlier line, or this one.
        world.answering = _first_other(assistant, event_id)
        result = await assistant.tick()
        if result.kind == "event" and result.event_id == event_id:
            if result.status == "failed":
                console.print(Text(f"error: {result.error} (for {_quoted(line)})", style="red"))
            elif not result.reply:
                console.print(Text(f"({key} did not reply to {_quoted(line)})", style="dim"))
            return
        if result.kind == "event" and result.status == "failed":
            console.print(Text(f"error: {result.error} (for an earlier message)", style="red"))
        event = assistant.views.event(event_id)
        if event is None or event.status in ("done", "failed"):
            # Answered by another process (a server on the same database) meanwhile.
            reply = event.reply if event is not None else None
            console.print(Text(f"({key} answered elsewhere: {reply or 'no reply'})", style="dim"))
            return
        if result.mode == "sleep":
            console.print(
                Text(
                    f"({key} is asleep; {_quoted(line)} stays queued and is answered when it "
                    "wakes - `mindspace wake` wakes it now.)",
                    style="yellow",
                )
            )
            return
    console.print(
        Text(
            f"(no reply to {_quoted(line)} after {MAX_TICKS_PER_LINE} ticks; it stays queued)",
            style="yellow",
        )
    )


def _first_other(assistant: Assistant, event_id: str) -> str | None:
    """The content of the message the next tick answers, when it is not ``event_id``'s."""
    for event in assistant.views.open_events():
        if not event.ambient:
            return None if event.id == event_id else event.content
    return None


def _quoted(line: str, limit: int = 40) -> str:
    shown = line if len(line) <= limit else line[: limit - 3] + "..."
    return f"message {shown!r}"


def _uncancel() -> None:
    # Ctrl+C cancels the main task; taking the cancellation back lets the session end
    # normally (the model is still closed) instead of as a KeyboardInterrupt.
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        task.uncancel()


def _command(line: str, assistant: Assistant, console: Console, database: str) -> bool:
    command = line.split()[0].lower()
    if command in ("/quit", "/exit"):
        return False
    if command == "/status":
        views = assistant.views
        console.print(
            status_view(
                views.status(), assistant=assistant.key, model=views.model_name(), database=database
            )
        )
    elif command == "/goals":
        book = assistant.views.goals()
        if not book.all():
            console.print("No goals yet.")
        else:
            console.print(goal_tree(book, title=f"Goals of {assistant.key!r}", show_all=False)[0])
    else:
        if command != "/help":
            console.print(Text(f"Unknown command {command!r}.", style="red"))
        console.print(HELP)
    return True
