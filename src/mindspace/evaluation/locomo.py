"""The LoCoMo retrieval benchmark: the product's memory against BM25 and dense references.

For each conversation a fresh assistant lives through it. By default (route
``message``) every dialog turn goes in the way a host sends what a person says: a
``message`` event from its speaker at the session's date and time, with the dialog id
as ``metadata.ref``, taken by a tick with the offline model (so the turn is formed into
memory by :mod:`mindspace.engine.formation`, and the model replies). The older route
``journal`` writes each turn with ``add_journal_entry`` as a ``direct`` entry from its
speaker instead, a route no host takes; it is kept to compare. After each session the
assistant sleeps a whole night: compacting consolidates the day into semantic memory,
then dreaming links memories (A-MEM) and consolidates entities, until the sleep cycle
reports its work finished. Every question is then asked through
:meth:`~mindspace.memory.semantic.SemanticMemory.recall` - the function behind the
``recall_memories`` tool - and the dialog ids of the retrieved memories are scored
against the question's evidence (as asked by the sample's ``asker`` when the data
names one: the recast sets of ``bench/locomo_recast.py`` are asked by their ``User``;
LoCoMo's questions by an onlooker). Two reference retrievers run over the same turns in
the same run: BM25 (``bm25s`` with a Snowball stemmer) and dense cosine with the same
embedder.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import numpy as np

from mindspace.clock import ManualClock
from mindspace.config import Settings
from mindspace.embeddings.port import Embedder
from mindspace.engine import Assistant
from mindspace.errors import ConfigError
from mindspace.evaluation.locomo_cache import cached_sample
from mindspace.evaluation.locomo_data import (
    CATEGORIES,
    Question,
    Sample,
    load_samples,
    score_ranking,
)
from mindspace.memory.semantic import SemanticMemory
from mindspace.offline import OfflineLLM
from mindspace.runtime import Runtime
from mindspace.state.port import Store

__all__ = ["ROUTES", "Progress", "Route", "Scoreboard", "askers", "run_locomo"]

Route = Literal["message", "journal"]
"""How turns go in: as message events through a tick, or as direct journal entries."""
ROUTES: tuple[Route, ...] = ("message", "journal")

METRICS = ("hit@5", "hit@10", "recall@5", "recall@10")
TURN_GAP = timedelta(seconds=30)

Progress = Callable[[str, int, int], None]
"""Called with (stage, done, total) as the run advances."""
StoreFactory = Callable[[str], Store]


@dataclass
class Scoreboard:
    """Per-category sums of one retriever's scores."""

    sums: dict[int, dict[str, float]] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)

    def add(self, category: int, scores: dict[str, float]) -> None:
        """Count one question."""
        totals = self.sums.setdefault(category, dict.fromkeys(METRICS, 0.0))
        for metric in METRICS:
            totals[metric] += scores[metric]
        self.counts[category] = self.counts.get(category, 0) + 1

    def _mean(self, categories: Sequence[int]) -> dict[str, float]:
        n = sum(self.counts.get(c, 0) for c in categories)
        return {
            metric: round(
                100.0 * sum(self.sums.get(c, {}).get(metric, 0.0) for c in categories) / n, 1
            )
            if n
            else 0.0
            for metric in METRICS
        }

    def report(self) -> dict[str, Any]:
        """The issue's shape: overall_1_4, overall_1_5 and by_category, in percent."""
        return {
            "overall_1_4": self._mean([1, 2, 3, 4]),
            "overall_1_5": self._mean([1, 2, 3, 4, 5]),
            "by_category": {str(c): self._mean([c]) for c in sorted(CATEGORIES)},
        }


async def _live_through(
    sample: Sample,
    assistant: Assistant,
    clock: ManualClock,
    progress: Progress,
    done: int,
    nights: list[int],
    route: Route = "message",
) -> int:
    """Feed every turn in, sleeping a whole night after each session (ticks in ``nights``)."""
    total = sum(len(s.turns) for s in sample.sessions)
    for session in sample.sessions:
        clock.set(session.when)
        for turn in session.turns:
            if route == "message":
                await _say(assistant, turn.speaker, turn.content, turn.dia_id)
                clock.advance(TURN_GAP)
                done += 1
                progress(f"{sample.sample_id}: ingesting", done, total)
                continue
            result = await assistant.call_tool(
                "add_journal_entry",
                {
                    "content": turn.content,
                    # A turn is the speaker's own words, told directly: its "I" is theirs.
                    "source_type": "direct",
                    "source_entity": turn.speaker,
                    "tags": [f"ref:{turn.dia_id}", f"session:{session.number}"],
                },
            )
            if not result.get("success"):
                raise ConfigError(f"Ingesting {turn.dia_id!r} failed: {result.get('error')!r}")
            clock.advance(TURN_GAP)
            done += 1
            progress(f"{sample.sample_id}: ingesting", done, total)
        nights.append(await _sleep_one_night(assistant, clock))
    return done


async def _say(assistant: Assistant, speaker: str, text: str, ref: str) -> None:
    """One turn as a host sends it: a message event from its speaker, taken by a tick."""
    event = assistant.enqueue_event(
        text, type="message", source_entity=speaker, metadata={"ref": ref}
    )
    result = await assistant.tick()
    if result.event_id != event.id or result.status != "done":
        raise ConfigError(f"The tick of turn {ref!r} did not finish: {result.error!r}")


NIGHT_TICKS = 2_000
"""The most sleep ticks one night may run (one simulated minute each); reported."""


async def _sleep_one_night(assistant: Assistant, clock: ManualClock) -> int:
    """Sleep through compacting and dreaming, as a real assistant's night does.

    The night ends when the sleep cycle says its work is done (every entry consolidated,
    every memory given its A-MEM links, with entity consolidation and reflection run on
    each dreaming tick), when the assistant wakes by itself, or after ``NIGHT_TICKS``.
    Returns the ticks run.
    """
    await assistant.sleep("the session is over")
    ticks = 0
    while ticks < NIGHT_TICKS:
        clock.advance(minutes=1)
        result = await assistant.tick()
        ticks += 1
        if result.sleep is None or result.sleep.woke or result.sleep.finished:
            break
    await assistant.wake("next session")
    return ticks


def _memory(assistant: Assistant) -> SemanticMemory:
    return assistant.views.semantic_memory()


def _references(
    sample: Sample, embedder: Embedder, questions: Sequence[Question]
) -> tuple[list[list[str]], list[list[str]]]:
    try:
        import bm25s
        import Stemmer
    except ImportError as exc:
        raise ConfigError(
            "The LoCoMo benchmark needs bm25s for its BM25 reference: "
            "pip install -e '.[bench]' in a mindspace clone (or pip install bm25s PyStemmer)."
        ) from exc
    turns = [t for s in sample.sessions for t in s.turns]
    texts = [f"{t.speaker}: {t.content}" for t in turns]
    ids = [t.dia_id for t in turns]
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    asked = [q.text for q in questions]
    k = min(10, len(ids))
    found, _ = retriever.retrieve(
        bm25s.tokenize(asked, stopwords="en", stemmer=stemmer, show_progress=False),
        k=k,
        show_progress=False,
    )
    bm25 = [[ids[int(i)] for i in row] for row in found]
    matrix = embedder.embed(texts)
    queries = embedder.embed(asked)
    sims = queries @ matrix.T
    order = np.argsort(-sims, axis=1, kind="stable")[:, :10]
    dense = [[ids[int(i)] for i in row] for row in order]
    return bm25, dense


def askers(path: Path) -> dict[str, str]:
    """Who asks each sample's questions, by sample id, where the data says (``asker``).

    LoCoMo has no such field (its questions are an onlooker's); a recast User/Assistant
    conversation names its ``User``, whose own name in a question is not someone else's.
    """
    data = json.loads(path.read_text())
    items = data if isinstance(data, list) else [data]
    return {
        str(item.get("sample_id")): str(item["asker"])
        for item in items
        if isinstance(item, dict) and item.get("asker")
    }


async def run_locomo(
    path: Path,
    *,
    embedder: Embedder,
    progress: Progress | None = None,
    store_factory: StoreFactory | None = None,
    settings: Settings | None = None,
    workdir: Path | None = None,
    route: Route = "message",
) -> dict[str, Any]:
    """Run the benchmark over every conversation in ``path``; returns the report dict.

    With ``workdir`` (a cache directory) the ingested conversations are kept there, and
    a later run reuses one instead of ingesting again when nothing ingestion depends on
    has changed (see :mod:`mindspace.evaluation.locomo_cache`); ``result["cache"]`` says
    which conversations were reused. ``route`` is how turns go in (see the module).
    ``result["rankings"]`` holds, per question, the dialog ids the product ranked (best
    first) beside the evidence, for diagnosing misses.
    """
    started = time.perf_counter()
    report = progress or (lambda stage, done, total: None)
    samples = load_samples(path)
    asked_by = askers(path)
    boards = {"product": Scoreboard(), "bm25": Scoreboard(), "dense": Scoreboard()}
    asked = dropped = skipped = 0
    cache: dict[str, str] = {}
    rankings: list[dict[str, Any]] = []
    nights: list[int] = []
    chosen = settings or Settings()
    with tempfile.TemporaryDirectory(prefix="mindspace-locomo-") as tmp:
        base = workdir or Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        for sample in samples:
            dropped += sample.evidence_dropped
            entry = cached_sample(base, sample, chosen, embedder.name, route)
            db = entry.db
            reuse = workdir is not None and store_factory is None and entry.complete
            if workdir is not None and store_factory is None:
                cache[sample.sample_id] = "reused" if reuse else "ingested"
                if not reuse:
                    entry.discard()
            clock = ManualClock(sample.sessions[0].when if sample.sessions else None)
            # The benchmark is a host of the product: its assistant comes from the root.
            llm = OfflineLLM(announce=False)
            if store_factory is not None:
                store = store_factory(sample.sample_id)
                runtime = Runtime(chosen, store, llm=llm, embedder=embedder, clock=clock)
            else:
                runtime = Runtime.from_settings(chosen, db, llm=llm, embedder=embedder, clock=clock)
            assistant = runtime.open(sample.sample_id)
            if not reuse:
                await _live_through(sample, assistant, clock, report, 0, nights, route)
                if workdir is not None and store_factory is None:
                    entry.mark_complete()
            else:
                report(f"{sample.sample_id}: reusing the cached ingestion {db.name}", 0, 0)
            questions = [q for q in sample.questions if q.evidence]
            skipped += len(sample.questions) - len(questions)
            bm25, dense = _references(sample, embedder, questions)
            memory = _memory(assistant)
            for n, question in enumerate(questions):
                found = memory.recall(question.text, limit=10, asker=asked_by.get(sample.sample_id))
                ranked = [r.memory.ref or "" for r in found]
                boards["product"].add(question.category, score_ranking(ranked, question.evidence))
                boards["bm25"].add(question.category, score_ranking(bm25[n], question.evidence))
                boards["dense"].add(question.category, score_ranking(dense[n], question.evidence))
                rankings.append(
                    {
                        "sample": sample.sample_id,
                        "category": question.category,
                        "question": question.text,
                        "evidence": list(question.evidence),
                        "product": ranked,
                        "bm25": bm25[n],
                        "dense": dense[n],
                    }
                )
                report(f"{sample.sample_id}: asking", n + 1, len(questions))
            asked += len(questions)
            runtime.close()
    result: dict[str, Any] = {name: board.report() for name, board in boards.items()}
    result["route"] = route
    result["questions"] = asked
    result["evidence_dropped"] = dropped
    result["questions_without_evidence"] = skipped
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["cache"] = cache
    result["night_ticks"] = {
        "nights": len(nights),
        "max": max(nights, default=0),
        "bound": NIGHT_TICKS,
        "at_bound": sum(n >= NIGHT_TICKS for n in nights),
    }
    result["rankings"] = rankings
    return result
