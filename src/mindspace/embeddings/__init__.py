"""Embedders: the port, the offline MiniLM model, an OpenAI-compatible adapter, hashing.

The names are imported on first use (PEP 562): the core imports ``embeddings.port``,
and that must not load the openai SDK or the MiniLM model's modules with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mindspace.embeddings.factory import build_embedder
    from mindspace.embeddings.hashing import HashingEmbedder
    from mindspace.embeddings.minilm import MiniLMEmbedder
    from mindspace.embeddings.openai_compat import OpenAICompatibleEmbedder
    from mindspace.embeddings.port import Embedder, Vectors

__all__ = [
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "OpenAICompatibleEmbedder",
    "Vectors",
    "build_embedder",
]

# Each public name and the module that defines it.
_EXPORTS: dict[str, str] = {
    "Embedder": "mindspace.embeddings.port",
    "HashingEmbedder": "mindspace.embeddings.hashing",
    "MiniLMEmbedder": "mindspace.embeddings.minilm",
    "OpenAICompatibleEmbedder": "mindspace.embeddings.openai_compat",
    "Vectors": "mindspace.embeddings.port",
    "build_embedder": "mindspace.embeddings.factory",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it in the module."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mindspace.embeddings' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
