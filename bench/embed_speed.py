"""Speed of the default MiniLM embedder (NumPy forward pass): load time and ms per sentence.

Sentences are memory-like (12-30 words, built from a fixed seed). Batch 1 embeds each
sentence alone; batch 32 embeds lists of 32. Both run first with NumPy's own BLAS
threading (``threads=None``), then with one BLAS thread (the embedder's default, which
pins the whole process), since a busy machine makes several BLAS threads much slower.

``--precision`` picks the pass (``int8``, the default, or ``float32``; bench/embed_int8.py
compares the two in CPU time).

Run:  .venv/bin/python bench/embed_speed.py [--sentences 256] [--repeats 3] [--precision int8]
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info

from mindspace.embeddings import minilm
from mindspace.embeddings.minilm import MiniLMEmbedder

NAMES = ("Mara", "the blacksmith", "old Tomas", "the harbour master", "Ilse", "a trader")
VERBS = ("said", "mentioned", "complained", "promised", "remembered", "warned")
THINGS = ("the north gate", "three silver coins", "the grain ship", "a broken wheel", "rain")
PLACES = ("at the market", "by the docks", "in the tavern", "near the mill", "on the road")
EXTRA = (
    "before sunset",
    "and nobody believed it",
    "because the roads were flooded",
    "while the bells were ringing",
    "although the council had already decided otherwise",
    "so I should ask again tomorrow",
)


def make_sentences(n: int, rng: random.Random) -> list[str]:
    """Deterministic memory-like sentences of varied length."""
    out = []
    for _ in range(n):
        parts = [
            rng.choice(NAMES),
            rng.choice(VERBS),
            "that",
            rng.choice(THINGS),
            "was seen",
            rng.choice(PLACES),
        ]
        parts += rng.sample(EXTRA, rng.randint(0, 3))
        out.append(" ".join(parts) + ".")
    return out


def per_sentence_ms(embedder: MiniLMEmbedder, sentences: list[str], batch: int) -> float:
    start = time.perf_counter()
    for i in range(0, len(sentences), batch):
        embedder.embed(sentences[i : i + batch])
    return (time.perf_counter() - start) * 1000 / len(sentences)


def blas_threads() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def run(embedder: MiniLMEmbedder, sentences: list[str], repeats: int) -> dict[str, Any]:
    embedder.embed(sentences[:32])  # warm up
    result: dict[str, Any] = {}
    for batch in (1, 32):
        runs = [per_sentence_ms(embedder, sentences, batch) for _ in range(repeats)]
        result[f"batch_{batch}_ms_per_sentence"] = round(statistics.median(runs), 2)
        result[f"batch_{batch}_runs"] = [round(r, 2) for r in runs]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--precision", choices=["int8", "float32"], default="int8")
    args = parser.parse_args(argv)
    sentences = make_sentences(args.sentences, random.Random(7))
    load_avg_before = os.getloadavg()

    start = time.perf_counter()
    embedder = MiniLMEmbedder(precision=args.precision)
    embedder.load()  # first load in this process: weights and tokenizer
    load_s = time.perf_counter() - start
    reloads = []
    for _ in range(3):  # the same, bypassing the per-process cache
        start = time.perf_counter()
        minilm._Model(embedder.model_dir, args.precision)
        reloads.append(time.perf_counter() - start)

    tokens = [
        len(e.ids)
        for e in minilm._load(embedder.model_dir, args.precision).tokenizer.encode_batch(sentences)
    ]
    report = {
        "benchmark": "MiniLM embedder (NumPy), ms per sentence",
        "precision": args.precision,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_avg_before": [round(x, 2) for x in load_avg_before],
        "sentences": len(sentences),
        "tokens_per_sentence_mean": round(statistics.mean(tokens), 1),
        "load_s_first": round(load_s, 3),
        "load_s_reload_median": round(statistics.median(reloads), 3),
        # NumPy's own threading first: the default embedder pins the process to 1 thread.
        "numpy_blas_threads": run(
            MiniLMEmbedder(threads=None, precision=args.precision), sentences, args.repeats
        ),
        "numpy_blas_threads_count": blas_threads(),
        "one_blas_thread": run(embedder, sentences, args.repeats),
        "one_blas_thread_count": blas_threads(),
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
