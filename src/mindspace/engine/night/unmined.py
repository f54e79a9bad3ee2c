"""Which conversation messages a compacting tick mines, without listing the history.

Mining reads, per entity, the messages after that entity's watermark, a few batches a
tick (:func:`~mindspace.memory.mining.mine_conversations`). Listing and sorting every
message of every thread to find them made each tick O(history). One
:class:`UnminedIndex` per :class:`~mindspace.state.unit.StateCache` keeps each entity's
minable messages (user and assistant words, numbered ``m<n>``) as sorted numbers and
listens to committed writes; a reload of the cache drops it and the next use rebuilds it.
A tick then reads only the threads it can reach (those whose unmined part starts first)
and only as many messages as its budget of calls can take, and counts what is left by
bisection.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from mindspace.engine.night.compaction import message_number
from mindspace.engine.records import ConversationMessage
from mindspace.memory.mining import Utterance
from mindspace.state.models import Record
from mindspace.state.unit import StateCache, Unit

__all__ = ["UnminedIndex", "all_utterances", "as_utterance", "unmined_for_tick"]


def as_utterance(message: ConversationMessage) -> Utterance | None:
    """The message as the miner reads it, or None when mining does not read it.

    The one rule of what mining reads (the index and the whole-history path both use it):
    a numbered message (``m<n>``) of an entity's thread, the entity's words (``user``) or
    the reply (``assistant``), with words in it (:attr:`Utterance.minable`).
    """
    number = message_number(message)
    if number == 0 or message.role not in ("user", "assistant"):
        return None
    role: Literal["user", "assistant"] = "user" if message.role == "user" else "assistant"
    said = Utterance(number, message.entity, role, message.content or "", message.created_at)
    return said if said.minable else None


def all_utterances(unit: Unit) -> list[Utterance]:
    """Every message of the history the miner reads (when the index cannot answer)."""
    return [said for m in unit.all(ConversationMessage) if (said := as_utterance(m)) is not None]


@dataclass
class _Thread:
    """One entity's minable messages: numbers (sorted) and keys, the user ones apart."""

    numbers: list[int] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    users: list[int] = field(default_factory=list)


class UnminedIndex:
    """The minable messages of one cache, per entity (a cache listener).

    Args:
        cache: The cache it follows (it starts listening to the cache's messages).
    """

    def __init__(self, cache: StateCache) -> None:
        self._threads: dict[str, _Thread] = {}
        self._where: dict[str, tuple[str, int, bool]] = {}  # key -> (entity, number, user)
        self._epoch: int | None = None
        cache.listen(ConversationMessage.kind, self)

    def applied(self, key: str, record: Record | None) -> None:
        """Follow a committed write or delete of a message."""
        if self._epoch is None:
            return
        self._remove(key)
        if isinstance(record, ConversationMessage):
            self._add(record)

    def reset(self) -> None:
        """The cache was reloaded: rebuild on next use."""
        self._epoch = None

    def threads(self, cache: StateCache) -> dict[str, _Thread]:
        """Every entity's minable messages, rebuilt first when the cache was reloaded."""
        if self._epoch != cache.epoch:
            self._threads, self._where = {}, {}
            for message in cache.records(ConversationMessage).values():
                self._add(message)
            self._epoch = cache.epoch
        return self._threads

    def _add(self, message: ConversationMessage) -> None:
        said = as_utterance(message)
        if said is None:
            return
        number = said.number
        thread = self._threads.setdefault(message.entity, _Thread())
        at = bisect_right(thread.numbers, number)
        thread.numbers.insert(at, number)
        thread.keys.insert(at, message.id)
        user = said.role == "user"
        if user:
            thread.users.insert(bisect_right(thread.users, number), number)
        self._where[message.id] = (message.entity, number, user)

    def _remove(self, key: str) -> None:
        found = self._where.pop(key, None)
        if found is None:
            return
        entity, number, user = found
        thread = self._threads[entity]
        at = bisect_left(thread.numbers, number)
        while thread.keys[at] != key:
            at += 1
        del thread.numbers[at], thread.keys[at]
        if user:
            del thread.users[bisect_left(thread.users, number)]
        if not thread.numbers:
            del self._threads[entity]


def unmined_index(cache: StateCache) -> UnminedIndex:
    """The index of ``cache``, created (and listening) on first use."""
    return cache.derived(UnminedIndex)


def unmined_for_tick(
    unit: Unit, watermarks: Mapping[str, int], calls: int, per_call: int
) -> tuple[list[Utterance], Callable[[Mapping[str, int]], int]] | None:
    """The messages a tick of ``calls`` mining requests can reach, and a count of the rest.

    Returns the utterances of the (at most ``calls``) threads whose unmined part starts
    first, each cut before the first entity message this tick's budget cannot take, and
    a function giving how many entity messages stay unmined past given watermarks. None
    when the unit holds uncommitted messages (the caller then reads the whole history).
    """
    if any(kind == ConversationMessage.kind for kind, _ in unit.pending_changes()):
        return None
    threads = unmined_index(unit.cache).threads(unit.cache)
    heads: list[tuple[int, str, int, int]] = []
    for entity, thread in threads.items():
        mark = watermarks.get(entity, 0)
        first_user = bisect_right(thread.users, mark)
        if first_user == len(thread.users):
            continue  # no words from the entity left: nothing to mine
        start = bisect_right(thread.numbers, mark)
        heads.append((thread.numbers[start], entity, start, first_user))
    heads.sort()
    records = unit.cache.records(ConversationMessage)
    said: list[Utterance] = []
    for _, entity, start, first_user in heads[: max(0, calls)]:
        thread = threads[entity]
        cap = first_user + max(0, calls) * per_call
        end = (
            len(thread.numbers)
            if cap >= len(thread.users)
            else bisect_left(thread.numbers, thread.users[cap])
        )
        # The index holds what as_utterance reads, so every key gives its utterance.
        keys = thread.keys[start:end]
        said += [u for key in keys if (u := as_utterance(records[key])) is not None]

    def remaining(marks: Mapping[str, int]) -> int:
        return sum(
            len(thread.users) - bisect_right(thread.users, marks.get(entity, 0))
            for entity, thread in threads.items()
        )

    return said, remaining
