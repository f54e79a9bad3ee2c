"""Assistants that appear after the fleet started are served: over HTTP, and after a kill."""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable
from pathlib import Path

import httpx

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
from .test_serve_and_errors import free_port


def _serve_and_workers(
    pg_url: str, stand_in: StandIn, spawn: Callable[..., Proc], tmp_path: Path, workers: int
) -> tuple[Proc, list[Proc], str]:
    env = worker_env(stand_in, tmp_path)
    port = free_port()
    running = [spawn(*worker_args(pg_url), env=env) for _ in range(workers)]
    for worker in running:
        wait_for(lambda w=worker: "need ticks" in w.text(), 30, "the workers to start")
    server = spawn("serve", "--db", pg_url, "--ticks", "queue", "--port", str(port), env=env)
    wait_for(lambda: "Dashboard" in server.text(), 30, "the server to start")
    return server, running, f"http://127.0.0.1:{port}/v1/assistants"


def _post_all(client: httpx.Client, base: str, key: str, count: int) -> list[str]:
    created = client.post(base, json={"key": key})
    assert created.status_code in (200, 201), created.text
    ids = []
    for n in range(count):
        posted = client.post(f"{base}/{key}/events", json={"content": f"[{key}] message {n}"})
        assert posted.status_code == 202, posted.text
        ids.append(posted.json()["event_id"])
    return ids


def _answered_once(postgres: LocalPostgres, pg_url: str, key: str, ids: list[str]) -> None:
    rows = event_rows(postgres, pg_url)
    for n, event_id in enumerate(ids):
        assert rows[event_id] == ("done", f"Answer to [{key}] message {n}")
    counts = message_counts(postgres, pg_url)
    assert counts[(key, "user")] == len(ids)
    assert counts[(key, "assistant")] == len(ids)


def test_an_assistant_created_after_the_workers_started_is_served_over_http(
    postgres: LocalPostgres,
    pg_url: str,
    stand_in: StandIn,
    spawn: Callable[..., Proc],
    tmp_path: Path,
) -> None:
    # workers first, on an empty database: they know no assistant when they start
    server, workers, base = _serve_and_workers(pg_url, stand_in, spawn, tmp_path, 2)
    assert all("0 assistants" in w.text() for w in workers)
    with httpx.Client(timeout=10) as client:
        ids = _post_all(client, base, "npc0", 3)

        def all_done() -> bool:
            rows = event_rows(postgres, pg_url)
            return all(rows[i][0] == "done" for i in ids)

        # a few heartbeats (0.5 s each) and three 50 ms model calls
        wait_for(all_done, 6, "every event of the new assistant to be answered", step=0.1)
        # an assistant created while the first one is served is served too
        later = _post_all(client, base, "npc1", 2)
        wait_for(
            lambda: all(event_rows(postgres, pg_url)[i][0] == "done" for i in later),
            6,
            "the second new assistant's events",
            step=0.1,
        )
    _answered_once(postgres, pg_url, "npc0", ids)
    _answered_once(postgres, pg_url, "npc1", later)
    assert stand_in.overlapping() == {}
    for worker in workers:
        assert worker.stop() == 0, worker.text()
        assert "Traceback" not in worker.text(), worker.text()
    server.stop()
    assert "Traceback" not in server.text(), server.text()


def test_a_new_assistant_is_served_after_its_worker_is_killed_mid_tick(
    postgres: LocalPostgres,
    pg_url: str,
    stand_in: StandIn,
    spawn: Callable[..., Proc],
    tmp_path: Path,
) -> None:
    server, (first,), base = _serve_and_workers(pg_url, stand_in, spawn, tmp_path, 1)
    gate, arrived = stand_in.hold("victim")
    with httpx.Client(timeout=10) as client:
        ids = _post_all(client, base, "victim", 2)
        assert arrived.wait(10), first.text()
        second = spawn(*worker_args(pg_url), env=worker_env(stand_in, tmp_path))
        wait_for(lambda: "need ticks" in second.text(), 30, "the second worker to start")
        os.kill(first.popen.pid, signal.SIGKILL)
        first.popen.wait(10)
        gate.set()  # the dead worker's request ends; nobody reads its answer
        wait_for(
            lambda: all(event_rows(postgres, pg_url)[i][0] == "done" for i in ids),
            20,
            "the surviving worker to answer the victim's events",
            step=0.1,
        )
        # and a new assistant after the kill is served by the survivor alone
        later = _post_all(client, base, "npc2", 1)
        wait_for(
            lambda: event_rows(postgres, pg_url)[later[0]][0] == "done",
            6,
            "the survivor to answer a new assistant",
            step=0.1,
        )
    assert "retrying it here" in second.text(), second.text()
    _answered_once(postgres, pg_url, "victim", ids)
    _answered_once(postgres, pg_url, "npc2", later)
    assert stand_in.overlapping() == {}
    assert second.stop() == 0, second.text()
    server.stop()
    assert "Traceback" not in server.text(), server.text()


def _quiet_worker(
    stand_in: StandIn, spawn: Callable[..., Proc], tmp_path: Path, args: list[str]
) -> Proc:
    """A started worker whose assistants work on their goals at most once an hour."""
    env = worker_env(stand_in, tmp_path, MINDSPACE_AUTONOMOUS_INTERVAL="3600")
    worker = spawn(*args, env=env)
    wait_for(lambda: "need ticks" in worker.text(), 30, "the worker to start")
    return worker


def _goal_starts_work(pg_url: str, settings: Settings, worker: Proc, key: str) -> None:
    """Give ``key`` a goal from this process: the worker ticks it on its own; then stop."""
    add_goal(pg_url, settings, key)
    wait_for(
        lambda: re.search(rf"^\S+ {key}: autonomous tick", worker.text(), flags=re.M),
        8,
        "the assistant with a new goal to tick",
        step=0.1,
    )
    assert worker.stop() == 0, worker.text()
    assert "Traceback" not in worker.text(), worker.text()


def test_assistants_written_by_any_process_are_ticked_within_a_few_heartbeats(
    postgres: LocalPostgres,
    pg_url: str,
    settings: Settings,
    stand_in: StandIn,
    spawn: Callable[..., Proc],
    tmp_path: Path,
) -> None:
    # No server: a script writes to the store directly, after the worker started.
    worker = _quiet_worker(stand_in, spawn, tmp_path, worker_args(pg_url, "--verbose"))
    ids = seed(pg_url, settings, {"scripted": 2, "quiet": 0})

    def answered() -> bool:
        rows = event_rows(postgres, pg_url)
        return all(rows[i][0] == "done" for i in ids["scripted"])

    wait_for(
        answered,
        6,
        "the script's events to be answered",
        step=0.1,
    )
    _answered_once(postgres, pg_url, "scripted", ids["scripted"])
    # Created, the quiet assistant got one tick, which found it idle: nothing follows it
    # (an idle assistant costs nothing per period) and it did no work of its own.
    assert len(re.findall(r"^\S+ quiet: idle tick", worker.text(), flags=re.M)) <= 1
    assert not re.search(r"^\S+ quiet: autonomous", worker.text(), flags=re.M)
    # a goal given later makes the quiet assistant due: it ticks at its rate from then on
    _goal_starts_work(pg_url, settings, worker, "quiet")


def test_a_hosts_write_defers_its_tick_in_its_own_commit_without_waiting_for_a_sweep(
    postgres: LocalPostgres,
    pg_url: str,
    settings: Settings,
    stand_in: StandIn,
    spawn: Callable[..., Proc],
    tmp_path: Path,
) -> None:
    # A 60 s heartbeat: the sweep runs once at start, then not within this test, so what
    # is ticked here was deferred by the writes themselves (the fleet's triggers).
    slow = ["worker", "--db", pg_url, "--heartbeat", "60", "--stall-after", "120", "--verbose"]
    worker = _quiet_worker(stand_in, spawn, tmp_path, slow)
    env = worker_env(stand_in, tmp_path)
    ids = seed(pg_url, settings, {"script": 2, "quiet": 0})
    jobs = query(postgres, pg_url, "SELECT count(*) FROM procrastinate_jobs")
    assert jobs[0][0] >= 1  # the events' commit left the tick's job behind it
    wait_for(
        lambda: all(event_rows(postgres, pg_url)[i][0] == "done" for i in ids["script"]),
        8,
        "the script's events to be answered",
        step=0.1,
    )
    _answered_once(postgres, pg_url, "script", ids["script"])
    # the CLI puts the quiet assistant to sleep: its sleep ticks start at once
    sleeper = spawn("sleep", "--db", pg_url, "--assistant", "quiet", "--hours", "1", env=env)
    assert sleeper.popen.wait(60) == 0, sleeper.text()
    wait_for(
        lambda: re.search(r"^\S+ quiet: sleep tick", worker.text(), flags=re.M),
        8,
        "the sleeping assistant's first sleep tick",
        step=0.1,
    )
    # a goal given to an idle assistant by another process: ticked at once
    seed(pg_url, settings, {"planner": 0})
    _goal_starts_work(pg_url, settings, worker, "planner")
