"""Putting a whole assistant in place at once: what an import needs beyond the Store port.

An import writes its records under a staging key, then :func:`promote` gives the staging
assistant the wanted key in one transaction (deleting the assistant it replaces, whose
rows go with it by ``ON DELETE CASCADE``); :func:`drop` removes a staging assistant
whose import failed. Nothing half-imported is ever visible under the wanted key.
"""

from __future__ import annotations

import uuid

from sqlalchemy import delete, select, update

from mindspace.errors import AlreadyExistsError, StorageError
from mindspace.state.port import Store
from mindspace.storage.sql import STAGING_PREFIX, SqlStore
from mindspace.storage.tables import assistants

__all__ = ["drop", "promote", "sql_store", "staging_key"]


def staging_key() -> str:
    """A fresh key for an import's staging copy (hidden from ``list_assistants``)."""
    return f"{STAGING_PREFIX}{uuid.uuid4().hex}"


def sql_store(store: Store) -> SqlStore:
    """``store`` as the SQL store (imports need transactions beyond the Store port).

    Raises:
        StorageError: ``store`` is another implementation.
    """
    if not isinstance(store, SqlStore):
        raise StorageError(
            f"Importing needs the SQL store (SQLite or PostgreSQL), not {type(store).__name__!r}; "
            "import into a sqlite:// or postgresql:// database."
        )
    return store


def promote(
    store: Store, staging_id: int, key: str, created_at: str | None, *, replace: bool
) -> None:
    """Give the staging assistant ``staging_id`` the key ``key``, in one transaction.

    Raises:
        AlreadyExistsError: an assistant ``key`` exists and ``replace`` is False.
    """
    sql = sql_store(store)
    with sql._transaction(f"putting the imported assistant {key!r} in place", write=True) as conn:
        existing = conn.execute(
            select(assistants.c.id).where(assistants.c.key == key)
        ).scalar_one_or_none()
        if existing is not None:
            if not replace:
                raise AlreadyExistsError(
                    f"An assistant {key!r} already exists in {sql.url!r}",
                    "Pass --replace to overwrite it, or --as NEW_KEY to import beside it.",
                )
            conn.execute(delete(assistants).where(assistants.c.id == existing))
        values: dict[str, object] = {"key": key}
        if created_at is not None:
            values["created_at"] = created_at
        done = conn.execute(update(assistants).where(assistants.c.id == staging_id).values(values))
        if done.rowcount != 1:
            raise StorageError(
                f"The staging assistant of the import of {key!r} vanished; run the import again."
            )


def drop(store: Store, assistant_id: int) -> None:
    """Delete an assistant and every row it owns (a failed import's staging copy)."""
    sql = sql_store(store)
    with sql._transaction("removing a failed import", write=True) as conn:
        conn.execute(delete(assistants).where(assistants.c.id == assistant_id))
