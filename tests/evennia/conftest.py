"""Evennia's test environment for the tests in this folder.

Evennia's test classes need Django settings from a game directory, so this conftest
makes a throwaway one with ``evennia --init`` before the test modules are imported,
sets Django up on it, and creates Evennia's test database (in memory, migrated) for
the session, as ``evennia test`` would.

Each test gets a scripted chat-completions server (real HTTP on loopback) and, for
Evennia's unittest-style classes, finds it as ``self.llm``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("evennia", reason="install the evennia extra: pip install -e '.[evennia]'")

_ROOT = Path(tempfile.mkdtemp(prefix="mindspace-evennia-tests-"))
GAME_DIR = _ROOT / "game"
atexit.register(shutil.rmtree, _ROOT, ignore_errors=True)  # also after --collect-only

# Only the test process's own settings: the store of every test assistant is set
# per test; the embedder is the tests-only hashing one (fast, deterministic).
_TEST_SETTINGS = """
MINDSPACE_EMBEDDER = "hashing"
MINDSPACE_LLM_MODEL = "scripted"
"""


def _setup_django() -> None:
    subprocess.run(
        [str(Path(sys.executable).parent / "evennia"), "--init", "game"],
        cwd=_ROOT,
        check=True,
        capture_output=True,
    )
    with (GAME_DIR / "server" / "conf" / "settings.py").open("a") as out:
        out.write(_TEST_SETTINGS)
    for name in list(os.environ):
        if name.startswith("MINDSPACE_"):
            del os.environ[name]
    here = os.getcwd()
    # settings_default.py finds the game directory by walking up from the cwd.
    os.chdir(GAME_DIR)
    try:
        sys.path.insert(0, str(GAME_DIR))
        os.environ["DJANGO_SETTINGS_MODULE"] = "server.conf.settings"
        import django

        django.setup()
    finally:
        os.chdir(here)


_setup_django()


@pytest.fixture(scope="session", autouse=True)
def evennia_test_database() -> Iterator[None]:
    """Evennia's test environment and a migrated in-memory test database."""
    from evennia.server.tests.testrunner import EvenniaTestSuiteRunner

    runner = EvenniaTestSuiteRunner(verbosity=0, interactive=False)
    runner.setup_test_environment()
    old = runner.setup_databases()
    yield
    runner.teardown_databases(old)
    runner.teardown_test_environment()


@pytest.fixture
def llm_server() -> Iterator[Any]:
    """A scripted chat-completions server on loopback."""
    from mindspace.testing import ChatCompletionsServer

    with ChatCompletionsServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _llm_for_test_classes(request: pytest.FixtureRequest) -> None:
    """Evennia's unittest-style test classes find the scripted server as ``self.llm``."""
    if request.instance is not None:
        request.instance.llm = request.getfixturevalue("llm_server")
