"""``mindspace memories`` (and ``memories search QUERY``) and ``entities`` (``entities show ID``).

Both only read: nothing is written and no tool call is counted. ``register_memory_commands``
also adds ``sleep``, ``wake`` and ``mode`` from :mod:`mindspace.hosts.cli.sleep`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mindspace.hosts.cli.common import (
    CliError,
    UsageError,
    check_limit,
    console,
    counted,
    dump,
    run_once,
    say,
    when,
)
from mindspace.hosts.cli.sleep import mode_command, sleep_command, wake_command
from mindspace.hosts.cli.target import Target, on_assistant

if TYPE_CHECKING:  # the engine is imported in the commands' bodies (start-up time)
    from mindspace.engine import Assistant
    from mindspace.memory.entities import EntityBook
    from mindspace.memory.records import EntityProfile, Memory

__all__ = [
    "entities_app",
    "memories_app",
    "register_memory_commands",
]

memories_app = typer.Typer(
    name="memories",
    help="Show semantic memories (id, time, trust, importance, source, tags, content; how "
    "often a fact was said and whether a newer one replaced it), newest first. "
    "[bold]memories search QUERY[/] ranks them as recall_memories does.",
    add_completion=False,
    rich_markup_mode="rich",
)
entities_app = typer.Typer(
    name="entities",
    help="Show entity profiles: type, relationship, favorability, interactions and "
    "attributes. [bold]entities show ID[/] shows one profile with its observations.",
    add_completion=False,
    rich_markup_mode="rich",
)

TagOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tag", "-t", metavar="TAG", help="Only memories with this tag (repeat: all of them)."
    ),
]
MinTrustOption = Annotated[
    float,
    typer.Option(
        "--min-trust", metavar="X", help="Only memories whose source trust is at least X (0-1)."
    ),
]

_STATE_STYLES = {"stranger": "dim", "acquaintance": "", "friend": "green", "ally": "bold green"}
# recall_memories' argument names as the options of `memories search`.
_SEARCH_OPTIONS = {
    "query": "QUERY",
    "limit": "--limit",
    "min_source_trust": "--min-trust",
    "tags": "--tag",
}


def register_memory_commands(app: typer.Typer) -> None:
    """Add ``sleep``, ``wake``, ``mode``, ``memories`` and ``entities`` to ``app``."""
    app.command("sleep")(sleep_command)
    app.command("wake")(wake_command)
    app.command("mode")(mode_command)
    app.add_typer(memories_app, name="memories")
    app.add_typer(entities_app, name="entities")


def _check_trust(trust: float) -> None:
    if not 0.0 <= trust <= 1.0:
        raise UsageError(
            f"--min-trust must be between 0 and 1, not {trust!r}; pass e.g. --min-trust 0.6 "
            "(0.9 direct, 0.8 observation, 0.6 inference, 0.3 overheard)."
        )


def _short(stamp: str) -> str:
    return stamp.replace("T", " ").removesuffix("Z")[:16]


# -- memories ------------------------------------------------------------------------------
@memories_app.callback(invoke_without_command=True)
@on_assistant
def memories_command(
    ctx: typer.Context,
    target: Target,
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="Most shown.")] = 20,
    tag: TagOption = None,
    min_trust: MinTrustOption = 0.0,
) -> None:
    """List semantic memories, newest first, optionally filtered by tag and source trust."""
    if ctx.invoked_subcommand is not None:
        return
    check_limit(limit)
    _check_trust(min_trust)
    opened = target.open()
    listed = opened.views.memory_listing(limit=limit, min_trust=min_trust, tags=tag or ())
    found = listed.memories
    if target.as_json:
        dump([{"id": m.id, "content": m.content, **m.metadata()} for m in found[:limit]])
        return
    if not found and not listed.total and opened.views.memory.count() == 0:
        console.print(
            f"Assistant {opened.key!r} has no memories yet. Store one with: mindspace tool "
            'store_memory --args \'{"content": "Alice prefers dark ale"}\', or consolidate '
            "the journal with: mindspace sleep --run",
            soft_wrap=True,
        )
        return
    if not found:
        console.print("No memories match.")
        return
    console.print(_memories_table(found, f"Memories of {opened.key!r}"))
    total = listed.total
    noun = "memory" if total == 1 else "memories"
    shown = f"{limit} of {total} {noun}" if total > limit else f"{total} {noun}"
    say(Text(f"{shown} shown. {_embedder_note(opened)}", style="dim"))


def _memory_number(memory_id: str) -> int:
    digits = memory_id.rpartition("_")[2]
    return int(digits) if digits.isdigit() else 0


def _embedder_note(opened: Assistant) -> str:
    embedder = opened.embedder
    if embedder is None:
        return "No embedder is configured (MINDSPACE_EMBEDDER=none): search is lexical (BM25) only."
    without = opened.views.memory.without_vector()
    note = f"Embedder: {embedder.name}."
    if without:
        note += (
            f" {counted(without, 'memory has', 'memories have')} no {embedder.name} vector "
            "(stored without an embedder or by another one); search finds those by words only."
        )
    return note


def _source(memory: Memory) -> Text:
    text = Text(memory.source_entity or "-")
    origin = f"{memory.source_type}"
    if memory.entry_id is not None:
        origin += f", entry {memory.entry_id}"
    elif memory.source != "tool":
        origin += f", {memory.source}"
    text.append(f"\n{origin}", style="dim")
    return text


def _validity(content: Text, mentions: object, valid_to: object, superseded_by: object) -> None:
    """Say under a memory's text how often it was said and whether it still holds."""
    if isinstance(mentions, int) and mentions > 1:
        content.append(f"\nsaid {mentions} times", style="dim")
    if isinstance(valid_to, str):
        content.append(
            f"\nno longer current since {_short(valid_to)} (replaced by {superseded_by})",
            style="yellow",
        )


def _memories_table(memories: Sequence[Memory], title: str) -> Table:
    # Few, stacked columns so the content keeps most of the width and wraps: at 80
    # columns eight side-by-side columns left it about 20 characters, cut mid-word.
    table = Table(
        title=title, title_justify="left", expand=True, box=box.SIMPLE_HEAD, show_edge=False
    )
    table.add_column("Id, time (UTC)", no_wrap=True)
    table.add_column("Trust", justify="right", no_wrap=True)
    table.add_column("Imp.", justify="right")
    table.add_column("Source", overflow="fold", max_width=24)
    table.add_column("Content, tags", ratio=1, min_width=24, overflow="fold")
    for m in memories:
        style = "bold" if m.importance >= 8 else ("dim" if m.importance <= 3 else "")
        content = Text(m.content)
        if m.tags:
            content.append("\n" + " ".join(f"#{t}" for t in m.tags), style="magenta")
        _validity(content, m.mentions, m.valid_to, m.superseded_by)
        table.add_row(
            Text(m.id, style="dim").append(f"\n{_short(m.occurred_at)}", style=""),
            f"{m.source_trust:.2g}",
            Text(str(m.importance), style=style).append(f"\n{m.importance_method}", style="dim"),
            _source(m),
            content,
        )
    return table


@memories_app.command("search")
@on_assistant
def search_command(
    target: Target,
    query: Annotated[str, typer.Argument(help="What to remember, e.g. 'what Alice drinks'.")],
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="Most shown.")] = 10,
    tag: TagOption = None,
    min_trust: MinTrustOption = 0.0,
) -> None:
    """Rank memories for QUERY exactly as the recall_memories tool does (dense + BM25)."""
    check_limit(limit)
    _check_trust(min_trust)
    if not query.strip():
        raise UsageError(
            f"QUERY {query!r} is blank; say what to remember, e.g. 'what Alice drinks'."
        )
    opened = target.open()
    args = {"query": query, "limit": limit, "min_source_trust": min_trust, "tags": tag or []}
    # The engine's read-only search: nothing is written, not even the call count, yet the
    # ranking is the recall_memories tool's own.
    outcome = run_once(opened, opened.views.search_memories(args))
    result = outcome.result
    if result.get("success") is not True:
        raise CliError(_tool_error(result))
    found: list[dict[str, Any]] = list(result.get("memories", []))
    if target.as_json:
        dump({"query": query, "memories": found})
        return
    if not found:
        console.print(f"No memories match {query!r}.")
    else:
        console.print(_ranking_table(found, f"Memories recalled for {query!r}"))
    say(Text(_embedder_note(opened), style="dim"))


def _tool_error(result: Mapping[str, Any]) -> str:
    fields = result.get("invalid_fields") or []
    if fields:
        problems = "; ".join(
            f"{_SEARCH_OPTIONS.get(str(f.get('field')), str(f.get('field')))} "
            f"{f.get('got')!r} ({f.get('problem')})"
            for f in fields
        )
        return f"recall_memories rejected {problems}. Fix that option and run the search again."
    message = str(result.get("error", "recall_memories failed"))
    if result.get("suggestion"):
        message += f" - {result['suggestion']}"
    return message


def _ranking_table(found: Sequence[Mapping[str, Any]], title: str) -> Table:
    table = Table(
        title=title, title_justify="left", expand=True, box=box.SIMPLE_HEAD, show_edge=False
    )
    table.add_column("#", justify="right", no_wrap=True)
    # Ranked by the fused score; the cosine is the embedding's similarity alone (docs/memory.md).
    table.add_column("Rank score", justify="right", no_wrap=True)
    table.add_column("Cosine", justify="right", no_wrap=True)
    table.add_column("Content", min_width=20, overflow="fold")
    table.add_column("Source", no_wrap=True)
    table.add_column("Id", style="dim", no_wrap=True)
    for rank, item in enumerate(found, 1):
        meta: Mapping[str, Any] = item.get("metadata") or {}
        relevance = item.get("relevance")
        source = Text(str(meta.get("source_entity") or "-"))
        source.append(
            f"\n{meta.get('source_type', '?')}, trust {float(meta.get('source_trust', 0)):.2g}",
            style="dim",
        )
        content = Text(str(item.get("content", "")))
        if meta.get("tags"):
            content.append("\n" + " ".join(f"#{t}" for t in meta["tags"]), style="magenta")
        _validity(content, meta.get("mentions"), meta.get("valid_to"), meta.get("superseded_by"))
        table.add_row(
            str(rank),
            f"{float(item.get('score', 0)):.3f}",
            "-" if relevance is None else f"{float(relevance):.3f}",
            content,
            source,
            str(item.get("id", "")),
        )
    return table


# -- entities ------------------------------------------------------------------------------
@entities_app.callback(invoke_without_command=True)
@on_assistant
def entities_command(ctx: typer.Context, target: Target) -> None:
    """List entity profiles by first contact: relationship, attributes, pending observations."""
    if ctx.invoked_subcommand is not None:
        return
    opened = target.open()
    profiles = _book(opened).all()
    if target.as_json:
        dump([p.model_dump(mode="json") for p in profiles])
        return
    if not profiles:
        console.print(
            f"Assistant {opened.key!r} has met no one yet. Record an observation with: "
            'mindspace tool update_entity_observation --args \'{"entity_id": "Alice", '
            '"observation": "Alice prefers dark ale"}\'',
            soft_wrap=True,
        )
        return
    console.print(_entities_table(profiles, f"Entities known to {opened.key!r}"))
    say(
        Text(
            f"{counted(len(profiles), 'entity', 'entities')}. Details of one: mindspace entities "
            "show ID",
            style="dim",
        )
    )


def _book(opened: Assistant) -> EntityBook:
    return opened.views.entity_book()


def _state(profile: EntityProfile) -> Text:
    state = profile.relationship.state
    return Text(state, style=_STATE_STYLES.get(state, ""))


def _attributes(attributes: Mapping[str, str]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in sorted(attributes.items())) or "-"


def _entities_table(profiles: Sequence[EntityProfile], title: str) -> Table:
    # Stacked columns, as in the memories table: side by side, eight columns cut the
    # ids and hid the attributes at 80 columns.
    table = Table(
        title=title, title_justify="left", expand=True, box=box.SIMPLE_HEAD, show_edge=False
    )
    table.add_column("Id, type", overflow="fold", max_width=24)
    table.add_column("Relationship", no_wrap=True)
    table.add_column("Talks, last seen (UTC)", no_wrap=True)
    table.add_column("Attributes", ratio=1, min_width=20, overflow="fold")
    table.add_column("Pending obs.", justify="right")
    for p in profiles:
        r = p.relationship
        pending = sum(1 for o in p.observations if not o.consolidated)
        table.add_row(
            Text(p.entity_id, style="bold").append(f"\n{p.entity_type}", style=""),
            _state(p).append(f"\nfavor {r.favorability:.2f}", style="dim"),
            Text(f"{r.interaction_count} interactions").append(
                f"\n{_short(p.last_seen)}", style="dim"
            ),
            _attributes(p.attributes),
            Text(str(pending), style="yellow" if pending else "dim"),
        )
    return table


@entities_app.command("show")
@on_assistant
def show_command(
    target: Target,
    entity_id: Annotated[str, typer.Argument(metavar="ID", help="The entity, e.g. Alice.")],
) -> None:
    """Show one entity profile: relationship, attributes and every observation."""
    opened = target.open()
    book = _book(opened)
    profile = book.get(entity_id) or book.get(entity_id.strip())
    if profile is None:
        known = [p.entity_id for p in book.all()]
        hint = (
            f"Known entities: {', '.join(repr(k) for k in known[:10])}"
            + (f" and {len(known) - 10} more" if len(known) > 10 else "")
            + "."
            if known
            else "It has met no one yet."
        )
        raise CliError(
            f"Assistant {opened.key!r} knows no entity {entity_id!r}. {hint} "
            "List them with: mindspace entities"
        )
    if target.as_json:
        dump(profile.model_dump(mode="json"))
        return
    console.print(_profile_view(profile))


def _profile_view(profile: EntityProfile) -> RenderableType:
    r = profile.relationship
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    grid.add_row("Type", profile.entity_type)
    grid.add_row(
        "Relationship",
        Text.assemble(
            _state(profile),
            f", favorability {r.favorability:.2f}, "
            f"{counted(r.interaction_count, 'interaction', 'interactions')}",
        ),
    )
    grid.add_row("First seen", when(profile.first_seen))
    grid.add_row("Last seen", when(profile.last_seen))
    parts: list[RenderableType] = [
        Text.assemble(("Entity ", "bold"), (repr(profile.entity_id), "bold cyan")),
        grid,
    ]
    attributes = _section("Attributes (consolidated from observations while dreaming)")
    attributes.add_column("Key", style="bold", no_wrap=True)
    attributes.add_column("Value", overflow="fold")
    for key, value in sorted(profile.attributes.items()):
        attributes.add_row(key, value)
    parts.append(attributes if profile.attributes else Text("No attributes yet.", style="dim"))
    observations = _section(
        "Observations, oldest first; # is what entities edit --remove-observation takes"
    )
    observations.add_column("#", justify="right", no_wrap=True)
    observations.add_column("Time (UTC)", no_wrap=True)
    observations.add_column("Source", no_wrap=True)
    observations.add_column("Consolidated", no_wrap=True)
    observations.add_column("Observation", overflow="fold")
    for number, o in enumerate(profile.observations):
        observations.add_row(
            str(number),
            _short(o.at),
            o.source_type,
            Text("yes", style="green") if o.consolidated else Text("no", style="yellow"),
            o.text,
        )
    parts.append(
        observations if profile.observations else Text("No observations yet.", style="dim")
    )
    return Group(*parts)


def _section(title: str) -> Table:
    """One titled table of a profile, as ``entities show`` draws each."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
