"""The change feed: which (kind, key) each revision of an assistant wrote.

Every commit adds one row per change, tagged with the revision it created, in the same
transaction as the change itself, so a revision that is visible always has its rows.
A process whose cache is at revision ``r`` asks for the rows after ``r`` and reloads
only those keys. To stay bounded, every :data:`TRIM_EVERY` revisions the rows older
than the last :data:`KEEP` revisions are deleted and ``assistants.feed_from`` moves up:
a cache further behind than that gets None and reloads everything.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, delete, insert, select, update

from mindspace.state.port import Change
from mindspace.storage.tables import assistants, changes

__all__ = ["KEEP", "TRIM_EVERY", "read_feed", "record_feed"]

TRIM_EVERY = 500
"""The feed is trimmed when a commit's revision is a multiple of this."""

KEEP = 5000
"""How many revisions of history a trim keeps."""


_RECORD = insert(changes)
"""The feed's INSERT, built once (every commit runs it)."""


def record_feed(
    conn: Connection, assistant_id: int, revision: int, written: Sequence[Change]
) -> None:
    """Add the feed rows of the commit that created ``revision``, trimming when due."""
    if written:
        conn.execute(
            _RECORD,
            [
                {"assistant_id": assistant_id, "revision": revision, "kind": c.kind, "key": c.key}
                for c in written
            ],
        )
    if revision % TRIM_EVERY == 0 and revision > KEEP:
        oldest = revision - KEEP
        conn.execute(
            delete(changes)
            .where(changes.c.assistant_id == assistant_id)
            .where(changes.c.revision <= oldest)
        )
        conn.execute(
            update(assistants).where(assistants.c.id == assistant_id).values(feed_from=oldest)
        )


def read_feed(
    conn: Connection, assistant_id: int, revision: int
) -> list[tuple[int, str, str]] | None:
    """The (revision, kind, key) written after ``revision``, in order; None if trimmed away."""
    # The rows are read before feed_from: a trim committed between the two reads (read
    # committed isolation gives each statement its own snapshot) then shows as a moved
    # feed_from and the answer is None, never a feed with a silent gap.
    rows = conn.execute(
        select(changes.c.revision, changes.c.kind, changes.c.key)
        .where(changes.c.assistant_id == assistant_id)
        .where(changes.c.revision > revision)
        .order_by(changes.c.revision, changes.c.row_id)
    ).all()
    feed_from = conn.execute(
        select(assistants.c.feed_from).where(assistants.c.id == assistant_id)
    ).scalar_one_or_none()
    if feed_from is None or revision < int(feed_from):
        return None
    return [(int(rev), str(kind), str(key)) for rev, kind, key in rows]
