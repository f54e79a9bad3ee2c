"""Start-up: ``import mindspace`` and ``mindspace --help`` load no model SDK, web stack or ORM.

People run the CLI often; loading the openai SDK, FastAPI, Evennia, SQLAlchemy or the
embedder's tokenizer just to print help made every command take seconds. The processes
run with ``-X importtime``, whose report names every module the process imported.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HEAVY = ("openai", "fastapi", "uvicorn", "evennia", "sqlalchemy", "tokenizers", "safetensors")


def _imported(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env["PYTHONIOENCODING"] = "utf-8"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    modules = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    assert "mindspace" in modules, done.stderr[-2000:]  # the report really lists imports
    return done, modules


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_import_mindspace_loads_no_heavy_package() -> None:
    done, modules = _imported("-c", "import mindspace; print(mindspace.__version__)")
    assert done.returncode == 0, done.stderr[-2000:]
    assert _heavy(modules) == []
    assert "mindspace.engine" not in modules


@pytest.mark.parametrize("args", [("--help",), ("journal", "--help"), ("goals", "--help")])
def test_help_loads_no_heavy_package(args: tuple[str, ...]) -> None:
    done, modules = _imported("-m", "mindspace.hosts.cli.app", *args)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Usage: mindspace" in done.stdout
    assert _heavy(modules) == []
    assert "pydantic_settings" not in modules


def test_public_names_still_import_from_the_package() -> None:
    code = (
        "import sys\n"
        "from mindspace import Assistant, ManualClock, Settings, ToolError, open_assistant\n"
        "import mindspace.engine.assistant as engine, mindspace.runtime as runtime\n"
        "assert Assistant is engine.Assistant and open_assistant is runtime.open_assistant\n"
        "assert 'Assistant' in dir(__import__('mindspace'))\n"
        "try:\n"
        "    from mindspace import NoSuchThing\n"
        "except ImportError as exc:\n"
        "    print('refused:', exc)\n"
        "print(sorted(m for m in ('openai', 'fastapi') if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: cannot import name 'NoSuchThing' from 'mindspace'" in done.stdout
    # Opening assistants needs the engine and the store, but not a model SDK or FastAPI.
    assert done.stdout.strip().endswith("[]")
