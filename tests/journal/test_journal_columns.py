"""The embedded journal index's filter columns keep their rows through compaction."""

from __future__ import annotations

from mindspace.journal.columns import EntryColumns
from mindspace.journal.records import JournalEntry
from mindspace.state.semantic import EntryFilter


def _entry(number: int) -> JournalEntry:
    return JournalEntry(
        id=number,
        timestamp=f"2025-12-{1 + number % 28:02d}T10:00:00Z",
        content=f"entry {number}",
        importance=5,
        tags=("bees",) if number % 2 else ("clocks",),
    )


def test_dropping_most_entries_compacts_and_keeps_the_rest_with_their_vectors() -> None:
    columns = EntryColumns()
    for number in range(1, 201):
        row = columns.put(str(number), _entry(number))
        columns.vector_row[row] = 1000 + number
    # A long journal compacted (entries consolidated away): more than half the rows die.
    for number in range(1, 151):
        columns.drop(str(number))
    assert columns.size < 150  # compacted: dead rows were let go
    kept = {columns.keys[r]: int(columns.vector_row[r]) for r in columns.matching(EntryFilter())}
    assert kept == {str(n): 1000 + n for n in range(151, 201)}
    bees = {columns.keys[r] for r in columns.matching(EntryFilter(tags=("bees",)))}
    assert bees == {str(n) for n in range(151, 201) if n % 2}
    # Rows still grow after compaction.
    columns.put("201", _entry(201))
    assert "201" in {columns.keys[r] for r in columns.matching(EntryFilter())}
