"""Settings: one object, read from ``MINDSPACE_*`` environment variables.

Every field has a documented default, so an assistant runs with no configuration at
all: the database lives in the data directory and the offline model stands in for an
LLM. ``docs/configuration.md`` lists the same fields for users: its "Every setting"
table is generated from this model (``python scripts/gen_docs.py``), and a test fails
when a field is missing there or its default differs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from mindspace.errors import ConfigError

__all__ = ["Settings", "database_url", "default_data_dir"]


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


class Settings(BaseSettings):
    """Runtime settings; each field can be set as ``MINDSPACE_<FIELD>`` in the environment."""

    model_config = SettingsConfigDict(env_prefix="MINDSPACE_", extra="ignore")

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

    # Memory tiers
    max_memory_chars: int = Field(
        default=4_000, gt=0, description="Longest semantic memory accepted."
    )
    memory_relevance_threshold: float = Field(
        default=0.3,
        ge=0,
        le=1,
        description=(
            "Stage 1 of retrieve_relevant_memories: relevance (cosine similarity; for a "
            "message, blended over the speaker-aware and plain query) must exceed this. "
            "Spec 003 says 0.7; MiniLM scores paraphrases far lower (docs/memory.md)."
        ),
    )
    memory_relevance_window: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description=(
            "Stage 1: a memory reaches the prompt only if its relevance is within this of "
            "the best relevance for the same query."
        ),
    )
    memory_speaker_query_weight: float = Field(
        default=0.75,
        ge=0,
        le=1,
        description=(
            "Weight of the speaker-aware query ('<speaker>: <message>') against the plain "
            "message when a message's memories are looked up for the prompt."
        ),
    )
    memory_min_source_trust: float = Field(
        default=0.5, ge=0, le=1, description="Stage 2: least source trust for the prompt."
    )
    memory_dense_weight: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Weight of the dense (embedding) score against BM25 in memory search.",
    )
    memory_recall_time_boost: float = Field(
        default=3.0,
        ge=0,
        le=10,
        description=(
            "Memory search raises memories that happened in a date the query names ('on "
            "25 May, 2022', 'in May') by this many standard deviations of the blended "
            "score (0: off)."
        ),
    )
    memory_recall_question_penalty: float = Field(
        default=0.75,
        ge=0,
        le=10,
        description=(
            "Memory search lowers memories that are themselves questions by this many "
            "standard deviations (0: off)."
        ),
    )
    memory_recall_reply_discount: float = Field(
        default=0.3,
        ge=-1,
        le=10,
        description=(
            "Memory search ranks the reply to a matching question (the next entry of its "
            "exchange) at most this far below the question (negative: replies not followed)."
        ),
    )
    memory_recall_speaker_boost: float = Field(
        default=0.6,
        ge=0,
        le=10,
        description=(
            "Memory search raises the memories of the one speaker a query names ('What "
            "does Melanie do to relax?') by this many standard deviations (0: off)."
        ),
    )
    memory_recall_continuation_discount: float = Field(
        default=1.6,
        ge=-1,
        le=10,
        description=(
            "Memory search ranks the same speaker's turns two entries on and two back "
            "from each of its three best hits (same exchange) at most this far below the "
            "hit (negative: off)."
        ),
    )
    memory_recall_session_boost: float = Field(
        default=0.1,
        ge=0,
        le=2,
        description=(
            "Memory search raises every memory by this many standard deviations for each "
            "of its ten best hits told on the same day (0: off)."
        ),
    )
    memory_link_threshold: float = Field(
        default=0.7, ge=0, le=1, description="Least similarity for an A-MEM link."
    )
    stale_conversation_minutes: float = Field(
        default=30.0, gt=0, description="Idle minutes after which a conversation ends."
    )

    # Memory without tool use: raw observations and the night's fact mining
    entity_raw_observations_max: int = Field(
        default=20,
        ge=0,
        description=(
            "Verbatim messages kept as raw observations per entity profile (oldest raw ones "
            "dropped first); 0 keeps none."
        ),
    )
    entity_raw_observation_chars: int = Field(
        default=300, ge=20, description="Longest quoted message kept in a raw observation."
    )
    mining_messages_per_call: int = Field(
        default=20, ge=1, description="Most messages from an entity sent in one mining request."
    )
    mining_calls_per_tick: int = Field(
        default=3,
        ge=0,
        description="Most fact-mining LLM requests per sleep tick; 0 turns mining off.",
    )
    mining_self_trust: float = Field(
        default=0.9,
        ge=0,
        le=1,
        description="Source trust of a mined fact a speaker told about themselves.",
    )
    mining_other_trust: float = Field(
        default=0.6,
        ge=0,
        le=1,
        description="Source trust of a mined fact a speaker told about the world or others.",
    )
    mining_duplicate_threshold: float = Field(
        default=0.95,
        ge=0,
        le=1,
        description=(
            "Cosine similarity at or above which a mined fact duplicates a memory (when its "
            "numbers and negation match too)."
        ),
    )

    # Sleep cycle
    wake_cooldown_minutes: float = Field(
        default=60.0, ge=0, description="Minutes a woken assistant stays awake before it may sleep."
    )
    sleep_default_hours: float = Field(
        default=4.0,
        gt=0,
        le=168,
        description="Hours a sleep lasts when no sleep schedule sets its end "
        "(go_to_sleep, Assistant.sleep, the API and the CLI without a schedule).",
    )
    sleep_scoring_per_tick: int = Field(
        default=10, ge=1, description="Journal entries given an LLM importance score per tick."
    )
    scoring_batch_size: int = Field(
        default=10,
        ge=1,
        description="Journal entries one LLM call rates when scoring importance (1: one each).",
    )
    sleep_consolidation_per_tick: int = Field(
        default=5, ge=1, description="Journal entries moved to semantic memory per sleep tick."
    )
    sleep_links_per_tick: int = Field(
        default=5,
        ge=1,
        le=1_000,
        description=(
            "Memories given A-MEM links per dreaming tick (spec: 5; raise it to link an "
            "imported store in fewer ticks)."
        ),
    )
    sleep_journal_vectors_per_tick: int = Field(
        default=64,
        ge=1,
        le=10_000,
        description=(
            "Journal entries embedded and their vectors stored per sleep tick (semantic "
            "journal search embeds the rest at query time)."
        ),
    )
    journal_min_similarity: float = Field(
        default=0.2,
        ge=-1,
        le=1,
        description=(
            "Semantic search_journal: entries less similar (cosine) to the query are not "
            "matches. Calibrated for the default MiniLM embedder (bench/journal_cutoff.py)."
        ),
    )
    compact_sleep_threshold: float = Field(
        default=70.0, gt=0, le=100, description="Usage (%) at which sleep compacts history."
    )
    compact_emergency_threshold: float = Field(
        default=80.0, gt=0, le=100, description="Usage (%) at which an awake tick compacts."
    )
    pre_compaction_per_tick: int = Field(
        default=3,
        ge=1,
        le=100,
        description="Most pre-compaction extraction sessions (one per conversation) per "
        "tick; a compaction goes on over the next ticks until every conversation is done.",
    )

    # Writes that lose an optimistic-concurrency race to another process
    conflict_retries: int = Field(
        default=20,
        ge=0,
        description="Times a write that lost a race to another process is redone.",
    )
    conflict_backoff_min_ms: float = Field(
        default=10.0, ge=0, description="Least pause (ms) before a conflicting write is redone."
    )
    conflict_backoff_max_ms: float = Field(
        default=500.0, ge=0, description="Longest pause (ms) before a conflicting write is redone."
    )

    # Tools
    tool_cache_ttl: float = Field(
        default=60.0, gt=0, description="Seconds a cacheable tool's result is reused."
    )

    # Layer-3 assessment and sub-agents (spec 002 §3); see docs/delegation.md
    task_assessment_enabled: bool = Field(
        default=False,
        description="Ask the model for a short assessment that may narrow each tick's pattern.",
    )
    sub_agents_enabled: bool = Field(
        default=False,
        description="Offer delegate_subtask where the context allows sub-agents (tick_event).",
    )
    sub_agent_budget: int = Field(
        default=3, ge=1, le=10, description="Most sub-agents running at once."
    )
    sub_agent_max_iterations: int = Field(
        default=3, ge=1, le=10, description="Most loop iterations of one sub-agent."
    )

    # Limits on what tools accept (bad input gets a clear error, nothing is stored)
    max_goal_description_chars: int = Field(
        default=500, gt=0, description="Longest goal description accepted."
    )
    max_session_memory_chars: int = Field(
        default=1_000,
        gt=0,
        description="Longest session memory item (or entity observation) accepted.",
    )
    max_project_summary_chars: int = Field(
        default=1_000, gt=0, description="Longest project summary accepted."
    )
    max_project_context_chars: int = Field(
        default=20_000, gt=0, description="Longest project context accepted."
    )
    max_system_prompt_chars: int = Field(
        default=8_000, gt=0, description="Longest system prompt accepted."
    )
    max_completed_tasks: int = Field(
        default=50, gt=0, description="Completed tasks kept in session memory."
    )

    # Journal (spec 004); max_entries and the reflection threshold live per assistant
    # in its journal documents (defaults 100 and 150, as in the spec).
    max_journal_entry_chars: int = Field(
        default=10_000, gt=0, description="Longest journal entry (or synthesis) accepted."
    )
    episodic_alpha_recency: float = Field(
        default=1.0, ge=0, description="Weight of recency in episodic search scores."
    )
    episodic_alpha_importance: float = Field(
        default=1.0, ge=0, description="Weight of importance in episodic search scores."
    )
    episodic_alpha_relevance: float = Field(
        default=1.0, ge=0, description="Weight of keyword relevance in episodic search scores."
    )
    episodic_decay_rate: float = Field(
        default=0.99, ge=0, description="Recency decay per hour of age: exp(-rate * hours)."
    )

    # Embeddings (the default is the offline all-MiniLM-L6-v2 model; nothing is downloaded)
    embedder: str = Field(
        default="minilm",
        description=(
            "Embedding model: 'minilm' (offline all-MiniLM-L6-v2, the default), 'openai' "
            "(an OpenAI-compatible /v1/embeddings endpoint), 'hashing' (tests only, not "
            "semantic), 'none' (no dense vectors) or one an installed package registers "
            "under the entry-point group 'mindspace.embedders'."
        ),
    )
    embedding_base_url: str | None = Field(
        default=None, description="Embeddings base URL; required when embedder is 'openai'."
    )
    embedding_model: str | None = Field(
        default=None, description="Embedding model name; required when embedder is 'openai'."
    )
    embedding_api_key: SecretStr | None = Field(
        default=None, description="API key for the embeddings endpoint."
    )

    # Observability (the 'otel' extra; exporters follow the standard OTEL_* variables)
    otel: bool = Field(
        default=False,
        description="Emit OpenTelemetry traces and metrics (docs/observability.md).",
    )

    @field_validator("embedding_base_url", "embedding_model", mode="before")
    @classmethod
    def _blank_embedding_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("semantic_backend", mode="before")
    @classmethod
    def _backend_name(cls, value: object) -> object:
        return value.strip().casefold() if isinstance(value, str) else value

    @field_validator("embedder", mode="before")
    @classmethod
    def _embedder_name(cls, value: object) -> object:
        return value.strip().casefold() if isinstance(value, str) else value

    @field_validator("llm_base_url", "llm_model", "database_url", "llm_provider", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    def resolved_database_url(self) -> str:
        """The database URL to use: ``database_url`` or the SQLite file in ``data_dir``."""
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
