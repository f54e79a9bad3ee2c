"""A throwaway Evennia game on loopback for end-to-end tests, started robustly under load.

Why not just ``evennia start``: the launcher spawns the Portal (a ``twistd`` process that
imports Django and Evennia) and then polls it 20 times, 0.5 s apart
(``evennia_launcher.wait_for_status``). On a busy machine the Portal needs longer than
those ~10 s; the launcher then prints "Connection to Evennia timed out. Try again." and
exits 0 without ever asking the Portal to start the Server, so the server log stays
empty. Once it has asked, the launcher waits for the Server without any limit.

So :meth:`GameServer.start` waits on each process itself, with its own budget: first
the Portal (its pid file names a live process and the AMP port is listening), then, if
the launcher gave up before starting the Server, a second ``evennia start`` (which finds
the Portal running and starts only the Server, as the launcher's own message suggests),
then the Server (its log shows a completed start). If that still fails, everything the
attempt left behind is stopped (its processes, found by their command line; pid files
removed; logs set aside; ports another program took replaced) and the start is tried
once more; a second failure raises :class:`GameServerError` with the launcher's output
and both logs of every attempt.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mindspace.errors import MindspaceError
from mindspace.hosts.evennia.processes import (
    alive,
    free_port,
    game_processes,
    listening,
    python_path,
    terminate,
    text_of,
)

if TYPE_CHECKING:
    from mindspace.hosts.evennia.testing import TelnetClient

__all__ = ["GameServer", "GameServerError", "StartAttempt", "free_port"]

# What the launcher prints once the Portal answered; then it asks it to start the Server.
_PORTAL_ANSWERED = "Portal started."
_POLL = 0.1


class GameServerError(MindspaceError):
    """The test game server could not be created, started, reloaded or stopped."""


@dataclass
class _Launch:
    """One launcher run in the background, its output going to a file."""

    command: str
    process: subprocess.Popen[bytes]
    output_file: Path

    def output(self) -> str:
        return self.output_file.read_text(errors="replace") if self.output_file.exists() else ""


@dataclass
class StartAttempt:
    """What one try at starting the server took and printed.

    Attributes:
        portal_seconds: From ``evennia start`` until the Portal was up (None: never).
        server_seconds: From then until the Server had started (None: never).
        launcher_output: Everything the launcher runs of this attempt printed.
        error: Why the attempt failed (empty when it succeeded).
        logs: The portal and server logs as the failed attempt left them.
    """

    portal_seconds: float | None = None
    server_seconds: float | None = None
    launcher_output: str = ""
    error: str = ""
    logs: dict[str, str] = field(default_factory=dict)


class GameServer:
    """A throwaway Evennia game on loopback, driven with the ``evennia`` launcher.

    Args:
        root: A directory to create the game directory in.
        settings: Extra lines for ``server/conf/settings.py`` (after the loopback ones).
        superuser: ``(username, password)`` created at the first start.
        env: Extra environment for the launcher and the server processes.

    Attributes:
        attempts: One :class:`StartAttempt` per try of the last :meth:`start`.
    """

    def __init__(
        self,
        root: Path,
        *,
        settings: str = "",
        superuser: tuple[str, str] = ("admin", "mindspace-test-1"),
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.root = root
        self.game_dir = root / "game"
        self.superuser = superuser
        self.telnet_port = free_port()
        self.amp_port = free_port()
        self.extra_settings = settings
        self.attempts: list[StartAttempt] = []
        bin_dir = str(Path(sys.executable).parent)
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("MINDSPACE_", "EVENNIA_", "DJANGO_"))
        }
        self.env["PATH"] = bin_dir + os.pathsep + self.env.get("PATH", "")  # twistd, evennia
        self.env["PYTHONPATH"] = python_path(self.env.get("PYTHONPATH", ""), self.game_dir)
        self.env.update(env or {})
        self.launcher = str(Path(bin_dir) / "evennia")
        self._launches: list[_Launch] = []
        self._launch_count = 0

    def create(self) -> GameServer:
        """``evennia --init``, loopback-only settings, ``evennia migrate``."""
        self._run("--init", "game", cwd=self.root)
        lines = [
            "",
            "# mindspace test server: loopback only, free ports, no web server.",
            "LOCKDOWN_MODE = True",
            'TELNET_INTERFACES = ["127.0.0.1"]',
            'SSH_INTERFACES = ["127.0.0.1"]',
            'SSL_INTERFACES = ["127.0.0.1"]',
            'WEBSERVER_INTERFACES = ["127.0.0.1"]',
            'WEBSOCKET_CLIENT_INTERFACE = "127.0.0.1"',
            "WEBSERVER_ENABLED = False",
            "WEBCLIENT_ENABLED = False",
            "WEBSOCKET_CLIENT_ENABLED = False",
            'AMP_HOST = "127.0.0.1"',
            'AMP_INTERFACE = "127.0.0.1"',
            self.extra_settings,
        ]
        with self._settings_file.open("a") as out:
            out.write("\n".join(lines) + "\n")
        self._write_ports()
        self._run("migrate", timeout=600)
        return self

    def start(
        self, portal_timeout: float = 240, server_timeout: float = 240, tries: int = 2
    ) -> str:
        """Start the Portal and the Server, waiting on each; retry once if that fails.

        The superuser is created from the environment at the first start, and after its
        initial setup Evennia restarts the server once; this returns after that.

        Args:
            portal_timeout: Seconds from ``evennia start`` until the Portal is up (the
                launcher allows ~10); the launcher's own start-up counts too.
            server_timeout: Seconds for the Server to start once the Portal is up.
            tries: How many times to try, each after cleaning up the one before.

        Returns:
            What the launcher printed in the successful try.

        Raises:
            GameServerError: No try succeeded; the message has, for every try, the
                launcher's output and the portal and server logs.
        """
        self.attempts = []
        for number in range(1, tries + 1):
            attempt = StartAttempt()
            self.attempts.append(attempt)
            if number > 1:
                self._clean_up(set_logs_aside=f"try{number - 1}")
            try:
                self._start_once(attempt, portal_timeout, server_timeout)
            except GameServerError as error:
                attempt.error = str(error)
                attempt.launcher_output = self._outputs()
                attempt.logs = {name: self.log(name) for name in ("portal.log", "server.log")}
                self._stop_launchers()
                continue
            return attempt.launcher_output
        self._clean_up()
        raise GameServerError(self._failure_report(portal_timeout, server_timeout))

    def reload(self, timeout: float = 300) -> str:
        """``evennia reload``: the server process restarts, players stay connected."""
        return self._run("reload", timeout=timeout)

    def stop(self, timeout: float = 120) -> str:
        """``evennia stop``; whatever it leaves running is then stopped by pid.

        Never raises for a launcher that fails or hangs: the processes, pid files and
        ports are cleaned up either way. Returns the launcher's output.
        """
        try:
            return self._run("stop", timeout=timeout)
        except GameServerError as error:
            return str(error)
        finally:
            self._clean_up()

    def log(self, name: str = "server.log") -> str:
        """A log file of the game (``server.log``, ``portal.log``)."""
        path = self._logs_dir / name
        return path.read_text(errors="replace") if path.exists() else ""

    def connect(self, username: str, password: str, *, create: bool = False) -> TelnetClient:
        """Log in over telnet (creating the account first with ``create``)."""
        from mindspace.hosts.evennia.testing import TelnetClient

        client = TelnetClient(self.telnet_port)
        client.send("look")  # (re)shows the connection screen
        client.expect("connect <username> <password>")
        if create:
            client.send(f"create {username} {password}")
            client.expect("Is this what you intended")
            client.send("y")
            client.expect("was created")
        client.send(f"connect {username} {password}")
        client.expect(r"(?i)you become|welcome")
        return client

    # -- starting -------------------------------------------------------------------

    def _start_once(
        self, attempt: StartAttempt, portal_timeout: float, server_timeout: float
    ) -> None:
        started = time.monotonic()
        first = self._spawn("start")
        self._wait(
            self._portal_up, portal_timeout, f"the Portal did not come up in {portal_timeout:g}s"
        )
        portal_up = time.monotonic()
        attempt.portal_seconds = portal_up - started
        # The launcher either asked the Portal to start the Server (and now waits for it)
        # or gave up on the Portal too early; then a second `evennia start` asks it.
        self._wait(
            lambda: first.process.poll() is not None or _PORTAL_ANSWERED in first.output(),
            portal_timeout,
            "the launcher neither reached the Portal nor gave up",
        )
        if _PORTAL_ANSWERED not in first.output():
            second = self._spawn("start")
            self._wait(
                lambda: second.process.poll() is not None,
                server_timeout,
                "the second `evennia start` (it starts the Server) did not finish",
            )
        self._wait(
            self._server_ready,
            server_timeout,
            f"the Server did not start in {server_timeout:g}s after the Portal",
        )
        attempt.server_seconds = time.monotonic() - portal_up
        # The launcher returns once the Server has connected; it has nothing left to do.
        with contextlib.suppress(subprocess.TimeoutExpired):
            first.process.wait(timeout=30)
        attempt.launcher_output = self._outputs()
        self._stop_launchers()

    def _wait(self, done: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll ``done`` until true; fail early once a process shows it cannot be."""
        end = time.monotonic() + timeout
        while not done():
            failure = self._failure()
            if failure or time.monotonic() > end:
                raise GameServerError(failure or what)
            time.sleep(_POLL)

    def _failure(self) -> str:
        """Why waiting any longer is pointless, or ``""``."""
        for launch in self._launches:
            output = launch.output()
            if "Traceback" in output or "process error" in output.lower():
                return f"`{launch.command}` failed"
            if launch.process.poll() not in (None, 0):
                return f"`{launch.command}` exited with status {launch.process.returncode}"
        portal = self._pid("portal.pid")
        if portal is not None and not alive(portal):
            return f"the Portal (pid {portal}) exited"
        launched = self._launches[:1]
        if (
            launched
            and launched[0].process.poll() is not None
            and Path("/proc").is_dir()  # else processes cannot be found by command line
            and not self._game_processes()
            and not self._portal_up()
        ):
            return "the Portal is not running (it exited, or it never started)"
        return ""

    def _portal_up(self) -> bool:
        pid = self._pid("portal.pid")
        return pid is not None and alive(pid) and listening(self.amp_port)

    def _server_ready(self) -> bool:
        log = self.log()
        runs = log.split(" starting up.")
        if "Restarting Server once." in log and len(runs) < 3:
            return False
        return len(runs) > 1 and "successfully" in runs[-1]

    def _spawn(self, *args: str) -> _Launch:
        user, password = self.superuser
        self._launch_count += 1
        output_file = self.root / f"launcher-{self._launch_count}.out"
        env = {
            **self.env,
            "EVENNIA_SUPERUSER_USERNAME": user,
            "EVENNIA_SUPERUSER_PASSWORD": password,
            "PYTHONUNBUFFERED": "1",  # its progress must reach the file as it is printed
        }
        with output_file.open("wb") as output:
            process = subprocess.Popen(
                [self.launcher, *args],
                cwd=self.game_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        launch = _Launch(f"evennia {' '.join(args)}", process, output_file)
        self._launches.append(launch)
        return launch

    def _outputs(self) -> str:
        return "\n".join(f"$ {launch.command}\n{launch.output()}" for launch in self._launches)

    def _failure_report(self, portal_timeout: float, server_timeout: float) -> str:
        parts = [
            f"The Evennia test server did not come up (tries: {len(self.attempts)}; each "
            f"allowed {portal_timeout:g}s for the Portal, then {server_timeout:g}s for the "
            f"Server). Read the output below; if the machine is only very busy, pass larger "
            f"portal_timeout/server_timeout to GameServer.start()."
        ]
        for number, attempt in enumerate(self.attempts, 1):
            parts.append(f"\n===== try {number}: {attempt.error}")
            parts.append(f"--- launcher output:\n{attempt.launcher_output[-4000:] or '(none)'}")
            for name in ("portal.log", "server.log"):
                text = attempt.logs.get(name, "")
                parts.append(f"--- {name}:\n{text[-4000:] or '(empty)'}")
        return "\n".join(parts)

    # -- cleaning up ----------------------------------------------------------------

    def _clean_up(self, set_logs_aside: str = "") -> None:
        """Stop every process of this game, remove its pid files, free its ports."""
        self._stop_launchers()
        if Path("/proc").is_dir():
            # By command line, not by pid file: a stale pid may belong to another program.
            pids = self._game_processes()
        else:
            pids = {pid for name in ("server.pid", "portal.pid") if (pid := self._pid(name))}
        terminate(pids)
        for name in ("server.pid", "portal.pid"):
            (self.game_dir / "server" / name).unlink(missing_ok=True)
        if set_logs_aside:
            for name in ("portal.log", "server.log"):
                path = self._logs_dir / name
                if path.exists():
                    path.rename(path.with_name(f"{name}.{set_logs_aside}"))
        # Our own processes are gone by now, so a port still taken is taken by another.
        end = time.monotonic() + 5
        while any(listening(p) for p in (self.telnet_port, self.amp_port)):
            if time.monotonic() > end:
                # Something else took a port meanwhile: move to fresh ones.
                self.telnet_port, self.amp_port = free_port(), free_port()
                self._write_ports()
                break
            time.sleep(_POLL)

    def _stop_launchers(self) -> None:
        """Kill launcher runs still waiting; the next try starts with none."""
        for launch in self._launches:
            if launch.process.poll() is None:
                launch.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                launch.process.wait(timeout=10)
        self._launches = []

    def _game_processes(self) -> set[int]:
        """Pids of processes started for this game (catches one without a pid file yet)."""
        return game_processes(self.game_dir)

    # -- files ----------------------------------------------------------------------

    @property
    def _settings_file(self) -> Path:
        return self.game_dir / "server" / "conf" / "settings.py"

    @property
    def _logs_dir(self) -> Path:
        return self.game_dir / "server" / "logs"

    def _write_ports(self) -> None:
        # Appended, so a later block (fresh ports for a retry) overrides an earlier one.
        with self._settings_file.open("a") as out:
            out.write(f"TELNET_PORTS = [{self.telnet_port}]\nAMP_PORT = {self.amp_port}\n")

    def _pid(self, name: str) -> int | None:
        path = self.game_dir / "server" / name
        try:
            return int(path.read_text().strip())
        except (OSError, ValueError):
            return None

    def _run(self, *args: str, cwd: Path | None = None, timeout: float = 300) -> str:
        command = f"evennia {' '.join(args)}"
        try:
            done = subprocess.run(
                [self.launcher, *args],
                cwd=cwd or self.game_dir,
                env=self.env,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            output = text_of(error.stdout) + text_of(error.stderr)
            raise GameServerError(
                f"`{command}` did not finish within {timeout:g}s:\n{output}\n{self._logs()}"
            ) from None
        output = done.stdout + done.stderr
        failed = "Traceback" in output or "process error" in output.lower()
        if done.returncode != 0 or failed:
            raise GameServerError(
                f"`{command}` failed (exit {done.returncode}):\n{output}\n{self._logs()}"
            )
        return output

    def _logs(self) -> str:
        return "\n".join(
            f"{name}:\n{self.log(name)[-4000:] or '(empty)'}"
            for name in ("portal.log", "server.log")
        )
