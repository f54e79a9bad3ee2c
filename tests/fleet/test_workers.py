"""Worker processes on a real PostgreSQL: exactly once, no overlap, crash recovery, idleness."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable
from pathlib import Path

from mindspace import Settings
from mindspace.testing.postgres import LocalPostgres

from .conftest import (
    Proc,
    StandIn,
    add_goal,
    event_rows,
    message_counts,
    query,
    seed,
    wait_for,
    worker_args,
    worker_env,
)


def _all_done(postgres: LocalPostgres, url: str, total: int) -> bool:
    rows = event_rows(postgres, url)
    return len(rows) == total and all(status == "done" for status, _ in rows.values())


def test_two_workers_answer_every_event_once_and_never_overlap_an_assistant(
    postgres: LocalPostgres,
    pg_url: str,
    settings: Settings,
    stand_in: StandIn,
    spawn: Callable[..., Proc],
    tmp_path: Path,
) -> None:
    # A model slow enough (18 ticks x 0.5 s, one at a time per worker) that one worker
    # cannot answer everything before the other has started: both must take part.
    stand_in.latency = 0.5
    events = {f"a{n}": 3 for n in range(6)}
    ids = seed(pg_url, settings, events)
    env = worker_env(stand_in, tmp_path)
    workers = [spawn(*worker_args(pg_url, "--concurrency", "1"), env=env) for _ in range(2)]

    wait_for(lambda: _all_done(postgres, pg_url, 18), 45, "every event to be answered")

    rows = event_rows(postgres, pg_url)
    for key, event_ids in ids.items():
        for n, event_id in enumerate(event_ids):
            status, reply = rows[event_id]
            assert status == "done"
            assert reply == f"Answer to [{key}] message {n}"
    # each event reached the model once, and each assistant stored one exchange per event
    assert sorted(text.splitlines()[-1] for text in stand_in.seen) == sorted(
        f"[{key}] message {n}" for key, count in events.items() for n in range(count)
    )
    counts = message_counts(postgres, pg_url)
    for key in events:
        assert counts[(key, "user")] == 3
        assert counts[(key, "assistant")] == 3
    assert stand_in.overlapping() == {}
    # both workers took part (each runs up to 4 ticks at once; 6 assistants are waiting)
    for worker in workers:
        assert worker.popen.poll() is None, worker.text()
    assert all(re.search(r"event tick done", w.text()) for w in workers), [
        w.text() for w in workers
    ]
    for worker in workers:
        assert worker.stop() == 0, worker.text()
        assert "stopped after" in worker.text()
        assert "Traceback" not in worker.text()


def test_a_worker_killed_mid_tick_loses_nothing_and_duplicates_nothing(
    postgres: LocalPostgres,
    pg_url: str,
    settings: Settings,
    stand_in: StandIn,
    spawn: Callable[..., Proc],
    tmp_path: Path,
) -> None:
    ids = seed(pg_url, settings, {"victim": 1, "b1": 2, "b2": 2})
    gate, arrived = stand_in.hold("victim")
    env = worker_env(stand_in, tmp_path)
    first = spawn(*worker_args(pg_url), env=env)
    assert arrived.wait(30), first.text()
    second = spawn(*worker_args(pg_url), env=env)
    wait_for(lambda: "need ticks" in second.text(), 20, "the second worker to start")

    os.kill(first.popen.pid, signal.SIGKILL)
    first.popen.wait(10)
    gate.set()  # the held request of the dead worker ends; nobody reads its answer

    wait_for(lambda: _all_done(postgres, pg_url, 5), 30, "the second worker to finish")
    assert "retrying it here" in second.text(), second.text()
    rows = event_rows(postgres, pg_url)
    assert rows[ids["victim"][0]] == ("done", "Answer to [victim] message 0")
    counts = message_counts(postgres, pg_url)
    assert counts[("victim", "user")] == 1
    assert counts[("victim", "assistant")] == 1
    assert counts[("b1", "user")] == counts[("b2", "user")] == 2
    # the entity profile noted the message once (the killed tick committed nothing)
    profile = query(
        postgres,
        pg_url,
        "SELECT count(*) FROM entities e JOIN assistants a ON a.id = e.assistant_id "
        "WHERE a.key = 'victim'",
    )
    assert profile == [(1,)]
    assert stand_in.overlapping() == {}
    assert second.stop() == 0, second.text()


def test_idle_assistants_are_not_ticked(
    postgres: LocalPostgres,
    pg_url: str,
    settings: Settings,
    stand_in: StandIn,
    spawn: Callable[..., Proc],
    tmp_path: Path,
) -> None:
    seed(pg_url, settings, {"quiet": 0, "talker": 1, "busy": 0})
    add_goal(pg_url, settings, "busy")  # an active goal: ticks at its rate
    env = worker_env(
        stand_in, tmp_path, MINDSPACE_TICK_RATE_AWAKE="0.3", MINDSPACE_AUTONOMOUS_INTERVAL="3600"
    )
    worker = spawn(*worker_args(pg_url, "--verbose"), env=env)

    def ticks(key: str) -> int:
        return len(re.findall(rf"^\S+ {key}: ", worker.text(), flags=re.M))

    wait_for(lambda: "need ticks" in worker.text(), 20, "the worker to start")
    assert "3 assistants" in worker.text()
    assert "2 need ticks, 1 are idle" in worker.text()
    # the busy assistant ticks every 0.3 s; meanwhile the others are left alone
    wait_for(lambda: ticks("busy") >= 8, 20, "the busy assistant to tick 8 times")
    talker_after_event = ticks("talker")
    wait_for(lambda: ticks("busy") >= 14, 20, "6 more ticks of the busy assistant")
    assert ticks("quiet") == 0, worker.text()
    # the talker ticked for its event, then nothing: no other event waits
    assert talker_after_event == 1, worker.text()
    assert ticks("talker") == talker_after_event
    waiting = query(
        postgres,
        pg_url,
        "SELECT args->>'assistant' FROM procrastinate_jobs WHERE status IN ('todo', 'doing')",
    )
    assert {key for (key,) in waiting} == {"busy"}
    assert worker.stop() == 0, worker.text()
