"""The memory settings: search, recall's rerank, links and the night's mining."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings

__all__ = ["MemorySettings"]


class MemorySettings(BaseSettings):
    """How memories are searched, reranked, linked and mined.

    A part of :class:`mindspace.config.Settings` (which reads the environment); not
    used on its own.
    """

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
    memory_recall_superseded_penalty: float = Field(
        default=0.5,
        ge=0,
        le=5,
        description=(
            "Memory search lowers a memory a newer fact replaced (it has valid_to) by this "
            "many standard deviations, and ranks the memory that replaced it above it (0: "
            "neither)."
        ),
    )
    memory_recall_dense_rank_weight: float = Field(
        default=0.1,
        ge=0,
        le=10,
        description=(
            "Memory search fuses its rule-adjusted ranking (weight 1) with the ranking by "
            "dense similarity alone at this weight, by reciprocal rank (0: not fused)."
        ),
    )
    memory_recall_lexical_rank_weight: float = Field(
        default=0.1,
        ge=0,
        le=10,
        description=(
            "Memory search fuses its rule-adjusted ranking (weight 1) with the ranking by "
            "BM25 alone at this weight, by reciprocal rank (0: not fused)."
        ),
    )
    memory_reconcile: bool = Field(
        default=True,
        description=(
            "Every memory write is compared with its nearest memories: a restatement "
            "becomes one more source, a newer value of the same attribute replaces the old "
            "one (valid_to), a question is refused (off: every write is a new memory)."
        ),
    )
    memory_restate_threshold: float = Field(
        default=0.92,
        ge=0,
        le=1,
        description=(
            "Cosine similarity at or above which the same speaker's fact restates a memory "
            "(when its numbers and negation match too)."
        ),
    )
    memory_update_threshold: float = Field(
        default=0.45,
        ge=0,
        le=1,
        description=(
            "Least cosine similarity of a newer fact that replaces a memory about the same "
            "person's same single-valued attribute (where they live, work, ...)."
        ),
    )
    memory_reconcile_model_calls: int = Field(
        default=0,
        ge=0,
        le=100,
        description=(
            "Most questions per sleep tick to the model about a close call between a new "
            "fact and a memory (restate, replace or add); 0: the rules alone decide "
            "(docs/memory.md)."
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
