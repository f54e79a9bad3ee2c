"""The composition root: builds stores, models and assistants from settings.

This is the only module that names adapters. The core never imports them, and hosts
(the CLI, the HTTP server, Evennia) call these functions instead of wiring adapters
themselves (tests/test_architecture.py checks both). Each adapter is a named provider
in a :class:`~mindspace.providers.Registry`; third-party packages add providers through
entry points (see :mod:`mindspace.providers`). The adapters' modules (SQLAlchemy, the
openai SDK, the MiniLM model) are imported when one is built, not when this module is,
so that a process that never talks to a model never pays for loading its SDK.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from mindspace.config import Settings, database_url
from mindspace.engine.assistant import Assistant
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
from mindspace.telemetry import (
    build_tracer,
    instrument_llm,
    metrics_page,
    use_telemetry,
)

if TYPE_CHECKING:
    from mindspace.clock import Clock
    from mindspace.embeddings.port import Embedder
    from mindspace.llm.providers.anthropic_messages import AnthropicLLM
    from mindspace.state.port import Store

__all__ = [
    "EMBEDDERS",
    "LLMS",
    "STORES",
    "EndpointLLM",
    "build_embedder",
    "build_llm",
    "build_tracer",
    "database_file",
    "instrument_llm",
    "is_offline",
    "metrics_page",
    "offline_llm",
    "offline_notice",
    "open_assistant",
    "open_store",
    "probe_llm",
    "shown_url",
    "use_telemetry",
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

    return MiniLMEmbedder()


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


# -- what hosts call -----------------------------------------------------------------------


def open_store(settings: Settings, db: str | Path | None = None, *, create: bool = True) -> Store:
    """The store named by ``db`` (a file path or database URL) or by the settings.

    A URL's scheme (``sqlite``, ``postgresql``, or one a plugin registers; a driver
    suffix such as ``+psycopg`` is ignored) selects the store provider. With
    ``create=False`` a missing SQLite file raises StorageError instead of being created
    (an existing one is still migrated).

    Raises:
        ConfigError: the URL is malformed or no store provider serves its scheme.
        StorageError: the database cannot be opened.
    """
    url = _url_of(settings, db)
    return STORES.get(_scheme(url))(url, settings, create)


def database_file(settings: Settings, db: str | Path | None = None) -> Path | None:
    """The SQLite file ``db`` (or the settings) names; None for other databases.

    Raises:
        ConfigError: the URL is malformed.
    """
    if db is not None and "://" not in str(db):
        return Path(db).expanduser()
    from mindspace.storage.sql import sqlite_file

    return sqlite_file(_url_of(settings, db))


def shown_url(url: str) -> str:
    """``url`` with its password masked, for messages; unchanged when it is not a URL."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def build_embedder(settings: Settings) -> Embedder | None:
    """The embedder ``MINDSPACE_EMBEDDER`` names, or None when it is ``'none'``.

    Raises:
        ConfigError: no embedder has that name, a required setting is missing, or the
            model package is not installed.
    """
    return EMBEDDERS.get(settings.embedder)(settings)


def offline_llm(*, scenario: str | None = None, announce: bool = False) -> LLM:
    """The offline model (no endpoint), optionally with a scenario's own lines.

    Args:
        scenario: ``"tavern"`` adds the demo's tavern wording (``mindspace.testing.tavern``).
        announce: Log the offline notice when it starts.

    Raises:
        ConfigError: an unknown scenario.
    """
    from mindspace.offline import OfflineLLM

    if scenario is None:
        return OfflineLLM(announce=announce)
    if scenario != "tavern":
        raise ConfigError(f"Unknown offline scenario {scenario!r}; the demo's is 'tavern'.")
    from mindspace.testing.tavern import TAVERN_SKILLS

    return OfflineLLM(TAVERN_SKILLS, announce=announce)


def offline_notice() -> str:
    """What the offline model is and how to configure a real one (for hosts to show)."""
    from mindspace.offline import OFFLINE_NOTICE

    return OFFLINE_NOTICE


def is_offline(llm: LLM) -> bool:
    """Whether ``llm`` is the offline stand-in (traced or not)."""
    from mindspace.llm.traced import unwrap_llm
    from mindspace.offline import OfflineLLM

    return isinstance(unwrap_llm(llm), OfflineLLM)


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
    if provider == "anthropic":
        return _anthropic_adapter()(
            model=model,
            api_key=api_key or "",
            base_url=base_url,
            timeout=settings.llm_timeout,
            connect_timeout=settings.llm_connect_timeout,
            max_retries=settings.llm_max_retries,
            tool_choice=tool_choice,
            sleep=sleep or asyncio.sleep,
        )
    from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM

    return OpenAICompatibleLLM(
        base_url=base_url,
        model=model,
        api_key=api_key,
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


def open_assistant(
    key: str | None = None,
    *,
    settings: Settings | None = None,
    db: str | Path | None = None,
    llm: LLM | None = None,
    clock: Clock | None = None,
    create: bool = True,
    embedder: Embedder | None = None,
) -> Assistant:
    """Open (or create) an assistant with everything built from settings.

    The embedder is the one ``MINDSPACE_EMBEDDER`` names (the offline MiniLM model by
    default) unless one is passed. With ``create=False`` nothing is created: neither the
    database file nor the assistant. When OpenTelemetry is on (``MINDSPACE_OTEL=1``,
    or :func:`use_telemetry`), its ticks, model and tool calls are traced.

    Raises:
        StorageError: ``create`` is False and the SQLite file does not exist.
        AssistantNotFoundError: ``create`` is False and there is no such assistant.
    """
    settings = settings or Settings()
    store = open_store(settings, db, create=create)
    return Assistant.open(
        store,
        key or settings.assistant_key,
        create=create,
        llm=instrument_llm(llm or build_llm(settings), settings),
        clock=clock,
        settings=settings,
        embedder=embedder if embedder is not None else build_embedder(settings),
        tracer=build_tracer(settings),
    )


def _url_of(settings: Settings, db: str | Path | None) -> str:
    return settings.resolved_database_url() if db is None else database_url(db)


def _scheme(url: str) -> str:
    scheme, separator, _ = url.partition("://")
    if not separator or not scheme:
        raise ConfigError(
            f"{url!r} is not a database URL; give a file path or a URL such as "
            "'sqlite:///mindspace.db' (MINDSPACE_DATABASE_URL or --db)."
        )
    # "postgresql+psycopg" names the psycopg driver of the postgresql store.
    return scheme.partition("+")[0]
