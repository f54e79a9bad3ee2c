"""Store implementations: SQL on SQLAlchemy 2 (SQLite by default, PostgreSQL)."""

from mindspace.storage.sql import SqlStore

__all__ = ["SqlStore"]
