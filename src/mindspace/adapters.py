"""The built-in providers: each adapter built from settings, by name.

Each adapter is a named provider in a :class:`~mindspace.providers.Registry`; third-party
packages add providers through entry points (see :mod:`mindspace.providers`). The
adapters' modules (SQLAlchemy, the openai SDK, the MiniLM model) are imported when one is
built, not when this module is, so that a process that never talks to a model never pays
for loading its SDK. Only the composition root (:mod:`mindspace.runtime`) uses this
module; hosts reach what they need through the root.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from mindspace.config import Settings
from mindspace.errors import ConfigError
from mindspace.llm.port import LLM
from mindspace.llm.providers.anthropic_wire import ANTHROPIC_BASE_URL
from mindspace.providers import (
    EMBEDDER_GROUP,
    LLM_GROUP,
    STORE_GROUP,
    EmbedderFactory,
    LLMFactory,
    Registry,
    StoreFactory,
)
from mindspace.telemetry import instrument_llm

if TYPE_CHECKING:
    from mindspace.embeddings.port import Embedder
    from mindspace.llm.providers.anthropic_messages import AnthropicLLM
    from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
    from mindspace.state.port import Store

__all__ = [
    "EMBEDDERS",
    "LLMS",
    "STORES",
    "EndpointLLM",
    "build_embedder",
    "build_llm",
    "probe_llm",
]

LLMS: Registry[LLMFactory] = Registry("LLM provider", LLM_GROUP, "MINDSPACE_LLM_PROVIDER")
"""LLM providers by name (``MINDSPACE_LLM_PROVIDER``): ``offline``, ``openai``, ``anthropic``,
plugins."""

EMBEDDERS: Registry[EmbedderFactory] = Registry("embedder", EMBEDDER_GROUP, "MINDSPACE_EMBEDDER")
"""Embedders by name (``MINDSPACE_EMBEDDER``): ``minilm``, ``hashing``, ``openai``, ``none``."""

STORES: Registry[StoreFactory] = Registry(
    "store", STORE_GROUP, "the database URL's scheme (MINDSPACE_DATABASE_URL or --db)"
)
"""Stores by URL scheme: ``sqlite`` and ``postgresql`` (SQL on SQLAlchemy), plugins."""


# -- built-in providers: each imports its adapter when it builds one -----------------------


def _offline_llm(settings: Settings) -> LLM:
    from mindspace.offline import OfflineLLM

    return OfflineLLM()


def _openai_llm(settings: Settings) -> LLM:
    if not settings.llm_base_url:
        raise ConfigError(
            "The LLM provider is 'openai' but MINDSPACE_LLM_BASE_URL is not set; set it "
            "to the endpoint's chat-completions base URL (e.g. 'http://127.0.0.1:11434/v1')."
        )
    if not settings.llm_model:
        raise ConfigError(
            f"MINDSPACE_LLM_BASE_URL is set to {settings.llm_base_url!r} but "
            "MINDSPACE_LLM_MODEL is not; set the model name the endpoint serves."
        )
    # Imported here so that commands which never call a model do not load the openai SDK.
    from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM

    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return OpenAICompatibleLLM(
        base_url=str(settings.llm_base_url),
        model=settings.llm_model,
        api_key=key,
        timeout=settings.llm_timeout,
        connect_timeout=settings.llm_connect_timeout,
        max_retries=settings.llm_max_retries,
        tool_choice=settings.llm_tool_choice,
    )


def _anthropic_adapter() -> type[AnthropicLLM]:
    """The Anthropic adapter's class; ``ConfigError`` naming the extra when the SDK is missing.

    Imported here: only a process that talks to Claude loads the anthropic SDK.
    """
    try:
        from mindspace.llm.providers.anthropic_messages import AnthropicLLM
    except ModuleNotFoundError as exc:
        if exc.name != "anthropic":
            raise
        raise ConfigError(
            "The LLM provider is 'anthropic' but the anthropic SDK is not installed; "
            "install it with: pip install -e '.[anthropic]' in a mindspace clone"
        ) from exc
    return AnthropicLLM


def _anthropic_llm(settings: Settings) -> LLM:
    if not settings.llm_model:
        raise ConfigError(
            "The LLM provider is 'anthropic' but MINDSPACE_LLM_MODEL is not set; set it "
            "to a Claude model name (e.g. 'claude-sonnet-4-5')."
        )
    secret = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    key = secret or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise ConfigError(
            "The LLM provider is 'anthropic' but no API key is set; set "
            "MINDSPACE_LLM_API_KEY (or ANTHROPIC_API_KEY), any value for a local server."
        )
    return _anthropic_adapter()(
        model=settings.llm_model,
        api_key=key,
        base_url=settings.llm_base_url or ANTHROPIC_BASE_URL,
        timeout=settings.llm_timeout,
        connect_timeout=settings.llm_connect_timeout,
        max_retries=settings.llm_max_retries,
        tool_choice=settings.llm_tool_choice,
        default_max_tokens=settings.llm_max_tokens,
    )


def _minilm_embedder(settings: Settings) -> Embedder:
    from mindspace.embeddings.minilm import MiniLMEmbedder  # loads NumPy model code

    return MiniLMEmbedder(precision=settings.embedder_precision)


def _hashing_embedder(settings: Settings) -> Embedder:
    from mindspace.embeddings.hashing import HashingEmbedder

    return HashingEmbedder()


def _no_embedder(settings: Settings) -> Embedder | None:
    return None


def _openai_embedder(settings: Settings) -> Embedder:
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


def _sql_store(url: str, settings: Settings, create: bool) -> Store:
    from mindspace.storage.sql import SemanticFactory, SqlStore  # loads SQLAlchemy

    semantic: SemanticFactory | None = None
    if settings.semantic_backend == "mem0":
        from mindspace.storage.mem0_semantic import mem0_semantic  # loads Mem0 on first use

        # One set of Qdrant collections per database when several share MINDSPACE_MEM0_PATH.
        namespace = "mindspace_" + hashlib.sha256(url.encode()).hexdigest()[:12]
        semantic = mem0_semantic(settings, lambda: build_embedder(settings), namespace=namespace)
    return SqlStore(url, create=create, semantic=semantic)


LLMS.register("offline", _offline_llm)
LLMS.register("openai", _openai_llm)
LLMS.register("anthropic", _anthropic_llm)
EMBEDDERS.register("minilm", _minilm_embedder)
EMBEDDERS.register("hashing", _hashing_embedder)
EMBEDDERS.register("openai", _openai_embedder)
EMBEDDERS.register("none", _no_embedder)
STORES.register("sqlite", _sql_store)
STORES.register("postgresql", _sql_store)


def build_embedder(settings: Settings) -> Embedder | None:
    """The embedder ``MINDSPACE_EMBEDDER`` names, or None when it is ``'none'``.

    Raises:
        ConfigError: no embedder has that name, a required setting is missing, or the
            model package is not installed.
    """
    return EMBEDDERS.get(settings.embedder)(settings)


class EndpointLLM(LLM, Protocol):
    """An LLM on an HTTP endpoint that can list its models and close its connections."""

    async def list_models(self) -> list[dict[str, Any]]:
        """The endpoint's ``/models`` entries."""
        ...

    async def aclose(self) -> None:
        """Close the client's keep-alive connections."""
        ...


def probe_llm(
    settings: Settings,
    *,
    base_url: str,
    model: str,
    api_key: str | None,
    tool_choice: Literal["auto", "omit"],
    sleep: Callable[[float], Awaitable[None]] | None = None,
    provider: Literal["openai", "anthropic"] = "openai",
) -> EndpointLLM:
    """A client for ``mindspace doctor``'s probes (settings' timeouts).

    Args:
        settings: Timeouts and retries.
        base_url: The endpoint to probe.
        model: The model name.
        api_key: The key, if the endpoint needs one.
        tool_choice: Whether requests with tools carry ``tool_choice: "auto"``.
        sleep: How retries wait (the doctor counts them).
        provider: ``openai`` (chat completions) or ``anthropic`` (the Messages API).

    Raises:
        ConfigError: the provider is ``anthropic`` and its SDK is not installed.
    """
    adapter: type[AnthropicLLM] | type[OpenAICompatibleLLM]
    if provider == "anthropic":
        adapter = _anthropic_adapter()
    else:
        from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM

        adapter = OpenAICompatibleLLM
    # "" for no key: the OpenAI-compatible adapter sends its placeholder for both.
    return adapter(
        model=model,
        api_key=api_key or "",
        base_url=base_url,
        timeout=settings.llm_timeout,
        connect_timeout=settings.llm_connect_timeout,
        max_retries=settings.llm_max_retries,
        tool_choice=tool_choice,
        sleep=sleep or asyncio.sleep,
    )


def build_llm(settings: Settings) -> LLM:
    """The LLM ``MINDSPACE_LLM_PROVIDER`` names (by default: the OpenAI-compatible
    endpoint when ``MINDSPACE_LLM_BASE_URL`` is set, else the offline model), its calls
    traced when OpenTelemetry is on (``MINDSPACE_OTEL``).

    Raises:
        ConfigError: no provider has that name, or its settings are incomplete.
    """
    return instrument_llm(LLMS.get(settings.resolved_llm_provider)(settings), settings)
