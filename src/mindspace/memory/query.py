"""Query-side reranking of memory search hits: dates, speakers, questions, their turns.

The semantic index ranks memories by how well their text matches the query (dense and
BM25, blended). Several things it cannot see change which memories answer a question:

- **Dates named in the query.** "What did Nate do on 25 May, 2022?" is answered by a
  memory told on that date or soon after; memories whose ``occurred_at`` falls in a
  window the query names (:func:`mindspace.memory.temporal.named_windows`) are raised.
- **Questions are not answers.** A memory that is itself a question ("What gave you the
  idea for the colours?") matches a question about the same thing word for word but
  holds no answer; memories ending in a question mark are lowered.
- **The turns around a matching question.** The answer usually follows the question in
  the same exchange and shares few of its words ("Thanks! I'm obsessed with those..."),
  and a question often follows up on what was just said ("Congrats! What game was
  it?"). The journal entries right after and right before a matching question, in the
  same exchange (the one's stored context quotes the other), are ranked just below
  the question, unless they already rank higher on their own. A long text (over
  a hundred words: an assistant's explanation) is not followed to: it is found by its
  own words.
- **Questions that ask when.** "When did Nate win his third tourney?" is answered by a
  line that says when ("I just won another tournament last week!"); for a question
  asking when, memories that place something in time are raised by half the time boost.
- **The person the query names.** "What does Melanie do to destress?" is answered by
  what Melanie said; when two people talk, her name is in half the memories' words and
  weighs little. If exactly one speaker of the hits is named, their memories are raised.
- **The speaker's next turn.** A story is told over several turns with the listener's
  line between them; the same speaker's entries two on and two back from each of the
  three best hits (in the same exchange; one on and one back when the listener's line
  between them was not kept) are ranked a little below that hit.
- **The conversation the best hits come from.** For a query about time, each memory
  gains a little for every one of the ten best hits told on its day: the question is
  about that conversation.
- **The current fact first.** A memory a newer fact replaced (``valid_to`` set,
  :mod:`mindspace.memory.reconcile`) is lowered, and the memory that replaced it ranks
  above it, brought in if the search missed it: "where does Dave live?" matches "I live
  in Paris" word for word, but "I moved to Berlin" is the answer. The old one stays
  findable ("where did Dave live before?").

Each rule fires only where its cue holds, so that a rule fitted on one kind of
conversation costs nothing on another: the asker's own name is no speaker to raise; the
day of the best hits counts only for a query about time; a question leads only to
another speaker's turn; a next turn is followed only between turns of a dialogue that
alternate, never from or to a long text (a passage of one included).

Every adjustment is made to the hit's blended score before the logistic (the scoring
contract of :mod:`mindspace.state.semantic`), so it is in the same units on both
backends: standard deviations of the blend.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC
from itertools import pairwise

from mindspace.clock import parse_time
from mindspace.config import Settings
from mindspace.memory.records import Memory, memory_key
from mindspace.memory.temporal import TimeWindow, asks_when, named_windows, says_when
from mindspace.state.semantic import Hit

__all__ = [
    "QueryRerank",
    "carries",
    "follows",
    "is_passage",
    "is_question",
    "next_memory_id",
    "one_passage_each",
]

_ID = re.compile(r"^mem_(\d+)$")
_EDGE = 1e-9
"""Scores are logistic values rounded to 6 digits; clamp before inverting."""


def next_memory_id(memory_id: str, step: int = 1) -> str | None:
    """The id of the memory stored ``step`` after ``memory_id`` (ids count up; -1: before)."""
    match = _ID.match(memory_id)
    if not match or int(match.group(1)) + step < 1:
        return None
    return f"mem_{int(match.group(1)) + step}"


def _logit(score: float) -> float:
    p = min(max(score, _EDGE), 1.0 - _EDGE)
    return math.log(p / (1.0 - p))


def _logistic(value: float) -> float:
    return round(1.0 / (1.0 + math.exp(-value)), 6)


def is_question(memory: Memory) -> bool:
    """The memory is a question (its text ends with a question mark)."""
    return memory.content.rstrip().endswith("?")


def is_passage(memory: Memory) -> bool:
    """The memory is one passage of a longer text (tagged ``part:<i>/<n>``)."""
    return any(tag.startswith("part:") for tag in memory.tags)


def one_passage_each(memories: Sequence[Memory], lexical: Sequence[float] = ()) -> list[int]:
    """The positions of ``memories`` (best first) left when each text shows once.

    A long message is stored as passages with the message's ``ref``
    (:mod:`mindspace.engine.formation`); one passage stands for it, at the place of its
    best-ranked one, so the other passages do not take the places of other turns. That
    passage is the best-ranked one that shares a word with the query (``lexical``, each
    memory's BM25 score) when one does: a code or a name from the middle of a long text
    is in one passage only, and a weak embedder can rank another passage of the same
    text above it.
    """
    first: dict[str, int] = {}
    chosen: dict[str, int] = {}
    order: list[str | int] = []
    for i, memory in enumerate(memories):
        if not (memory.ref and is_passage(memory)):
            order.append(i)
            continue
        key = f"{memory.source_entity or ''}\x00{memory.ref}"
        if key not in first:
            first[key] = chosen[key] = i
            order.append(key)
        elif _words(lexical, i) and not _words(lexical, chosen[key]):
            chosen[key] = i
    return [chosen[item] if isinstance(item, str) else item for item in order]


def _words(lexical: Sequence[float], i: int) -> bool:
    return i < len(lexical) and lexical[i] > 0


def follows(earlier: Memory, later: Memory) -> bool:
    """``later`` is the turn right after ``earlier``, in the same exchange.

    Either both come from the journal, ``later``'s entry right after ``earlier``'s, or
    both are messages formed as they were said (``source: "message"``, stored one after
    the other: the callers look them up by consecutive ids); and ``later``'s stored
    context (the neighbouring turns of its exchange,
    :func:`mindspace.memory.extraction.journal_draft`, :mod:`mindspace.engine.formation`)
    quotes ``earlier``.
    """
    messages = earlier.source == later.source == "message"
    if not messages and (earlier.entry_id is None or later.entry_id != earlier.entry_id + 1):
        return False
    quoted = memory_key(earlier.content, earlier.source_entity)[:300]
    return bool(later.context) and quoted in (later.context or "")


@dataclass(frozen=True)
class QueryRerank:
    """The adjustments, in standard deviations of the blended score.

    Attributes:
        time_boost: Added to memories that happened in a window the query names; half
            of it to memories that say when, for a question that asks when.
        question_penalty: Taken from memories that are questions.
        reply_discount: The entries right after and before a matching question in its
            exchange rank this far below it (at least); negative: not followed.
        speaker_boost: Added to the memories of the one speaker the query names.
        continuation_discount: The same speaker's entries one or two on and back in the
            exchange of each of the best few hits rank this far below it (at least);
            negative: not followed.
        session_boost: Added to every memory once for each of the best ten hits that
            happened on its day.
        superseded_penalty: Taken from memories a newer fact replaced; the memory that
            replaced one ranks above it in any case.
    """

    time_boost: float = 3.0
    question_penalty: float = 0.75
    reply_discount: float = 0.3
    speaker_boost: float = 0.6
    continuation_discount: float = 1.6
    session_boost: float = 0.1
    superseded_penalty: float = 0.5

    @classmethod
    def of(cls, settings: Settings) -> QueryRerank:
        """The adjustments the ``memory_recall_*`` settings ask for."""
        return cls(
            time_boost=settings.memory_recall_time_boost,
            question_penalty=settings.memory_recall_question_penalty,
            reply_discount=settings.memory_recall_reply_discount,
            speaker_boost=settings.memory_recall_speaker_boost,
            continuation_discount=settings.memory_recall_continuation_discount,
            session_boost=settings.memory_recall_session_boost,
            superseded_penalty=settings.memory_recall_superseded_penalty,
        )

    @property
    def active(self) -> bool:
        """Whether any adjustment is switched on."""
        return (
            self.superseded_penalty > 0
            or self.time_boost > 0
            or self.question_penalty > 0
            or self.reply_discount >= 0
            or self.speaker_boost > 0
            or self.continuation_discount >= 0
            or self.session_boost > 0
        )

    def apply(
        self,
        query: str,
        hits: Sequence[Hit],
        load: Callable[[Sequence[str]], Mapping[str, Memory]],
        relevance: Callable[[Memory], float | None],
        eligible: Callable[[Memory], bool] = lambda memory: True,
        *,
        asker: str | None = None,
    ) -> list[Hit]:
        """``hits`` re-scored and re-ordered, with the entries they lead to added.

        Args:
            query: The query text (dates and names are read from it).
            hits: The index's hits, best first.
            load: Reads memories by id (one call for the hits, at most one for the
                neighbours of questions and one for the turns of the best hits).
            relevance: The dense similarity of an entry that was not among the hits.
            eligible: Whether an entry passes the search's filters (trust, tags).
            asker: Who asks, when known (their own name in the query raises nothing).
        """
        if not hits or not self.active:
            return list(hits)
        ranking = _Ranking(dict(load([h.key for h in hits])), load, relevance, eligible)
        windows = named_windows(query) if self.time_boost > 0 else []
        when = self.time_boost > 0 and asks_when(query)
        questions: list[tuple[Memory, float]] = []
        for hit in hits:
            memory = ranking.memories.get(hit.key)
            value = _logit(hit.score)
            if memory is not None:
                if windows and _within(memory, windows):
                    value += self.time_boost
                if when and says_when(memory.content):
                    value += self.time_boost / 2
                if is_question(memory):
                    questions.append((memory, value))
                    value -= self.question_penalty
                if not memory.current:
                    value -= self.superseded_penalty
            ranking.values[hit.key] = (value, hit)
        if self.reply_discount >= 0 and questions:
            self._follow(questions, ranking)
        if self.speaker_boost > 0:
            self._speaker(query, ranking, asker)
        if self.continuation_discount >= 0:
            self._continue(ranking)
        if self.session_boost > 0 and (windows or when or asks_when(query)):
            self._session(ranking)
        if self.superseded_penalty > 0:
            self._current_first(ranking)
        return [replace(hit, score=_logistic(value)) for value, hit in ranking.ordered()]

    def _follow(self, questions: Sequence[tuple[Memory, float]], ranking: _Ranking) -> None:
        """Raise the entries right after and before each matching question to below it."""
        ranking.fetch(
            key
            for question, _ in questions
            for step in (1, -1)
            if (key := next_memory_id(question.id, step)) is not None
        )
        for question, value in questions:
            for step in (1, -1):
                other = ranking.memories.get(next_memory_id(question.id, step) or "")
                if other is None or _long(other) or not _answered(question, other):
                    continue
                if not (follows(question, other) if step == 1 else follows(other, question)):
                    continue
                ranking.inherit(other, value - self.reply_discount, self.question_penalty)

    def _speaker(self, query: str, ranking: _Ranking, asker: str | None) -> None:
        """Raise the memories of the one speaker among the hits that the query names.

        A question about a person ("What does Melanie do to destress?") is answered by
        what that person said, but when two people talk, the name is in half the
        memories' words and weighs little. With two names or none, nothing changes.
        The asker's own name does not count: "what did the user say about X", asked for
        the user, is about what was said to them as much as by them (an assistant's
        answers), so raising the asker's words would bury the answers.
        """
        words = {w.casefold() for w in _WORD.findall(query)}
        own = (asker or "").casefold()
        speakers = {
            m.source_entity
            for key in ranking.values
            if (m := ranking.memories.get(key)) is not None
            and m.source_entity
            and m.source_entity.casefold() != own
        }
        named = [s for s in speakers if _names(s, words)]
        if len(named) != 1:
            return
        for key, (value, hit) in ranking.values.items():
            memory = ranking.memories.get(key)
            if memory is not None and memory.source_entity == named[0]:
                ranking.values[key] = (value + self.speaker_boost, hit)

    def _continue(self, ranking: _Ranking) -> None:
        """Raise the same speaker's next and previous turns from the best few hits.

        People tell a story over several turns ("We went camping last week." / "Oh
        nice, where?" / "At the lake, the kids loved roasting marshmallows."): the turn
        that matches the question and the one that answers it are two entries apart in
        the same exchange, with the listener's line between them.
        """
        leaders = [
            memory
            for _, hit in ranking.ordered()[:_LEADERS]
            if (memory := ranking.memories.get(hit.key)) is not None
            and memory.source_entity  # an unknown speaker has no "same speaker"
            and not is_question(memory)
            and not _long(memory)  # a long text is no turn of a dialogue
        ]
        ranking.fetch(
            key
            for memory in leaders
            for step in (1, 2, -1, -2)
            if (key := next_memory_id(memory.id, step)) is not None
        )
        for memory in leaders:
            # The same speaker's turn right next to it counts too: the listener's line
            # between them may hold nothing worth a memory (a question, a "Wow!").
            for step in (1, -1, 2, -2):
                turns = [memory.id, *(next_memory_id(memory.id, s) for s in _PATH[step])]
                chain = [ranking.memories.get(t or "") for t in turns]
                other = chain[-1]
                if other is None or other.source_entity != memory.source_entity:
                    continue
                if _long(other) or not _alternate(chain):
                    continue
                if not all(_joined(chain, step)):
                    continue
                value = ranking.values[memory.id][0] - self.continuation_discount
                ranking.inherit(other, value, self.question_penalty)

    def _session(self, ranking: _Ranking) -> None:
        """Raise each memory by ``session_boost`` per best-ten hit told on its day."""
        days: dict[str, int] = {}
        for _, hit in ranking.ordered()[:_SESSION_TOP]:
            memory = ranking.memories.get(hit.key)
            if memory is not None:
                days[_day(memory)] = days.get(_day(memory), 0) + 1
        for key, (value, hit) in ranking.values.items():
            memory = ranking.memories.get(key)
            if memory is not None and (count := days.get(_day(memory), 0)):
                ranking.values[key] = (value + self.session_boost * count, hit)

    def _current_first(self, ranking: _Ranking) -> None:
        """Rank the memory that replaced a hit above it (following a chain of updates)."""
        replaced = [
            memory
            for key in list(ranking.values)
            if (memory := ranking.memories.get(key)) is not None and memory.superseded_by
        ]
        for _ in range(_CHAIN):
            if not replaced:
                return
            ranking.fetch(m.superseded_by for m in replaced if m.superseded_by)
            later = []
            for memory in replaced:
                newer = ranking.memories.get(memory.superseded_by or "")
                if newer is None:
                    continue
                ranking.inherit(newer, ranking.values[memory.id][0] + _AHEAD, 0.0)
                if newer.superseded_by and newer.id in ranking.values:
                    later.append(newer)
            replaced = later


_CHAIN = 3
"""How many updates of one fact are followed to the current one."""
_AHEAD = 0.01
"""How far above the memory it replaced the current fact ranks at least."""
_LEADERS = 3
"""How many of the best hits lead to their speaker's next and previous turns."""
_SESSION_TOP = 10
"""How many of the best hits vote for their day."""
_PATH = {1: (1,), -1: (-1,), 2: (1, 2), -2: (-1, -2)}
_WORD = re.compile(r"[^\W_]+")
_LONG_WORDS = 100
"""Words above which a memory is a long text, not a turn of conversation (a spoken
turn rarely runs past a few sentences: LoCoMo's longest is about 80 words)."""


class _Ranking:
    """The values being adjusted, with the memories read so far."""

    def __init__(
        self,
        memories: dict[str, Memory],
        load: Callable[[Sequence[str]], Mapping[str, Memory]],
        relevance: Callable[[Memory], float | None],
        eligible: Callable[[Memory], bool],
    ) -> None:
        self.memories = memories
        self.values: dict[str, tuple[float, Hit]] = {}
        self._load = load
        self._relevance = relevance
        self._eligible = eligible

    def ordered(self) -> list[tuple[float, Hit]]:
        """The hits best first."""
        return sorted(self.values.values(), key=lambda item: -item[0])

    def fetch(self, keys: Iterable[str]) -> None:
        """Read the memories of ``keys`` not read yet (one call)."""
        missing = sorted({k for k in keys if k not in self.memories})
        if missing:
            self.memories.update(self._load(missing))

    def inherit(self, memory: Memory, value: float, question_penalty: float) -> None:
        """Give ``memory`` at least ``value`` (less the penalty if it is a question).

        A memory the search's filters leave out is not added.
        """
        if not self._eligible(memory):
            return
        if is_question(memory):
            value -= question_penalty
        known = self.values.get(memory.id)
        if known is None:
            own = Hit(memory.id, _logistic(value), self._relevance(memory), 0.0)
            self.values[memory.id] = (value, own)
        elif known[0] < value:
            self.values[memory.id] = (value, known[1])


def _joined(chain: Sequence[Memory | None], step: int) -> Iterator[bool]:
    """Each consecutive pair of ``chain`` (walked in ``step``'s direction) follows."""
    for earlier, later in pairwise(chain):
        if earlier is None or later is None:
            yield False
        elif step > 0:
            yield follows(earlier, later)
        else:
            yield follows(later, earlier)


def _answered(question: Memory, other: Memory) -> bool:
    """``other`` is someone else's turn: a reply, not the asker going on."""
    return bool(other.source_entity) and other.source_entity != question.source_entity


def _alternate(chain: Sequence[Memory | None]) -> bool:
    """The turns between the ends of ``chain`` are another speaker's: a dialogue.

    Two turns of one speaker with the listener's line between them are one story told
    over several turns; with a third party's or the same speaker's line between them,
    the turns do not alternate and nothing says they continue each other.
    """
    first = chain[0]
    return first is not None and all(
        m is not None and m.source_entity and m.source_entity != first.source_entity
        for m in chain[1:-1]
    )


def _long(memory: Memory) -> bool:
    """The memory is a long text (an explanation, not a line of conversation).

    Following a question to its reply is for a short reply that shares few words with
    the question ("Thanks! I'm obsessed with those..."). A long answer has words of its
    own to be found by when it holds what is asked; raised for following a question, it
    crowds out the turns that do (an assistant's long answers after a user's questions
    cost up to 3.8 points of hit@5 on the recast LoCoMo set, bench/RESULTS.md). A
    passage of a long message is part of a long text whatever its own length.
    """
    return is_passage(memory) or len(_WORD.findall(memory.content)) > _LONG_WORDS


def _names(entity: str, words: set[str]) -> bool:
    """Every word of ``entity``'s name is among the query's ``words``."""
    own = [w.casefold() for w in _WORD.findall(entity)]
    return bool(own) and all(w in words for w in own)


def _day(memory: Memory) -> str:
    return parse_time(memory.occurred_at).astimezone(UTC).date().isoformat()


def carries(memory: Memory, tags: Sequence[str]) -> bool:
    """The memory carries every one of ``tags`` (case-insensitive, as the index filters)."""
    own = {t.casefold() for t in memory.tags}
    return all(t.casefold() in own for t in tags)


def _within(memory: Memory, windows: Sequence[TimeWindow]) -> bool:
    when = parse_time(memory.occurred_at)
    return any(window.contains(when) for window in windows)
