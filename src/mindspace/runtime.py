"""The composition root: builds stores, models and assistants from settings.

The core never imports adapters; hosts (the CLI, the HTTP server, Evennia) call these
functions instead of wiring adapters themselves. The adapters' modules (the openai SDK,
the MiniLM model) are imported when one is built, not when this module is, so that a
process that never talks to a model never pays for loading its SDK.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mindspace.config import Settings, database_url
from mindspace.engine.assistant import Assistant
from mindspace.errors import ConfigError
from mindspace.llm.offline import OfflineLLM
from mindspace.storage.sql import SqlStore

if TYPE_CHECKING:
    from mindspace.clock import Clock
    from mindspace.embeddings.port import Embedder
    from mindspace.llm.port import LLM

__all__ = ["build_embedder", "build_llm", "open_assistant", "open_store"]


def open_store(
    settings: Settings, db: str | Path | None = None, *, create: bool = True
) -> SqlStore:
    """The store named by ``db`` (a file path or SQLAlchemy URL) or by the settings.

    With ``create=False`` a missing SQLite file raises StorageError instead of being
    created (an existing one is still migrated).
    """
    if db is None:
        return SqlStore(settings.resolved_database_url(), create=create)
    return SqlStore(database_url(db), create=create)


def build_embedder(settings: Settings) -> Embedder | None:
    """The embedder ``MINDSPACE_EMBEDDER`` names, or None when it is ``'none'``.

    Raises:
        ConfigError: a required setting is missing, or the model package is not installed.
    """
    from mindspace.embeddings.factory import build_embedder as build  # loads NumPy models

    return build(settings)


def build_llm(settings: Settings) -> LLM:
    """The configured LLM, or the offline model when none is configured.

    Raises:
        ConfigError: an LLM URL is set but no model name.
    """
    if not settings.llm_configured:
        return OfflineLLM()
    if not settings.llm_model:
        raise ConfigError(
            f"MINDSPACE_LLM_BASE_URL is set to {settings.llm_base_url!r} but "
            "MINDSPACE_LLM_MODEL is not; set the model name the endpoint serves."
        )
    # Imported here so that commands which never call a model do not load the openai SDK.
    from mindspace.llm.openai_compat import OpenAICompatibleLLM

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
    database file nor the assistant.

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
        llm=llm or build_llm(settings),
        clock=clock,
        settings=settings,
        embedder=embedder if embedder is not None else build_embedder(settings),
    )
