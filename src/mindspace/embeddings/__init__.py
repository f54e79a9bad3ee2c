"""Embedders: the port, the offline MiniLM model, an OpenAI-compatible adapter, hashing."""

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
