"""build_embedder: the settings pick the embedder by name; missing settings are clear errors."""

from __future__ import annotations

import pytest

from mindspace import Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.embeddings.minilm import MiniLMEmbedder
from mindspace.embeddings.openai_compat import OpenAICompatibleEmbedder
from mindspace.errors import ConfigError
from mindspace.runtime import build_embedder


def test_the_default_is_the_offline_minilm_model() -> None:
    settings = Settings()
    assert settings.embedder == "minilm"
    embedder = build_embedder(settings)
    assert isinstance(embedder, MiniLMEmbedder)
    assert embedder.dim == 384


def test_none_means_no_embedder() -> None:
    assert build_embedder(Settings(embedder="none")) is None


def test_hashing_for_tests() -> None:
    assert isinstance(build_embedder(Settings(embedder="hashing")), HashingEmbedder)


def test_openai_uses_the_embedding_settings() -> None:
    settings = Settings(
        embedder="openai",
        embedding_base_url="http://127.0.0.1:11434/v1",
        embedding_model="nomic-embed-text",
        embedding_api_key="sk-x",
    )
    embedder = build_embedder(settings)
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    assert (embedder.base_url, embedder.name) == ("http://127.0.0.1:11434/v1", "nomic-embed-text")


def test_openai_without_url_and_model_names_both() -> None:
    with pytest.raises(ConfigError) as info:
        build_embedder(Settings(embedder="openai", embedding_base_url="  "))
    message = str(info.value)
    assert "MINDSPACE_EMBEDDING_BASE_URL and MINDSPACE_EMBEDDING_MODEL are not set" in message


def test_openai_without_model_names_it() -> None:
    settings = Settings(embedder="openai", embedding_base_url="http://127.0.0.1:1/v1")
    with pytest.raises(ConfigError, match="MINDSPACE_EMBEDDING_MODEL is not set"):
        build_embedder(settings)


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINDSPACE_EMBEDDER", "hashing")
    monkeypatch.setenv("MINDSPACE_EMBEDDING_API_KEY", "sk-secret")
    settings = Settings()
    assert settings.embedder == "hashing"
    assert settings.embedding_api_key is not None
    assert settings.embedding_api_key.get_secret_value() == "sk-secret"
    assert "sk-secret" not in repr(settings)


def test_an_unknown_embedder_is_refused_with_the_available_names() -> None:
    with pytest.raises(ConfigError) as info:
        build_embedder(Settings(embedder="word2vec"))
    message = str(info.value)
    assert "MINDSPACE_EMBEDDER is 'word2vec'" in message
    assert "'hashing', 'minilm', 'none', 'openai'" in message


def test_the_name_is_case_insensitive() -> None:
    assert isinstance(build_embedder(Settings(embedder=" Hashing ")), HashingEmbedder)
