"""Embedders: the port, the offline MiniLM model, an OpenAI-compatible adapter, hashing."""

from mindspace.embeddings.hashing import HashingEmbedder
from mindspace.embeddings.port import Embedder, Vectors

__all__ = ["Embedder", "HashingEmbedder", "Vectors"]
