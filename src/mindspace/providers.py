"""Provider registries: the named factories that build LLMs, embedders and stores.

A provider is a factory that a setting selects by name: ``MINDSPACE_LLM_PROVIDER`` picks
an LLM factory, ``MINDSPACE_EMBEDDER`` an embedder factory, and the scheme of the database
URL (``sqlite``, ``postgresql``) a store factory. The composition root
(:mod:`mindspace.runtime`) registers the built-in ones; third-party packages add theirs
through Python entry points, as plugins do for simonw/llm::

    # pyproject.toml of a package "mindspace-acme"
    [project.entry-points."mindspace.llm"]
    acme = "mindspace_acme:build_llm"        # (settings: Settings) -> LLM

    [project.entry-points."mindspace.embedders"]
    acme = "mindspace_acme:build_embedder"   # (settings: Settings) -> Embedder | None

    [project.entry-points."mindspace.stores"]
    acme = "mindspace_acme:open_store"       # (url: str, settings: Settings, create: bool) -> Store

Once installed, ``MINDSPACE_LLM_PROVIDER=acme`` selects it. A built-in name always means
the built-in provider. Entry points are read only when a name is not built in (or when
every name is listed), so a process that uses the built-ins never scans the installed
packages, and a provider's module is imported only when that provider is built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Generic, TypeVar

from mindspace.errors import ConfigError

if TYPE_CHECKING:
    from importlib import metadata

    from mindspace.config import Settings
    from mindspace.embeddings.port import Embedder
    from mindspace.llm.port import LLM
    from mindspace.state.port import Store

__all__ = [
    "EMBEDDER_GROUP",
    "LLM_GROUP",
    "STORE_GROUP",
    "EmbedderFactory",
    "LLMFactory",
    "Registry",
    "StoreFactory",
]

LLM_GROUP = "mindspace.llm"
"""Entry-point group of LLM providers: ``(settings: Settings) -> LLM``."""

EMBEDDER_GROUP = "mindspace.embedders"
"""Entry-point group of embedder providers: ``(settings: Settings) -> Embedder | None``."""

STORE_GROUP = "mindspace.stores"
"""Entry-point group of store providers, named by URL scheme:
``(url: str, settings: Settings, create: bool) -> Store``."""

LLMFactory = Callable[["Settings"], "LLM"]
EmbedderFactory = Callable[["Settings"], "Embedder | None"]
StoreFactory = Callable[[str, "Settings", bool], "Store"]

_F = TypeVar("_F", bound=Callable[..., object])


class Registry(Generic[_F]):
    """Named factories of one kind: the built-in ones, then those of an entry-point group.

    Args:
        kind: What the factories build, for messages (``'LLM provider'``).
        group: The entry-point group third-party packages register under.
        setting: The setting that selects a name, for messages.
    """

    def __init__(self, kind: str, group: str, setting: str) -> None:
        self.kind = kind
        self.group = group
        self.setting = setting
        self._factories: dict[str, _F] = {}
        self._entry_points: dict[str, metadata.EntryPoint] | None = None

    def register(self, name: str, factory: _F) -> None:
        """Add ``factory`` under ``name``; a registered name wins over an entry point."""
        self._factories[name.casefold()] = factory

    def unregister(self, name: str) -> None:
        """Remove the factory registered under ``name`` (an entry point stays selectable)."""
        self._factories.pop(name.casefold(), None)

    def names(self) -> list[str]:
        """Every selectable name: registered ones and installed entry points, sorted."""
        return sorted({*self._factories, *self._installed()})

    def get(self, name: str) -> _F:
        """The factory selected by ``name`` (case-insensitive).

        Raises:
            ConfigError: no provider has that name, or its entry point cannot be loaded.
        """
        key = name.strip().casefold()
        factory = self._factories.get(key)
        if factory is not None:
            return factory
        entry = self._installed().get(key)
        if entry is None:
            raise ConfigError(
                f"{self.setting} is {name!r}, but no {self.kind} has that name; "
                f"available: {', '.join(repr(n) for n in self.names())}. Pick one of them, "
                f"or install the package that registers {name!r} under the entry-point "
                f"group {self.group!r}."
            )
        try:
            loaded = entry.load()
        except Exception as exc:  # any import failure of a third-party plugin
            raise ConfigError(
                f"The {self.kind} {name!r} (entry point {entry.value!r} in group "
                f"{self.group!r}) could not be loaded: {exc}. Reinstall the package that "
                f"provides it, or pick another {self.setting}."
            ) from exc
        if not callable(loaded):
            raise ConfigError(
                f"The {self.kind} {name!r} (entry point {entry.value!r}) is not callable; "
                "it must name a factory function."
            )
        self._factories[key] = loaded
        return loaded  # type: ignore[no-any-return]

    def refresh(self) -> None:
        """Forget the entry points read so far (after installing a package at run time)."""
        self._entry_points = None

    def _installed(self) -> dict[str, metadata.EntryPoint]:
        if self._entry_points is None:
            # Imported here: reading the installed distributions is only needed for plugins.
            from importlib.metadata import entry_points

            self._entry_points = _by_name(entry_points(group=self.group))
        return self._entry_points


def _by_name(entries: Iterable[metadata.EntryPoint]) -> dict[str, metadata.EntryPoint]:
    found: dict[str, metadata.EntryPoint] = {}
    for entry in entries:
        # The first distribution on sys.path wins, as for imports.
        found.setdefault(entry.name.casefold(), entry)
    return found
