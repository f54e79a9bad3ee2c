"""The public API: what ``from mindspace import ...`` offers an integrator.

Every name in ``mindspace.__all__`` imports, is the object its home module defines, and
``import mindspace`` alone stays cheap (the names load on first use).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import mindspace
from mindspace import errors

# The ports an integrator implements and the errors one catches (issue #18's acceptance).
PORTS = ["LLM", "Embedder", "Store", "World", "Clock", "Tool"]
ERRORS = [
    "MindspaceError",
    "ConfigError",
    "ConcurrencyError",
    "LLMError",
    "EmbeddingError",
    "StorageError",
    "AssistantNotFoundError",
    "RecordNotFoundError",
    "InvalidInputError",
    "ToolError",
]


@pytest.mark.parametrize("name", sorted(mindspace.__all__))
def test_every_public_name_imports(name: str) -> None:
    assert getattr(mindspace, name) is not None
    assert name in dir(mindspace)


def test_the_ports_and_catchable_errors_are_exported() -> None:
    assert set(PORTS + ERRORS) <= set(mindspace.__all__)
    for name in ERRORS:
        error = getattr(mindspace, name)
        assert error is getattr(errors, name)
        assert issubclass(error, mindspace.MindspaceError)


def test_the_catchable_errors_catch_what_opening_raises(tmp_path: Path) -> None:
    settings = mindspace.Settings(data_dir=tmp_path, embedder="none")
    with pytest.raises(mindspace.StorageError, match="No database file"):
        mindspace.open_assistant("nobody", settings=settings, create=False)
    mindspace.open_store(settings).close()  # creates the database, no assistant
    with pytest.raises(mindspace.AssistantNotFoundError):
        mindspace.open_assistant("nobody", settings=settings, create=False)


def test_import_mindspace_loads_neither_the_engine_nor_sqlalchemy() -> None:
    code = (
        "import sys, mindspace\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('sqlalchemy', 'openai', 'fastapi', 'numpy') or m.startswith('mindspace.engine')))\n"
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
    assert done.stdout.strip() == "[]"
