"""The ``mindspace`` command: call tools, inspect an assistant's workspace, run the demo.

Every command that opens an assistant takes ``--db`` and ``--assistant``; without them
the database and key come from the ``MINDSPACE_*`` settings. Every error prints one
``error: ...`` line on stderr; the exit status is 1 when the work failed and 2 when the
command line is wrong (docs/cli.md has the table).

Start-up time matters (people run this often, and ``--help`` should feel instant): the
command modules import the engine, the store and the model SDKs inside the command
bodies, so building the command tree loads only Typer and Rich.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from mindspace import __version__
from mindspace.errors import MindspaceError
from mindspace.hosts.cli.bench import bench_app
from mindspace.hosts.cli.common import (
    AssistantOption,
    CliError,
    DbOption,
    UsageError,
    database_location,
    dump,
    load_settings,
    missing_extra,
    open_cli_assistant,
    print_error,
    reflow_help,
    run_once,
)
from mindspace.hosts.cli.doctor import doctor_command
from mindspace.hosts.cli.edits import register_edit_commands
from mindspace.hosts.cli.journal import journal_app
from mindspace.hosts.cli.mcp_server import mcp_command
from mindspace.hosts.cli.memory import entities_app, memories_app, register_memory_commands
from mindspace.hosts.cli.serve import HostOption, PortOption, serve_command, serve_demo
from mindspace.hosts.cli.session import session_app
from mindspace.hosts.cli.target import Target, on_assistant
from mindspace.hosts.cli.transfer import export_command, import_command
from mindspace.hosts.cli.worker import worker_command
from mindspace.limits import MAX_JSON_DEPTH
from mindspace.validation import json_depth_exceeds

__all__ = ["app", "main"]

app = typer.Typer(
    name="mindspace",
    help="Run and inspect mindspace assistants: call their tools, read their goals, "
    "projects and status, or run the offline demo.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    rich_markup_mode="rich",
)
# User data (goal descriptions, summaries, keys) is printed as-is: no markup, no emoji codes.
console = Console(markup=False, emoji=False, highlight=False)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mindspace {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Run and inspect mindspace assistants."""


@app.command("tool")
def tool_command(
    name: Annotated[
        str,
        typer.Argument(metavar="NAME", help="The tool to call, or 'list' to list every tool."),
    ],
    args: Annotated[
        str,
        typer.Option("--args", metavar="JSON", help="The tool's arguments as one JSON object."),
    ] = "{}",
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="With list: print every tool's schema as JSON (a result always is)."
        ),
    ] = False,
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """Call a tool and print its JSON result, or list the tools with [bold]tool list[/].

    Example: mindspace tool add_goal --args '{"description": "Fix the gate"}'

    A failed tool prints its result on stdout, one [bold]error:[/] line on stderr, exits 1.
    """
    from mindspace.engine import assistant_tools
    from mindspace.hosts.cli.render import tools_table
    from mindspace.runtime import is_offline, offline_notice
    from mindspace.tools import ToolCategory

    if name == "list":
        tools = assistant_tools().tools()
        if as_json:
            dump([{"category": str(t.category), **t.schema()} for t in tools])
            return
        console.print(tools_table(tools))
        return
    parsed = _parse_args(name, args)
    settings = load_settings()
    opened = open_cli_assistant(settings, db, assistant)
    result = run_once(opened, opened.call_tool(name, parsed))
    typer.echo(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    if result.get("success") is not True:
        message = str(result.get("error", f"Tool {name!r} failed"))
        if result.get("suggestion"):
            message += f" - {result['suggestion']}"
        print_error(message)
        raise typer.Exit(1)
    tool = opened.tools.get(name)
    if tool.category == ToolCategory.ASYNC_REQUIRED and is_offline(opened.llm):
        typer.echo(f"note: {offline_notice()}", err=True)


def _parse_args(name: str, raw: str) -> dict[str, Any]:
    from mindspace.engine import assistant_tools
    from mindspace.tools.registry import describe_parameters

    registry = assistant_tools()
    takes = (
        f" {name!r} takes: {describe_parameters(registry.get(name))}." if name in registry else ""
    )
    if json_depth_exceeds(raw):
        # a usage error like Click's own (exit 2), found by a scan: json.loads would recurse
        raise UsageError(
            f"--args nests JSON deeper than {MAX_JSON_DEPTH} levels. "
            f"Pass one flat JSON object of arguments.{takes}"
        )
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--args is not valid JSON ({exc.msg} at position {exc.pos}): {raw!r}. "
            f'Pass one JSON object, e.g. --args \'{{"key": "value"}}\'.{takes}'
        ) from exc
    if not isinstance(parsed, dict):
        raise UsageError(
            f"--args must be a JSON object, not {type(parsed).__name__}: {raw!r}. "
            f"Wrap the arguments in {{...}}.{takes}"
        )
    return parsed


@app.command("status")
@on_assistant
def status_command(target: Target) -> None:
    """Show token usage and its advisory level, the loop state and session metrics."""
    from mindspace.hosts.cli.render import status_view
    from mindspace.runtime import is_offline

    settings = load_settings()
    opened = open_cli_assistant(settings, target.db, target.assistant, create=False)
    status = opened.views.status()
    if target.as_json:
        dump(status)
        return
    model = settings.llm_model or "(configured model)"
    if is_offline(opened.llm):
        model = (
            f"{opened.views.model_name()} (the offline stand-in; set MINDSPACE_LLM_BASE_URL "
            "for a real one)"
        )
    console.print(
        status_view(
            status,
            assistant=opened.key,
            model=model,
            database=database_location(settings, target.db),
        )
    )


# A group whose callback is the goal tree: `goals [--all]` shows it, `goals edit|delete` change.
goals_app = typer.Typer(name="goals", add_completion=False, rich_markup_mode="rich")


@goals_app.callback(invoke_without_command=True)
@on_assistant
def goals_command(
    ctx: typer.Context,
    target: Target,
    show_all: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Also show completed and abandoned goals (by default they are hidden unless "
            "an active goal sits below them, which keeps the tree connected; closed goals "
            "are dimmed).",
        ),
    ] = False,
) -> None:
    """Show the goal tree with ids, a progress bar, status and priority per goal.

    By default only active goals are shown, with any closed ancestor they sit under dimmed.

    Pass [bold]--all[/] to include completed and abandoned goals.

    Change one with [bold]goals edit ID[/] or remove it with [bold]goals delete ID[/].
    """
    if ctx.invoked_subcommand is not None:
        return
    from mindspace.hosts.cli.render import goal_tree

    opened = target.open()
    book = opened.views.goals()
    if target.as_json:
        dump([goal.to_spec() for goal in book.all()])  # every goal: --all is for the tree
        return
    if not book.all():
        console.print(
            Text(
                f"Assistant {opened.key!r} has no goals yet. Add one with: mindspace tool "
                'add_goal --args \'{"description": "Fix the gate"}\'',
            )
        )
        return
    tree, hidden = goal_tree(book, title=f"Goals of {opened.key!r}", show_all=show_all)
    if hidden and not tree.children:
        console.print(
            f"Assistant {opened.key!r} has no active goals; {hidden} completed or abandoned "
            "ones are hidden - show them with --all."
        )
        return
    console.print(tree)
    if hidden:
        console.print(
            Text(f"{hidden} completed or abandoned goals hidden - show them with --all.", "dim")
        )


@app.command("projects")
@on_assistant
def projects_command(target: Target) -> None:
    """List the projects: key, status, summary and last activity, the active one marked."""
    from mindspace.hosts.cli.render import projects_table

    opened = target.open()
    desk = opened.views.projects()
    projects = desk.all()
    if target.as_json:
        dump(
            {
                "active": desk.active_key(),
                "projects": [project.model_dump(mode="json") for project in projects],
            }
        )
        return
    if not projects:
        console.print(
            f"Assistant {opened.key!r} has no projects yet. Create one with: mindspace tool "
            'create_project --args \'{"project_key": "build_tavern", "summary": "Build a '
            "tavern\"}'",
            soft_wrap=True,
        )
        return
    console.print(projects_table(projects, desk.active_key(), title=f"Projects of {opened.key!r}"))


@app.command("chat")
def chat_command(
    user: Annotated[
        str, typer.Option("--as", metavar="NAME", help="Who you are in the conversation.")
    ] = "user",
    db: DbOption = None,
    assistant: AssistantOption = None,
) -> None:
    """Talk to an assistant in the terminal; /status, /goals and /quit inspect and leave.

    The model comes from MINDSPACE_LLM_BASE_URL / MINDSPACE_LLM_MODEL, or the offline model.
    Engine log lines stay out of the conversation (/status and the dashboard show state).
    """
    import logging

    from mindspace.hosts.cli.chat import read_terminal_line, run_chat

    # A warning printed between two lines of a conversation reads as the assistant's
    # words; what the person needs to know is in the reply (or the tick's error line).
    logging.getLogger("mindspace").addHandler(logging.NullHandler())

    if not user.strip():
        raise UsageError("--as is blank; pass your name, e.g. --as Alice.")
    settings = load_settings()
    opened = open_cli_assistant(settings, db, assistant)
    run_chat(
        opened,
        user=user.strip(),
        console=Console(highlight=False, emoji=False),
        read_line=read_terminal_line,
        database=database_location(settings, db),
    )


@app.command("demo")
def demo_command(
    db: DbOption = None,
    assistant: Annotated[
        str,
        typer.Option(
            "--assistant",
            "-a",
            metavar="KEY",
            help="Base key of the demo assistant; each run takes the first of KEY, KEY-2, "
            "KEY-3... that has no goals or projects yet, so the demo can run again and again.",
        ),
    ] = "barkeep",
    serve_after: Annotated[
        bool, typer.Option("--serve", help="Then serve the dashboard on the demo's database.")
    ] = False,
    host: HostOption = "127.0.0.1",
    port: PortOption = 8765,
) -> None:
    """Run the tavern scenario through the real engine: three players, two simulated days.

    Events and ticks with the offline model on a manual clock: projects, goals, preferences,
    a project swap, a night of sleep (consolidation, links, reflection, pruning) and an
    urgent whisper that wakes it. The database stays on disk; --serve opens the dashboard.
    """
    from mindspace.hosts.cli.demo import run_demo

    settings = load_settings()
    report = run_demo(settings, db, assistant, console)
    if serve_after:
        serve_demo(settings, db, report, host, port)


app.add_typer(journal_app, name="journal")
app.add_typer(bench_app, name="bench")
register_memory_commands(app)
for name, command in (
    ("serve", serve_command),
    ("worker", worker_command),
    ("doctor", doctor_command),
    ("mcp", mcp_command),
    ("export", export_command),
    ("import", import_command),
):
    app.command(name)(command)
app.add_typer(goals_app, name="goals")
app.add_typer(session_app, name="session")
register_edit_commands(app, memories_app, journal_app, entities_app, goals_app)
reflow_help(app)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the ``mindspace`` command line: every error is one ``error:`` line on stderr.

    Exit statuses (docs/cli.md): 0 done, 1 the work failed, 2 the command line is wrong.
    """
    # Typer 0.2x vendors Click; its usage errors are only importable from there.
    from typer._click.exceptions import NoArgsIsHelpError
    from typer._click.exceptions import UsageError as ClickUsageError

    try:
        code = app(
            args=list(argv) if argv is not None else None,
            prog_name="mindspace",
            standalone_mode=False,
        )
    except NoArgsIsHelpError as exc:
        typer.echo(exc.format_message())
        raise SystemExit(2) from None
    except ClickUsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "mindspace"
        message = exc.format_message().rstrip()
        stop = "" if message.endswith((".", "?", "!")) else "."
        print_error(f"{message}{stop} See: {where} --help")
        raise SystemExit(2) from None
    except typer.Abort:
        print_error("Interrupted.")
        raise SystemExit(130) from None
    except CliError as exc:
        print_error(str(exc))
        raise SystemExit(exc.exit_code) from None
    except MindspaceError as exc:
        print_error(str(exc))
        raise SystemExit(1) from None
    except ModuleNotFoundError as exc:  # an optional dependency: name the extra
        line = missing_extra(exc)
        if line is None:
            raise
        print_error(line)
        raise SystemExit(1) from None
    if isinstance(code, int) and code != 0:
        raise SystemExit(code)


if __name__ == "__main__":
    main()
