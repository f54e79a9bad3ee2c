"""search_journal and review_journal (spec 004 §4): filters, modes, caching, synthesis."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mindspace import Assistant, ManualClock
from mindspace.journal import JournalBook
from mindspace.tools import default_registry

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]


async def _seed(assistant: Assistant, clock: ManualClock) -> None:
    """Four entries, one day apart: ids 1-4 at Dec 6, 7, 8 and 9, 10:00."""
    rows = [
        ("Alice bought a sword at the forge", ["trade", "alice"], ["armory"]),
        ("The forge fire went out overnight", ["trade"], []),
        ("ALICE sold the sword back", ["trade", "Alice"], ["armory"]),
        ("Bob visited the market", ["bob"], []),
    ]
    for i, (content, tags, projects) in enumerate(rows):
        if i:
            clock.advance(days=1)
        await assistant.call_tool(
            "add_journal_entry",
            {"content": content, "tags": tags, "related_projects": projects},
        )


async def _ids(assistant: Assistant, **args: Any) -> list[int]:
    result = await assistant.call_tool("search_journal", args)
    assert result["success"] is True, result
    return [r["id"] for r in result["results"]]


async def test_text_search_is_case_insensitive_newest_first(
    assistant: Assistant, clock: ManualClock
) -> None:
    await _seed(assistant, clock)
    result = await assistant.call_tool("search_journal", {"query": "alice"})
    assert [r["id"] for r in result["results"]] == [3, 1]
    assert result["mode"] == "text"
    assert result["total_matches"] == 2
    assert result["note"] == "No embedder is configured, so the search used text matching"
    assert await _ids(assistant, query="SWORD", semantic=False) == [3, 1]
    plain = await assistant.call_tool("search_journal", {"query": "sword", "semantic": False})
    assert "note" not in plain
    assert await _ids(assistant, query="sold the s") == [3]
    assert await _ids(assistant) == [4, 3, 2, 1]  # no query lists every entry


async def test_filters_tags_with_and_project_and_limit(
    assistant: Assistant, clock: ManualClock
) -> None:
    await _seed(assistant, clock)
    assert await _ids(assistant, tags=["trade"]) == [3, 2, 1]
    assert await _ids(assistant, tags=["trade", "alice"]) == [3, 1]  # AND, ignoring case
    assert await _ids(assistant, tags=["trade", "bob"]) == []
    assert await _ids(assistant, related_to_project="armory") == [3, 1]
    assert await _ids(assistant, query="the", limit=2) == [4, 3]
    result = await assistant.call_tool("search_journal", {"query": "the", "limit": 2})
    assert (result["count"], result["total_matches"]) == (2, 4)
    empty = await assistant.call_tool("search_journal", {"query": "dragon"})
    assert empty["results"] == []
    assert empty["message"] == "No journal entries match"


async def test_days_back_with_the_manual_clock(
    assistant: Assistant, clock: ManualClock, make_assistant: Callable[..., Assistant]
) -> None:
    await _seed(assistant, clock)  # the clock stands at Dec 9, 10:00
    assert await _ids(assistant, days_back=1) == [4, 3]  # Dec 8, 10:00 is exactly 1 day old
    clock.advance(seconds=1)
    # The same call is served from the 300 s cache; a fresh assistant (empty cache) is not.
    assert await _ids(assistant, days_back=1) == [4, 3]
    assert await _ids(make_assistant(), days_back=1) == [4]
    assert await _ids(assistant, days_back=3, query="forge") == [2]
    assert await _ids(assistant, days_back=4, query="forge") == [2, 1]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"days_back": 0}, "days_back: Input should be greater than or equal to 1"),
        ({"limit": 0}, "limit: Input should be greater than or equal to 1"),
        ({"limit": 1000}, "limit: Input should be less than or equal to 100"),
        ({"tags": "trade"}, "tags: Input should be a valid list"),
    ],
)
async def test_bad_search_arguments(
    assistant: Assistant, args: dict[str, Any], expected: str
) -> None:
    result = await assistant.call_tool("search_journal", args)
    assert result["success"] is False
    assert expected in result["error"]


async def test_results_are_cached_for_300_seconds_and_dropped_by_new_entries(
    assistant: Assistant, clock: ManualClock
) -> None:
    await _seed(assistant, clock)
    first = await assistant.run_tool("search_journal", {"query": "sword"})
    again = await assistant.run_tool("search_journal", {"query": "sword"})
    assert (first.cached, again.cached) == (False, True)
    assert again.result == first.result

    await assistant.call_tool("add_journal_entry", {"content": "A new sword was forged"})
    fresh = await assistant.run_tool("search_journal", {"query": "sword"})
    assert fresh.cached is False
    assert [r["id"] for r in fresh.result["results"]] == [5, 3, 1]

    clock.advance(seconds=299)
    assert (await assistant.run_tool("search_journal", {"query": "sword"})).cached is True
    clock.advance(seconds=2)
    assert (await assistant.run_tool("search_journal", {"query": "sword"})).cached is False


async def test_a_search_in_the_same_unit_sees_uncommitted_entries(
    assistant: Assistant, clock: ManualClock
) -> None:
    await _seed(assistant, clock)
    await assistant.call_tool("search_journal", {"query": "sword"})  # cached
    with assistant._core.transaction() as unit:
        await assistant._executor.run(
            unit, "add_journal_entry", {"content": "Another sword appeared"}
        )
        outcome = await assistant._executor.run(unit, "search_journal", {"query": "sword"})
        assert outcome.cached is False
        assert [r["id"] for r in outcome.result["results"]] == [5, 3, 1]


async def test_review_journal_saves_a_synthesis_entry(
    assistant: Assistant, clock: ManualClock
) -> None:
    await _seed(assistant, clock)
    result = await assistant.call_tool(
        "review_journal",
        {"synthesis": "Trade at the forge is brisk", "days_back": 2, "tags": ["alice", "bob"]},
    )
    assert result["success"] is True
    assert result["entries_reviewed"] == 2  # any of the tags: entries 4 and 3
    assert [e["id"] for e in result["entries"]] == [4, 3]
    assert result["average_importance"] == 6.0
    assert result["synthesis_saved"] is True
    assert result["synthesis_entry_id"] == 5
    entry = JournalBook(assistant._core.read(), clock, assistant.settings).get(5)
    assert entry.content == "[SYNTHESIS] Trade at the forge is brisk"
    assert entry.tags == ("synthesis", "meta_learning", "alice", "bob")
    assert entry.importance == 8
    assert entry.evidence_ids == ("journal_4", "journal_3")


async def test_review_journal_without_saving_changes_nothing(
    assistant: Assistant, clock: ManualClock, stored: Snapshot
) -> None:
    await _seed(assistant, clock)
    before = stored()
    result = await assistant.call_tool(
        "review_journal", {"synthesis": "Quiet week", "save_as_entry": False}
    )
    assert result["entries_reviewed"] == 4  # default: the last 7 days
    assert (result["synthesis_saved"], result["synthesis_entry_id"]) == (False, None)
    assert stored() == before
    refused = await assistant.call_tool("review_journal", {"synthesis": "  "})
    assert refused["success"] is False
    assert "'synthesis' is empty" in refused["error"]
    assert stored() == before


async def test_a_synthesis_too_long_is_refused_with_its_limit(
    assistant: Assistant, stored: Snapshot
) -> None:
    before = stored()
    result = await assistant.call_tool("review_journal", {"synthesis": "y" * 10_000})
    assert result["success"] is False
    assert "the limit is 9,988" in result["error"]  # 10,000 less "[SYNTHESIS] "
    assert stored() == before


def test_the_journal_tools_are_registered_as_the_spec_says() -> None:
    registry = default_registry()
    for name in ("add_journal_entry", "search_journal", "review_journal"):
        assert registry.get(name).category == "SAFE_CHAIN"
    search = registry.get("search_journal")
    assert (search.cacheable, search.cache_ttl, search.reads) == (
        True,
        300.0,
        frozenset({"journal_entry"}),
    )
    params = search.schema()["function"]["parameters"]["properties"]
    assert set(params) == {"query", "tags", "days_back", "related_to_project", "limit", "semantic"}
    assert params["limit"]["default"] == 10
    review = registry.get("review_journal").schema()["function"]["parameters"]
    assert review["required"] == ["synthesis"]
    assert review["properties"]["days_back"]["default"] == 7
    assert review["properties"]["save_as_entry"]["default"] is True
    add = registry.get("add_journal_entry").schema()["function"]["parameters"]
    assert add["required"] == ["content"]
    assert set(add["properties"]) == {
        "content",
        "tags",
        "related_projects",
        "source_type",
        "source_trust",
        "source_entity",
        "importance",
    }


async def test_search_is_semantic_with_an_embedder(
    make_assistant: Callable[..., Assistant],
) -> None:
    from mindspace.embeddings import HashingEmbedder

    assistant = make_assistant("semantic-journal", embedder=HashingEmbedder(256))
    for text in [
        "Player Alice bought a longsword at the forge",
        "The harvest festival starts at noon",
        "Bob lost his map near the river",
    ]:
        await assistant.call_tool("add_journal_entry", {"content": text})
    found = await assistant.call_tool("search_journal", {"query": "festival at noon", "limit": 2})
    assert found["mode"] == "semantic"
    assert found["results"][0]["content"] == "The harvest festival starts at noon"
    assert "note" not in found
