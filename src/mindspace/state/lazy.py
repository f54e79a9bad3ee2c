"""What the cache keeps of a lazy kind: a bounded LRU of records read by key."""

from __future__ import annotations

from collections import OrderedDict

from mindspace.state.models import Record

__all__ = ["LAZY_CACHE_SIZE", "RecordLRU", "not_listable"]

LAZY_CACHE_SIZE = 4096
"""How many records of each lazy kind the cache keeps (least recently used go first)."""


class RecordLRU(OrderedDict[str, Record | None]):
    """Records of one lazy kind by key; None remembers that a key has no record.

    Remembering absence is safe because the change feed names every key another
    process writes, so a key that appears is refreshed like one that changed.
    """

    def remember(self, key: str, entry: Record | None) -> None:
        """Keep ``entry`` as the most recently used, dropping the least used over the bound."""
        self[key] = entry
        self.move_to_end(key)
        while len(self) > LAZY_CACHE_SIZE:
            self.popitem(last=False)


def not_listable(model: type[Record]) -> TypeError:
    """The error for listing every record of a lazy kind."""
    return TypeError(
        f"{model.__name__} (kind {model.kind!r}) is lazy: its records are never all loaded. "
        "Read them by key with Unit.get/get_many, or list them through the store's "
        "page/count/missing or the semantic index."
    )
