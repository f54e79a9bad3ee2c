"""``mindspace sleep/wake/mode``, ``memories`` and ``entities`` in real subprocesses."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from mindspace import Assistant, Settings
from mindspace.clock import parse_time
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.modes import OperatingMode
from mindspace.journal.records import JournalEntry
from mindspace.memory.records import EntityProfile, Memory
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.testing.inspect import stored_records

Cli = Callable[..., subprocess.CompletedProcess[str]]

PEOPLE = ["Alice", "Bob", "Carol"]
ITEMS = ["ale", "bread", "rope", "lantern oil", "a map of the north"]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The database file the commands use."""
    return tmp_path / "memory.db"


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """A clean environment: no inherited MINDSPACE_* settings, the hashing embedder."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MINDSPACE_") and k not in ("FORCE_COLOR", "COLUMNS", "LINES")
    }
    env["MINDSPACE_DATA_DIR"] = str(tmp_path)
    env["MINDSPACE_EMBEDDER"] = "hashing"
    env["PYTHONIOENCODING"] = "utf-8"
    env["COLUMNS"] = "200"
    return env


@pytest.fixture
def cli(cli_env: dict[str, str], db: Path) -> Cli:
    """Run ``mindspace ARGS... --db <db>`` in a fresh process."""

    def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mindspace.hosts.cli.app", *args, "--db", str(db)],
            env=env or cli_env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )

    return run


@contextmanager
def _opened(db: Path, tmp_path: Path) -> Iterator[Assistant]:
    """The default assistant on the test's database, through the Python API."""
    store = SqlStore.from_path(db)
    try:
        yield assistant_on(
            store,
            "default",
            llm=OfflineLLM(announce=False),
            settings=Settings(data_dir=tmp_path, embedder="hashing"),
            embedder=HashingEmbedder(),
        )
    finally:
        store.close()


def _seed(db: Path, tmp_path: Path, entries: int = 30) -> list[int]:
    """``entries`` journal entries and an observation about Alice; returns the entry ids."""
    ids: list[int] = []

    async def write(assistant: Assistant) -> None:
        for n in range(entries):
            who = PEOPLE[n % len(PEOPLE)]
            result = await assistant.call_tool(
                "add_journal_entry",
                {
                    "content": f"{who} bought {ITEMS[n % len(ITEMS)]} for {n} coins",
                    "tags": ["trade"],
                },
            )
            assert result["success"] is True, result
            ids.append(result["entry_id"])
        result = await assistant.call_tool(
            "update_entity_observation",
            {"entity_id": "Alice", "observation": "Alice prefers dark ale"},
        )
        assert result["success"] is True, result

    with _opened(db, tmp_path) as assistant:
        asyncio.run(write(assistant))
    return ids


def _ok(process: subprocess.CompletedProcess[str]) -> str:
    assert process.returncode == 0, process.stderr
    assert "Traceback" not in process.stderr
    return process.stdout


def _error_line(process: subprocess.CompletedProcess[str], status: int = 1) -> str:
    """The one stderr line; ``status`` 1 when the work failed, 2 for a bad command line."""
    assert process.returncode == status, (process.stdout, process.stderr)
    lines = process.stderr.splitlines()
    assert len(lines) == 1, f"expected one stderr line, got {process.stderr!r}"
    assert lines[0].startswith("error: ")
    return lines[0]


def _tool(cli: Cli, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(_ok(cli("tool", name, "--args", json.dumps(args))))
    return result


def test_sleep_run_consolidates_the_whole_journal_then_wake(
    cli: Cli, db: Path, tmp_path: Path
) -> None:
    entry_ids = _seed(db, tmp_path, 30)

    out = _ok(cli("sleep", "--run", "--reason", "closing time"))
    assert "is asleep (light sleep, compacting phase)" in out
    assert "closing time" in out
    assert "Compacting: journal entries consolidated" in out
    assert "30/30" in out
    assert "30 entries consolidated into 30 memories, 0 left (phase complete)" in out
    for operation in (
        "score_pending_entries",
        "run_dreaming_tick",
        "run_entity_consolidation_batch",
        "run_reflection",
        "prune_low_importance_entries",
        "clear_stale_conversations",
        "compact_conversation_history",
    ):
        assert operation in out
    assert "attribute updated on 1 entity: Alice" in out
    assert "The night is done after" in out
    assert "is still asleep (dreaming) until " in out  # and says until when

    with _opened(db, tmp_path) as assistant:
        unit = assistant._core.read()
        entries = [e for e in unit.all(JournalEntry) if not e.is_synthesis]
        assert sorted(e.id for e in entries) == entry_ids
        assert all(e.consolidated for e in entries)
        memories = stored_records(assistant, Memory)
        assert sorted(m.entry_id for m in memories if m.entry_id is not None) == entry_ids
        assert all(m.embedder == HashingEmbedder().name for m in memories)
        alice = unit.get(EntityProfile, "Alice")
        assert alice is not None
        assert alice.attributes.get("preference") == "dark ale"
        state = unit.doc(OperatingMode)
        assert (state.mode, state.sleep_phase) == ("sleep", "dreaming")

    mode = _ok(cli("mode"))
    assert "asleep" in mode
    assert "dreaming (light sleep)" in mode
    assert "closing time" in mode
    assert "0 entries waiting to be consolidated" in mode

    woke = _ok(cli("wake", "--reason", "the tavern opens"))
    assert "is awake since" in woke
    assert "the tavern opens" in woke
    assert "Cooldown: until" in woke
    with _opened(db, tmp_path) as assistant:
        state = assistant.views.mode()
        assert state.mode == "awake"
        assert state.sleep_phase is None
        assert state.since is not None
        assert state.cooldown_until is not None
        cooldown = parse_time(state.cooldown_until) - parse_time(state.since)
        assert cooldown == timedelta(minutes=60)

    again = _ok(cli("wake"))
    assert "already awake" in again
    mode = _ok(cli("mode", "--json"))
    assert json.loads(mode)["mode"] == "awake"


def test_sleep_without_run_and_a_tick_limit(cli: Cli, db: Path, tmp_path: Path) -> None:
    count = 3 * Settings().sleep_consolidation_per_tick + 5  # more than 2 ticks' worth
    _seed(db, tmp_path, count)

    asleep = _ok(cli("sleep", "--deep"))
    assert "deep sleep, compacting phase" in asleep
    assert "; wakes at " in asleep  # no schedule: MINDSPACE_SLEEP_DEFAULT_HOURS from now
    assert f"{count} journal entries to consolidate" in asleep
    assert "mindspace sleep --run" in asleep

    partial = _ok(cli("sleep", "--ticks", "2"))
    assert "already asleep" in partial
    assert "Stopped after 2 ticks (--ticks 2) in the compacting phase" in partial
    assert "not reached (dreaming comes after compacting)" in partial
    with _opened(db, tmp_path) as assistant:
        entries = assistant._core.read().all(JournalEntry)
        consolidated = sum(1 for e in entries if e.consolidated)
        assert 0 < consolidated < count
        assert f"{count - consolidated} journal entries still to consolidate" in partial
        assert assistant.views.mode().sleep_depth == "deep"


def test_an_urgent_event_wakes_a_light_sleeper_after_compacting(
    cli: Cli, db: Path, tmp_path: Path
) -> None:
    _seed(db, tmp_path, Settings().sleep_consolidation_per_tick + 12)  # 2 compacting ticks
    _ok(cli("sleep"))
    with _opened(db, tmp_path) as assistant:
        assistant.enqueue_event(
            "The cellar is flooding!", type="direct_message", source_entity="Bob"
        )

    out = _ok(cli("sleep", "--run"))
    assert "Wake deferred until compacting completes: urgent direct_message from Bob." in out
    assert "woke after" in out
    assert "urgent direct_message from Bob (after compacting)" in out
    assert "1 event waits for its next awake tick" in out
    assert "The night is done" not in out
    with _opened(db, tmp_path) as assistant:
        assert assistant.views.mode().mode == "awake"
        assert all(e.consolidated for e in assistant._core.read().all(JournalEntry))


def test_a_deep_sleeper_sleeps_through_an_urgent_event(cli: Cli, db: Path, tmp_path: Path) -> None:
    _seed(db, tmp_path, 5)
    _ok(cli("sleep", "--deep"))
    with _opened(db, tmp_path) as assistant:
        assistant.enqueue_event("Wake up!", type="direct_message", source_entity="Bob")

    out = _ok(cli("sleep", "--run"))
    assert "The night is done" in out
    assert "woke" not in out
    with _opened(db, tmp_path) as assistant:
        assert assistant.views.mode().mode == "sleep"


def test_a_failing_llm_is_reported_and_the_night_still_ends(
    cli: Cli, cli_env: dict[str, str], db: Path, tmp_path: Path
) -> None:
    _seed(db, tmp_path, 5)
    unreachable = {
        **cli_env,
        "MINDSPACE_LLM_BASE_URL": "http://127.0.0.1:9/v1",
        "MINDSPACE_LLM_MODEL": "absent",
        "MINDSPACE_LLM_MAX_RETRIES": "0",
        "MINDSPACE_LLM_TIMEOUT": "2",
    }

    out = _ok(cli("sleep", "--run", env=unreachable))
    assert "5 entries consolidated into 5 memories" in out
    assert "last: The language model failed while rating entry" in out
    assert "Alice: Cannot reach the LLM" in out
    assert "The night is done" in out
    with _opened(db, tmp_path) as assistant:
        entries = assistant._core.read().all(JournalEntry)
        assert all(e.consolidated and e.importance_method == "heuristic" for e in entries)


def test_memories_list_and_search(
    cli: Cli, cli_env: dict[str, str], db: Path, tmp_path: Path
) -> None:
    _tool(cli, "noop", {})  # creates the assistant: memories only reads
    empty = _ok(cli("memories"))
    assert "has no memories yet" in empty

    mine = _tool(
        cli,
        "store_memory",
        {
            "content": "The silver mine collapsed last winter",
            "tags": ["mine", "history"],
            "source_type": "direct",
            "source_entity": "Bob",
            "importance": 8,
        },
    )

    async def store(assistant: Assistant) -> None:
        for args in (
            {"content": "Carol sells rope at the market", "source_type": "environmental"},
            {"content": "Alice prefers dark ale", "source_entity": "Alice"},
        ):
            result = await assistant.call_tool("store_memory", args)
            assert result["success"] is True, result

    with _opened(db, tmp_path) as assistant:
        asyncio.run(store(assistant))

    listed = _ok(cli("memories"))
    for text in ("Id, time (UTC)", "Trust", "Imp.", "Source", "Content, tags", "manual"):
        assert text in listed
    # at 80 columns the content wraps onto more lines instead of being cut
    narrow = _ok(cli("memories", env={**cli_env, "COLUMNS": "80"}))
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert "…" not in narrow
    for content in ("The silver mine collapsed last winter", "Carol sells rope at the market"):
        assert all(word in narrow.split() for word in content.split()), narrow
    assert mine["memory_id"] in listed
    assert "#mine #history" in listed
    assert "0.9" in listed
    assert listed.index("Alice prefers dark ale") < listed.index("The silver mine collapsed")
    assert "3 memories shown" in listed
    assert "Embedder: hashing" in listed

    tagged = json.loads(_ok(cli("memories", "--tag", "MINE", "--json")))
    assert [m["id"] for m in tagged] == [mine["memory_id"]]
    assert tagged[0]["source_entity"] == "Bob"
    trusted = json.loads(_ok(cli("memories", "--min-trust", "0.85", "--json")))
    assert [m["id"] for m in trusted] == [mine["memory_id"]]
    assert "1 of 3 memories shown" in _ok(cli("memories", "--limit", "1"))

    status_before = json.loads(_ok(cli("status", "--json")))
    found = _ok(cli("memories", "search", "silver mine"))
    for text in ("#", "Rank score", "Cosine", "Content", "Source"):
        assert text in found
    assert "Memories recalled for 'silver mine'" in found
    first_row = next(line for line in found.splitlines() if line.strip().startswith("1 "))
    assert "The silver mine collapsed" in first_row

    ranked = json.loads(_ok(cli("memories", "search", "silver mine", "--json", "--limit", "3")))
    tool = _tool(cli, "recall_memories", {"query": "silver mine", "limit": 3})
    assert [m["id"] for m in ranked["memories"]] == [m["id"] for m in tool["memories"]]
    assert ranked["memories"][0]["id"] == mine["memory_id"]
    assert [m["score"] for m in ranked["memories"]] == [m["score"] for m in tool["memories"]]
    status_after = json.loads(_ok(cli("status", "--json")))
    searches = status_after["session_metrics"]["total_tool_calls"]
    # Only the recall_memories tool call counted; the two searches wrote nothing.
    assert searches == status_before["session_metrics"]["total_tool_calls"] + 1

    none = _ok(
        cli("memories", "search", "silver mine", env={**cli_env, "MINDSPACE_EMBEDDER": "none"})
    )
    assert "The silver mine collapsed" in none
    assert "search is lexical (BM25) only" in none


def test_memories_show_restated_and_replaced_facts(cli: Cli, db: Path, tmp_path: Path) -> None:
    first = _tool(cli, "store_memory", {"content": "Alice lives in the old town"})
    again = _tool(cli, "store_memory", {"content": "Alice lives in the old town."})
    assert (again["action"], again["memory_id"]) == ("restated", first["memory_id"])
    newer = _tool(cli, "store_memory", {"content": "Alice moved to the harbour district"})
    with _opened(db, tmp_path) as assistant, assistant._core.transaction() as unit:
        # What the reconcile step does with a replaced fact (here set by hand: the hashing
        # embedder does not see "lives in" and "moved to" as close as MiniLM does).
        old = unit.get(Memory, first["memory_id"])
        assert old is not None
        update = {"valid_to": "2025-12-20T08:00:00Z", "superseded_by": newer["memory_id"]}
        unit.put(old.model_copy(update=update))

    listed = _ok(cli("memories"))
    assert "said 2 times" in listed
    replaced = f"no longer current since 2025-12-20 08:00 (replaced by {newer['memory_id']})"
    assert replaced in listed
    found = _ok(cli("memories", "search", "Where does Alice live?"))
    assert replaced in found
    assert found.index("Alice moved to the harbour") < found.index("Alice lives in the old")
    rows = {m["id"]: m for m in json.loads(_ok(cli("memories", "--json")))}
    assert rows[first["memory_id"]]["mentions"] == 2
    assert rows[first["memory_id"]]["valid_to"] == "2025-12-20T08:00:00Z"
    assert rows[newer["memory_id"]]["valid_to"] is None
    assert [s["source"] for s in rows[first["memory_id"]]["sources"]] == ["tool", "tool"]


def test_entities_list_and_show(cli: Cli) -> None:
    _tool(cli, "noop", {})  # creates the assistant: entities only reads
    assert "has met no one yet" in _ok(cli("entities"))
    _tool(
        cli,
        "update_entity_observation",
        {
            "entity_id": "Alice",
            "observation": "Alice prefers dark ale",
            "favorability_change": 0.6,
            "entity_type": "npc",
        },
    )
    _tool(cli, "update_entity_observation", {"entity_id": "Bob", "observation": "Bob is loud"})

    listed = _ok(cli("entities"))
    for text in ("Id, type", "Relationship", "interactions", "Attributes", "Pending obs."):
        assert text in listed
    lines = listed.splitlines()

    def row(name: str) -> str:  # an entity's two stacked lines
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(name))
        return lines[at] + lines[at + 1]

    alice = row("Alice")
    assert "npc" in alice
    assert "friend" in alice
    assert "favor 0.60" in alice
    bob = row("Bob")
    assert "stranger" in bob
    assert "2 entities" in listed

    shown = _ok(cli("entities", "show", "Alice"))
    assert "Entity 'Alice'" in shown
    assert "friend, favorability 0.60" in shown
    assert "No attributes yet." in shown
    row = next(line for line in shown.splitlines() if "Alice prefers dark ale" in line)
    assert " no " in row  # not consolidated yet

    as_json = json.loads(_ok(cli("entities", "show", "Alice", "--json")))
    assert as_json["relationship"]["state"] == "friend"
    assert as_json["observations"][0]["consolidated"] is False

    unknown = cli("entities", "show", "Zed")
    line = _error_line(unknown)
    assert "'Zed'" in line
    assert "'Alice'" in line
    assert "mindspace entities" in line
    assert unknown.stdout == ""


@pytest.mark.parametrize(
    ("args", "expected", "status"),
    [
        (("memories", "--limit", "0"), "--limit must be at least 1, not 0", 2),
        (("memories", "--min-trust", "1.5"), "--min-trust must be between 0 and 1, not 1.5", 2),
        (("memories", "search", "ale", "--limit", "0"), "--limit must be at least 1", 2),
        (("memories", "search", "ale", "--min-trust", "-0.1"), "not -0.1", 2),
        # the tool itself refuses the value: the work failed
        (("memories", "search", "ale", "--limit", "10000"), "--limit '10000'", 1),
        (("memories", "search", "   "), "QUERY '   ' is blank", 2),
        (("sleep", "--ticks", "0"), "--ticks must be at least 1, not 0", 2),
        (("sleep", "--reason", " "), "--reason ' ' is blank", 2),
        (("wake", "--reason", ""), "--reason '' is blank", 2),
        (("mode", "--assistant", " "), "--assistant ' ' is blank", 2),
        (("memories", "--limit", "many"), "Invalid value for '--limit'", 2),
        (("memories", "--nosuch"), "No such option: --nosuch", 2),
    ],
)
def test_bad_input_exits_with_one_error_line(
    cli: Cli, args: tuple[str, ...], expected: str, status: int
) -> None:
    _tool(cli, "noop", {})  # the assistant exists, so only the bad option is wrong
    process = cli(*args)
    assert expected in _error_line(process, status)
    assert "Traceback" not in process.stderr
