"""The worker fleet under load: N assistants, one event each per minute, 1/2/4 workers.

A real PostgreSQL (``mindspace.testing.LocalPostgres``), real ``mindspace worker``
processes and the stand-in model (``ChatCompletionsServer``) answering every request
after ``--latency`` seconds. The load generator stores each event as any host does: the
event's commit defers its tick (the fleet's triggers, mindspace/fleet/triggers.py). Every
event's text carries a token, so the stand-in knows when the model worked on it.

For each worker count it reports:

* ``ticks_per_s``: ticks the workers ran (event ticks and the follow-up ticks that find
  nothing more to do) over the load window;
* ``exactly_once``: every event is ``done`` with its reply, the model saw each event once,
  and each assistant stored one user message per event;
* ``event_to_reply_minus_llm_ms`` (p50/p95): from storing the event to seeing its tick
  logged done by a worker, after the tick's commit (the generator reads the workers'
  logs every 20 ms; it asks the database nothing while it waits), minus the model's
  time on it;
* ``fleet_overhead_ms`` (p50/p95): event-to-reply minus the whole tick as the worker
  timed it, i.e. the queue and scheduling (enqueue, notify, fetch, lock, job bookkeeping)
  plus the 20 ms polling granularity of this measurement;
* ``cpu_ms_per_tick``: user+sys CPU of the worker processes over the window, per tick;
  ``postgres_cpu_ms_per_tick``: the same for the whole PostgreSQL server (every
  backend, those whose connection ended during the window too, the WAL writer, the
  checkpointer, autovacuum; only this bench uses the server);
  ``bench_process_cpu_ms_per_tick``: this process (the load generator, its reading of
  the logs every 20 ms and the stand-in model's HTTP server);
* ``machine_busy_cores``: the whole machine's busy CPU over the window, in cores (at the
  machine's core count the machine, not the fleet, limits throughput);
* ``pg_connections_max``: most connections to the database seen in pg_stat_activity
  (looked at once a second).

With ``--profile DIR`` (for finding where the time goes, not for the figures: both
slow the fleet down) the workers run under cProfile timing CPU over the load window
(``DIR/fleetN-i.prof``; ``worker_profiled_cpu_ms_per_tick`` gives the stages of a
tick, inflated by the profiler) and the database logs every statement's duration
(``statements``: PostgreSQL's statements a tick over the load window, most time first;
the bench's own polling is not logged).

Before the worker counts, ``queue_only`` runs the queue with an empty tick (each job
defers the next under the same locks) in this process: the fleet's own CPU per tick,
in the worker and in PostgreSQL.

Run:  PYTHONPATH=src .venv/bin/python bench/fleet.py [--assistants 1000] [--seconds 60]
      [--workers 1,2,4] [--concurrency 16] [--latency 0.3] [--per-minute 1] [--profile DIR]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg

from mindspace import Settings
from mindspace.fleet import Fleet
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing import ChatCompletionsServer
from mindspace.testing.assistants import assistant_on
from mindspace.testing.chat_server import Step
from mindspace.testing.postgres import LocalPostgres

TOKEN = re.compile(r"<(t\d+)>")
TICK_LINE = re.compile(
    r"^\S+ (\S+): (event|idle|autonomous|sleep|context) tick.*?(?:\((evt_\w+)\))?"
    r" in ([\d.]+) s",
    re.M,
)
CONNECTIONS = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
DONE_LINE = re.compile(r": event tick done \((evt_\w+)\)")
IDLE_LINE = re.compile(r"^\S+ (\S+): idle tick \(([\d.]+) s\)", re.M)
# PostgreSQL's log of a statement's duration (log_min_duration_statement = 0): simple
# queries as "statement: ...", the extended protocol's steps as "parse|bind|execute <name>: ..."
DURATION_LINE = re.compile(
    r"duration: ([\d.]+) ms  (statement|parse|bind|execute)(?: [^:]*)?: (.*?)(?=\n\S|\Z)", re.S
)
# A worker under cProfile timing CPU (not wall: the synchronous store's waits would
# swamp it), over the load window only: SIGUSR1 starts it, SIGUSR2 stops and writes it.
# cProfile's cost per call inflates call-heavy code (the SDK's request transform, the
# surrogate scrub) several times over: its shares are where to look, not the figures.
# (A sampler of the loop thread was tried: it lands where the thread releases the GIL,
# at socket sends and waits, and so misses the CPU-bound Python.)
PROFILED_WORKER = """
import cProfile, signal, sys, time
from mindspace.hosts.cli.app import main
out = sys.argv.pop(1)
profiler = cProfile.Profile(time.process_time)
def stop(*_):
    profiler.disable()
    profiler.dump_stats(out)
signal.signal(signal.SIGUSR1, lambda *_: profiler.enable())
signal.signal(signal.SIGUSR2, stop)
main(sys.argv[1:])
"""
# The stages of a tick, by (file ending, function): cumulative profiled CPU of each.
STAGES = {
    "tick (Assistant.tick, all of it)": ("engine/tick.py", "_tick"),
    "taking the event (commit 1 with memory formation)": ("engine/intake.py", "take_event"),
    "memory formation": ("engine/formation.py", "form_memories"),
    "the revision and open events": ("storage/sql.py", "revision_and_open_events"),
    "session (prompt, model, tools)": ("engine/session.py", "run"),
    "prompt building": ("engine/prompting.py", "build"),
    "memory search for the prompt": ("engine/memory_context.py", "semantic_memories"),
    "LLM client (request, HTTP, answer)": ("llm/providers/sdk.py", "complete"),
    "store commits (both)": ("storage/sql.py", "commit"),
    "SQLAlchemy execute (all statements of the store)": ("sqlalchemy/engine/base.py", "execute"),
    "is_idle after the tick": ("fleet/queue.py", "is_idle"),
    "procrastinate: fetch a job": ("procrastinate/manager.py", "fetch_job"),
    "procrastinate: finish a job": ("procrastinate/manager.py", "finish_job"),
    "procrastinate: defer the next tick": ("fleet/queue.py", "schedule"),
    "sweep": ("fleet/sweep.py", "sweep"),
}


def profiled_stages(files: list[Path], ticks: int) -> dict[str, float]:
    """Cumulative profiled CPU ms a tick of each stage over the workers' profiles."""
    import pstats

    found = [str(f) for f in files if f.exists()]
    if not found:
        return {}
    stats: Any = pstats.Stats(*found).stats  # {(file, line, name): (cc, nc, tt, ct, callers)}
    out = {"profiled total": round(1000 * sum(v[2] for v in stats.values()) / max(ticks, 1), 2)}
    for stage, (ending, name) in STAGES.items():
        cumulative = max(
            (v[3] for (f, _, n), v in stats.items() if n == name and f.endswith(ending)),
            default=0.0,
        )
        out[stage] = round(1000 * cumulative / max(ticks, 1), 2)
    return out


LITERAL = re.compile(r"'(?:[^']|'')*'|\$\d+|\b\d+\b")


class Model:
    """The stand-in: answers after ``latency`` s and notes when it worked on each token."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.spans: dict[str, tuple[float, float]] = {}
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()

    def respond(self, body: dict[str, Any]) -> Step:
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        # The pending event is the end of the last user message; the context above it
        # may quote an earlier event's token (the session topic), so take the last one.
        tokens = TOKEN.findall(users[-1] if users else "")
        token = tokens[-1] if tokens else None
        start = time.monotonic()
        time.sleep(self.latency)
        if token is not None:
            with self.lock:
                self.seen[token] += 1
                self.spans[token] = (start, time.monotonic())
        return Step(content="Coming right up.")


def server_cpu(data_dir: Path) -> float:
    """user+sys CPU seconds of the whole PostgreSQL server so far.

    The postmaster's own, its ended children's (backends whose connection closed, as
    the kernel adds them to the parent that reaped them) and its live children's: every
    backend, the WAL writer, the checkpointer, autovacuum.
    """
    postmaster = int((data_dir / "postmaster.pid").read_text().split()[0])
    fields = Path(f"/proc/{postmaster}/stat").read_text().rsplit(")", 1)[1].split()
    total = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            child = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile (then counted in cutime, cstime)
        if int(child[1]) == postmaster:
            total += int(child[11]) + int(child[12])
    return total / os.sysconf("SC_CLK_TCK")


def machine_ticks() -> tuple[int, int]:
    """(busy, total) clock ticks of all CPUs since boot, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def cpu_seconds(pid: int) -> float:
    """user+sys CPU seconds of one process (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def done_lines(offsets: dict[Path, int]) -> list[str]:
    """Ids of the events whose ticks the workers logged done since the last call.

    ``offsets`` (how far each log was read) is advanced past the last whole line.
    """
    found = []
    for log, offset in offsets.items():
        with log.open("rb") as f:
            f.seek(offset)
            chunk = f.read()
        whole = chunk.rfind(b"\n") + 1
        offsets[log] = offset + whole
        for m in DONE_LINE.finditer(chunk[:whole].decode("utf-8", "replace")):
            found.append(m.group(1))
    return found


def log_size(log: Path | None) -> int:
    """Bytes in the database's log so far (0 when it is not read)."""
    return log.stat().st_size if log is not None else 0


def statements(log: Path, start: int, end: int, ticks: int) -> list[dict[str, Any]]:
    """PostgreSQL's statements a tick in ``log`` between two byte offsets, most time first.

    Statements are grouped by their text with literals and parameters as ``?``; each
    group gives its calls and milliseconds a tick (parse and bind steps of the extended
    protocol counted in the time, not in the calls).
    """
    with log.open("rb") as f:
        f.seek(start)
        text = f.read(end - start).decode("utf-8", "replace")
    calls: Counter[str] = Counter()
    ms: Counter[str] = Counter()
    for m in DURATION_LINE.finditer(text):
        query = " ".join(LITERAL.sub("?", m.group(3)).split())[:160]
        ms[query] += float(m.group(1))
        if m.group(2) in ("statement", "execute"):
            calls[query] += 1
    return [
        {
            "statement": q,
            "calls_per_tick": round(calls[q] / max(ticks, 1), 2),
            "ms_per_tick": round(t / max(ticks, 1), 3),
        }
        for q, t in ms.most_common(25)
    ]


def seed(url: str, count: int) -> list[str]:
    store = SqlStore(url)
    settings = Settings(embedder="none")
    keys = [f"npc{n:04d}" for n in range(count)]
    for key in keys:
        assistant_on(store, key, llm=OfflineLLM(announce=False), settings=settings)
    store.close()
    return keys


async def load(
    url: str,
    conninfo: str,
    keys: list[str],
    seconds: float,
    worker_pids: list[int],
    worker_logs: list[Path],
    pg_dir: Path,
    per_minute: float = 1.0,
    pg_log: Path | None = None,
) -> dict[str, Any]:
    """Post ``per_minute`` events per assistant per minute for ``seconds``; await replies."""
    store = SqlStore(url)
    settings = Settings(embedder="none")
    assistants = {
        k: assistant_on(store, k, llm=OfflineLLM(announce=False), settings=settings) for k in keys
    }
    interval = 60.0 / (len(keys) * per_minute)
    posted: dict[str, tuple[str, str, float]] = {}  # event id -> (key, token, stored at)
    done_at: dict[str, float] = {}
    connections: list[int] = []
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as conn:
        # The bench's own polling is not the fleet's: keep it out of a statement log.
        await conn.execute("SET log_min_duration_statement = -1")

        async def watch(stop: asyncio.Event) -> None:
            # An event is done when a worker logs its tick done (after the tick's commit):
            # the workers' logs are read as they grow, so that watching costs no database
            # work (a query for thousands of waiting events every 20 ms cost PostgreSQL
            # and this process ~1 ms CPU a tick, saturated).
            offsets = dict.fromkeys(worker_logs, 0)
            last_count = 0.0
            while not stop.is_set() or len(done_at) < len(posted):
                now = time.monotonic()
                for event_id in done_lines(offsets):
                    done_at.setdefault(event_id, now)
                if now - last_count >= 1.0:
                    count = await (await conn.execute(CONNECTIONS)).fetchone()
                    connections.append(int(count[0]) if count else 0)
                    last_count = now
                await asyncio.sleep(0.02)

        cpu_before = sum(cpu_seconds(p) for p in worker_pids)
        pg_before = server_cpu(pg_dir)
        machine_before, own_before = machine_ticks(), time.process_time()
        log_start = log_size(pg_log)
        if pg_log is not None:  # profiling: the workers' profilers on
            for pid in worker_pids:
                os.kill(pid, signal.SIGUSR1)
        stop = asyncio.Event()
        watcher = asyncio.create_task(watch(stop))
        started = time.monotonic()
        n = 0
        while (due := started + n * interval) < started + seconds:
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            key = keys[n % len(keys)]
            token = f"t{n}"
            event = assistants[key].enqueue_event(f"[{key}] <{token}> a pint", source_entity="Bob")
            # Its commit deferred the tick (the fleet's triggers), as for any host.
            posted[event.id] = (key, token, time.monotonic())
            n += 1
        stop.set()
        await asyncio.wait_for(watcher, timeout=300)
        window = time.monotonic() - started
        cpu_after = sum(cpu_seconds(p) for p in worker_pids)
        machine_after, own_after = machine_ticks(), time.process_time()
        log_end = log_size(pg_log)
        if pg_log is not None:
            for pid in worker_pids:
                os.kill(pid, signal.SIGUSR2)
        pg_cpu = server_cpu(pg_dir) - pg_before
    store.close()
    return {
        "posted": posted,
        "done_at": done_at,
        "window": window,
        "worker_cpu": cpu_after - cpu_before,
        "connections": max(connections, default=0),
        "pg_cpu": pg_cpu,
        # The whole machine's busy share over the window, in cores: at os.cpu_count() the
        # machine, not the fleet, is what limits throughput.
        "busy_cores": (os.cpu_count() or 1)
        * (machine_after[0] - machine_before[0])
        / max(1, machine_after[1] - machine_before[1]),
        # This process: the load generator, its polling and the stand-in model's server.
        "bench_cpu": own_after - own_before,
        "log_span": (log_start, log_end),
    }


class NoopFleet(Fleet):
    """The fleet's queue with an empty tick: each job schedules the next at once.

    Every job goes through what a real tick's job does around ``Assistant.tick()``:
    fetched under the assistant's lock, finished, and the next deferred with the
    queueing lock; what it costs is the fleet's own overhead per tick.
    """

    def __init__(self, url: str, budget: int) -> None:
        self.budget = budget
        super().__init__(url, pool_size=20)

    async def _tick(self, assistant: str, failures: int = 0) -> None:
        self.ticks_run += 1
        if self.ticks_run + 16 <= self.budget:
            await self.schedule(assistant, 0.0)


async def queue_overhead(url: str, pg_dir: Path, assistants: int, jobs: int) -> dict[str, Any]:
    """CPU and wall time per job of the queue alone, one worker with concurrency 16."""
    fleet = NoopFleet(url, jobs)
    await fleet.prepare()
    async with fleet.app.open_async():
        for n in range(assistants):
            await fleet.schedule(f"npc{n:04d}", 0.0)
        pg_before = server_cpu(pg_dir)
        cpu, wall = time.process_time(), time.perf_counter()
        await fleet.app.run_worker_async(
            concurrency=16,
            wait=False,
            listen_notify=True,
            delete_jobs="successful",
            install_signal_handlers=False,
            fetch_job_polling_interval=0.1,
        )
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        pg_cpu = server_cpu(pg_dir) - pg_before
    done = fleet.ticks_run
    return {
        "jobs": done,
        "jobs_per_s": round(done / wall, 1),
        "worker_cpu_ms_per_job": round(1000 * cpu / done, 2),
        "postgres_cpu_ms_per_job": round(1000 * pg_cpu / done, 2),
    }


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_count(
    pg: LocalPostgres,
    workers: int,
    args: argparse.Namespace,
    model: Model,
    server_url: str,
    tmp: Path,
) -> dict[str, Any]:
    name = f"fleet{workers}"
    url = pg.new_database(name)
    conninfo = pg.conninfo(name)
    keys = seed(url, args.assistants)
    profile: Path | None = args.profile
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f"ALTER DATABASE {name} SET log_min_duration_statement = 0")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update(
        MINDSPACE_LLM_BASE_URL=server_url,
        MINDSPACE_LLM_MODEL="scripted",
        MINDSPACE_EMBEDDER="none",
        MINDSPACE_DATA_DIR=str(tmp),
        PYTHONUNBUFFERED="1",
    )
    logs = [tmp / f"{name}-{i}.log" for i in range(workers)]
    procs = []
    for i, log in enumerate(logs):
        profiler = ["-c", PROFILED_WORKER, str(profile / f"{name}-{i}.prof")] if profile else []
        with log.open("wb") as out:
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        *(profiler or ["-m", "mindspace.hosts.cli"]),
                        "worker",
                        "--db",
                        url,
                        "--concurrency",
                        str(args.concurrency),
                        "--verbose",
                    ],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                )
            )
    deadline = time.monotonic() + 300
    while not all("need ticks" in log.read_text() for log in logs):
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            raise SystemExit("a worker did not start:\n" + "\n".join(f.read_text() for f in logs))
        time.sleep(0.2)
    model.spans.clear()
    model.seen.clear()
    pg_log = pg.directory / "log" if profile else None
    result = asyncio.run(
        load(
            url,
            conninfo,
            keys,
            args.seconds,
            [p.pid for p in procs],
            logs,
            pg.directory,
            args.per_minute,
            pg_log,
        )
    )
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        proc.wait(60)
    text = "\n".join(log.read_text() for log in logs)
    tick_seconds = {m.group(3): float(m.group(4)) for m in TICK_LINE.finditer(text) if m.group(3)}
    ticks = len(TICK_LINE.findall(text)) + len(IDLE_LINE.findall(text))
    posted, done_at = result["posted"], result["done_at"]
    e2r, minus_llm, overhead = [], [], []
    for event_id, (_key, token, stored) in posted.items():
        if event_id not in done_at or token not in model.spans:
            continue
        total = done_at[event_id] - stored
        llm = model.spans[token][1] - model.spans[token][0]
        e2r.append(total)
        minus_llm.append(total - llm)
        if event_id in tick_seconds:
            overhead.append(total - tick_seconds[event_id])
    with psycopg.connect(conninfo, autocommit=True) as conn:
        statuses = Counter(s for (s,) in conn.execute("SELECT status FROM events").fetchall())
        users = dict(
            conn.execute(
                "SELECT a.key, count(*) FROM messages m JOIN assistants a ON a.id = m.assistant_id "
                "WHERE m.role = 'user' GROUP BY a.key"
            ).fetchall()
        )
    expected = Counter(key for key, _, _ in posted.values())
    # What breaks "exactly once", counted, so that a false is explained.
    model_not_once = Counter(
        model.seen[token] for _, token, _ in posted.values() if model.seen[token] != 1
    )
    user_mismatch = sum(1 for k, c in expected.items() if users.get(k, 0) != c)
    once = statuses == Counter({"done": len(posted)}) and not model_not_once and not user_mismatch
    window = result["window"]
    pg.drop_database(name)
    extra: dict[str, Any] = {}
    if pg_log is not None and profile is not None:
        extra["statements"] = statements(pg_log, *result["log_span"], ticks)
        extra["worker_profiled_cpu_ms_per_tick"] = profiled_stages(
            [profile / f"{name}-{i}.prof" for i in range(workers)], ticks
        )
    return {
        "workers": workers,
        "events": len(posted),
        "ticks": ticks,
        "window_s": round(window, 1),
        "ticks_per_s": round(ticks / window, 1),
        "offered_events_per_s": round(len(posted) / args.seconds, 1),
        "exactly_once": once,
        "model_calls_per_event_not_one": {str(k): v for k, v in sorted(model_not_once.items())},
        "assistants_with_wrong_user_messages": user_mismatch,
        "event_statuses": dict(statuses),
        "event_to_reply_ms": {
            "p50": round(1000 * percentile(e2r, 0.5)),
            "p95": round(1000 * percentile(e2r, 0.95)),
        },
        "event_to_reply_minus_llm_ms": {
            "p50": round(1000 * percentile(minus_llm, 0.5)),
            "p95": round(1000 * percentile(minus_llm, 0.95)),
        },
        "fleet_overhead_ms": {
            "p50": round(1000 * percentile(overhead, 0.5), 1),
            "p95": round(1000 * percentile(overhead, 0.95), 1),
        },
        "cpu_ms_per_tick": round(1000 * result["worker_cpu"] / max(ticks, 1), 2),
        "postgres_cpu_ms_per_tick": round(1000 * result["pg_cpu"] / max(ticks, 1), 2),
        "bench_process_cpu_ms_per_tick": round(1000 * result["bench_cpu"] / max(ticks, 1), 2),
        "machine_busy_cores": round(result["busy_cores"], 2),
        "pg_connections_max": result["connections"],
        "errors_in_logs": text.count("Traceback"),
        **extra,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--assistants", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--queue-jobs", type=int, default=3000, help="Jobs of the queue-only run.")
    parser.add_argument(
        "--per-minute", type=float, default=1.0, help="Events per assistant per minute."
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="Profile the workers (cProfile) and log PostgreSQL's statements into this directory.",
    )
    args = parser.parse_args()
    model = Model(args.latency)
    runs = []
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        os.chmod(tmp, 0o755)
        with LocalPostgres(tmp / "pg") as pg, ChatCompletionsServer(respond=model.respond) as srv:
            url = pg.new_database("queueonly")
            queue_only = asyncio.run(queue_overhead(url, pg.directory, 100, args.queue_jobs))
            print(json.dumps({"queue_only": queue_only}), file=sys.stderr, flush=True)
            pg.drop_database("queueonly")
            for count in (int(c) for c in args.workers.split(",")):
                runs.append(run_count(pg, count, args, model, srv.url, tmp))
                print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
    print(
        json.dumps(
            {
                "bench": "fleet",
                "assistants": args.assistants,
                "events_per_assistant_per_minute": args.per_minute,
                "seconds_per_count": args.seconds,
                "concurrency_per_worker": args.concurrency,
                "llm_latency_s": args.latency,
                "machine": {
                    "cpus": os.cpu_count(),
                    "python": platform.python_version(),
                    "loadavg": Path("/proc/loadavg").read_text().split()[:3],
                },
                "queue_only": queue_only,
                "runs": runs,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
