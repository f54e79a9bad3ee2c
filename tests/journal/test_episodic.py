"""Episodic scoring (spec 004 §5): the formula, recency decay, weights, and the NumPy index."""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mindspace import Assistant, ManualClock, ScriptedLLM, Settings
from mindspace.clock import format_time
from mindspace.errors import ConfigError
from mindspace.journal import (
    EpisodicIndex,
    EpisodicWeights,
    JournalBook,
    JournalEntry,
    prune_low_importance_entries,
    score_episodic_memory,
    score_pending_entries,
    search_episodic_memory,
)

NOW = datetime(2025, 12, 6, 10, 0, tzinfo=UTC)


async def test_recency_decays_exponentially_with_the_manual_clock(
    assistant: Assistant, clock: ManualClock
) -> None:
    await assistant.call_tool(
        "add_journal_entry", {"content": "Alice found the key", "importance": 6}
    )
    for hours in (0, 1, 2, 24):
        clock.set(NOW + timedelta(hours=hours))
        result = await assistant.call_tool("search_episodic_memory", {"query": "alice key"})
        hit = result["results"][0]
        recency = math.exp(-0.99 * hours)
        assert hit["recency"] == round(recency, 6)
        assert hit["importance"] == 0.6
        assert hit["relevance"] == 1.0
        assert hit["score"] == round((recency + 0.6 + 1.0) / 3, 6)
    assert result["weights"] == {
        "alpha_recency": 1.0,
        "alpha_importance": 1.0,
        "alpha_relevance": 1.0,
        "decay_rate": 0.99,
    }


async def test_ranking_with_relevance_and_partial_overlap(
    assistant: Assistant, clock: ManualClock
) -> None:
    for content, importance in (
        ("the dragon sleeps in the cave", 5),
        ("a merchant sells dragon scales", 9),
        ("rain all day", 10),
    ):
        await assistant.call_tool(
            "add_journal_entry", {"content": content, "importance": importance}
        )
    clock.advance(hours=48)  # recency is ~0 for all three
    result = await assistant.call_tool(
        "search_episodic_memory", {"query": "Dragon cave", "limit": 2}
    )
    parts = [(h["entry"]["id"], h["relevance"], h["importance"]) for h in result["results"]]
    # 1: (0 + 0.5 + 1.0) / 3 = 0.5; 2: (0 + 0.9 + 0.5) / 3 = 0.467; 3: (0 + 1.0 + 0) / 3 = 0.333
    assert parts == [(1, 1.0, 0.5), (2, 0.5, 0.9)]
    assert result["count"] == 2


async def test_weights_and_decay_come_from_settings(
    make_assistant: Callable[..., Assistant], clock: ManualClock, tmp_path: object
) -> None:
    tuned = Settings(
        data_dir=tmp_path,  # type: ignore[arg-type]
        episodic_alpha_recency=0.0,
        episodic_alpha_importance=1.0,
        episodic_alpha_relevance=3.0,
        episodic_decay_rate=0.5,
    )
    assistant = make_assistant(settings=tuned)
    await assistant.call_tool("add_journal_entry", {"content": "wolves howl", "importance": 2})
    clock.advance(hours=2)
    hit = (await assistant.call_tool("search_episodic_memory", {"query": "wolves"}))["results"][0]
    assert hit["recency"] == round(math.exp(-1.0), 6)
    assert hit["score"] == round((0.2 + 3 * 1.0) / 4, 6)


def test_weights_must_be_usable() -> None:
    with pytest.raises(ConfigError, match="MINDSPACE_EPISODIC_ALPHA"):
        EpisodicWeights(0.0, 0.0, 0.0)
    with pytest.raises(ConfigError, match="-1"):
        EpisodicWeights(decay_rate=-1)


def test_a_future_entry_counts_as_age_zero() -> None:
    entry = JournalEntry(id=1, timestamp="2025-12-06T12:00:00Z", content="x", importance=5)
    assert score_episodic_memory(entry, "y", NOW) == pytest.approx((1.0 + 0.5 + 0.0) / 3)


WORDS = ["alice", "bob", "Dragon", "dragon,", "cave", "the", "gold", "x"]


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
            st.integers(1, 10),
            st.integers(-120, 60 * 24 * 40),
        ),
        min_size=1,
        max_size=25,
    ),
    query=st.lists(st.sampled_from(WORDS), max_size=4),
    alphas=st.tuples(st.floats(0, 3), st.floats(0, 3), st.floats(0.1, 3)),
)
def test_the_vectorised_scores_equal_the_per_entry_formula(
    rows: list[tuple[list[str], int, int]],
    query: list[str],
    alphas: tuple[float, float, float],
) -> None:
    entries = [
        JournalEntry(
            id=i + 1,
            timestamp=format_time(NOW - timedelta(minutes=minutes)),
            content=" ".join(words),
            importance=importance,
        )
        for i, (words, importance, minutes) in enumerate(rows)
    ]
    weights = EpisodicWeights(*alphas)
    text = " ".join(query)
    index = EpisodicIndex.build(entries)
    top = index.top(
        set(text.lower().split()), NOW.timestamp(), weights.alphas, weights.decay_rate, 100
    )
    assert len(top.entries) == len(entries)
    for entry, score in zip(top.entries, top.score, strict=True):
        assert score == pytest.approx(score_episodic_memory(entry, text, NOW, weights), abs=1e-12)
    assert list(top.score) == sorted(top.score, reverse=True)


def test_index_maintenance_matches_a_fresh_build() -> None:
    def entry(i: int, text: str, importance: int = 5) -> JournalEntry:
        return JournalEntry(
            id=i,
            timestamp=format_time(NOW - timedelta(hours=i)),
            content=text,
            importance=importance,
        )

    index = EpisodicIndex.build([entry(i, f"word{i % 7} common") for i in range(1, 201)])
    index.remove([str(i) for i in range(1, 151)])  # compacts: more than half are dead
    index.add([entry(5, "word3 brand new", 9), entry(300, "word3 late", 2)])
    current = {str(i): entry(i, f"word{i % 7} common") for i in range(151, 201)}
    current["5"] = entry(5, "word3 brand new", 9)
    current["300"] = entry(300, "word3 late", 2)
    index.sync(current)
    fresh = EpisodicIndex.build(current.values())
    args = ({"word3", "common"}, NOW.timestamp(), (1.0, 1.0, 1.0), 0.99, 60)
    ours, theirs = index.top(*args), fresh.top(*args)
    assert len(index) == len(current) == 52
    assert [e.id for e in ours.entries] == [e.id for e in theirs.entries]
    assert list(ours.score) == pytest.approx(list(theirs.score))


async def test_the_index_follows_commits_upgrades_prunes_and_other_processes(
    make_assistant: Callable[..., Assistant], clock: ManualClock, scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    for text in ("goblins raid the farm", "quiet evening at the farm", "goblins seen at dusk"):
        await assistant.call_tool("add_journal_entry", {"content": text, "importance": 2})
    await assistant.call_tool("add_journal_entry", {"content": "goblins again", "importance": 9})

    async def ranked() -> list[tuple[int, float]]:
        result = await assistant.call_tool("search_episodic_memory", {"query": "goblins farm"})
        return [(h["entry"]["id"], h["importance"]) for h in result["results"]]

    # 4: (1 + 0.9 + 0.5) / 3; 1: (1 + 0.2 + 1) / 3; 3 and 2 tie at (1 + 0.2 + 0.5) / 3: newer first
    assert [i for i, _ in await ranked()] == [4, 1, 3, 2]

    # An importance upgrade is re-indexed in place after its commit.
    with assistant._core.transaction() as unit:
        entry = JournalBook(unit, clock, assistant.settings).get(2)
        unit.put(entry.model_copy(update={"importance": 10, "importance_method": "heuristic"}))
    scripted.enqueue("1")
    with assistant._core.transaction() as unit:
        await score_pending_entries(unit, scripted, max_per_tick=1)
    assert dict(await ranked())[2] == 0.1

    # Pruned entries disappear.
    clock.advance(days=31)
    with assistant._core.transaction() as unit:
        pruned = prune_low_importance_entries(unit, clock, assistant.settings)
    assert [e.id for e in pruned] == [1, 2, 3]
    assert [i for i, _ in await ranked()] == [4]

    # Another process (here: another Assistant on the same file) writes; ours reloads.
    other = make_assistant()
    await other.call_tool("add_journal_entry", {"content": "goblins burn the farm"})
    assert [i for i, _ in await ranked()] == [5, 4]


async def test_uncommitted_entries_are_scored_in_the_overlay(
    assistant: Assistant, clock: ManualClock
) -> None:
    await assistant.call_tool("add_journal_entry", {"content": "bandits on the road"})
    await assistant.call_tool("search_episodic_memory", {"query": "bandits"})  # builds the index
    with assistant._core.transaction() as unit:
        book = JournalBook(unit, clock, assistant.settings)
        book.add("bandits caught at the bridge", importance=10)
        first = book.get(1)
        unit.put(first.model_copy(update={"importance": 1}))  # replaced, not committed
        hits = search_episodic_memory(unit, "bandits", clock.now())
        assert [(h.entry.id, h.importance) for h in hits] == [(2, 1.0), (1, 0.1)]
        unit.clear()  # nothing is committed
    hits = search_episodic_memory(assistant._core.read(), "bandits", clock.now())
    assert [(h.entry.id, h.importance) for h in hits] == [(1, 0.6)]
