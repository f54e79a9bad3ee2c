"""The first minutes of a new user: `make run` in a fresh clone, then README.md's next
commands exactly as written, in one shell, with the activation it shows.

A new user got "mindspace: command not found", then "No database at ~/.local/share/...
(from MINDSPACE_DATA_DIR)" although nothing set it, then "No assistant 'default'". Here
the clone is made with git from this repository's committed tree, `make run` runs its
own Makefile, and the block after `make run` in README.md runs line by line in one bash
(so `. .venv/bin/activate` and `export` carry on, as in a terminal).

What differs from a user's machine, and why:

* `.venv` is not installed from the network (minutes, and the machine may be offline):
  it is a real virtualenv made with ``venv`` whose site-packages reach the test's own
  environment through a ``.pth`` file (the clone's ``src`` first), with a ``mindspace``
  console script like pip's. Its install stamp is set, so `make run` skips only the
  installs; everything after them (the demo, the printed next steps) is the Makefile's.
* ``MINDSPACE_EMBEDDER=hashing``: MiniLM takes seconds to load in each of the commands;
  what the embedder does is tested elsewhere (the docs check does the same).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow

CHAT = "Hello! My name is Dave and I prefer red wine.\nWhat do I like to drink?\n"


def _next_commands(readme: str) -> list[str]:
    """The sh block that follows the one with `make run`: its command lines."""
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.DOTALL)
    start = next(n for n, block in enumerate(blocks) if "make run" in block)
    lines = [line.split("  #", 1)[0].strip() for line in blocks[start + 1].splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _venv(clone: Path) -> None:
    """The clone's .venv: a real virtualenv reaching this environment's packages."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(clone / ".venv")], check=True
    )
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    packages = clone / ".venv" / "lib" / version / "site-packages"
    shared = sysconfig.get_paths()["purelib"]
    # Sorted by name: the clone's src comes before the shared environment's packages
    # (whose editable install points at another checkout).
    (packages / "00_mindspace_clone.pth").write_text(f"{clone / 'src'}\n")
    (packages / "zz_shared.pth").write_text(
        f"import site; site.addsitedir({shared!r})\n", encoding="utf-8"
    )
    script = clone / ".venv" / "bin" / "mindspace"
    script.write_text(
        f"#!{clone / '.venv' / 'bin' / 'python'}\n"
        "import sys\nfrom mindspace.hosts.cli.app import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    (clone / ".venv" / ".stamp-run").touch()


def test_readme_next_commands_work_after_make_run(tmp_path: Path) -> None:
    clone = tmp_path / "mindspace"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    _venv(clone)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MINDSPACE_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(HOME=str(tmp_path / "home"), MINDSPACE_EMBEDDER="hashing", COLUMNS="120")
    env["PATH"] = ":".join(p for p in env["PATH"].split(":") if "/.venv/" not in p)

    made = subprocess.run(
        ["make", "run"], cwd=clone, env=env, capture_output=True, text=True, timeout=900
    )
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    assert "pip install" not in made.stdout  # the stamp held: nothing was installed
    commands = _next_commands((clone / "README.md").read_text(encoding="utf-8"))
    printed = made.stdout.split("Next, in this shell", 1)[1]
    for line in commands[:3]:  # make run prints what the README shows first
        assert line.split("  #")[0].strip() in printed.replace("\n  ", "\n"), (line, printed)

    script = ["set -u"]
    for n, command in enumerate(commands):
        script += [f"echo '>>> {n}'", command, f'echo "<<< {n} $?"']
    ran = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=clone,
        env=env,
        input=CHAT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    out = ran.stdout
    for n, command in enumerate(commands):
        assert f"<<< {n} 0" in out, f"{command!r} failed:\n{out}\n{ran.stderr}"
    assert "Traceback" not in out + ran.stderr
    assert "error:" not in ran.stderr, ran.stderr

    def output_of(prefix: str) -> str:
        n = next(i for i, c in enumerate(commands) if c.startswith(prefix))
        return out.split(f">>> {n}\n", 1)[1].split(f"<<< {n} ", 1)[0]

    # Each command read the demo's data: its assistant, goals, memories and people.
    assert "Build a tavern" in output_of("mindspace goals")
    assert "Alice" in output_of("mindspace entities")
    assert "Alice prefers dark ale" in output_of("mindspace session")
    assert "barkeep" in output_of("mindspace memories")
    assert "red wine" in output_of("mindspace chat").split("What do I like", 1)[-1]
