"""Build the embedder that the settings name."""

from __future__ import annotations

from mindspace.config import Settings
from mindspace.embeddings.hashing import HashingEmbedder
from mindspace.embeddings.minilm import MiniLMEmbedder
from mindspace.embeddings.port import Embedder
from mindspace.errors import ConfigError

__all__ = ["build_embedder"]


def build_embedder(settings: Settings) -> Embedder | None:
    """The embedder for ``settings.embedder``, or ``None`` when it is ``'none'``.

    Raises:
        ConfigError: A required setting is missing, or the model package is not installed.
    """
    kind = settings.embedder
    if kind == "none":
        return None
    if kind == "hashing":
        return HashingEmbedder()
    if kind == "openai":
        base_url, model = settings.embedding_base_url, settings.embedding_model
        if base_url is None or model is None:
            missing = [
                name
                for name, value in (
                    ("MINDSPACE_EMBEDDING_BASE_URL", base_url),
                    ("MINDSPACE_EMBEDDING_MODEL", model),
                )
                if value is None
            ]
            raise ConfigError(
                f"MINDSPACE_EMBEDDER is 'openai' but {' and '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not set. Set "
                "MINDSPACE_EMBEDDING_BASE_URL (e.g. 'http://127.0.0.1:11434/v1') and "
                "MINDSPACE_EMBEDDING_MODEL, or use MINDSPACE_EMBEDDER='minilm'."
            )
        # Imported here: the openai SDK costs ~0.5 s to import and most runs never need it.
        from mindspace.embeddings.openai_compat import OpenAICompatibleEmbedder

        key = settings.embedding_api_key
        return OpenAICompatibleEmbedder(
            base_url=base_url,
            model=model,
            api_key=key.get_secret_value() if key is not None else None,
        )
    return MiniLMEmbedder()
