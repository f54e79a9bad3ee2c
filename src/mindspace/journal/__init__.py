"""The journal (spec 004): entries, importance scoring, reflection, episodic search, pruning."""

from mindspace.journal.book import (
    SYNTHESIS_IMPORTANCE,
    AddedEntry,
    JournalBook,
    prune_low_importance_entries,
)
from mindspace.journal.episodic import (
    EpisodicHit,
    EpisodicWeights,
    score_episodic_memory,
    search_episodic_memory,
)
from mindspace.journal.evidence import Evidence, EvidenceSource, JournalEvidence
from mindspace.journal.importance import (
    IMPORTANCE_PROMPT,
    ImportanceRating,
    PendingScoring,
    parse_importance,
    score_importance_heuristic,
    score_importance_llm,
    score_pending_entries,
)
from mindspace.journal.index import EpisodicIndex
from mindspace.journal.records import (
    DEFAULT_TRUST,
    SOURCE_TYPES,
    SYNTHESIS_PREFIX,
    SYNTHESIS_TAGS,
    JournalEntry,
    JournalMeta,
    ReflectionState,
    SourceType,
)
from mindspace.journal.reflection import (
    INSIGHTS_PROMPT,
    QUESTIONS_PROMPT,
    ReflectionOutcome,
    reflect_if_due,
    run_reflection,
)
from mindspace.journal.reflection_state import (
    check_reflection_trigger,
    reset_reflection_state,
    set_reflection_threshold,
    update_reflection_state,
)
from mindspace.journal.search import JournalFilter, JournalSearch, SemanticJournal, search_journal

__all__ = [
    "DEFAULT_TRUST",
    "IMPORTANCE_PROMPT",
    "INSIGHTS_PROMPT",
    "QUESTIONS_PROMPT",
    "SOURCE_TYPES",
    "SYNTHESIS_IMPORTANCE",
    "SYNTHESIS_PREFIX",
    "SYNTHESIS_TAGS",
    "AddedEntry",
    "EpisodicHit",
    "EpisodicIndex",
    "EpisodicWeights",
    "Evidence",
    "EvidenceSource",
    "ImportanceRating",
    "JournalBook",
    "JournalEntry",
    "JournalEvidence",
    "JournalFilter",
    "JournalMeta",
    "JournalSearch",
    "PendingScoring",
    "ReflectionOutcome",
    "ReflectionState",
    "SemanticJournal",
    "SourceType",
    "check_reflection_trigger",
    "parse_importance",
    "prune_low_importance_entries",
    "reflect_if_due",
    "reset_reflection_state",
    "run_reflection",
    "score_episodic_memory",
    "score_importance_heuristic",
    "score_importance_llm",
    "score_pending_entries",
    "search_episodic_memory",
    "search_journal",
    "set_reflection_threshold",
    "update_reflection_state",
]
