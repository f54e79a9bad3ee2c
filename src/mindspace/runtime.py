"""The composition root: one object that builds stores, models and assistants from settings.

:class:`Runtime` is the only place an :class:`~mindspace.engine.Assistant` is built
outside tests. It owns the store and chooses every adapter an assistant runs on: the
model, the embedder, the tracer and the search indexes (the store's own vector search
when it has one, PostgreSQL's; else the embedded indexes). Hosts (the CLI, the HTTP
server, Evennia, the MCP server), the worker fleet, the demo and the evaluation
harnesses get assistants from a runtime and never hold a store. The built-in adapters
are named providers (:mod:`mindspace.adapters`); the core never imports them
(tests/test_architecture.py checks both). See docs/architecture.md, "The composition
root and the host surface".
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, TextIO, Unpack

from mindspace.adapters import (
    EMBEDDERS,
    LLMS,
    STORES,
    EndpointLLM,
    build_embedder,
    build_llm,
    probe_llm,
)
from mindspace.config import Settings
from mindspace.engine.assistant import Assistant
from mindspace.engine.indexes import IndexFactory, SearchIndexes, embedded_indexes
from mindspace.errors import ConfigError
from mindspace.llm.port import LLM, close_llm
from mindspace.state.semantic import SemanticStore
from mindspace.telemetry import (
    build_tracer,
    instrument_llm,
    metrics_page,
    use_telemetry,
)
from mindspace.tracing import Tracer

if TYPE_CHECKING:
    from mindspace.clock import Clock
    from mindspace.embeddings.port import Embedder
    from mindspace.state.port import Store
    from mindspace.state.unit import StateCache
    from mindspace.tools.registry import ToolRegistry
    from mindspace.transfer import ExportSummary, ImportSummary
    from mindspace.transfer.format import ProgressOptions

__all__ = [
    "EMBEDDERS",
    "FROM_SETTINGS",
    "LLMS",
    "STORES",
    "EndpointLLM",
    "FromSettings",
    "Runtime",
    "build_embedder",
    "build_llm",
    "build_tracer",
    "database_file",
    "instrument_llm",
    "is_offline",
    "metrics_page",
    "offline_llm",
    "offline_notice",
    "open_assistant",
    "open_store",
    "probe_llm",
    "shown_url",
    "use_telemetry",
]


# -- what hosts call -----------------------------------------------------------------------


def open_store(settings: Settings, db: str | Path | None = None, *, create: bool = True) -> Store:
    """The store named by ``db`` (a file path or database URL) or by the settings.

    A URL's scheme (``sqlite``, ``postgresql``, or one a plugin registers; a driver
    suffix such as ``+psycopg`` is ignored) selects the store provider. With
    ``create=False`` a missing SQLite file raises StorageError instead of being created
    (an existing one is still migrated).

    Raises:
        ConfigError: the URL is malformed or no store provider serves its scheme.
        StorageError: the database cannot be opened.
    """
    url = settings.resolved_database_url(db)
    return STORES.get(_scheme(url))(url, settings, create)


def database_file(settings: Settings, db: str | Path | None = None) -> Path | None:
    """The SQLite file ``db`` (or the settings) names; None for other databases.

    Raises:
        ConfigError: the URL is malformed.
    """
    if db is not None and "://" not in str(db):
        return Path(db).expanduser()
    from mindspace.storage.sql import sqlite_file

    return sqlite_file(settings.resolved_database_url(db))


def shown_url(url: str) -> str:
    """``url`` with its password masked, for messages; unchanged when it is not a URL."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def offline_llm(*, scenario: str | None = None, announce: bool = False) -> LLM:
    """The offline model (no endpoint), optionally with a scenario's own lines.

    Args:
        scenario: ``"tavern"`` adds the demo's tavern wording (``mindspace.offline.tavern``).
        announce: Log the offline notice when it starts.

    Raises:
        ConfigError: an unknown scenario.
    """
    from mindspace.offline import OfflineLLM

    if scenario is None:
        return OfflineLLM(announce=announce)
    if scenario != "tavern":
        raise ConfigError(f"Unknown offline scenario {scenario!r}; the demo's is 'tavern'.")
    from mindspace.offline.tavern import TAVERN_SKILLS

    return OfflineLLM(TAVERN_SKILLS, announce=announce)


def offline_notice() -> str:
    """What the offline model is and how to configure a real one (for hosts to show)."""
    from mindspace.offline import OFFLINE_NOTICE

    return OFFLINE_NOTICE


def is_offline(llm: LLM) -> bool:
    """Whether ``llm`` is the offline stand-in (traced or not)."""
    from mindspace.llm.traced import unwrap_llm
    from mindspace.offline import OfflineLLM

    return isinstance(unwrap_llm(llm), OfflineLLM)


class FromSettings:
    """The type of :data:`FROM_SETTINGS`."""


FROM_SETTINGS = FromSettings()
"""Build this adapter from the settings when first needed (a :class:`Runtime` default)."""


class Runtime:
    """The composition root: one store, and the adapters its assistants run on.

    Build one with :meth:`from_settings` (hosts) or from a store you hold (tests, bench
    scripts); then :meth:`open` assistants, list them with :meth:`keys`, export and
    import them, and :meth:`close` (or :meth:`aclose`) it when done.

    Args:
        settings: Runtime settings of every assistant it opens.
        store: Where the assistants live; the runtime owns it unless ``owns_store`` is
            False.
        llm: The model every assistant uses, as given (by default the one the settings
            name, built on first use and traced when telemetry is on).
        embedder: The embedder; None for none (lexical search only). By default the one
            ``MINDSPACE_EMBEDDER`` names, built on first use.
        clock: The time source (the system clock by default).
        tools: The tools every assistant has (the built-in ones by default).
        tracer: Where spans go (by default the one the settings configure: none unless
            telemetry is on).
        owns_store: Close the store when the runtime closes.
    """

    def __init__(
        self,
        settings: Settings,
        store: Store,
        *,
        llm: LLM | None = None,
        embedder: Embedder | FromSettings | None = FROM_SETTINGS,
        clock: Clock | None = None,
        tools: ToolRegistry | None = None,
        tracer: Tracer | None = None,
        owns_store: bool = True,
    ) -> None:
        self.settings = settings
        self._store = store
        self._llm = llm
        self._embedder = embedder
        self.clock = clock
        self.tools = tools
        self._tracer = tracer
        self._owns_store = owns_store

    @classmethod
    def from_settings(
        cls,
        settings: Settings | None = None,
        db: str | Path | None = None,
        *,
        create: bool = True,
        llm: LLM | None = None,
        embedder: Embedder | None = None,
        clock: Clock | None = None,
        tools: ToolRegistry | None = None,
    ) -> Runtime:
        """A runtime on the database ``db`` (or the settings' one), adapters from settings.

        The model and the embedder are built on first use unless passed (a command that
        only lists or exports assistants never loads them); ``embedder=None`` means the
        one the settings name. A model passed in is traced like a built one. With ``create=False`` a
        missing SQLite file raises StorageError instead of being created.

        Raises:
            ConfigError: the URL is malformed or no store provider serves its scheme.
            StorageError: the database cannot be opened.
        """
        settings = settings or Settings()
        store = open_store(settings, db, create=create)
        return cls(
            settings,
            store,
            llm=instrument_llm(llm, settings) if llm is not None else None,
            embedder=embedder if embedder is not None else FROM_SETTINGS,
            clock=clock,
            tools=tools,
        )

    # -- the adapters it chose ---------------------------------------------------------
    @property
    def llm(self) -> LLM:
        """The model (``MINDSPACE_LLM_PROVIDER``'s, traced when telemetry is on).

        Raises:
            ConfigError: no provider has that name, or its settings are incomplete.
        """
        if self._llm is None:
            self._llm = build_llm(self.settings)
        return self._llm

    @property
    def embedder(self) -> Embedder | None:
        """The embedder (None: lexical search only).

        Raises:
            ConfigError: no embedder has that name, or a required setting is missing.
        """
        if isinstance(self._embedder, FromSettings):
            self._embedder = build_embedder(self.settings)
        return self._embedder

    @property
    def tracer(self) -> Tracer:
        """Where the assistants' spans go (none unless telemetry is on)."""
        if self._tracer is None:
            self._tracer = build_tracer(self.settings)
        return self._tracer

    def prepare(self) -> Runtime:
        """Build the model and the embedder now; returns the runtime.

        For a server: a bad setting then stops its start instead of failing the first
        assistant it opens. On an error the runtime is closed.

        Raises:
            ConfigError: a provider the settings name cannot be built.
        """
        try:
            _ = (self.llm, self.embedder)
        except BaseException:
            self.close()
            raise
        return self

    # -- assistants --------------------------------------------------------------------
    def open(
        self,
        key: str | None = None,
        *,
        create: bool = True,
        self_names: tuple[str, ...] = (),
        settings: Settings | None = None,
    ) -> Assistant:
        """Open the assistant ``key`` (the settings' default key when None).

        Opening writes nothing; the session's start is recorded by its first write.

        Args:
            key: The assistant's key.
            create: Create it when absent (else AssistantNotFoundError).
            self_names: Names the assistant goes by, for the persona guard.
            settings: This assistant's own settings (a game character's): its model,
                embedder and tracer are then built from them, on the same store.

        Raises:
            AssistantNotFoundError: absent and ``create`` is False.
            ConfigError: a provider the settings name cannot be built.
            ValueError: a malformed key (the store rejects it).
        """
        own = settings is not None and settings is not self.settings
        chosen = settings if settings is not None and own else self.settings
        info = self._store.open_assistant(key or chosen.assistant_key, create=create)
        return Assistant(
            self._store,
            info,
            llm=build_llm(chosen) if own else self.llm,
            clock=self.clock,
            settings=chosen,
            tools=self.tools,
            self_names=self_names,
            embedder=build_embedder(chosen) if own else self.embedder,
            tracer=build_tracer(chosen) if own else self.tracer,
            indexes=_indexes_of(self._store),
        )

    def keys(self) -> list[str]:
        """Keys of every assistant in the store, sorted."""
        return [info.key for info in self._store.list_assistants()]

    def export_assistant(
        self,
        key: str,
        to: TextIO | Path,
        **reporting: Unpack[ProgressOptions],
    ) -> ExportSummary:
        """Export ``key`` as JSON lines to a stream or a path (docs/export.md).

        ``reporting``: a ``progress`` callback told a line every ``progress_every`` records.

        A path is never replaced by a partial file (see
        :func:`mindspace.transfer.export_to_path`).

        Raises:
            AssistantNotFoundError: no such assistant.
            TransferError: the path cannot be written.
        """
        from mindspace.transfer import export_assistant, export_to_path

        if isinstance(to, Path):
            return export_to_path(self._store, key, to, **reporting)
        return export_assistant(self._store, key, to, **reporting)

    def import_assistant(
        self,
        path: Path,
        *,
        key: str | None = None,
        replace: bool = False,
        **reporting: Unpack[ProgressOptions],
    ) -> ImportSummary:
        """Import the export at ``path``, all or nothing, under ``key`` (its own by default).

        ``reporting``: a ``progress`` callback told a line every ``progress_every`` records.

        Raises:
            AlreadyExistsError: the key is taken and ``replace`` is False.
            TransferError: the file is not a valid export (nothing was written).
        """
        from mindspace.transfer import import_assistant

        return import_assistant(
            self._store,
            path,
            key=key,
            replace=replace,
            settings=self.settings,
            **reporting,
        )

    # -- closing -----------------------------------------------------------------------
    def close(self) -> None:
        """Close the store if the runtime owns it (blocking; on a loop, :meth:`aclose`)."""
        if self._owns_store:
            self._store.close()

    async def aclose(self) -> None:
        """Close the model's connections, then the store if the runtime owns it."""
        if self._llm is not None:
            await close_llm(self._llm)
        if self._owns_store:
            closing = getattr(self._store, "aclose", None)
            if closing is not None:
                await closing()
            else:
                self._store.close()


def open_assistant(
    key: str | None = None,
    *,
    settings: Settings | None = None,
    db: str | Path | None = None,
    llm: LLM | None = None,
    clock: Clock | None = None,
    create: bool = True,
    embedder: Embedder | None = None,
) -> Assistant:
    """Open (or create) an assistant with everything built from settings.

    A shorthand for ``Runtime.from_settings(...).open(key)`` whose store stays open for
    the life of the process (scripts and tests). The embedder is the one
    ``MINDSPACE_EMBEDDER`` names (the offline MiniLM model by default) unless one is
    passed. With ``create=False`` nothing is created: neither the database file nor the
    assistant. When OpenTelemetry is on (``MINDSPACE_OTEL=1``, or :func:`use_telemetry`),
    its ticks, model and tool calls are traced.

    Raises:
        StorageError: ``create`` is False and the SQLite file does not exist.
        AssistantNotFoundError: ``create`` is False and there is no such assistant.
    """
    runtime = Runtime.from_settings(
        settings, db, create=create, llm=llm, embedder=embedder, clock=clock
    )
    return runtime.open(key, create=create)


def _indexes_of(store: Store) -> IndexFactory:
    """The store's own memory and journal search when it has one, else the embedded ones."""
    if not isinstance(store, SemanticStore):
        return embedded_indexes
    semantic: SemanticStore = store

    def store_indexes(state: StateCache, embedder: str | None) -> SearchIndexes:
        journal = semantic.journal_index(state, embedder) if embedder is not None else None
        return SearchIndexes(semantic.semantic_index(state, embedder), journal)

    return store_indexes


def _scheme(url: str) -> str:
    scheme, separator, _ = url.partition("://")
    if not separator or not scheme:
        raise ConfigError(
            f"{url!r} is not a database URL; give a file path or a URL such as "
            "'sqlite:///mindspace.db' (MINDSPACE_DATABASE_URL or --db)."
        )
    # "postgresql+psycopg" names the psycopg driver of the postgresql store.
    return scheme.partition("+")[0]
