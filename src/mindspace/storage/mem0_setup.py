"""Mem0 (``mem0ai``) configured for mindspace: offline, telemetry off, our vectors.

What this module guarantees before any Mem0 code runs:

- **Telemetry off.** Mem0 reads ``MEM0_TELEMETRY`` once, when ``mem0.memory.telemetry``
  is first imported, and creates a PostHog client at that moment if it is on. We set
  ``MEM0_TELEMETRY=False`` in the process environment before importing Mem0, whatever the
  user's environment says, and, in case Mem0 was imported earlier with it on, turn the
  module flags off and close the PostHog clients it made.
- **No downloads.** Mem0 lemmatises with spaCy when it is installed and downloads
  ``en_core_web_sm`` when the model is missing; we mark the model as unavailable then (Mem0
  falls back to the raw text). Qdrant's BM25 encoder (fastembed, which downloads a model)
  is switched off: lexical search runs on our own BM25 over our records.
- **Our embedder.** :class:`OurEmbedding` is a Mem0 embedder (``embed``/``embed_batch``)
  wrapping a mindspace :class:`~mindspace.embeddings.port.Embedder`. A memory's vector is
  the one already stored on our record ("pinned" while Mem0 adds it), never recomputed.
- **Our LLM endpoint.** Mem0's LLM is the OpenAI-compatible client on
  ``MINDSPACE_LLM_BASE_URL`` (a closed loopback port when none is set), with the
  persona-safe extraction prompt of spec 003 as its custom instructions. The index never
  asks Mem0 to infer (``infer=False``: text stored verbatim); only a caller using the
  :class:`mem0.Memory` directly with ``infer=True`` reaches that LLM.
- **Local vectors.** An embedded Qdrant: in memory, or on ``MINDSPACE_MEM0_PATH`` (one
  client per directory in this process, since Qdrant's local mode locks it).
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from mindspace.embeddings.port import Embedder
from mindspace.errors import ConfigError, StorageError
from mindspace.memory.prompts import ASSISTANT_FACT_EXTRACTION_PROMPT

__all__ = [
    "TELEMETRY_ENV",
    "EmbedderSource",
    "Mem0Handle",
    "OurEmbedding",
    "import_mem0",
    "open_mem0",
    "require_mem0",
]

TELEMETRY_ENV = "MEM0_TELEMETRY"
"""The environment variable Mem0 reads (once, at import) to decide on PostHog telemetry."""

NO_LLM_URL = "http://127.0.0.1:9/v1"
"""Mem0's LLM endpoint when none is configured: the discard port on loopback, closed."""

_LIST_LIMIT = 10_000_000
"""More rows than one assistant's collection holds (Qdrant's scroll takes a limit)."""

EmbedderSource = Callable[[], Embedder | None]
"""Builds our embedder when Mem0 first needs one (most processes never do)."""

_clients: dict[Path, Any] = {}
_clients_lock = threading.Lock()


def require_mem0() -> None:
    """Check that Mem0 and Qdrant's client are installed, without importing them.

    Raises:
        ConfigError: one of them is missing.
    """
    missing = [name for name in ("mem0", "qdrant_client") if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(
            f"MINDSPACE_SEMANTIC_BACKEND='mem0' needs {' and '.join(missing)!r}: install the "
            "extra with pip install -e '.[mem0]' (or unset MINDSPACE_SEMANTIC_BACKEND)."
        )


def import_mem0() -> Any:
    """``mem0.memory.main`` imported with telemetry off and model downloads disabled.

    Raises:
        ConfigError: mem0ai is not installed.
    """
    # Mem0 reads this once, on import of mem0.memory.telemetry: set it first, always.
    os.environ[TELEMETRY_ENV] = "False"
    try:
        import mem0.memory.main as main
        import mem0.memory.telemetry as telemetry
        import mem0.utils.spacy_models as spacy_models
    except ImportError as exc:
        raise ConfigError(
            "MINDSPACE_SEMANTIC_BACKEND='mem0' needs Mem0: install the extra with "
            "pip install -e '.[mem0]' (or unset MINDSPACE_SEMANTIC_BACKEND)."
        ) from exc
    # Imported earlier with telemetry on: switch every flag Mem0 consults off and close
    # the PostHog clients (the hosted client's, made at import, and the lazy OSS one).
    telemetry.MEM0_TELEMETRY = False
    main.MEM0_TELEMETRY = False
    telemetry.client_telemetry.close()
    with telemetry._oss_telemetry_lock:
        telemetry._oss_telemetry_shutting_down = True
        if telemetry._oss_telemetry_instance is not None:
            telemetry._oss_telemetry_instance.close()
            telemetry._oss_telemetry_instance = None
    if not importlib.util.find_spec("spacy") or not importlib.util.find_spec("en_core_web_sm"):
        # spaCy without its model: Mem0 would download it on first use (and without
        # spaCy it logs a warning per process); it lemmatises nothing then.
        spacy_models._load_failed_full = True
        spacy_models._load_failed_lemma = True
    return main


class OurEmbedding:
    """A Mem0 embedder on a mindspace embedder, answering pinned texts with their vectors.

    Mem0 embeds each text it adds or searches through ``embed``; the index pins the text
    of a memory to the vector already on our record for the duration of the add, so the
    vector Mem0 stores is exactly ours (whichever embedder made it).

    Args:
        embedder: Builds the embedder for texts nobody pinned, on first need (None, or
            building None: such a call is an error).
        dim: The vectors' size.
    """

    def __init__(self, embedder: EmbedderSource | None, dim: int) -> None:
        self._source = embedder
        self._embedder: Embedder | None = None
        self.config = _EmbeddingConfig(dim)
        self._pins: dict[str, list[float]] = {}
        self._lock = threading.RLock()

    @contextmanager
    def pinned(self, text: str, vector: npt.NDArray[np.float32]) -> Iterator[None]:
        """Answer ``text`` with ``vector`` inside the block."""
        with self._lock:
            self._pins[text] = [float(x) for x in vector]
            try:
                yield
            finally:
                self._pins.pop(text, None)

    def embed(
        self, text: str, memory_action: Literal["add", "search", "update"] | None = None
    ) -> list[float]:
        """The pinned vector of ``text``, else our embedder's."""
        pinned = self._pins.get(text)
        if pinned is not None:
            return pinned
        if self._embedder is None and self._source is not None:
            self._embedder = self._source()
        if self._embedder is None:
            raise ConfigError(
                f"Mem0 asked for an embedding of {text[:40]!r} and no embedder is configured; "
                "set MINDSPACE_EMBEDDER (see docs/configuration.md)."
            )
        return [float(x) for x in self._embedder.embed([text])[0]]

    def embed_batch(
        self, texts: Sequence[str], memory_action: Literal["add", "search", "update"] = "add"
    ) -> list[list[float]]:
        """``embed`` of each text."""
        return [self.embed(text, memory_action) for text in texts]


@dataclass
class _EmbeddingConfig:
    """What Mem0 reads of an embedder's config."""

    embedding_dims: int


@dataclass
class Mem0Handle:
    """One Mem0 ``Memory`` (one Qdrant collection of one vector size) and its embedder."""

    memory: Any
    embedding: OurEmbedding

    def add(
        self, text: str, vector: npt.NDArray[np.float32], scope: str, metadata: dict[str, Any]
    ) -> str:
        """Store ``text`` verbatim with ``vector`` (Mem0's ``add(infer=False)``); its Mem0 id."""
        with self.embedding.pinned(text, vector):
            added = self.memory.add(text, agent_id=scope, metadata=metadata, infer=False)
        return str(added["results"][0]["id"])

    def delete(self, mem0_id: str) -> None:
        """Forget one Mem0 memory (and its history entry records the delete)."""
        self.memory.delete(mem0_id)

    def search(self, vector: npt.NDArray[np.float32], top_k: int) -> list[tuple[str, str, float]]:
        """(Mem0 id, our key, cosine similarity) of the ``top_k`` nearest memories.

        The vector store's own search: Mem0's ``Memory.search`` would re-embed the query
        and mix its own BM25 and entity boosts into the score, which the port's scoring
        contract leaves to us.
        """
        points = self.memory.vector_store.search(
            query="", vectors=[float(x) for x in vector], top_k=top_k, filters=None
        )
        return [
            (str(p.id), str((p.payload or {}).get("mindspace_id", "")), float(p.score))
            for p in points
        ]

    def similarities(
        self, vector: npt.NDArray[np.float32], mem0_ids: Sequence[str]
    ) -> dict[str, float]:
        """Cosine similarity of ``vector`` to the stored vectors of ``mem0_ids``."""
        store = self.memory.vector_store
        points = store.client.retrieve(
            collection_name=store.collection_name,
            ids=list(mem0_ids),
            with_payload=False,
            with_vectors=True,
        )
        query = np.asarray(vector, dtype=np.float32)
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        found: dict[str, float] = {}
        for point in points:
            stored = point.vector.get("") if isinstance(point.vector, dict) else point.vector
            if stored is not None:
                # Qdrant keeps cosine collections' vectors normalised.
                found[str(point.id)] = float(np.dot(np.asarray(stored, dtype=np.float32), query))
        return found

    def listing(self, scope: str) -> list[tuple[str, dict[str, Any]]]:
        """(Mem0 id, payload) of every memory in ``scope``."""
        listed = self.memory.vector_store.list(filters={"agent_id": scope}, top_k=_LIST_LIMIT)
        points = listed[0] if isinstance(listed, tuple) else listed
        return [(str(p.id), dict(p.payload or {})) for p in points]


def open_mem0(
    *,
    dim: int,
    collection: str,
    path: Path | None,
    embedder: EmbedderSource | None,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_api_key: str | None,
) -> Mem0Handle:
    """A Mem0 ``Memory`` on an embedded Qdrant collection of ``dim``-sized vectors.

    Args:
        dim: The vectors' size (one collection per size).
        collection: The Qdrant collection's name.
        path: Directory of the Qdrant files and Mem0's history database (None: in memory).
        embedder: Builds our embedder, for texts Mem0 embeds itself (its own ``search``).
        llm_base_url: The OpenAI-compatible endpoint Mem0's inference would call.
        llm_model: The model name sent there.
        llm_api_key: Its API key.
    """
    main = import_mem0()
    from mem0.configs.base import MemoryConfig

    if path is not None:
        path.mkdir(parents=True, exist_ok=True)
    config = MemoryConfig(
        vector_store={
            "provider": "qdrant",
            "config": {
                "collection_name": collection,
                "embedding_model_dims": dim,
                "client": _qdrant_client(path),
                # Required by Mem0's validation; the client above is what is used.
                "path": str(path) if path is not None else ":memory:",
            },
        },
        # Built with a placeholder key and replaced below: Mem0's factory only knows its
        # providers, and the OpenAI one never connects before it is asked to embed.
        embedder={"provider": "openai", "config": {"api_key": "unused", "embedding_dims": dim}},
        llm={
            "provider": "openai",
            "config": {
                "model": llm_model or "unused",
                "api_key": llm_api_key or "unused",
                "openai_base_url": llm_base_url or NO_LLM_URL,
            },
        },
        history_db_path=str(path / "history.db") if path is not None else ":memory:",
        custom_instructions=ASSISTANT_FACT_EXTRACTION_PROMPT,
    )
    with warnings.catch_warnings():
        # Qdrant warns that payload indexes do nothing in its local mode, which Mem0
        # requests for any client it did not open itself.
        warnings.filterwarnings("ignore", "Payload indexes have no effect", UserWarning)
        memory = main.Memory(config)
    memory.embedding_model = embedding = OurEmbedding(embedder, dim)
    _pin_llm_endpoint(memory, llm_base_url or NO_LLM_URL, llm_api_key or "unused")
    # Qdrant's BM25 encoder (fastembed) would download a model; False is Mem0's own
    # "tried and unavailable" sentinel.
    memory.vector_store._bm25_encoder = False
    return Mem0Handle(memory, embedding)


def _pin_llm_endpoint(memory: Any, base_url: str, api_key: str) -> None:
    """Point Mem0's OpenAI client at ``base_url`` whatever OPENROUTER_*/OPENAI_* say."""
    from openai import OpenAI

    memory.llm.client = OpenAI(api_key=api_key, base_url=base_url)


def _qdrant_client(path: Path | None) -> Any:
    """An in-memory Qdrant, or the one client of this process on ``path``."""
    from qdrant_client import QdrantClient

    if path is None:
        return QdrantClient(location=":memory:")
    where = path.resolve() / "qdrant"
    with _clients_lock:
        client = _clients.get(where)
        if client is None:
            if not _clients:
                atexit.register(_close_clients)
            try:
                client = QdrantClient(path=str(where))
            except (RuntimeError, OSError) as exc:
                raise StorageError(
                    f"Mem0's Qdrant directory {str(where)!r} cannot be opened ({exc}); it is "
                    "locked while another process uses it: give each process its own "
                    "MINDSPACE_MEM0_PATH, or leave it unset to keep Mem0 in memory."
                ) from exc
            _clients[where] = client
        return client


def _close_clients() -> None:
    """Close the on-disk clients at exit, while Python can still run their clean-up."""
    with _clients_lock:
        for client in _clients.values():
            client.close()
        _clients.clear()
