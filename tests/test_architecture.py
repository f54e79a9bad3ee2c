"""The architecture contracts: which layer may import which, checked on every `make test`.

The contracts live in pyproject.toml (``[tool.importlinter]``) and are checked by
import-linter, here and by ``make lint``: the core never imports hosts, storage, the
composition root or an adapter; hosts reach the store and the adapters only through
mindspace.runtime and never touch the unit of work; the engine (its night room too) has
no import cycles; the domain never imports the engine. Each contract is also shown to
fail: a copy of the source tree with one violating module added breaks it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"
SRC = ROOT / "src"


def _config() -> dict[str, dict[str, object]]:
    with PYPROJECT.open("rb") as file:
        linter = tomllib.load(file)["tool"]["importlinter"]
    return {str(c["id"]): c for c in linter["contracts"]}


def _lint(src: Path, *contracts: str) -> subprocess.CompletedProcess[str]:
    """Run lint-imports on the package under ``src`` with the project's contracts."""
    args = ["--config", str(PYPROJECT), "--no-cache"]
    for contract in contracts:
        args += ["--contract", contract]
    code = "import sys; from importlinter.cli import lint_imports_command; lint_imports_command()"
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=src,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_contracts_hold() -> None:
    done = _lint(SRC)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
    # Every contract in pyproject.toml ran.
    assert f"Contracts: {len(_config())} kept" in done.stdout


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("arch") / "src"
    shutil.copytree(
        SRC / "mindspace", copy / "mindspace", ignore=shutil.ignore_patterns("__pycache__")
    )
    return copy


# contract id -> modules to add to a copy of the source tree (path -> code)
VIOLATIONS: dict[str, dict[str, str]] = {
    "core-independent": {"mindspace/journal/violation.py": "import sqlalchemy\n"},
    "hosts-no-storage": {
        "mindspace/hosts/cli/violation.py": "from mindspace.storage.sql import SqlStore\n"
    },
    "hosts-no-adapters": {
        "mindspace/hosts/http/violation.py": "from mindspace.embeddings.minilm import x\n"
    },
    "hosts-no-unit": {"mindspace/hosts/http/violation.py": "from mindspace.state import Unit\n"},
    "engine-acyclic": {
        "mindspace/engine/violation_a.py": "from mindspace.engine import violation_b\n",
        "mindspace/engine/violation_b.py": "from mindspace.engine import violation_a\n",
    },
    "domain-below-engine": {
        "mindspace/memory/violation.py": "from mindspace.engine.night.cycle import SleepCycle\n"
    },
}


def test_every_contract_has_a_violation_test() -> None:
    assert sorted(VIOLATIONS) == sorted(_config())


@pytest.mark.parametrize("contract", sorted(VIOLATIONS))
def test_a_violating_import_breaks_the_contract(source_copy: Path, contract: str) -> None:
    added = [source_copy / path for path in VIOLATIONS[contract]]
    try:
        for path, code in zip(added, VIOLATIONS[contract].values(), strict=True):
            path.write_text(code)
        done = _lint(source_copy, contract)
    finally:
        for path in added:
            path.unlink()
    assert done.returncode == 1, done.stdout[-4000:] + done.stderr[-2000:]
    assert "1 broken" in done.stdout
    assert "violation" in done.stdout  # the report names the offending module


def test_the_copy_without_violations_keeps_every_contract(source_copy: Path) -> None:
    done = _lint(source_copy)
    assert done.returncode == 0, done.stdout[-4000:]


# What a host must never touch: the engine's state and its write lock. A host reads
# through ``assistant.views`` and writes through the facade's coroutines, which serialise
# themselves (docs/architecture.md, "The engine's shape").
_ENGINE_INTERNALS = re.compile(
    r"\._?core\b|\._(executor|ticker|approvals)\b|(?<!reader)\.read\(\)|\.transaction\(|\.lock\b"
    r"|\.state\.(begin|commit)\("
)


def test_hosts_never_reach_into_the_engine() -> None:
    found = [
        f"{path.relative_to(SRC)}:{number}: {line.strip()}"
        for path in sorted((SRC / "mindspace" / "hosts").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if _ENGINE_INTERNALS.search(line) and not line.lstrip().startswith("#")
    ]
    assert found == [], "hosts must use assistant.views and the facade:\n" + "\n".join(found)


def test_the_internals_check_catches_a_host_taking_the_lock() -> None:
    assert _ENGINE_INTERNALS.search("        async with assistant.core.lock:")
    assert _ENGINE_INTERNALS.search("    unit = assistant.read()")
    assert _ENGINE_INTERNALS.search("    with assistant.transaction() as unit:")
    assert not _ENGINE_INTERNALS.search("    payload = json.loads(reader.read())")


# The LLM wing (pyproject: core-no-llm-adapters, llm-layers, packages-acyclic). The
# offline model is a package of its own, so the contract names it whole: no name pattern.
LLM_WING_VIOLATIONS: dict[str, dict[str, str]] = {
    "core-no-llm-adapters": {
        "mindspace/memory/violation.py": "from mindspace.llm.providers import sdk\n"
    },
    "llm-layers": {
        "mindspace/llm/parsing/violation.py": "from mindspace.llm.providers import sdk\n"
    },
    "packages-acyclic": {
        "mindspace/violation_a.py": "from mindspace import violation_b\n",
        "mindspace/violation_b.py": "from mindspace import violation_a\n",
    },
}
VIOLATIONS.update(LLM_WING_VIOLATIONS)


@pytest.mark.parametrize("contract", sorted(LLM_WING_VIOLATIONS))
def test_a_violating_import_breaks_an_llm_wing_contract(source_copy: Path, contract: str) -> None:
    test_a_violating_import_breaks_the_contract(source_copy, contract)


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("mindspace/engine/violation.py", "from mindspace.offline.chat import chat_skill\n"),
        ("mindspace/tools/violation.py", "from mindspace.offline import OfflineLLM\n"),
    ],
)
def test_no_module_of_the_offline_model_is_reachable_from_the_core(
    source_copy: Path, path: str, code: str
) -> None:
    added = source_copy / path
    added.write_text(code)
    try:
        done = _lint(source_copy, "core-no-llm-adapters")
    finally:
        added.unlink()
    assert done.returncode == 1, done.stdout[-4000:]
    assert path.removesuffix(".py").replace("/", ".") in done.stdout


def test_the_old_domain_cycle_would_break_the_acyclic_contract(source_copy: Path) -> None:
    # workspace -> context closes context -> memory -> workspace again, the circle that
    # token estimates in context/ made (they live in mindspace/tokens.py now).
    added = source_copy / "mindspace/workspace/violation.py"
    added.write_text("from mindspace.context import contexts\n")
    try:
        done = _lint(source_copy, "packages-acyclic")
    finally:
        added.unlink()
    assert done.returncode == 1, done.stdout[-4000:]
    assert "1 broken" in done.stdout
    assert ".context -> .memory" in done.stdout or ".workspace -> .context" in done.stdout


# -- The composition root and the host surface (docs/architecture.md) -------------------
VIOLATIONS.update(
    {
        "hosts-engine-surface": {
            "mindspace/hosts/cli/violation.py": "from mindspace.engine.core import EngineCore\n"
        },
        "root-composes": {
            "mindspace/hosts/http/violation.py": "from mindspace.adapters import build_llm\n"
        },
        "harnesses-no-storage": {
            "mindspace/evaluation/violation.py": "from mindspace.storage.sql import SqlStore\n"
        },
        "hosts-no-store": {
            "mindspace/hosts/evennia/violation.py": "from mindspace.state.port import Store\n"
        },
    }
)


@pytest.mark.parametrize(
    "contract", ["hosts-engine-surface", "root-composes", "harnesses-no-storage", "hosts-no-store"]
)
def test_a_violation_of_the_composition_contracts_breaks_them(
    source_copy: Path, contract: str
) -> None:
    test_a_violating_import_breaks_the_contract(source_copy, contract)


def test_the_surface_contract_lets_hosts_import_the_surface(source_copy: Path) -> None:
    added = source_copy / "mindspace/hosts/cli/surface_user.py"
    added.write_text("from mindspace.engine import Assistant, TickResult\n")
    try:
        done = _lint(source_copy, "hosts-engine-surface")
    finally:
        added.unlink()
    assert done.returncode == 0, done.stdout[-4000:]


def test_the_facade_keeps_its_parts_private() -> None:
    from mindspace.engine import Assistant

    public = {name for name in vars(Assistant) if not name.startswith("_")}
    assert not public & {"core", "executor", "ticker", "approvals"}
    assert _ENGINE_INTERNALS.search("    queue = assistant._ticker.queue")
    assert _ENGINE_INTERNALS.search("    assistant._executor.run(unit, name, args)")


def test_one_place_builds_an_assistant() -> None:
    builds = re.compile(r"Assistant\.open\(|(?<![\w.])Assistant\(")
    found = [
        f"{path.relative_to(SRC)}:{number}"
        for path in sorted((SRC / "mindspace").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if builds.search(line) and not line.lstrip().startswith(("#", ">>>"))
    ]
    # `class CreateAssistant(` or `CmdAssistant(` name other things; a build is the call.
    assert len(found) == 1, found
    assert found[0].startswith("mindspace/runtime.py:"), found
