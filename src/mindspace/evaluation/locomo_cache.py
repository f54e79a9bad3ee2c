"""Reusing ingested LoCoMo conversations between benchmark runs.

Ingesting a conversation (every turn through ``add_journal_entry``, a simulated night
after each session) takes most of a LoCoMo run; asking the questions takes seconds. A
cache directory keeps each ingested conversation as a SQLite file named by its sample id
and a digest of everything that decides what ingestion writes: the sample itself, the
embedder, the settings (apart from the query-side ones) and the product's source code
(apart from the query-side modules). A later run reuses a file only when its digest
matches, so changing ingestion re-ingests on its own, while changing how memories are
searched does not.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from mindspace.config import Settings
from mindspace.evaluation.locomo_data import Sample

__all__ = ["QUERY_ONLY_MODULES", "QUERY_ONLY_SETTINGS", "CachedSample", "cached_sample"]

QUERY_ONLY_MODULES: frozenset[str] = frozenset(
    {
        # Paths under src/mindspace whose code only runs when memories are searched for a
        # question; ingestion never calls it, so editing it keeps the cache valid.
        "evaluation/locomo.py",
        "evaluation/locomo_cache.py",
        "hosts/cli/bench.py",
        "memory/query.py",
        "memory/rank_fusion.py",
        "memory/temporal.py",
    }
)

QUERY_ONLY_SETTINGS: frozenset[str] = frozenset(
    {
        "memory_dense_weight",
        "memory_relevance_threshold",
        "memory_relevance_window",
        "memory_speaker_query_weight",
    }
)
"""Settings read only when searching; any setting named ``memory_recall_*`` is one too."""

NIGHT = "through-dreaming"
"""How the harness sleeps (evaluation/locomo.py, a query-only module): part of the key,
so changing the night re-ingests. "through-dreaming": compacting, then dreaming until the
night's work is finished."""

_PACKAGE = Path(__file__).resolve().parent.parent


def _code_digest() -> str:
    """A digest of the product's Python sources, the query-only modules left out."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        relative = path.relative_to(_PACKAGE).as_posix()
        if relative in QUERY_ONLY_MODULES:
            continue
        digest.update(relative.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _settings_digest(settings: Settings) -> str:
    data = settings.model_dump(mode="json")
    kept = {
        key: value
        for key, value in data.items()
        if key not in QUERY_ONLY_SETTINGS and not key.startswith("memory_recall_")
    }
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()


def _sample_digest(sample: Sample) -> str:
    turns = [
        (s.number, s.when.isoformat(), t.dia_id, t.speaker, t.content)
        for s in sample.sessions
        for t in s.turns
    ]
    return hashlib.sha256(json.dumps(turns).encode()).hexdigest()


class CachedSample:
    """Where one ingested conversation lives in the cache, and whether it is complete.

    Args:
        directory: The cache directory.
        sample_id: The conversation's id.
        key: The digest of what ingestion depends on.
    """

    def __init__(self, directory: Path, sample_id: str, key: str) -> None:
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in sample_id)
        self.key = key
        self.db = directory / f"{safe}-{key[:16]}.db"
        self._done = directory / f"{safe}-{key[:16]}.done"

    @property
    def complete(self) -> bool:
        """A finished ingestion with this key is in the cache."""
        return self._done.exists() and self.db.exists()

    def discard(self) -> None:
        """Remove a partial ingestion (a run stopped half-way) before ingesting afresh."""
        for path in self.db.parent.glob(f"{self.db.name}*"):
            path.unlink()
        self._done.unlink(missing_ok=True)

    def mark_complete(self) -> None:
        """Record that ingestion finished, so later runs reuse the file."""
        self._done.write_text(self.key + "\n")


def cached_sample(
    directory: Path,
    sample: Sample,
    settings: Settings,
    embedder_name: str,
    route: str = "message",
) -> CachedSample:
    """The cache entry of ``sample`` under ``settings``, ``embedder_name`` and ``route``."""
    digest = hashlib.sha256()
    for part in (
        sample.sample_id,
        NIGHT,
        route,
        _sample_digest(sample),
        embedder_name,
        _settings_digest(settings),
        _code_digest(),
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    return CachedSample(directory, sample.sample_id, digest.hexdigest())
