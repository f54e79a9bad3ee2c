"""The int8 MiniLM pass: close to the reference vectors, interchangeable with float32's."""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mindspace import Settings
from mindspace.embeddings import minilm
from mindspace.embeddings.minilm import MiniLMEmbedder
from mindspace.errors import ConfigError
from mindspace.runtime import build_embedder

REFERENCE = Path(__file__).with_name("reference_minilm.json")


@pytest.fixture(scope="module")
def int8() -> MiniLMEmbedder:
    return MiniLMEmbedder(precision="int8")


@pytest.fixture(scope="module")
def float32() -> MiniLMEmbedder:
    return MiniLMEmbedder(precision="float32")


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data


def test_close_to_the_reference_vectors(int8: MiniLMEmbedder, reference: dict[str, Any]) -> None:
    cases = reference["cases"]
    vectors = int8.embed([case["text"] for case in cases])
    for case, vector in zip(cases, vectors, strict=True):
        expected = np.asarray(case["vector"], dtype=np.float64)
        cosine = float(vector.astype(np.float64) @ expected / np.linalg.norm(expected))
        # Measured: 0.9988-0.9992 for the texts, 0.9932 for "" (two tokens, so the
        # [CLS]/[SEP] rounding is all there is); the bounds leave 1e-4 for other CPUs.
        bound = 0.993 if case["text"] == "" else 0.998
        assert cosine >= bound, (case["text"][:40], cosine)


def test_unit_float32_vectors_under_the_same_name(
    int8: MiniLMEmbedder, float32: MiniLMEmbedder
) -> None:
    vectors = int8.embed(["one", "two words", ""])
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Stored vectors carry the embedder's name; int8 queries are meant to search them.
    assert (int8.name, int8.dim) == (float32.name, float32.dim)


def test_a_text_has_one_vector_whatever_its_batch(int8: MiniLMEmbedder) -> None:
    texts = [
        "a short one",
        "Another sentence, somewhat longer than the short one before it, with more words.",
        "Mid-length: the harbour master saw the grain ship.",
        "",
    ]
    batched = MiniLMEmbedder(precision="int8", batch_size=3).embed(texts)
    single = np.vstack([int8.embed([text]) for text in texts])
    # Activations are scaled per token, so padding in a batch changes nothing.
    np.testing.assert_allclose(batched, single, atol=1e-5, rtol=0)


def test_int8_queries_find_what_float32_queries_find(
    int8: MiniLMEmbedder, float32: MiniLMEmbedder
) -> None:
    stored = [
        "The blacksmith owes the baker three silver coins.",
        "It rained all week, and the roads to the mill flooded.",
        "Mara adopted a grey kitten from the harbour.",
        "The council voted to close the north gate at night.",
        "Tomas is learning to play the fiddle for the festival.",
        "Quarterly revenue exceeded the analysts' expectations.",
    ]
    questions = [
        "Who has a debt to the baker?",
        "What happened to the roads because of the weather?",
        "Which pet did Mara get?",
        "What did the council decide about the gate?",
        "What instrument is Tomas practising?",
    ]
    old = float32.embed(stored)  # an existing store, embedded by the float32 pass
    for asked in (int8.embed(questions) @ old.T, int8.embed(questions) @ int8.embed(stored).T):
        reference = float32.embed(questions) @ old.T
        np.testing.assert_array_equal(asked.argmax(axis=1), np.arange(len(questions)))
        np.testing.assert_array_equal(asked.argmax(axis=1), reference.argmax(axis=1))
        # Measured: 0.005 (int8 queries, float32 store) and 0.011 (int8 both); the scores
        # meet fixed thresholds (memory updates, journal cut-offs), so they must stay close.
        assert np.abs(asked - reference).max() < 0.02


def test_each_precision_keeps_one_copy_per_process(int8: MiniLMEmbedder) -> None:
    other = MiniLMEmbedder(precision="int8", batch_size=4)
    int8.load()
    other.load()
    assert minilm._load(int8.model_dir, "int8") is minilm._load(other.model_dir, "int8")
    assert minilm._load(int8.model_dir, "int8") is not minilm._load(int8.model_dir, "float32")


def test_an_unknown_precision_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        MiniLMEmbedder(precision="int4")  # type: ignore[arg-type]
    assert "'int4'" in str(info.value)
    assert "'float32', 'int8'" in str(info.value)


def test_the_setting_picks_the_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINDSPACE_EMBEDDER_PRECISION", " Float32 ")
    embedder = build_embedder(Settings())
    assert isinstance(embedder, MiniLMEmbedder)
    assert embedder.precision == "float32"
    embedder = build_embedder(Settings(embedder_precision="int8"))
    assert isinstance(embedder, MiniLMEmbedder)
    assert embedder.precision == "int8"


def test_int8_is_the_default() -> None:
    assert MiniLMEmbedder().precision == "int8"
    embedder = build_embedder(Settings())
    assert isinstance(embedder, MiniLMEmbedder)
    assert embedder.precision == "int8"


def test_threads_embedding_at_once_get_the_serial_vectors(int8: MiniLMEmbedder) -> None:
    # Assistants embed on worker threads; the packed weights are shared by all of them.
    texts = [f"Sentence {i}: the harbour master counted {i} ships." for i in range(16)]
    serial = int8.embed(texts)
    with ThreadPoolExecutor(max_workers=4) as pool:
        rows = list(pool.map(lambda text: int8.embed([text])[0], texts))
    np.testing.assert_allclose(np.vstack(rows), serial, atol=1e-5, rtol=0)


def test_without_numkong_the_int8_pass_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numkong", None)  # as if it were not installed
    with pytest.raises(ConfigError) as info:
        minilm._Model(minilm.locate_model_dir(), "int8")
    message = str(info.value)
    assert "'numkong'" in message
    assert "MINDSPACE_EMBEDDER_PRECISION='float32'" in message


def test_a_cpu_without_simd_kernels_is_warned_about(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import numkong

    # What numkong reports on a CPU it has no vector kernels for.
    monkeypatch.setattr(numkong, "get_capabilities", lambda: {"serial": True, "haswell": False})
    with caplog.at_level("WARNING", logger="mindspace.embeddings.minilm"):
        minilm._Model(minilm.locate_model_dir(), "int8")
    assert "MINDSPACE_EMBEDDER_PRECISION='float32'" in caplog.text
    caplog.clear()
    monkeypatch.undo()
    with caplog.at_level("WARNING", logger="mindspace.embeddings.minilm"):
        minilm._Model(minilm.locate_model_dir(), "int8")
    simd = any(on for name, on in numkong.get_capabilities().items() if name != "serial")
    assert ("float32" in caplog.text) is not simd  # silent where the kernels are fast
