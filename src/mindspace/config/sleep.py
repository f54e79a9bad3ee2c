"""The sleep cycle's settings: when an assistant sleeps and how much each tick does."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings

__all__ = ["SleepSettings"]


class SleepSettings(BaseSettings):
    """When an assistant sleeps, and the work each sleep tick does.

    A part of :class:`mindspace.config.Settings` (which reads the environment); not
    used on its own.
    """

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
        default=50,
        ge=1,
        description="Journal entries given an LLM importance score per sleep tick (more when "
        "the night's backlog needs it, see sleep_catch_up_factor).",
    )
    scoring_batch_size: int = Field(
        default=25,
        ge=1,
        description="Journal entries one LLM call rates when scoring importance (1: one each).",
    )
    sleep_consolidation_per_tick: int = Field(
        default=25,
        ge=1,
        description="Journal entries moved to semantic memory per sleep tick (more when the "
        "night's backlog needs it, see sleep_catch_up_factor).",
    )
    sleep_consolidation_batch_size: int = Field(
        default=25,
        ge=1,
        le=200,
        description="Journal entries one sleep_consolidate session reads (one prompt, one "
        "memory recall); a tick's entries are split into sessions of this size.",
    )
    sleep_links_per_tick: int = Field(
        default=5,
        ge=1,
        le=1_000,
        description=(
            "Memories given A-MEM links per dreaming tick (spec: 5; more when the night's "
            "backlog needs it, see sleep_catch_up_factor)."
        ),
    )
    sleep_catch_up_factor: int = Field(
        default=20,
        ge=1,
        le=100,
        description=(
            "Most times its per-tick setting a sleep tick may score, consolidate or link when "
            "the backlog would not otherwise fit before the wake time (1: fixed budgets). "
            "What is left carries over to the next sleep (docs/memory.md)."
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
