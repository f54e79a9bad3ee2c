"""Fact mining: the night turns what entities said into semantic memories (spec 003 §1).

A model that never calls ``store_memory`` or ``add_journal_entry`` still hears what
people tell it. While compacting, the sleep cycle reads the conversation messages not
yet mined, one entity's thread at a time, and asks the LLM for third-person facts with
the persona-safe extraction prompt (:data:`ASSISTANT_FACT_EXTRACTION_PROMPT`). Each fact
passes the persona guard, is checked against existing memories (a near-identical one
makes it a duplicate) and is stored as a semantic memory from the speaker.

Exactly once: a per-entity watermark (the number of the last message mined) is a
document written in the same unit of work as the memories, so a tick killed midway
stores neither and the next tick mines the same messages again.

Bounded: at most ``mining_messages_per_call`` messages from the entity per request and
``mining_calls_per_tick`` batches per sleep tick (each request may get one repair
request). Whole: a message longer than a transcript line is sent as several lines, and a
batch longer than one request's share (:data:`~mindspace.limits.MINING_TRANSCRIPT_CHARS`)
as several requests, so the miner reads every word said (limits.FLOWS).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator

from mindspace.config import Settings
from mindspace.errors import LLMError, MindspaceError
from mindspace.limits import MINING_LINE_CHARS, MINING_TRANSCRIPT_CHARS
from mindspace.llm.parsing.structured import ask_structured
from mindspace.llm.port import LLM, Message
from mindspace.llm.traced import scorer_label
from mindspace.memory.chunking import chunk_text
from mindspace.memory.prompts import ASSISTANT_FACT_EXTRACTION_PROMPT
from mindspace.memory.semantic import MemoryDraft, SemanticMemory
from mindspace.memory.support import is_supported
from mindspace.state.models import Document
from mindspace.state.unit import Unit
from mindspace.text import normalized
from mindspace.workspace.persona import PersonaGuard

__all__ = [
    "MINED_TAG",
    "MINING_PROMPT",
    "FactsReply",
    "MinedFact",
    "MiningResult",
    "MiningState",
    "Utterance",
    "mine_conversations",
    "mining_prompt",
    "request_facts",
]

MINED_TAG = "mined"
"""Tag of every memory mined from a conversation."""


MINING_PROMPT = (
    "Extract facts from this conversation with {entity}.\n"
    + ASSISTANT_FACT_EXTRACTION_PROMPT
    + """
The conversation, oldest first. Lines starting "{entity}:" are {entity}'s own words;
lines starting "you:" are your replies, context only: never extract what you said or did.

{transcript}

Return only a JSON array with one object per fact {entity} stated. The form, shown with
a made-up person ({example_name}), never a fact to copy:
[{{"fact": "{example_name} {example_claim}", "entity": "{example_name}", "importance": 4}}]
- "fact": one short third-person sentence that names who it is about
- "entity": who the fact is about ("{entity}" for what {entity} said about themselves),
  or null for a fact about the world
- "importance": a whole number from 1 (mundane) to 10 (major)
Return [] when nothing is worth remembering."""
)
"""The extractor's prompt; fill it with :func:`mining_prompt`."""

EXAMPLE_NAMES = ("Morgan", "Robin")
"""The made-up person of the prompt's example (the second when the speaker is the first)."""
EXAMPLE_CLAIM = "restores antique barometers"
"""The example's claim: a fact no speaker is asked about, so an echo is recognisable."""


def mining_prompt(entity: str, transcript: str) -> str:
    """The mining prompt for ``entity``: its example never names the real speaker."""
    name = next(n for n in EXAMPLE_NAMES if n.casefold() != entity.casefold())
    return MINING_PROMPT.format(
        entity=entity, transcript=transcript, example_name=name, example_claim=EXAMPLE_CLAIM
    )


def _echoes_example(fact: str) -> bool:
    return any(
        normalized(f"{name} {EXAMPLE_CLAIM}") in normalized(fact) for name in EXAMPLE_NAMES
    ) or normalized(EXAMPLE_CLAIM) == normalized(fact)


@dataclass(frozen=True)
class Utterance:
    """One message of a conversation thread, as the miner sees it.

    Args:
        number: Its position in the assistant's conversation history (increasing).
        entity: Whose thread it belongs to.
        role: ``user`` is the entity speaking; ``assistant`` is the reply.
        content: The text.
        at: When it was said (ISO time).
    """

    number: int
    entity: str
    role: Literal["user", "assistant"]
    content: str
    at: str

    @property
    def minable(self) -> bool:
        """Someone's thread and some words: the miner reads it (else it is passed over)."""
        return bool(self.entity and self.content.strip())


class MiningState(Document):
    """The mining watermark: per entity, the number of the last message mined."""

    name: ClassVar[str] = "mining_state"

    mined_through: dict[str, int] = Field(default_factory=dict)
    facts_stored: int = 0


class MinedFact(BaseModel):
    """One fact as the extractor must answer it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    fact: str
    entity: str | None = None
    importance: int = Field(ge=1, le=10)

    @field_validator("fact")
    @classmethod
    def _fact_is_text(cls, value: str) -> str:
        text = " ".join(value.split())
        if not text:
            raise ValueError("a fact is empty")
        return text

    @field_validator("entity", mode="before")
    @classmethod
    def _blank_entity_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value


class _FactList(RootModel[list[MinedFact]]):
    """The extractor's answer: a JSON array of facts (``{"facts": [...]}`` is accepted)."""

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, value: object) -> object:
        if isinstance(value, dict) and isinstance(value.get("facts"), list):
            return value["facts"]
        return value


@dataclass(frozen=True)
class FactsReply:
    """What :func:`request_facts` got: the facts, or why there are none.

    ``facts`` is None when neither the answer nor the repaired answer was usable; that is
    the labelled fallback (the batch yields no facts), never a guess.
    """

    facts: list[MinedFact] | None
    requests: int
    problem: str | None = None


async def request_facts(llm: LLM, prompt: str, *, max_tokens: int | None = None) -> FactsReply:
    """Ask for facts, read strictly with one repair request (``ask_structured``).

    Raises:
        LLMError: the model could not be reached (the caller leaves the batch for later).
    """
    answer = await ask_structured(
        llm,
        [Message("user", prompt)],
        _FactList,
        expected='a JSON array of {"fact": ..., "entity": ..., "importance": 1-10} objects, '
        "or [] when there is no fact",
        max_tokens=max_tokens,
    )
    requests = len(answer.replies)
    if answer.obtained == "fallback" or answer.value is None:
        return FactsReply(None, requests, problem=f"unusable after one repair: {answer.reason}")
    return FactsReply(list(answer.value.root), requests)


@dataclass
class MiningResult:
    """What one mining pass did (``mine_conversations`` in the sleep tick's operations)."""

    requests: int = 0
    batches: int = 0
    messages: int = 0
    memory_ids: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    skipped_messages: int = 0
    problems: list[str] = field(default_factory=list)
    remaining: int = 0
    error: str | None = None

    @property
    def completed(self) -> bool:
        """Nothing left to mine, or the LLM is failing (the rest waits for the next night)."""
        return self.remaining == 0 or self.error is not None

    def to_dict(self) -> dict[str, Any]:
        """The result as a plain dict."""
        return {
            "requests": self.requests,
            "batches": self.batches,
            "messages": self.messages,
            "facts_stored": len(self.memory_ids),
            "memory_ids": self.memory_ids,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "skipped_messages": self.skipped_messages,
            "problems": self.problems,
            "remaining": self.remaining,
            "completed": self.completed,
            "error": self.error,
        }


def _unmined(messages: Sequence[Utterance], state: MiningState) -> dict[str, list[Utterance]]:
    threads: dict[str, list[Utterance]] = {}
    for said in sorted(messages, key=lambda m: m.number):
        if not said.minable:
            continue
        if said.number <= state.mined_through.get(said.entity, 0):
            continue
        threads.setdefault(said.entity, []).append(said)
    # A thread with no words from the entity has nothing to mine.
    return {e: t for e, t in threads.items() if any(m.role == "user" for m in t)}


def _take(thread: list[Utterance], limit: int) -> tuple[list[Utterance], list[Utterance]]:
    """The first ``limit`` messages from the entity with the replies among them."""
    spoken = 0
    for i, said in enumerate(thread):
        if said.role == "user":
            if spoken == limit:
                return thread[:i], thread[i:]
            spoken += 1
    return thread, []


def _take_within(thread: list[Utterance], limit: int) -> tuple[list[Utterance], list[Utterance]]:
    """:func:`_take`, stopping once the messages fill one request's share of characters."""
    batch, rest = _take(thread, limit)
    size = 0
    for i, said in enumerate(batch):
        size += len(said.content)
        if size > MINING_TRANSCRIPT_CHARS and i > 0:
            return batch[:i], batch[i:] + rest
    return batch, rest


def _transcripts(entity: str, batch: Sequence[Utterance]) -> list[str]:
    """The batch as transcripts of lines, each within MINING_TRANSCRIPT_CHARS, every word kept.

    A message is one line when it fits MINING_LINE_CHARS, else several consecutive lines
    cut at sentence ends (:func:`~mindspace.memory.chunking.chunk_text`).
    """
    transcripts: list[list[str]] = [[]]
    size = 0
    for said in batch:
        who = entity if said.role == "user" else "you"
        for piece in chunk_text(" ".join(said.content.split()), MINING_LINE_CHARS):
            line = f"{who}: {piece}"
            if transcripts[-1] and size + len(line) > MINING_TRANSCRIPT_CHARS:
                transcripts.append([])
                size = 0
            transcripts[-1].append(line)
            size += len(line) + 1
    return ["\n".join(lines) for lines in transcripts if lines]


def _refusal(fact: MinedFact, entity: str, said: Sequence[str]) -> str | None:
    """Why ``fact`` is not kept as something ``entity`` said (None: it is supported).

    A fact is about what ``entity`` said, so only their lines count (never the replies);
    a fact that repeats the prompt's example is refused whatever the transcript says.
    """
    if _echoes_example(fact.fact):
        return "the prompt's example"
    if not is_supported(fact.fact, said, names=[entity, fact.entity or ""]):
        return f"not in what {entity} said"
    return None


def _spoken(entity: str, transcript: str) -> list[str]:
    """The lines of ``transcript`` that are ``entity``'s own words."""
    label = f"{entity}: "
    return [line[len(label) :] for line in transcript.splitlines() if line.startswith(label)]


async def mine_conversations(
    unit: Unit,
    settings: Settings,
    llm: LLM,
    guard: PersonaGuard,
    memory: SemanticMemory,
    messages: Sequence[Utterance],
    *,
    remaining: Callable[[Mapping[str, int]], int] | None = None,
) -> MiningResult:
    """Mine the messages not yet mined, oldest thread first, within the tick's budget.

    Args:
        unit: The sleep tick's unit of work (memories and watermark commit with it).
        settings: Batch sizes, trust and the duplicate threshold.
        llm: The extractor.
        guard: Facts about the assistant itself are refused.
        memory: Where facts are stored (and duplicates are looked for).
        messages: The conversation history the miner may read (at least every message
            this tick's budget can reach, when ``remaining`` is given).
        remaining: How many entity messages stay unmined past given watermarks; by
            default they are counted in ``messages`` (which must then be all of them).
    """
    result = MiningResult()
    if settings.mining_calls_per_tick == 0:
        return result  # mining is off: nothing to wait for
    state = unit.doc(MiningState)
    threads = _unmined(messages, state)
    watermarks = dict(state.mined_through)
    stored = 0
    budget = settings.mining_calls_per_tick
    for entity, thread in sorted(threads.items(), key=lambda item: item[1][0].number):
        while thread and result.batches < budget and result.error is None:
            batch, thread = _take_within(thread, settings.mining_messages_per_call)
            spoken = sum(1 for m in batch if m.role == "user")
            try:
                replies = await _ask(llm, settings, entity, batch)
            except LLMError as exc:
                result.error = f"{entity}: {type(exc).__name__}: {exc}"
                break
            result.batches += 1
            skipped = False
            for transcript, reply in replies:
                result.requests += reply.requests
                if reply.facts is None:
                    # A model that cannot answer in the form asked would fail the same
                    # way again: the part is passed over (its words stay in the history).
                    skipped = True
                    result.problems.append(f"{entity}: {reply.problem}")
                    continue
                said = _spoken(entity, transcript)
                stored += await _store(
                    reply.facts,
                    entity,
                    said,
                    batch[-1].at,
                    settings,
                    guard,
                    memory,
                    result,
                    method=scorer_label(llm),
                )
            result.skipped_messages += spoken if skipped else 0
            result.messages += spoken
            watermarks[entity] = batch[-1].number
        if result.error is not None:
            break
    if remaining is not None:
        result.remaining = remaining(watermarks)
    else:
        left = _unmined(messages, MiningState(mined_through=watermarks))
        result.remaining = sum(1 for t in left.values() for m in t if m.role == "user")
    if watermarks != state.mined_through:
        unit.put_doc(
            state.model_copy(
                update={"mined_through": watermarks, "facts_stored": state.facts_stored + stored}
            )
        )
    return result


async def _ask(
    llm: LLM, settings: Settings, entity: str, batch: Sequence[Utterance]
) -> list[tuple[str, FactsReply]]:
    """One request per transcript of the batch (usually one), with what each answered."""
    replies = []
    for transcript in _transcripts(entity, batch):
        prompt = mining_prompt(entity, transcript)
        replies.append(
            (transcript, await request_facts(llm, prompt, max_tokens=settings.llm_max_tokens))
        )
    return replies


async def _store(
    facts: Sequence[MinedFact],
    speaker: str,
    said: Sequence[str],
    at: str,
    settings: Settings,
    guard: PersonaGuard,
    memory: SemanticMemory,
    result: MiningResult,
    *,
    method: Literal["llm", "offline"],
) -> int:
    stored = 0
    for fact in facts:
        text = fact.fact
        if not guard.is_clean(text):
            result.rejected.append(text)
            continue
        refusal = _refusal(fact, speaker, said)
        if refusal is not None:
            result.rejected.append(f"{text} ({refusal})")
            continue
        pieces = chunk_text(text, settings.max_memory_chars)
        if len(pieces) > 1:
            # A fact longer than a memory (a message quoted whole) is kept in pieces.
            parts = [fact.model_copy(update={"fact": piece}) for piece in pieces]
            stored += await _store(
                parts, speaker, said, at, settings, guard, memory, result, method=method
            )
            continue
        about_speaker = fact.entity is not None and fact.entity.casefold() == speaker.casefold()
        trust = settings.mining_self_trust if about_speaker else settings.mining_other_trust
        draft = MemoryDraft(
            content=text,
            tags=(MINED_TAG,),
            source_type="direct",
            source_trust=trust,
            source_entity=speaker,
            importance=fact.importance,
            importance_method=method,
            source="conversation",
            occurred_at=at,
        )
        try:
            # Reconciled like every write: a fact already known (the speaker's own words
            # kept verbatim, or mined before) becomes one more source of that memory.
            (written,) = await memory.astore_all([draft])
        except MindspaceError as exc:  # e.g. a fact longer than max_memory_chars
            result.rejected.append(f"{text[:80]} ({exc})")
            continue
        if written.memory is None:
            result.rejected.append(f"{text[:80]} ({written.reason})")
            continue
        if written.action == "restated":
            result.duplicates.append(f"{text} (= {written.memory.id})")
            continue
        result.memory_ids.append(written.memory.id)
        stored += 1
    return stored
