"""Settings: one object, read from ``MINDSPACE_*`` environment variables.

Every field has a documented default, so an assistant runs with no configuration at
all: the database lives in the data directory and the offline model stands in for an
LLM. ``docs/configuration.md`` lists the same fields for users: its "Every setting"
table is generated from this model (``python scripts/gen_docs.py``), and a test fails
when a field is missing there or its default differs.

The fields are grouped by concern in the modules of this package (runtime, memory,
sleep); :class:`Settings` joins them, in that order, with the rest.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from mindspace.config.memory import MemorySettings
from mindspace.config.runtime import RuntimeSettings, database_url, default_data_dir
from mindspace.config.sleep import SleepSettings

__all__ = ["Settings", "database_url", "default_data_dir"]


# Bases in reverse: pydantic lists inherited fields from the last base to the first, so
# the documented order stays runtime, memory, sleep, then the fields below.
class Settings(SleepSettings, MemorySettings, RuntimeSettings):
    """Runtime settings; each field can be set as ``MINDSPACE_<FIELD>`` in the environment."""

    model_config = SettingsConfigDict(env_prefix="MINDSPACE_", extra="ignore")

    # Writes that lose an optimistic-concurrency race to another process
    # 100, not 20: six writer processes on PostgreSQL had 4 of 240 calls lose 21 races in
    # a row (bench/conflict_retries.py, bench/RESULTS.md "trust"); the longest streak
    # seen with 100 was 39. A lost race costs at most 500 ms, so the limit bounds waiting.
    conflict_retries: int = Field(
        default=100,
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
    # int8 costs about half the CPU per text, its vectors are within cosine 0.99 of float32's
    # and LoCoMo dev moved by <= 0.2 points (bench/embed_int8.py, bench/RESULTS.md), so
    # it is the default and both share one embedder name: stores stay searchable.
    embedder_precision: Literal["int8", "float32"] = Field(
        default="int8",
        description=(
            "How the 'minilm' embedder multiplies: 'int8' (int8 weights and activations, "
            "about half the CPU per text) or 'float32' (the reference pass). Vectors of "
            "the two are within cosine 0.99, so either searches what the other stored."
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

    @field_validator("embedder", "embedder_precision", mode="before")
    @classmethod
    def _embedder_name(cls, value: object) -> object:
        return value.strip().casefold() if isinstance(value, str) else value
