"""Provider registries: settings pick LLMs, embedders and stores by name, plugins included.

The plugin tests install nothing: a temporary directory holds a module and a
``*.dist-info`` with ``entry_points.txt``, exactly what pip leaves behind, and a fresh
Python process gets it on ``sys.path`` (entry points are read from the installed
distributions of the process that asks).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mindspace.config import Settings
from mindspace.errors import ConfigError, StorageError
from mindspace.offline import OfflineLLM
from mindspace.runtime import LLMS, build_llm, open_store

SRC = Path(__file__).resolve().parent.parent / "src"

PLUGIN = '''
"""A third-party mindspace plugin: one LLM, one embedder and one store provider."""

from pathlib import Path

from mindspace import FunctionLLM
from mindspace.embeddings.hashing import HashingEmbedder
from mindspace.storage.sql import SqlStore

Path(__file__).with_name("imported.marker").write_text("yes")


def build_llm(settings):
    return FunctionLLM(lambda messages, tools: "hello from acme", model="acme-1")


def build_embedder(settings):
    return HashingEmbedder(dim=16)


def open_store(url, settings, create):
    # acme://<path> keeps its data in a SQLite file at <path>.
    return SqlStore("sqlite:///" + url.removeprefix("acme://"), create=create)
'''

ENTRY_POINTS = """
[mindspace.llm]
acme = acme_plugin:build_llm

[mindspace.embedders]
acme-hash = acme_plugin:build_embedder

[mindspace.stores]
acme = acme_plugin:open_store
"""


@pytest.fixture
def plugin_dir(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    (site / "acme_plugin.py").write_text(PLUGIN)
    info = site / "mindspace_acme-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mindspace-acme\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return site


def _run(site: Path, code: str, **env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    clean["PYTHONPATH"] = os.pathsep.join([str(site), str(SRC)])
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_plugin_llm_is_selected_by_name(plugin_dir: Path) -> None:
    result = _run(
        plugin_dir,
        """
        import asyncio, json
        from mindspace import Settings
        from mindspace.llm.port import Message
        from mindspace.runtime import LLMS, build_llm

        llm = build_llm(Settings())
        reply = asyncio.run(llm.complete([Message(role="user", content="hi")]))
        print(json.dumps({"model": llm.model, "text": reply.text, "names": LLMS.names()}))
        """,
        MINDSPACE_LLM_PROVIDER="ACME",
    )
    assert result["model"] == "acme-1"
    assert result["text"] == "hello from acme"
    assert result["names"] == ["acme", "anthropic", "offline", "openai"]


def test_a_plugin_embedder_and_store_are_selected_by_name(plugin_dir: Path, tmp_path: Path) -> None:
    db = tmp_path / "acme.db"
    result = _run(
        plugin_dir,
        """
        import json
        from mindspace import Settings, open_assistant

        assistant = open_assistant("npc", settings=Settings())
        print(json.dumps({
            "embedder": assistant.embedder.name,
            "store": type(assistant._core.store).__name__,
            "assistants": [info.key for info in assistant._core.store.list_assistants()],
        }))
        """,
        MINDSPACE_EMBEDDER="acme-hash",
        MINDSPACE_DATABASE_URL=f"acme://{db}",
    )
    assert result == {"embedder": "hashing-16", "store": "SqlStore", "assistants": ["npc"]}
    assert db.is_file()


def test_built_in_providers_never_import_a_plugin(plugin_dir: Path) -> None:
    result = _run(
        plugin_dir,
        """
        import json, sys
        from mindspace import Settings
        from mindspace.runtime import build_embedder, build_llm

        llm, embedder = build_llm(Settings()), build_embedder(Settings(embedder="hashing"))
        print(json.dumps({"llm": type(llm).__name__, "plugin": "acme_plugin" in sys.modules}))
        """,
    )
    assert result == {"llm": "OfflineLLM", "plugin": False}
    assert not (plugin_dir / "imported.marker").exists()


def test_an_unknown_provider_lists_the_installed_names(plugin_dir: Path) -> None:
    result = _run(
        plugin_dir,
        """
        import json
        from mindspace import ConfigError, Settings
        from mindspace.runtime import build_llm

        try:
            build_llm(Settings(llm_provider="acmee"))
        except ConfigError as exc:
            print(json.dumps({"error": str(exc)}))
        """,
    )
    error = str(result["error"])
    assert "MINDSPACE_LLM_PROVIDER is 'acmee'" in error
    assert "available: 'acme', 'anthropic', 'offline', 'openai'" in error
    assert "'mindspace.llm'" in error


def test_the_default_llm_is_offline_without_a_url_and_openai_with_one() -> None:
    assert Settings().resolved_llm_provider == "offline"
    assert isinstance(build_llm(Settings()), OfflineLLM)
    with_url = Settings(llm_base_url="http://127.0.0.1:1/v1", llm_model="m")
    assert with_url.resolved_llm_provider == "openai"
    assert type(build_llm(with_url)).__name__ == "OpenAICompatibleLLM"
    # An explicit provider wins over the URL.
    forced = Settings(llm_provider="offline", llm_base_url="http://127.0.0.1:1/v1")
    assert isinstance(build_llm(forced), OfflineLLM)
    assert forced.llm_configured is False


def test_openai_without_a_url_says_which_setting_is_missing() -> None:
    with pytest.raises(ConfigError, match="MINDSPACE_LLM_BASE_URL is not set"):
        build_llm(Settings(llm_provider="openai"))


def test_an_unknown_store_scheme_lists_the_store_providers(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        open_store(Settings(), "nosuchdb://somewhere")
    assert "no store has that name" in str(info.value)
    assert "'postgresql', 'sqlite'" in str(info.value)


def test_a_path_and_a_driver_suffixed_url_reach_the_sql_store(tmp_path: Path) -> None:
    store = open_store(Settings(), tmp_path / "a.db")
    store.close()
    assert (tmp_path / "a.db").is_file()
    # "+nosuchdriver" is ignored when choosing the provider: the SQL store refuses it.
    with pytest.raises(StorageError, match="nosuchdriver"):
        open_store(Settings(), "postgresql+nosuchdriver://u@127.0.0.1/db")


def test_a_registered_factory_is_selectable_in_process() -> None:
    LLMS.register("Echo-Test", lambda settings: OfflineLLM(announce=False))
    try:
        assert isinstance(build_llm(Settings(llm_provider="echo-test")), OfflineLLM)
        assert "echo-test" in LLMS.names()
    finally:
        LLMS.unregister("echo-test")


def test_the_cli_reports_an_unknown_provider_as_one_error_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env |= {"PYTHONPATH": str(SRC), "MINDSPACE_LLM_PROVIDER": "nope"}
    command = ["tool", "get_system_status", "--db", str(tmp_path / "cli.db")]
    done = subprocess.run(
        [sys.executable, "-m", "mindspace.hosts.cli.app", *command],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "error: MINDSPACE_LLM_PROVIDER is 'nope', but no LLM provider has that name; "
        "available: 'anthropic', 'offline', 'openai'. Pick one of them, or install the "
        "package that registers 'nope' under the entry-point group 'mindspace.llm'."
    ]
