"""The semantic-store port on Mem0: vectors in Mem0 (embedded Qdrant), BM25 here.

Our memory records stay the source of truth; Mem0 holds the dense index and its
metadata, one Mem0 memory per mindspace memory with a usable vector, its payload
carrying our key (``mindspace_id``), source trust, tags (casefolded), embedder and a
digest of what was indexed. Like the embedded :class:`~mindspace.memory.index.MemoryIndex`,
:class:`Mem0SemanticIndex` is a :class:`~mindspace.state.committed.CacheListener`: every
committed write or delete of a memory (this process's, or another's through the state
cache's change feed) is applied to Mem0 at once, so the two never drift apart. On first use
it reconciles Mem0 with the store: rows whose digest matches are kept (a persistent
``MINDSPACE_MEM0_PATH`` is not rewritten on restart), others are added or deleted.

Searches follow the port's scoring contract as the PostgreSQL index does: dense
candidates come from Mem0's vector store (Qdrant cosine over the collection of this
assistant and embedder; trust and tags are checked on the nearest points here, fetching
more until enough pass), lexical candidates from an in-process BM25 over our records
(Mem0's own keyword search scores differently), and the union is fused with z-scores and
a logistic (:func:`mindspace.memory.fusion.fuse_candidates`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mindspace.config import Settings
from mindspace.memory.lexical import LexicalIndex
from mindspace.memory.records import Memory
from mindspace.memory.rows import IndexedMemory
from mindspace.state.models import Record
from mindspace.state.semantic import SearchRequest, SemanticIndex
from mindspace.state.unit import StateCache
from mindspace.storage.candidates import CandidateSearch
from mindspace.storage.mem0_setup import EmbedderSource, Mem0Handle, open_mem0, require_mem0

__all__ = ["Mem0SemanticIndex", "mem0_semantic"]


OpenHandle = Callable[[int], Mem0Handle]
"""Opens the Mem0 memory for vectors of a size."""


def _digest(row: IndexedMemory) -> str:
    """Changes whenever anything Mem0 holds of this memory changes."""
    h = hashlib.sha256()
    for part in (row.content, "\x1f".join(row.tags), repr(row.trust), row.embedder or ""):
        h.update(part.encode())
        h.update(b"\x1e")
    h.update(row.embedding or b"")
    return h.hexdigest()


@dataclass(frozen=True)
class _Entry:
    """An indexed memory: its filters, and the Mem0 memory holding its vector (if any)."""

    trust: float
    tags: frozenset[str]
    mem0_id: str | None


class Mem0SemanticIndex(CandidateSearch):
    """Search over one assistant's memories with Mem0 holding the vectors.

    Args:
        cache: The assistant's state cache (the index listens to it).
        embedder: The name of the embedder queries use; other embedders' vectors are not
            sent to Mem0 (those memories stay searchable lexically). None: any vector
            of the size of the first one seen.
        open_handle: Opens the Mem0 memory for vectors of a size.
        scope: Mem0's ``agent_id`` for this assistant's memories.
    """

    def __init__(
        self, cache: StateCache, embedder: str | None, open_handle: OpenHandle, scope: str
    ) -> None:
        self._cache = cache
        self.embedder = embedder
        self.scope = scope
        self._open_handle = open_handle
        self._handle: Mem0Handle | None = None
        self._dim: int | None = None
        self._built = False
        self._clear()
        cache.listen(Memory.kind, self)

    def _clear(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._held = 0  # entries whose vector Mem0 holds
        self._lexical = LexicalIndex()

    # -- CacheListener -------------------------------------------------------------------
    def applied(self, key: str, record: Record | None) -> None:
        """Apply one committed write (None: a delete) to Mem0 and the BM25 postings."""
        if not self._built:
            return  # reconciled from the store on first use, which already holds this write
        self._drop(key)
        if isinstance(record, Memory):
            self._put(IndexedMemory.of(record), None)
        if len(self._lexical.keys) > 64 and len(self._lexical.keys) > 2 * len(self._entries):
            self._built = False  # BM25 rows of deleted memories: rebuilt on next use

    def reset(self) -> None:
        """The cache was reloaded: reconcile with the store on next use."""
        self._built = False

    # -- building ------------------------------------------------------------------------
    def ensure(self) -> None:
        """Reconcile Mem0 with the committed memories if not done yet."""
        if self._built:
            return
        self._clear()
        store, assistant = self._cache.store, self._cache.assistant_id
        scan = store.scan(assistant, Memory.kind, IndexedMemory.FIELDS)
        rows = [IndexedMemory.from_stored(r) for r in scan]
        if self._dim is None:
            self._dim = next((len(v) for v in map(self._vector, rows) if v is not None), None)
        held: dict[str, tuple[str, str]] = {}
        if self._dim is not None:
            for mem0_id, payload in self._mem0().listing(self.scope):
                key = str(payload.get("mindspace_id", ""))
                if key in held:
                    self._mem0().delete(mem0_id)  # a duplicate left by an interrupted run
                else:
                    held[key] = (mem0_id, str(payload.get("mindspace_digest", "")))
        for row in rows:
            kept = held.pop(row.key, None)
            if kept is not None and kept[1] != _digest(row):
                self._mem0().delete(kept[0])
                kept = None
            self._put(row, kept[0] if kept is not None else None)
        for mem0_id, _ in held.values():
            self._mem0().delete(mem0_id)  # memories deleted while nobody listened
        self._built = True

    def _mem0(self) -> Mem0Handle:
        if self._handle is None:
            assert self._dim is not None  # opened once the first usable vector is seen
            self._handle = self._open_handle(self._dim)
        return self._handle

    def _vector(self, row: IndexedMemory) -> npt.NDArray[np.float32] | None:
        """The row's vector if queries can be compared with it."""
        vector = row.vector_by(self.embedder)
        if vector is None:
            return None
        if self._dim is None:
            self._dim = int(vector.shape[0])
        if vector.shape[0] != self._dim or not np.any(vector):
            return None  # Qdrant's cosine needs a non-zero vector of the collection's size
        return vector

    def _put(self, row: IndexedMemory, mem0_id: str | None) -> None:
        """Index ``row``; ``mem0_id``: Mem0 already holds it (else it is added when usable)."""
        vector = self._vector(row)
        if mem0_id is None and vector is not None:
            metadata = {
                "mindspace_id": row.key,
                "mindspace_digest": _digest(row),
                "embedder": row.embedder,
                "source_trust": row.trust,
                "tags": list(row.tags),
            }
            mem0_id = self._mem0().add(row.content, vector, self.scope, metadata)
        self._entries[row.key] = _Entry(row.trust, frozenset(row.tags), mem0_id)
        self._held += mem0_id is not None
        self._lexical.add(row.key, row.lexical)

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        self._lexical.remove(key)
        if entry.mem0_id is not None:
            self._held -= 1
            self._mem0().delete(entry.mem0_id)

    # -- queries -------------------------------------------------------------------------
    def count(self) -> int:
        """How many memories are indexed."""
        self.ensure()
        return len(self._entries)

    def __len__(self) -> int:
        return self.count()

    def _dense(
        self,
        vector: npt.NDArray[np.float32],
        k: int,
        eligible: Callable[[_Entry], bool] | None = None,
    ) -> dict[str, float]:
        """Cosine of the ``k`` nearest eligible memories, from Mem0's vector store.

        Qdrant's local mode checks payload filters in Python, point by point, so trust and
        tags are checked here on the entries instead: the nearest points are fetched, the
        ineligible ones dropped, and four times as many fetched until ``k`` remain or every
        vector has been seen (pgvector's iterative scan, in effect).
        """
        if self._dim is None or vector.shape[0] != self._dim or self._handle is None:
            return {}
        held = self._held
        fetch = k if eligible is None else min(held, 4 * k)
        while True:
            found: dict[str, float] = {}
            points = self._handle.search(vector, fetch)
            for mem0_id, key, score in points:
                entry = self._entries.get(key)
                if entry is None or entry.mem0_id != mem0_id:
                    continue  # not (or no longer) one of ours
                if eligible is None or eligible(entry):
                    found[key] = score
                    if len(found) == k:
                        return found
            if fetch >= held or len(points) < fetch:
                return found
            fetch = min(held, 4 * fetch)

    def _candidates(
        self, request: SearchRequest, k: int
    ) -> tuple[list[tuple[str, float | None, float]], bool]:
        """The ``k`` best eligible memories of each signal, with both signals of each.

        In :func:`~mindspace.memory.fusion.fuse_candidates`' row form and order; BM25 is
        standardised over the candidates.
        """
        self.ensure()
        vector, min_trust = request.vector, request.min_trust
        wanted = {tag.casefold() for tag in request.tags}

        def eligible(entry: _Entry) -> bool:
            return entry.trust >= min_trust and wanted <= entry.tags

        bm25 = self._lexical.scores(request.text)  # deleted rows score 0
        lexical_top: list[str] = []
        positive = np.flatnonzero(bm25 > 0)
        # Best first (ties: the older row), walked until k eligible memories are found.
        for row in positive[np.argsort(-bm25[positive], kind="stable")]:
            entry = self._entries.get(self._lexical.keys[int(row)])
            if entry is not None and eligible(entry):
                lexical_top.append(self._lexical.keys[int(row)])
                if len(lexical_top) == k:
                    break
        dense: dict[str, float] = {}
        if vector is not None and vector.ndim == 1:
            filtered = min_trust > 0 or bool(wanted)
            dense = self._dense(vector, k, eligible if filtered else None)
            missing = {
                mem0_id: key
                for key in lexical_top
                if key not in dense and (mem0_id := self._entries[key].mem0_id) is not None
            }
            if missing and self._handle is not None and vector.shape[0] == self._dim:
                # Lexical candidates beyond Mem0's nearest k: their stored vectors' cosine.
                found = self._handle.similarities(vector, list(missing))
                dense.update({missing[mem0_id]: score for mem0_id, score in found.items()})
        rows = {self._lexical.row(key): key for key in {*lexical_top, *dense}}
        # In insertion order (the BM25 rows'), so ties go to the older memory as elsewhere.
        ordered = sorted((r, key) for r, key in rows.items() if r is not None)
        return [(key, dense.get(key), float(bm25[row])) for row, key in ordered], False

    def _nearby(
        self, batch: npt.NDArray[np.float32], k: int, own: list[str]
    ) -> list[list[tuple[str, float]]]:
        """Mem0's ``k + 1`` nearest points of each row, less the row's own memory."""
        self.ensure()
        found = (self._dense(row, k + 1).items() for row in batch)
        return [
            [(key, s) for key, s in near if key != mine and key in self._entries]
            for near, mine in zip(found, own, strict=True)
        ]


def mem0_semantic(
    settings: Settings, embedder: EmbedderSource | None = None, *, namespace: str = "mindspace"
) -> Callable[[StateCache, str | None], SemanticIndex]:
    """The factory a store uses to give each assistant a :class:`Mem0SemanticIndex`.

    Args:
        settings: ``mem0_path`` and the LLM endpoint Mem0 is configured with.
        embedder: Builds our embedder, for texts Mem0 embeds itself (its own
            ``Memory.search``; the index never asks it to: our records carry vectors).
        namespace: Prefix of the Qdrant collections (one per assistant, embedder and
            vector size); give each database its own when several share one ``mem0_path``.

    Raises:
        ConfigError: Mem0 or Qdrant's client is not installed.
    """
    require_mem0()  # fail when the store opens, not inside a later commit
    key = settings.llm_api_key

    def build(cache: StateCache, embedder_name: str | None) -> SemanticIndex:
        scope = f"a{cache.assistant_id}"
        made_by = hashlib.sha256((embedder_name or "").encode()).hexdigest()[:8]

        def open_handle(dim: int) -> Mem0Handle:
            return open_mem0(
                dim=dim,
                # One collection per assistant, embedder and size: searches need no
                # payload filter (Qdrant's local mode evaluates those point by point).
                collection=f"{namespace}_{scope}_{made_by}_{dim}",
                path=settings.mem0_path,
                embedder=embedder,
                llm_base_url=settings.llm_base_url,
                llm_model=settings.llm_model,
                llm_api_key=key.get_secret_value() if key is not None else None,
            )

        return Mem0SemanticIndex(cache, embedder_name, open_handle, scope)

    return build
