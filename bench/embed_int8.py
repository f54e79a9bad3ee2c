"""The int8 MiniLM pass against the float32 one: CPU per text, vector agreement, retrieval.

- CPU (``time.process_time``, one BLAS thread, the embedder's default): one text of
  about 16 tokens embedded alone (median of ``--calls`` calls), and a batch of 8 such
  texts (median per batch), for both passes, run in alternating order.
- Agreement over LoCoMo dev's dialog turns (``--data``; SOURCE.md beside it): the cosine
  between each turn's int8 and float32 vectors (min, p1, mean).
- Retrieval: each LoCoMo question ranks the turns of its own conversation; the top 10 of
  float32 queries against float32 turns is the reference. Reported: the mean top-10
  overlap of int8 queries against float32 turns (an existing store queried by the new
  pass) and of int8 queries against int8 turns.

Run:  PYTHONPATH=src .venv/bin/python bench/embed_int8.py \
          --data /work/shared/data/locomo/locomo_dev.json

``--disable-kernels turin,genoa,...`` switches numkong's kernels for those CPU generations
off first (``numkong.disable_capability``), to see the int8 pass on an older CPU;
``--speed-only`` skips the LoCoMo part. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numkong
import numpy as np

from mindspace.embeddings.minilm import MiniLMEmbedder

TEXT = "Caroline said she went to the support group yesterday and it was powerful."


def cpu_ms(call: Callable[[], object], calls: int) -> float:
    """Median CPU milliseconds of ``call`` over ``calls`` calls (after one warm-up)."""
    call()
    times = []
    for _ in range(calls):
        start = time.process_time()
        call()
        times.append(time.process_time() - start)
    return round(statistics.median(times) * 1000, 2)


def locomo(path: Path) -> tuple[list[list[str]], list[list[str]]]:
    """Per conversation: its dialog turns' texts and its questions."""
    turns, questions = [], []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        turns.append(
            [
                turn["text"]
                for key, session in conversation.items()
                if key.startswith("session_") and isinstance(session, list)
                for turn in session
            ]
        )
        questions.append([qa["question"] for qa in sample["qa"]])
    return turns, questions


def top10(queries: np.ndarray, stored: np.ndarray) -> list[set[int]]:
    scores = queries @ stored.T
    return [set(np.argsort(-row, kind="stable")[:10].tolist()) for row in scores]


def overlap(a: list[set[int]], b: list[set[int]]) -> float:
    return round(statistics.mean(len(x & y) / 10 for x, y in zip(a, b, strict=True)), 4)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, help="LoCoMo dev JSON")
    parser.add_argument("--speed-only", action="store_true")
    parser.add_argument(
        "--disable-kernels", default="", help="numkong capabilities, comma-separated"
    )
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3, help="alternating speed rounds")
    args = parser.parse_args(argv)
    if args.data is None and not args.speed_only:
        parser.error("--data is required unless --speed-only")
    disabled = [c for c in args.disable_kernels.split(",") if c]
    for capability in disabled:
        numkong.disable_capability(capability)
    load_before = os.getloadavg()
    passes = {p: MiniLMEmbedder(precision=p) for p in ("float32", "int8")}
    load_s = {}
    for name, embedder in passes.items():
        start = time.process_time()
        embedder.load()
        load_s[name] = round(time.process_time() - start, 3)
    tokens = len(_tokens(passes["float32"]))

    batch = [f"{TEXT} ({i})" for i in range(8)]
    speed: dict[str, dict[str, list[float]]] = {p: {"one": [], "batch8": []} for p in passes}
    for round_ in range(args.rounds):  # alternate the order, as the machine's load drifts
        order = list(passes) if round_ % 2 == 0 else list(reversed(passes))
        for name in order:
            embedder = passes[name]
            speed[name]["one"].append(cpu_ms(partial(embedder.embed, [TEXT]), args.calls))
            speed[name]["batch8"].append(cpu_ms(partial(embedder.embed, batch), args.calls))

    report: dict[str, Any] = {
        "benchmark": "MiniLM int8 pass vs float32",
        "cpus": os.cpu_count(),
        "load_avg_before": [round(x, 2) for x in load_before],
        "numkong_disabled": disabled,
        "load_cpu_s": load_s,
        "text_tokens": tokens,
        "cpu_ms_one_text_median": {p: statistics.median(s["one"]) for p, s in speed.items()},
        "cpu_ms_batch8_median": {p: statistics.median(s["batch8"]) for p, s in speed.items()},
        "cpu_ms_rounds": speed,
    }
    if not args.speed_only:
        report.update(agreement(passes, args.data))
    report["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))
    return 0


def agreement(passes: dict[str, MiniLMEmbedder], data: Path) -> dict[str, Any]:
    """Cosine of the two passes' vectors over LoCoMo's turns, and top-10 overlaps."""
    turns, questions = locomo(data)
    cosines, mixed, both = [], [], []
    for conv_turns, conv_questions in zip(turns, questions, strict=True):
        stored = {p: e.embed(conv_turns) for p, e in passes.items()}
        asked = {p: e.embed(conv_questions) for p, e in passes.items()}
        cosines.append((stored["float32"] * stored["int8"]).sum(axis=1))
        reference = top10(asked["float32"], stored["float32"])
        mixed.append(overlap(top10(asked["int8"], stored["float32"]), reference))
        both.append(overlap(top10(asked["int8"], stored["int8"]), reference))
    cos = np.concatenate(cosines)
    n_questions = [len(q) for q in questions]

    def weighted(values: list[float]) -> float:
        return round(float(np.average(values, weights=n_questions)), 4)

    return {
        "turns": int(cos.size),
        "cosine_int8_vs_float32": {
            "min": round(float(cos.min()), 4),
            "p1": round(float(np.percentile(cos, 1)), 4),
            "mean": round(float(cos.mean()), 4),
        },
        "questions": sum(n_questions),
        "top10_overlap_int8_query_float32_store": weighted(mixed),
        "top10_overlap_int8_query_int8_store": weighted(both),
    }


def _tokens(embedder: MiniLMEmbedder) -> list[int]:
    from mindspace.embeddings import minilm

    return list(minilm._load(embedder.model_dir, embedder.precision).tokenizer.encode(TEXT).ids)


if __name__ == "__main__":
    sys.exit(main())
