"""The composition roots of a game's assistants: one per database, shared by characters.

Every assistant character whose settings name the same database opens its assistant
from the same :class:`~mindspace.runtime.Runtime`, so they share one store (one pool
of connections) while each keeps its own model and embedder, built from its own
``mindspace_*`` settings. Used on the asyncio thread only.
"""

from __future__ import annotations

from mindspace.config import Settings
from mindspace.runtime import Runtime

__all__ = ["close_stores", "root_for"]

_ROOTS: dict[str, Runtime] = {}  # by database URL


def root_for(settings: Settings) -> Runtime:
    """The composition root on the database ``settings`` names, opened on first use.

    Raises:
        ConfigError: the URL is malformed or no store provider serves its scheme.
        StorageError: the database cannot be opened.
    """
    url = settings.resolved_database_url()
    root = _ROOTS.get(url)
    if root is None:
        root = _ROOTS[url] = Runtime.from_settings(settings)
    return root


async def close_stores() -> None:
    """Close every root's store and model connections (on the loop; tests and shutdown)."""
    for url in list(_ROOTS):
        await _ROOTS.pop(url).aclose()
