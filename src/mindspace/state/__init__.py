"""Ports and the unit of work over an assistant's persisted state."""

from mindspace.state.committed import topic_of
from mindspace.state.models import DOC_KIND, Document, Record
from mindspace.state.port import (
    AssistantDirectory,
    AssistantInfo,
    Change,
    EventInbox,
    RecordStore,
    Store,
    StoredRecord,
)
from mindspace.state.semantic import Hit, Neighbour, SemanticIndex, SemanticStore
from mindspace.state.unit import StateCache, Unit

__all__ = [
    "DOC_KIND",
    "AssistantDirectory",
    "AssistantInfo",
    "Change",
    "Document",
    "EventInbox",
    "Hit",
    "Neighbour",
    "Record",
    "RecordStore",
    "SemanticIndex",
    "SemanticStore",
    "StateCache",
    "Store",
    "StoredRecord",
    "Unit",
    "topic_of",
]
