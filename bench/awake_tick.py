"""The non-LLM time of an awake event tick for an old assistant. Prints JSON.

An assistant with M memories (hashing-embedder vectors, 384 dims) and E journal entries
answers a player's message: the tick reads the event, builds the prompt (semantic
memories recalled for the message, episodic journal lookup, entity profile, working
memory...), calls the model once (a function model that answers at once and records the
time spent inside it), stores the reply and commits. The figure is the tick's wall
time minus the time inside the model, median and p95 over the measured ticks, after
warm-up ticks that build the indexes; with the texts the embedder was given per tick.

``--embedder minilm`` queries with the default embedder (the stored vectors are the
hashing embedder's, labelled as MiniLM's so that dense search runs over all of them:
the cost is the same, the ranking is meaningless).

Usage::

    python bench/awake_tick.py [--memories 100000] [--journal 10000] [--ticks 40]
                              [--embedder hashing|minilm] [--profile FILE] [--stages]

``--profile FILE`` runs the measured ticks under cProfile (the event loop's thread
only: the embedder's worker thread is not in it), writes the stats to FILE (read them
with ``python -m pstats FILE``) and prints the 25 costliest functions to stderr; the
figures of a profiled run carry the profiler's overhead.

``--stages`` adds ``stages_loop_cpu_ms_p50``: the event loop thread's CPU in each stage
of a tick (the memory formed from the message, the prompt's recall and its parts, the
commits, the whole prompt), median over the measured ticks. Unlike the profiler it costs
a few microseconds a call, so the stages add up to about the loop figure.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib
import inspect
import json
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from mindspace import FunctionLLM, ManualClock
from mindspace.clock import format_time
from mindspace.embeddings import HashingEmbedder
from mindspace.embeddings.port import Embedder
from mindspace.llm.port import LLMResponse, Message, ToolSchema
from mindspace.memory.records import Memory
from mindspace.state import Change
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

START = datetime(2025, 12, 6, 10, 0, tzinfo=UTC)


def _texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    vocabulary = [f"w{k}" for k in range(5_000)]
    ranks = np.minimum(rng.zipf(1.3, size=(n, 12)) - 1, len(vocabulary) - 1)
    return [" ".join(vocabulary[int(r)] for r in row) for row in ranks]


def _fill(path: Path, memories: int, journal: int, label: str) -> None:
    store = SqlStore.from_path(path)
    info = store.open_assistant("old", create=True)
    embedder = HashingEmbedder(384)
    now = format_time(START)
    revision = info.revision
    texts = _texts(memories, seed=1)
    for start in range(0, memories, 5_000):
        chunk = texts[start : start + 5_000]
        changes = []
        for offset, (text, vector) in enumerate(zip(chunk, embedder.embed(chunk), strict=True)):
            memory = Memory(
                id=f"mem_{start + offset + 1}",
                content=text,
                source_entity="Alice" if offset % 7 == 0 else None,
                created_at=now,
                occurred_at=now,
                embedder=label,
                embedding=vector.astype(np.float32).tobytes(),
            )
            changes.append(Change("memory", memory.id, memory.to_stored(), new=True))
        revision = store.commit(info.id, revision, changes)
    entries = _texts(journal, seed=2)
    for start in range(0, journal, 5_000):
        changes = [
            Change(
                "journal_entry",
                str(k + 1),
                {
                    "key": str(k + 1),
                    "id": k + 1,
                    "timestamp": now,
                    "content": entries[k],
                    "source_type": "observation",
                    "source_trust": 0.8,
                    "source_entity": "Alice",
                    "importance": 5,
                    "importance_method": "llm",
                    "tags": [],
                    "related_projects": [],
                    "consolidated": True,
                    "consolidated_at": now,
                    "evidence_ids": [],
                    "scoring_attempts": 0,
                },
                new=True,
            )
            for k in range(start, min(journal, start + 5_000))
        ]
        revision = store.commit(info.id, revision, changes)
    docs = [
        ("memory_state", {"next_id": memories}),
        ("journal_state", {"next_id": journal}),
    ]
    store.commit(
        info.id,
        revision,
        [Change("doc", name, {"name": name, "value": value}) for name, value in docs],
    )
    store.close()


class _Model:
    """Answers every prompt with one reply to the player, timing itself."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def __call__(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        start = time.perf_counter()
        self.calls += 1
        answer = LLMResponse(text="Aye, I remember you.", model="bench")
        self.seconds += time.perf_counter() - start
        return answer


def _embedder(name: str) -> Embedder:
    if name == "minilm":
        from mindspace.embeddings.minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    return HashingEmbedder(384)


class _Stages:
    """The event loop thread's CPU inside some functions of the tick, per tick."""

    # (label, module, owner class or None, function): what each stage times.
    WATCHED = (
        ("formation", "mindspace.engine.intake", None, "form_memories"),
        ("recall", "mindspace.memory.semantic", "SemanticMemory", "_search"),
        ("recall: index search", "mindspace.memory.semantic", "SemanticMemory", "_rankings"),
        ("recall: BM25", "mindspace.memory.lexical", "LexicalIndex", "scores"),
        ("recall: query rules", "mindspace.memory.query", "QueryRerank", "apply"),
        ("recall: record reads", "mindspace.memory.recalled", "RecordReader", "__call__"),
        ("recall: restatements", "mindspace.memory.semantic", None, "distinct"),
        ("commits", "mindspace.state.unit", "StateCache", "commit"),
        ("prompt", "mindspace.engine.prompting", "PromptBuilder", "build"),
    )

    def __init__(self) -> None:
        self.tick: dict[str, float] = {}
        self.ticks: list[dict[str, float]] = []
        for label, module, owner, name in self.WATCHED:
            target = getattr(importlib.import_module(module), owner) if owner else None
            self._wrap(label, target or importlib.import_module(module), name)

    def _wrap(self, label: str, target: Any, name: str) -> None:
        function = getattr(target, name)
        spent = self.tick

        if inspect.iscoroutinefunction(function):

            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                start = time.thread_time()
                try:
                    return await function(*args, **kwargs)
                finally:
                    spent[label] = spent.get(label, 0.0) + time.thread_time() - start

            setattr(target, name, timed_async)
            return

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.thread_time() - start

        setattr(target, name, timed)

    def next_tick(self, measured: bool) -> None:
        if measured:
            self.ticks.append(dict(self.tick))
        self.tick.clear()

    def medians(self) -> dict[str, float]:
        labels = [label for label, *_ in self.WATCHED]
        return {
            label: round(statistics.median(t.get(label, 0.0) for t in self.ticks) * 1000, 2)
            for label in labels
        }


class _Counting:
    """The embedder, counting the texts it embeds and the time it takes."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.texts = 0
        self.seconds = 0.0

    def embed(self, texts: Sequence[str]) -> Any:
        start = time.perf_counter()
        self.texts += len(texts)
        vectors = self.inner.embed(texts)
        self.seconds += time.perf_counter() - start
        return vectors


async def _run(
    path: Path,
    ticks: int,
    warmup: int,
    embedder_name: str,
    profile: Path | None = None,
    stages: _Stages | None = None,
) -> dict[str, Any]:
    store = SqlStore.from_path(path, create=False)
    model = _Model()
    clock = ManualClock(START)
    embedder = _Counting(_embedder(embedder_name))
    assistant = assistant_on(store, "old", llm=FunctionLLM(model), clock=clock, embedder=embedder)
    samples: list[float] = []
    cpu: list[float] = []
    loop_cpu: list[float] = []
    texts: list[int] = []
    embedding: list[float] = []
    inside: list[float] = []
    queries = _texts(ticks + warmup, seed=3)
    profiler = cProfile.Profile() if profile is not None else None
    for k in range(ticks + warmup):
        clock.advance(seconds=30)
        assistant.enqueue_event(queries[k], source_entity="Alice", location="tavern")
        before = model.seconds
        embedded, embed_seconds = embedder.texts, embedder.seconds
        measured = profiler is not None and k >= warmup
        start, cpu_start = time.perf_counter(), time.process_time()
        loop_start = time.thread_time()
        if measured:
            profiler.enable()
        result = await assistant.tick()
        if measured:
            profiler.disable()
        elapsed = time.perf_counter() - start
        if stages is not None:
            stages.next_tick(k >= warmup)
        if k >= warmup:
            cpu.append(time.process_time() - cpu_start)
            loop_cpu.append(time.thread_time() - loop_start)
            samples.append(elapsed - (model.seconds - before))
            inside.append(model.seconds - before)
            texts.append(embedder.texts - embedded)
            embedding.append(embedder.seconds - embed_seconds)
        assert result is not None
    await store.aclose()
    if profiler is not None and profile is not None:
        profiler.dump_stats(profile)
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
    ordered = sorted(samples)
    extra = {} if stages is None else {"stages_loop_cpu_ms_p50": stages.medians()}
    return {
        "ticks": ticks,
        "model_calls": model.calls,
        "non_llm_ms_p50": round(statistics.median(ordered) * 1000, 2),
        "non_llm_ms_p95": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2),
        "inside_model_ms_p50": round(statistics.median(inside) * 1000, 3),
        # CPU of the whole process (the embedder's worker thread included; the model
        # answers at once): on a loaded machine the wall figure mostly measures waiting.
        "cpu_ms_p50": round(statistics.median(cpu) * 1000, 2),
        "cpu_ms_p95": round(sorted(cpu)[int(0.95 * (len(cpu) - 1))] * 1000, 2),
        # The event loop's thread alone: the tick without the embedding, which runs on
        # a worker thread (the rest of cpu_ms is mostly that thread's embedding).
        "loop_thread_cpu_ms_p50": round(statistics.median(loop_cpu) * 1000, 2),
        "texts_embedded_per_tick": round(statistics.mean(texts), 2),
        "embedding_ms_p50": round(statistics.median(embedding) * 1000, 2),
        **extra,
    }


def main() -> None:
    """Run the benchmark and print its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--journal", type=int, default=10_000)
    parser.add_argument("--ticks", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--embedder", choices=["hashing", "minilm"], default="hashing")
    parser.add_argument("--workdir", type=Path, default=None, help="keep the database here")
    parser.add_argument(
        "--profile", type=Path, default=None, help="cProfile the measured ticks into this file"
    )
    parser.add_argument(
        "--stages", action="store_true", help="report the loop thread's CPU per stage"
    )
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="awake-"))
    workdir.mkdir(parents=True, exist_ok=True)
    label = _embedder(args.embedder).name
    path = workdir / f"awake-{args.memories}-{args.journal}-{args.embedder}.db"
    if not path.exists():
        _fill(path, args.memories, args.journal, label)
    # Each run ticks on a fresh copy: the ticks append to the conversation, and a
    # history grown by earlier runs would make later runs build longer prompts.
    run_path = workdir / f"run-{os.getpid()}.db"
    shutil.copyfile(path, run_path)
    try:
        stages = _Stages() if args.stages else None
        result = asyncio.run(
            _run(run_path, args.ticks, args.warmup, args.embedder, args.profile, stages)
        )
    finally:
        for leftover in workdir.glob(f"{run_path.name}*"):
            leftover.unlink()
    print(
        json.dumps(
            {
                "benchmark": "awake_tick",
                "memories": args.memories,
                "journal_entries": args.journal,
                "embedder": args.embedder,
                "load": os.getloadavg(),
                **result,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
