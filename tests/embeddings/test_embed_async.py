"""embed_async, the one async boundary for embeddings: aembed when there is one, else a thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import numpy as np

from mindspace.embeddings import HashingEmbedder, Vectors, embed_async
from mindspace.testing import SlowEmbedder


class _ThreadRecorder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(16)
        self.threads: list[int] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.threads.append(threading.get_ident())
        return super().embed(texts)


class _WithAembed(_ThreadRecorder):
    def __init__(self) -> None:
        super().__init__()
        self.awaited = 0

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        self.awaited += 1
        return HashingEmbedder.embed(self, texts)


async def test_a_sync_embedder_runs_in_a_worker_thread() -> None:
    embedder = _ThreadRecorder()
    vectors = await embed_async(embedder, ["the cellar", "the gate"])
    np.testing.assert_array_equal(vectors, HashingEmbedder(16).embed(["the cellar", "the gate"]))
    assert embedder.threads
    assert threading.get_ident() not in embedder.threads


async def test_an_embedder_with_aembed_is_awaited_on_the_loop() -> None:
    embedder = _WithAembed()
    vectors = await embed_async(embedder, ["the cellar"])
    assert vectors.shape == (1, 16)
    assert embedder.awaited == 1
    assert embedder.threads == []  # embed() was never called


async def test_the_loop_runs_on_while_a_slow_embedder_works() -> None:
    slow = SlowEmbedder(HashingEmbedder(16), delay=0.3)
    embedding = asyncio.create_task(embed_async(slow, ["x"]))
    beats = 0
    while not embedding.done():
        beats += 1
        await asyncio.sleep(0.005)
    assert (await embedding).shape == (1, 16)
    assert slow.calls == 1
    # Up to 60 beats of 5 ms fit in the 0.3 s embed; on a blocked loop there would be 1 or 2.
    assert beats >= 10, f"the loop ran {beats} times during a 0.3 s embed"
