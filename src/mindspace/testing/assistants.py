"""Assistants on a store a test holds, built by the composition root as hosts get theirs.

Tests that hold a store (to inspect it, to run two processes on it, to parametrize the
backend) open assistants with :func:`assistant_on` instead of wiring the facade by hand,
so they run on the adapters the root chooses for that store (PostgreSQL's own vector
search, say), as a host's assistant does.
"""

from __future__ import annotations

from mindspace.clock import Clock
from mindspace.config import Settings
from mindspace.embeddings.port import Embedder
from mindspace.engine import Assistant
from mindspace.llm.port import LLM
from mindspace.runtime import Runtime
from mindspace.state.port import Store
from mindspace.tools.registry import ToolRegistry
from mindspace.tracing import NO_TRACER, Tracer

__all__ = ["assistant_on"]


def assistant_on(
    store: Store,
    key: str,
    *,
    llm: LLM,
    create: bool = True,
    clock: Clock | None = None,
    settings: Settings | None = None,
    tools: ToolRegistry | None = None,
    self_names: tuple[str, ...] = (),
    embedder: Embedder | None = None,
    tracer: Tracer = NO_TRACER,
) -> Assistant:
    """Open the assistant ``key`` on ``store`` with exactly these adapters.

    ``embedder=None`` means none (lexical search only) and the tracer is none unless
    given: nothing is built from the environment. The store stays the caller's.

    Raises:
        AssistantNotFoundError: absent and ``create`` is False.
    """
    runtime = Runtime(
        settings or Settings(),
        store,
        llm=llm,
        embedder=embedder,
        clock=clock,
        tools=tools,
        tracer=tracer,
        owns_store=False,
    )
    return runtime.open(key, create=create, self_names=self_names)
