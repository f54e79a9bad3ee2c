"""Embedders: the port, the offline MiniLM model, an OpenAI-compatible adapter, hashing.

The names are imported on first use (PEP 562): the core imports ``embeddings.port``,
and that must not load the openai SDK or the MiniLM model's modules with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mindspace.lazy import lazy_exports

if TYPE_CHECKING:
    from mindspace.embeddings.hashing import HashingEmbedder
    from mindspace.embeddings.minilm import MiniLMEmbedder
    from mindspace.embeddings.openai_compat import OpenAICompatibleEmbedder
    from mindspace.embeddings.port import AsyncEmbedder, Embedder, Vectors, embed_async

__all__ = [
    "AsyncEmbedder",
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "OpenAICompatibleEmbedder",
    "Vectors",
    "embed_async",
]

# Each public name and the module that defines it.
_EXPORTS: dict[str, str] = {
    "AsyncEmbedder": "mindspace.embeddings.port",
    "Embedder": "mindspace.embeddings.port",
    "HashingEmbedder": "mindspace.embeddings.hashing",
    "MiniLMEmbedder": "mindspace.embeddings.minilm",
    "OpenAICompatibleEmbedder": "mindspace.embeddings.openai_compat",
    "Vectors": "mindspace.embeddings.port",
    "embed_async": "mindspace.embeddings.port",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
