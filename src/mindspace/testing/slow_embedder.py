"""A deliberately slow embedder, to show that embedding does not block the event loop."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from mindspace.embeddings.port import Embedder, Vectors

__all__ = ["SlowEmbedder"]


class SlowEmbedder:
    """Wraps an embedder and blocks the calling thread for ``delay`` seconds per ``embed``.

    It stands for a CPU-bound model on a slow machine: the wait is a real blocking
    ``time.sleep`` on purpose (no clock can stand in for it), so a caller that runs
    ``embed`` on the event loop freezes every other coroutine for ``delay`` seconds,
    and a caller that goes through ``embed_async`` does not.

    Args:
        inner: The embedder that makes the vectors.
        delay: Seconds each ``embed`` call blocks before answering.
    """

    def __init__(self, inner: Embedder, delay: float = 2.0) -> None:
        if delay < 0:
            raise ValueError(f"SlowEmbedder needs delay >= 0, got {delay!r}")
        self.inner = inner
        self.delay = delay
        self.name = inner.name
        self.dim = inner.dim
        self.calls = 0
        self.entered = threading.Event()
        """Set when an ``embed`` call starts (a test waits for it before measuring)."""
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """The inner embedder's vectors, after blocking for ``delay`` seconds."""
        with self._lock:
            self.calls += 1
        self.entered.set()
        time.sleep(self.delay)
        return self.inner.embed(texts)
