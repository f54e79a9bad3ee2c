"""The base of the classes that read and change one part of an assistant's state."""

from __future__ import annotations

from mindspace.clock import Clock
from mindspace.config import Settings
from mindspace.state.unit import Unit

__all__ = ["Desk"]


class Desk:
    """Operations on one part of an assistant's state, inside one unit of work.

    Args:
        unit: Where the state is read and the changes buffered.
        clock: The time source for timestamps.
        settings: Limits and defaults.
    """

    def __init__(self, unit: Unit, clock: Clock, settings: Settings) -> None:
        self.unit = unit
        self.clock = clock
        self.settings = settings
