"""Follow docs/evennia.md from the top: a new virtualenv, a new game, a talking NPC.

Reads the section "From zero to a talking NPC" of docs/evennia.md and runs its blocks in
order, as a builder would type them:

* ``sh`` blocks run in bash, one shell per block, carrying the working directory and the
  activated virtualenv from one block to the next; ``path/to/mindspace`` is this
  repository. ``evennia start`` runs again if it prints the launcher's "timed out" (the
  docs say so). The superuser comes from ``EVENNIA_SUPERUSER_USERNAME``/``_PASSWORD``
  (the docs' way to start without questions).
* ``python`` blocks go into the file the step names: appended to
  ``server/conf/settings.py`` and ``typeclasses/characters.py``, inserted after
  ``super().at_cmdset_creation()`` in ``commands/default_cmdsets.py``.
* ``text`` blocks are typed in the game over telnet, as the superuser.

What the harness adds, and says so: the model is a scripted chat-completions server in
this process (its URL replaces the docs' example URL), ``MINDSPACE_EMBEDDER = "none"``
(the docs' alternative to installing the weights), and the game is locked to loopback on
free ports with no web server, so that it never collides with anything else running.

Usage (from the repository root, with any Python 3.11+ that has this checkout's
dependencies; the game's own virtualenv is made from ``--python``)::

    PYTHONPATH=src python scripts/evennia_from_docs.py [--python python3.11] [--keep]

Prints each step with its time and what it checked, then one JSON line of timings.
Exit status 0: every step did what the docs say.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mindspace.hosts.evennia.processes import free_port
from mindspace.hosts.evennia.testing import TelnetClient
from mindspace.testing import ChatCompletionsServer

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs" / "evennia.md"
SECTION = "## From zero to a talking NPC"
USER, PASSWORD = "builder", "mindspace-docs-1"
_FENCE = re.compile(r"^( *)```(\w+)\n(.*?)^\1```", re.S | re.M)
_PY_FILE = re.compile(r"`((?:server|typeclasses|commands)/[\w/]+\.py)`")


@dataclass
class Block:
    step: int
    lang: str
    code: str
    before: str  # the step's text up to the block


def blocks() -> list[Block]:
    """The fenced blocks of the section, with the step each belongs to."""
    text = DOCS.read_text()
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    section = text[start:end]
    found = []
    for match in _FENCE.finditer(section):
        head = section[: match.start()]
        steps = re.findall(r"^(\d+)\. \*\*", head, re.M)
        step_start = max(head.rfind(f"\n{steps[-1]}. **"), 0) if steps else 0
        indent = len(match.group(1))
        code = "\n".join(line[indent:] for line in match.group(3).splitlines())
        found.append(Block(int(steps[-1]) if steps else 0, match.group(2), code, head[step_start:]))
    return found


class Walk:
    def __init__(self, root: Path, python: str, llm: ChatCompletionsServer) -> None:
        self.root = root
        self.cwd = root
        self.venv: Path | None = None
        self.llm = llm
        self.timings: dict[str, float] = {}
        self.telnet_port = free_port()
        python_dir = str(Path(shutil.which(python) or python).resolve().parent)
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("MINDSPACE_", "EVENNIA_", "DJANGO_", "VIRTUAL_ENV", "PYTHON"))
        }
        # `python` in the docs is the interpreter chosen here.
        self.env["PATH"] = python_dir + os.pathsep + self.env.get("PATH", "")
        self.env["EVENNIA_SUPERUSER_USERNAME"] = USER
        self.env["EVENNIA_SUPERUSER_PASSWORD"] = PASSWORD
        self.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        link = root / "python"
        if not link.exists():
            link.symlink_to(Path(shutil.which(python) or python).resolve())
        self.env["PATH"] = str(root) + os.pathsep + self.env["PATH"]

    # -- sh ----------------------------------------------------------------------------
    def shell(self, block: Block) -> None:
        code = block.code.replace("path/to/mindspace", str(REPO))
        for line in code.splitlines():
            command = line.strip()
            if not command or command.startswith("#"):
                continue
            tries = 2 if command == "evennia start" else 1
            for attempt in range(1, tries + 1):
                output = self._run(command)
                if command == "evennia start" and "timed out" in output and attempt < tries:
                    print("    (the launcher timed out; running it again, as the docs say)")
                    continue
                break
            if command == "evennia start":
                self._wait_for_restart()

    def _wait_for_restart(self) -> None:
        """The first start sets the game up and restarts the Server once; wait for that.

        A player who logs in before the restart is cut off by it (the launcher returns
        after the first start); a person at the keyboard would simply log in again.
        """
        log = self.cwd / "server" / "logs" / "server.log"
        end = time.monotonic() + 240
        while time.monotonic() < end:
            text = log.read_text(errors="replace") if log.exists() else ""
            runs = text.split(" starting up.")
            restarting = "Restarting Server once." in text
            if len(runs) > (2 if restarting else 1) and "successfully" in runs[-1]:
                return
            time.sleep(0.2)
        raise SystemExit(f"the Server did not finish starting in 240 s; see {log}")

    def _run(self, command: str) -> str:
        activate = f". {self.venv}/bin/activate && " if self.venv else ""
        script = f"set -e\ncd {self.cwd}\n{activate}{command}\npwd > {self.root}/.cwd\n"
        script += 'echo "${VIRTUAL_ENV:-}" > ' + f"{self.root}/.venv-path\n"
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "-c", script],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        took = time.monotonic() - started
        self.timings[command] = round(took, 1)
        output = done.stdout + done.stderr
        print(f"  $ {command}   ({took:.1f} s)")
        if done.returncode != 0 or "Traceback" in output:
            raise SystemExit(f"`{command}` failed (exit {done.returncode}):\n{output[-4000:]}")
        self.cwd = Path((self.root / ".cwd").read_text().strip())
        venv = (self.root / ".venv-path").read_text().strip()
        self.venv = Path(venv) if venv else self.venv
        if command.startswith("evennia --init"):
            self._isolate(self.cwd / command.split()[-1])
        return output

    def _isolate(self, game: Path) -> None:
        settings = game / "server" / "conf" / "settings.py"
        ports = {name: free_port() for name in ("amp", "web", "webproxy", "ws")}
        lines = [
            "",
            "# --- added by scripts/evennia_from_docs.py: loopback, free ports, no web ---",
            "LOCKDOWN_MODE = True",
            f"TELNET_PORTS = [{self.telnet_port}]",
            'TELNET_INTERFACES = ["127.0.0.1"]',
            f"AMP_PORT = {ports['amp']}",
            'AMP_HOST = "127.0.0.1"',
            'AMP_INTERFACE = "127.0.0.1"',
            f"WEBSERVER_PORTS = [({ports['webproxy']}, {ports['web']})]",
            'WEBSERVER_INTERFACES = ["127.0.0.1"]',
            f"WEBSOCKET_CLIENT_PORT = {ports['ws']}",
            'WEBSOCKET_CLIENT_INTERFACE = "127.0.0.1"',
            "WEBSERVER_ENABLED = False",
            "WEBCLIENT_ENABLED = False",
            "WEBSOCKET_CLIENT_ENABLED = False",
            'MINDSPACE_EMBEDDER = "none"  # the docs\' alternative to the weights package',
            "# --- end of the harness's lines ---",
            "",
        ]
        with settings.open("a") as out:
            out.write("\n".join(lines))
        print(f"    (harness: {settings} locked to loopback, telnet on {self.telnet_port})")

    # -- python ------------------------------------------------------------------------
    def edit(self, block: Block) -> None:
        match = _PY_FILE.findall(block.before)
        assert match, f"step {block.step} names no file for its python block"
        path = self.cwd / match[0]  # the first file the step names
        code = block.code
        if path.name == "settings.py":
            code = re.sub(
                r'MINDSPACE_LLM_BASE_URL = "[^"]*"',
                f'MINDSPACE_LLM_BASE_URL = "{self.llm.url}"  # harness: the scripted model',
                code,
            )
        text = path.read_text()
        if path.name == "default_cmdsets.py":
            anchor = "        super().at_cmdset_creation()\n"
            start = text.index("class CharacterCmdSet")
            at = text.index(anchor, start) + len(anchor)
            text = text[:at] + code + "\n" + text[at:]
        else:
            text = text.rstrip("\n") + "\n\n\n" + code + "\n"
        path.write_text(text)
        print(f"  edited {path.relative_to(self.root)} (step {block.step})")

    # -- in the game -------------------------------------------------------------------
    def play(self, block: Block) -> None:
        client = TelnetClient(self.telnet_port)
        client.send("look")
        client.expect("connect <username> <password>", timeout=60)
        client.send(f"connect {USER} {PASSWORD}")
        client.expect(r"(?i)you become|welcome", timeout=60)
        client.drain(0.5)
        checks = {
            "create/drop": (None, r"You create a new Barkeep"),
            "desc ": (None, r"The description was set on Barkeep"),
            "talk ": ("Dark ale from the cellar.", r'Barkeep says, "Dark ale from the cellar\."'),
            "say ": ("Bread and cheese.", r'Barkeep says, "Bread and cheese\."'),
            "assistant ": (None, r"No open events\."),
        }
        for line in block.code.splitlines():
            command = line.strip()
            if not command:
                continue
            reply, pattern = next(v for k, v in checks.items() if command.startswith(k))
            if reply:
                self.llm.reply(reply)
            started = time.monotonic()
            client.send(command)
            seen = client.expect(pattern, timeout=120)
            took = time.monotonic() - started
            self.timings[command] = round(took, 1)
            print(f"  > {command}   ({took:.1f} s): {pattern}")
            if command.startswith("assistant "):
                flat = " ".join(seen.split())
                assert "ticking (Script #" in flat, flat
        # The description given after creation was in the prompt of the first answer.
        asked = [r for r in self.llm.requests if "on tap" in str(r["messages"])]
        assert asked, "the model was never asked"
        assert "A stout dwarf behind the bar" in str(asked[0]["messages"])
        print("  checked: the description set after creation was in the first prompt")
        client.close()

    def stop(self) -> None:
        try:
            self._run("evennia stop")
        except SystemExit as error:
            print(f"  (evennia stop: {error})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default="python3.11", help="makes the game's virtualenv")
    parser.add_argument("--keep", action="store_true", help="keep the directory afterwards")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="evennia-from-docs-"))
    print(f"Following {DOCS.relative_to(REPO)} in {root}")
    started = time.monotonic()
    with ChatCompletionsServer() as llm:
        walk = Walk(root, args.python, llm)
        try:
            for block in blocks():
                print(f"step {block.step} ({block.lang})")
                if block.lang == "sh":
                    walk.shell(block)
                elif block.lang == "python":
                    walk.edit(block)
                elif block.lang == "text":
                    walk.play(block)
                else:
                    raise SystemExit(f"step {block.step}: unknown block language {block.lang}")
        finally:
            if any(c == "evennia start" for c in walk.timings):
                walk.stop()
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
    total = time.monotonic() - started
    print(json.dumps({"ok": True, "seconds": round(total, 1), "steps": walk.timings}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
