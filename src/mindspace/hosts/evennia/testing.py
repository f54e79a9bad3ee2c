"""Helpers for testing assistants in Evennia: in-process and against a real server.

* :func:`wait` pumps the (not running) Twisted reactor until a Deferred fires, for
  tests built on Evennia's test classes, where nothing runs the reactor.
* :class:`GameServer` makes a throwaway game directory (``evennia --init``), locks it
  to loopback on free ports, and starts (robustly on a busy machine: see
  :mod:`mindspace.hosts.evennia.game_server`), reloads and stops a real Evennia server.
* :class:`TelnetClient` is a raw-socket telnet client that refuses every option, for
  talking to that server like a player.
* :class:`AssistantTestMixin` adds an assistant character (its store in a temporary
  directory, its LLM at ``self.llm_url``) to Evennia's test classes.
"""

from __future__ import annotations

import re
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindspace.hosts.evennia.game_server import GameServer, GameServerError, free_port

__all__ = [
    "AssistantTestMixin",
    "GameServer",
    "GameServerError",
    "TelnetClient",
    "free_port",
    "settle",
    "strip_ansi",
    "wait",
]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
IAC, DONT, DO, WONT, WILL, SB, SE = 255, 254, 253, 252, 251, 250, 240


def wait(deferred: Any, timeout: float = 15.0) -> Any:
    """Pump the reactor until ``deferred`` fires; return its result or raise its error.

    Raises:
        TimeoutError: it did not fire within ``timeout`` seconds.
    """
    reactor = _reactor()
    outcome: list[Any] = []
    deferred.addBoth(outcome.append)
    end = time.monotonic() + timeout
    while not outcome:
        if time.monotonic() > end:
            raise TimeoutError(f"The Deferred did not fire within {timeout}s: {deferred!r}")
        reactor.iterate(0.01)
    result = outcome[0]
    if hasattr(result, "raiseException") and hasattr(result, "value"):
        result.raiseException()
    return result


def settle(predicate: Callable[[], Any], timeout: float = 15.0, what: str = "") -> Any:
    """Pump the reactor until ``predicate()`` is truthy; returns its value.

    Raises:
        TimeoutError: still falsy after ``timeout`` seconds.
    """
    reactor = _reactor()
    end = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > end:
            raise TimeoutError(f"Not true within {timeout}s: {what or predicate!r}")
        reactor.iterate(0.01)
    return value


def _reactor() -> Any:
    from twisted.internet import reactor

    return reactor


def strip_ansi(text: str) -> str:
    """``text`` without ANSI escape sequences."""
    return _ANSI.sub("", text)


class TelnetClient:
    """A player's telnet connection; refuses every telnet option the server offers.

    Args:
        port: The server's telnet port on 127.0.0.1.
        timeout: Seconds to wait when connecting.
    """

    def __init__(self, port: int, timeout: float = 10.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.settimeout(0.05)
        self.text = ""
        self._raw = b""

    def close(self) -> None:
        """Disconnect."""
        self.sock.close()

    def send(self, line: str) -> None:
        """Send one line of input."""
        self.sock.sendall(line.encode() + b"\r\n")

    def expect(self, pattern: str, timeout: float = 15.0) -> str:
        """Read until ``pattern`` (a regular expression) shows up; returns the text up to it.

        The text before the match and the match itself are consumed.

        Raises:
            TimeoutError: it did not show up (the message shows what did).
        """
        regex = re.compile(pattern)
        end = time.monotonic() + timeout
        while (match := regex.search(self.text)) is None:
            if time.monotonic() > end:
                raise TimeoutError(f"{pattern!r} not seen in {timeout}s; got:\n{self.text[-3000:]}")
            self._read()
        seen = self.text[: match.end()]
        self.text = self.text[match.end() :]
        return seen

    def drain(self, seconds: float = 0.3) -> str:
        """Read for ``seconds`` and return (and consume) everything received."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._read()
        seen, self.text = self.text, ""
        return seen

    def _read(self) -> None:
        try:
            data = self.sock.recv(65536)
        except TimeoutError:
            return
        if not data:
            raise ConnectionError(f"The server closed the connection; last text:\n{self.text}")
        self._raw += data
        out = bytearray()
        raw, i = self._raw, 0
        while i < len(raw):
            byte = raw[i]
            if byte != IAC:
                out.append(byte)
                i += 1
                continue
            if i + 1 >= len(raw):
                break
            command = raw[i + 1]
            if command in (DO, DONT, WILL, WONT):
                if i + 2 >= len(raw):
                    break
                if command in (DO, WILL):
                    refusal = WONT if command == DO else DONT
                    self.sock.sendall(bytes([IAC, refusal, raw[i + 2]]))
                i += 3
            elif command == SB:
                end = raw.find(bytes([IAC, SE]), i)
                if end < 0:
                    break
                i = end + 2
            elif command == IAC:
                out.append(IAC)
                i += 2
            else:
                i += 2
        self._raw = raw[i:]
        self.text += strip_ansi(out.decode("utf-8", "replace")).replace("\r", "")


class AssistantTestMixin:
    """Put before an Evennia test class (``BaseEvenniaTest``...): adds ``self.assistant``.

    The assistant is a character named ``Barkeep`` in ``self.room1``, with its mindspace
    store in a temporary directory and its LLM at ``self.llm_url`` (an OpenAI-compatible
    endpoint; set it, or set ``self.llm`` to a
    :class:`~mindspace.testing.ChatCompletionsServer`, before ``setUp`` runs). Its ticker
    Script is stopped: ticks run when an addressed event nudges the runtime, or when a
    test calls ``self.assistant.mindspace.poll()``.
    """

    assistant_typeclass: Any = None
    assistant_key = "Barkeep"
    assistant_attributes: tuple[tuple[str, Any], ...] = ()

    if TYPE_CHECKING:
        llm: Any
        room1: Any

        def addCleanup(self, function: Callable[..., Any], /, *args: Any) -> None: ...  # noqa: N802

    def setUp(self) -> None:
        """Create the assistant character."""
        super().setUp()  # type: ignore[misc]
        from evennia.utils import create

        from mindspace.hosts.evennia.typeclasses import TICKER_KEY, AssistantCharacter

        self.mindspace_dir = Path(tempfile.mkdtemp(prefix="mindspace-evennia-"))
        url = getattr(self, "llm_url", None) or self.llm.url
        attributes = [
            ("mindspace_database_url", str(self.mindspace_dir / "mindspace.db")),
            ("mindspace_llm_base_url", url),
            ("mindspace_llm_max_retries", 0),
            ("mindspace_thinking_delay", 0),
            *self.assistant_attributes,
        ]
        self.assistant = create.create_object(
            self.assistant_typeclass or AssistantCharacter,
            key=self.assistant_key,
            location=self.room1,
            home=self.room1,
            attributes=attributes,
        )
        for script in self.assistant.scripts.get(TICKER_KEY):
            script.stop()

    def tearDown(self) -> None:
        """Forget the runtime, close the stores, remove the temporary directory."""
        from mindspace.hosts.evennia.bridge import get_bridge
        from mindspace.hosts.evennia.roots import close_stores
        from mindspace.hosts.evennia.runtime import forget_runtime

        forget_runtime(self.assistant)
        wait(get_bridge().run(close_stores()))
        shutil.rmtree(self.mindspace_dir, ignore_errors=True)
        super().tearDown()  # type: ignore[misc]

    def listen(self, obj: Any) -> list[str]:
        """Record, as plain lines, every message ``obj`` receives from now on."""
        from mindspace.hosts.evennia.perception import split_message

        heard: list[str] = []
        original = obj.msg

        def msg(text: Any = None, *args: Any, **kwargs: Any) -> Any:
            line, _kind = split_message(text)
            if line:
                heard.append(line)
            return original(text, *args, **kwargs)

        obj.msg = msg
        self.addCleanup(setattr, obj, "msg", original)
        return heard

    def hear(self, heard: list[str], pattern: str, timeout: float = 15.0) -> str:
        """Pump the reactor until a line in ``heard`` matches ``pattern``; returns it."""
        regex = re.compile(pattern)

        def found() -> str | None:
            return next((line for line in heard if regex.search(line)), None)

        line: str = settle(found, timeout, what=f"{pattern!r} in {heard!r}")
        return line

    def on_loop(self, fn: Callable[[Any], Any], timeout: float = 15.0) -> Any:
        """Run ``fn(assistant)`` on the asyncio loop and return its result."""

        async def run(assistant: Any) -> Any:
            return fn(assistant)

        return wait(self.assistant.mindspace.call(run), timeout)
