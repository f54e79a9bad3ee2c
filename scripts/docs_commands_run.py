"""Finding the commands in a page and running them (see docs_commands.py for the rules)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from docs_commands_table import (
    CAPTURES,
    EXIT_STATUS,
    FRESH_SHELL_PAGES,
    PLACEHOLDERS,
    SERVERS,
    SETUP,
    SKIP,
    STDIN,
    Server,
)

SHELL = {"sh", "bash", "shell"}
LOOKS_LIKE_A_COMMAND = re.compile(r"^(mindspace|pip|curl|make|export) ")
_FENCE = re.compile(r"^( *)```([^\n`]*)\n(.*?)^\1```[ \t]*$", re.S | re.M)
_HEADING = re.compile(r"^#{1,6} ", re.M)
TIMEOUT = 90.0
"""Seconds a command (or a server's start) may take."""
_TRACEBACK = "Traceback (most recent call last)"
# Shell variables that belong to bash, not to the page: never carried between commands.
_BASH_OWN = (
    "BASH*|PIPESTATUS|FUNCNAME|GROUPS|SECONDS|RANDOM|SRANDOM|LINENO|SHLVL|PPID|UID|EUID|"
    "SHELLOPTS|_|__*|PWD|OLDPWD|DIRSTACK|HISTCMD|EPOCH*|IFS|OPTIND|OPTERR|PS4|HOSTNAME|"
    "HOSTTYPE|MACHTYPE|OSTYPE"
)


@dataclass(frozen=True)
class Command:
    """One command of a page: its text (the tables' key), where it is, what runs."""

    page: str
    line: int
    text: str
    heading: int  # which section of the page (a new shell there on FRESH_SHELL_PAGES)


@dataclass(frozen=True)
class Problem:
    """A page that breaks the rule (an untagged block, a command in a text block)."""

    where: str
    message: str


@dataclass
class CommandResult:
    """What happened to one command."""

    command: Command
    status: Literal["ok", "skip", "fail"]
    detail: str
    seconds: float = 0.0


def pages(repo: Path) -> list[Path]:
    """README.md, then docs/*.md in name order."""
    return [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]


def _strip_comment(line: str) -> str:
    """The line without a trailing ``# comment`` (a ``#`` after a blank, outside quotes)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def extract(page: Path, repo: Path) -> tuple[list[Command], list[Problem]]:
    """The page's commands, in order, and its breaches of the rule."""
    name = page.relative_to(repo).as_posix()
    text = page.read_text(encoding="utf-8")
    commands: list[Command] = []
    problems: list[Problem] = []
    for match in _FENCE.finditer(text):
        start_line = text.count("\n", 0, match.start()) + 1
        lang = match.group(2).strip().split(" ")[0].lower()
        indent = len(match.group(1))
        lines = [line[indent:] for line in match.group(3).splitlines()]
        section = len(_HEADING.findall(text, 0, match.start()))
        if not lang:
            problems.append(Problem(f"{name}:{start_line}", "a fenced block without a language"))
            continue
        logical: list[tuple[int, str]] = []
        pending: list[str] = []
        first = 0
        for offset, raw in enumerate(lines, start=start_line + 1):
            if lang in SHELL:
                body = raw
            elif raw.startswith("$ "):
                body = raw[2:]
            elif pending:
                body = raw
            else:
                if lang != "console" and LOOKS_LIKE_A_COMMAND.match(raw):
                    problems.append(
                        Problem(
                            f"{name}:{offset}",
                            f"a command in a {lang!r} block ({raw.strip()!r}): tag it sh",
                        )
                    )
                continue
            if not pending:
                first = offset
            stripped = body.strip()
            if stripped.endswith("\\"):
                pending.append(stripped[:-1].strip())
                continue
            pending.append(_strip_comment(stripped))
            joined = " ".join(part for part in pending if part)
            pending = []
            if joined:
                logical.append((first, joined))
        commands += [Command(name, line, cmd, section) for line, cmd in logical]
    return commands, problems


def chat_respond(body: dict[str, Any]) -> Any:
    """A coherent model: calls ``mindspace doctor``'s probe tool, answers JSON when asked."""
    from mindspace.hosts.cli.doctor import PROBE_TOOL_NAME
    from mindspace.testing import Step

    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    asked = json.dumps(last.get("content"))
    tools = [
        (t.get("function") or t).get("name") for t in body.get("tools") or () if isinstance(t, dict)
    ]
    if PROBE_TOOL_NAME in tools:
        return Step(tool_calls=[{"name": PROBE_TOOL_NAME, "arguments": {"city": "Paris"}}])
    if "JSON" in asked:
        return Step('{"status": "ok", "count": 3}')
    return Step("Welcome, Alice. I will remember that you like dark ale.")


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class PageRunner:
    """Runs one page's commands in its scratch directory, shell state carried along."""

    def __init__(
        self,
        page: str,
        work: Path,
        names: dict[str, str],
        new_database: Callable[[str], str],
        echo: Callable[[str], None],
    ) -> None:
        self.page = page
        self.dir = work / re.sub(r"\W", "_", page)
        self.names = dict(names)
        self._new_database = new_database
        self.echo = echo
        self.output = ""  # everything the page's commands printed, for CAPTURES
        self.kept: list[tuple[subprocess.Popen[bytes], Path]] = []
        self.section = -1

    def __enter__(self) -> PageRunner:
        home = self.dir / "home"
        home.mkdir(parents=True)
        shim = self.dir / "bin"
        shim.mkdir()
        (shim / "mindspace").write_text(
            f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m mindspace.hosts.cli.app "$@"\n'
        )
        (shim / "mindspace").chmod(0o755)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("MINDSPACE_", "ANTHROPIC_", "OPENAI_", "OTEL_"))
            and k not in ("FORCE_COLOR", "COLUMNS", "LINES", "VIRTUAL_ENV")
            and k != "PYTHONDONTWRITEBYTECODE"
        }
        # Compiled once, kept outside the checkout: ~60 processes import the same modules.
        env["PYTHONPYCACHEPREFIX"] = str(self.dir.parent / ".pycache")
        env.update(
            HOME=str(home),
            PATH=f"{shim}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",
            MINDSPACE_DATA_DIR=str(self.dir),
            MINDSPACE_EMBEDDER="hashing",
            PYTHONIOENCODING="utf-8",
            COLUMNS="100",
        )
        # The checkout's sources, also for a `python` that is not sys.executable.
        src = str(Path(__file__).resolve().parent.parent / "src")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
        self.env = env
        self.state = self.dir / ".shell-state"
        self.cwd = self.dir
        return self

    def __exit__(self, *exc: object) -> None:
        for process, _ in self.kept:
            self._stop(process)

    # -- running -----------------------------------------------------------------------

    def run(self, commands: list[Command]) -> list[CommandResult]:
        results: list[CommandResult] = []
        for setup in SETUP.get(self.page, ()):
            result = self._one(Command(self.page, 0, setup, -1), setup)
            result.detail = f"(setup) {result.detail}"
            results.append(result)
            self._report(result)
        for command in commands:
            if self.page in FRESH_SHELL_PAGES and command.heading != self.section:
                self.state.unlink(missing_ok=True)
                self.cwd = self.dir
            self.section = command.heading
            if command.text in SKIP:
                result = CommandResult(command, "skip", SKIP[command.text])
            else:
                try:
                    result = self._one(command, self._substitute(command.text))
                except LookupError as exc:
                    result = CommandResult(command, "fail", str(exc))
            results.append(result)
            self._report(result)
        return results

    def _report(self, result: CommandResult) -> None:
        where = f"{result.command.page}:{result.command.line}"
        mark = {"ok": "ok  ", "skip": "skip", "fail": "FAIL"}[result.status]
        timing = f" ({result.seconds:.1f} s)" if result.status != "skip" else ""
        self.echo(f"{mark}  {where}  {result.command.text}{timing}")
        if result.status != "ok":
            self.echo(f"      {result.detail}")

    def _substitute(self, text: str) -> str:
        for placeholder, template in PLACEHOLDERS.items():
            if placeholder in text:
                names = re.findall(r"\{(\w+)\}", template)
                value = template.format(**{n: self._name(n) for n in names})
                text = text.replace(placeholder, value)
        for placeholder, pattern in CAPTURES.items():
            if placeholder in text:
                found = re.findall(pattern, self.output)
                if not found:
                    raise LookupError(
                        f"{placeholder!r} stands for an id the page printed before, but no "
                        f"earlier output matches {pattern!r}"
                    )
                text = text.replace(placeholder, found[-1])
        return text

    def _name(self, name: str) -> str:
        if name == "pg_url" and "pg_url" not in self.names:
            self.names["pg_url"] = self._new_database(
                "d" + re.sub(r"\W", "_", self.page).lower()[:40]
            )
        if name not in self.names:
            raise LookupError(f"nothing stands for {{{name}}} yet on {self.page}")
        return self.names[name]

    def _script(self, text: str, *, save: bool) -> str:
        state = shlex.quote(str(self.state))
        lines = [
            "set -o pipefail",
            f"[ -f {state} ] && . {state} 2>/dev/null",
            f"cd {shlex.quote(str(self.cwd))} || exit 97",
            text,
        ]
        if save:
            lines += [
                "__rc=$?",
                f"for __v in $(compgen -v); do case $__v in {_BASH_OWN}) ;; *) declare -p $__v;;"
                f" esac; done > {state} 2>/dev/null",
                f"pwd > {shlex.quote(str(self.dir / '.cwd'))}",
                "exit $__rc",
            ]
        return "\n".join(lines) + "\n"

    def _one(self, command: Command, text: str) -> CommandResult:
        started = time.perf_counter()
        server = SERVERS.get(command.text)
        if server is not None:
            status, detail = self._serve(text, server)
        else:
            status, detail = self._plain(command, text)
        return CommandResult(command, status, detail, time.perf_counter() - started)

    def _plain(self, command: Command, text: str) -> tuple[Literal["ok", "fail"], str]:
        try:
            done = subprocess.run(
                ["bash", "-c", self._script(text, save=True)],
                input=STDIN.get(command.text, "").encode(),
                capture_output=True,
                env=self.env,
                timeout=TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return "fail", f"still running after {TIMEOUT:.0f} s"
        out = done.stdout.decode(errors="replace")
        err = done.stderr.decode(errors="replace")
        self.output += out + err
        # What it printed, kept beside the page's database for whoever reads the run.
        (self.dir / f".out-{command.line}.txt").write_text(f"$ {text}\n{out}\n--- stderr\n{err}")
        cwd_file = self.dir / ".cwd"
        if cwd_file.exists():
            self.cwd = Path(cwd_file.read_text().strip())
        expected = EXIT_STATUS.get(command.text, 0)
        if done.returncode != expected:
            return "fail", (
                f"exit status {done.returncode} (expected {expected}); "
                f"stderr: {_tail(err)!r}; stdout: {_tail(out)!r}"
            )
        if _TRACEBACK in out or _TRACEBACK in err:
            return "fail", f"printed a traceback: {_tail(err or out)!r}"
        if command.text.startswith("curl ") and re.search(r'"success":\s*false', out):
            # curl exits 0 on any HTTP answer: the API's own verdict is in the body.
            return "fail", f"the API refused: {_tail(out)!r}"
        return "ok", ""

    def _serve(self, text: str, server: Server) -> tuple[Literal["ok", "fail"], str]:
        port = free_port()
        if server.kind == "http":
            if re.search(r"--port \d+", text):
                text = re.sub(r"--port \d+", f"--port {port}", text)
            else:
                text = f"{text} --port {port}"
        log = self.dir / f".server-{port}.log"
        with log.open("wb") as sink:
            process = subprocess.Popen(
                ["bash", "-c", self._script(text, save=False)],
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=self.env,
                start_new_session=True,
            )
        ready, why = self._wait_ready(process, server, port, log)
        if ready and server.keep:
            self.names["kept_url"] = f"http://127.0.0.1:{port}"
            self.kept.append((process, log))
            return "ok", ""
        code = self._stop(process)
        printed = log.read_text(errors="replace")
        self.output += printed
        if not ready:
            return "fail", f"{why}; it printed: {_tail(printed)!r}"
        if code not in (0, 130, -signal.SIGINT):
            return "fail", f"exit status {code} after Ctrl+C; it printed: {_tail(printed)!r}"
        if _TRACEBACK in printed:
            return "fail", f"printed a traceback: {_tail(printed)!r}"
        return "ok", ""

    def _wait_ready(
        self, process: subprocess.Popen[bytes], server: Server, port: int, log: Path
    ) -> tuple[bool, str]:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if process.poll() is not None:
                return False, f"it exited (status {process.returncode}) before it was ready"
            if server.kind == "http":
                try:
                    with urllib.request.urlopen(
                        f"http://127.0.0.1:{port}/v1/health", timeout=2
                    ) as answer:
                        body = json.loads(answer.read())
                    if body.get("status") == "ok":
                        return True, ""
                    return False, f"GET /v1/health answered {body!r}"
                except (urllib.error.URLError, ConnectionError, TimeoutError):
                    pass
            elif server.ready in log.read_text(errors="replace"):
                return True, ""
            time.sleep(0.2)
        return False, f"not ready after {TIMEOUT:.0f} s"

    def _stop(self, process: subprocess.Popen[bytes]) -> int:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                return -9
        return process.returncode


def _tail(text: str, chars: int = 600) -> str:
    return text.strip()[-chars:]
