"""Memory fixtures: assistants with the test-only hashing embedder."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mindspace import Assistant
from mindspace.embeddings import HashingEmbedder


@pytest.fixture
def memory_assistant(make_assistant: Callable[..., Assistant]) -> Assistant:
    """An assistant whose memories are embedded by the hashing embedder."""
    return make_assistant("keeper", embedder=HashingEmbedder(256))
