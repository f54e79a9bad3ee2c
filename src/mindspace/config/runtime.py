"""The storage, model, context-window and engine settings (part of :class:`Settings`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings

from mindspace.errors import ConfigError

__all__ = ["RuntimeSettings", "database_url", "default_data_dir"]


def database_url(path_or_url: str | Path) -> str:
    """The SQLAlchemy URL for a database given as a file path or a URL.

    Every place that accepts ``--db``, ``MINDSPACE_DATABASE_URL`` or a store path goes
    through here, so a path means the same file everywhere.

    Args:
        path_or_url: A SQLAlchemy URL (anything with ``://``, returned as given) or the
            path of a SQLite file (``~`` expanded, made absolute so the URL still names
            the same file after the working directory changes).

    Returns:
        The URL, e.g. ``sqlite:////home/me/mindspace.db`` for ``~/mindspace.db``.

    Raises:
        ConfigError: ``path_or_url`` is blank.

    Example:
        >>> database_url("postgresql://db.example/mindspace")
        'postgresql://db.example/mindspace'
    """
    text = str(path_or_url)
    if not text.strip():
        raise ConfigError(
            f"Database {text!r} is blank; give a SQLite file path or a SQLAlchemy URL such "
            "as 'sqlite:///mindspace.db'."
        )
    if "://" in text:
        return text
    return f"sqlite:///{Path(text).expanduser().resolve()}"


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/mindspace``, or ``~/.local/share/mindspace``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "mindspace"


class RuntimeSettings(BaseSettings):
    """Where state lives, which model answers, the context window and the engine's loop.

    A part of :class:`mindspace.config.Settings` (which reads the environment); not
    used on its own.
    """

    # Storage
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description="Directory holding the default SQLite database.",
    )
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL; defaults to a SQLite file `mindspace.db` in data_dir.",
    )
    assistant_key: str = Field(
        default="default", description="Assistant opened when a command names none."
    )
    semantic_backend: Literal["store", "mem0"] = Field(
        default="store",
        description=(
            "Where memory search runs: 'store' (the store's own: the embedded index on "
            "SQLite, pgvector on PostgreSQL) or 'mem0' (Mem0 with an embedded Qdrant; "
            "needs the mem0 extra, see docs/mem0.md)."
        ),
    )
    mem0_path: Path | None = Field(
        default=None,
        description=(
            "Directory of the Mem0 tier's embedded Qdrant and history database; unset: "
            "kept in memory and rebuilt from the store when a process starts."
        ),
    )

    # LLM (any OpenAI-compatible endpoint; none configured means the offline model)
    llm_provider: str | None = Field(
        default=None,
        description=(
            "LLM provider by name: 'openai' (any OpenAI-compatible endpoint), 'anthropic' "
            "(Anthropic's Messages API), 'offline' (the built-in offline model) or one an "
            "installed package registers under the "
            "entry-point group 'mindspace.llm'. Default: 'openai' when llm_base_url is "
            "set, else 'offline'."
        ),
    )
    llm_base_url: str | None = Field(
        default=None,
        description="Chat-completions base URL (for 'anthropic': the API root, by default "
        "https://api.anthropic.com).",
    )
    llm_model: str | None = Field(default=None, description="Model name sent to the provider.")
    llm_api_key: SecretStr | None = Field(default=None, description="Provider API key.")
    llm_timeout: float = Field(
        default=120.0,
        gt=0,
        description="Seconds to wait for an LLM answer (the read timeout: generation time).",
    )
    llm_connect_timeout: float = Field(
        default=10.0, gt=0, description="Seconds to wait for a connection to the LLM server."
    )
    llm_max_retries: int = Field(
        default=3,
        ge=0,
        le=10,
        description="Retries on connection errors, 429, 5xx and malformed answers; "
        "a read timeout is retried at most once.",
    )
    llm_tool_choice: Literal["auto", "omit"] = Field(
        default="auto",
        description="'auto' sends tool_choice: \"auto\" whenever tools are offered; "
        "'omit' never sends it (for servers that reject the field).",
    )

    # Context window
    model_limit: int = Field(
        default=128_000, gt=0, description="Context window of the model in tokens."
    )
    token_warning_percent: float = Field(
        default=60.0, description="Usage at or above which the advisory is 'warning'."
    )
    token_critical_percent: float = Field(
        default=80.0, description="Usage above which the advisory is 'critical'."
    )

    # Engine: ticks, events, the ReAct loop
    tick_rate_awake: float = Field(default=5.0, gt=0, description="Seconds between awake ticks.")
    tick_rate_sleep: float = Field(default=60.0, gt=0, description="Seconds between sleep ticks.")
    autonomous_interval: float = Field(
        default=60.0,
        ge=0,
        description="Least seconds between two autonomous (goal-driven) ticks.",
    )
    max_event_attempts: int = Field(
        default=3, ge=1, description="Ticks an event may crash before it is marked failed."
    )
    context_buffer_size: int = Field(
        default=20, ge=1, description="Ambient messages kept in the context buffer."
    )
    llm_max_tokens: int = Field(default=1024, gt=0, description="Most tokens per LLM reply.")
    llm_temperature: float | None = Field(
        default=None, ge=0, le=2, description="Sampling temperature (provider default if unset)."
    )
    max_reply_chars: int = Field(
        default=4_000,
        ge=100,
        description="Longest reply delivered or stored; longer ones are cut with a marker.",
    )
    fallback_reply: str = Field(
        default="Sorry - I lost my train of thought. Could you say that again?",
        max_length=500,
        description=(
            "Said to the speaker when a tick ends without a reply to a message addressed "
            "to the assistant (the model's calls all failed); empty disables it."
        ),
    )
    tool_profile: Literal["full", "compact"] = Field(
        default="full",
        description=(
            "Tool definitions offered to the model: 'full' (every tool, full descriptions) "
            "or 'compact' (a few core tools with short descriptions and a 'more_tools' entry "
            "that lists the rest; for small local models)."
        ),
    )
    tool_health_window: int = Field(
        default=20,
        ge=1,
        le=1_000,
        description="Ticks over which the tool-use health line counts valid and invalid calls.",
    )
    context_token_budget: int = Field(
        default=32_000,
        gt=0,
        description="Tokens a prompt may use unless its context type sets its own budget.",
    )
    component_token_budgets: dict[str, int] = Field(
        default_factory=lambda: {
            "character_context": 2_000,
            "entity_context": 1_500,
            "semantic_memories": 1_500,
            "context_buffer": 800,
            "goals": 1_500,
            "conversation_history": 8_000,
            "tool_result": 1_000,
        },
        description="Per-component token budgets (JSON object in the environment).",
    )

    @field_validator("semantic_backend", mode="before")
    @classmethod
    def _backend_name(cls, value: object) -> object:
        return value.strip().casefold() if isinstance(value, str) else value

    @field_validator("llm_base_url", "llm_model", "database_url", "llm_provider", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    def resolved_database_url(self, db: str | Path | None = None) -> str:
        """The database URL to use: ``database_url`` or the SQLite file in ``data_dir``.

        Args:
            db: A database given for this run instead (``--db``: a path or a URL).
        """
        if db is not None:
            return database_url(db)
        return database_url(self.database_url or self.data_dir / "mindspace.db")

    @property
    def resolved_llm_provider(self) -> str:
        """The LLM provider's name: ``llm_provider``, else ``'openai'`` when a URL is set."""
        if self.llm_provider:
            return self.llm_provider.strip().casefold()
        return "openai" if self.llm_base_url is not None else "offline"

    @property
    def llm_configured(self) -> bool:
        """Whether a model other than the offline one is configured."""
        return self.resolved_llm_provider != "offline"
