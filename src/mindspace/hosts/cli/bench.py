"""``mindspace bench locomo``: retrieval quality on LoCoMo-format conversations."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from mindspace.hosts.cli.common import CliError, UsageError, load_settings, output_file_option

__all__ = ["bench_app", "main", "results_table"]

bench_app = typer.Typer(help="Benchmarks of the product's memory.", no_args_is_help=True)
_METRICS = ("hit@5", "hit@10", "recall@5", "recall@10")


@bench_app.callback()
def _bench() -> None:
    """Benchmarks of the product's memory."""


_LOCOMO_SOURCE = (
    "LoCoMo is not shipped with mindspace (its licence, CC BY-NC 4.0, allows "
    "non-commercial use only): download data/locomo10.json from "
    "https://github.com/snap-research/locomo and pass --data PATH/locomo10.json"
)


@bench_app.command("locomo")
def locomo_command(
    data: Annotated[
        Path | None,
        typer.Option(
            "--data",
            metavar="FILE",
            help="A LoCoMo-format JSON file, e.g. data/locomo10.json from "
            "https://github.com/snap-research/locomo (not shipped: CC BY-NC 4.0).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the results as JSON on stdout, not a table.")
    ] = False,
    output: Annotated[
        Path | None,
        output_file_option("Also write the results as JSON here, with every question's ranking."),
    ] = None,
    workdir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir",
            "--workdir",
            metavar="DIR",
            help="Keep the ingested conversations here; a later run reuses each one whose "
            "sample, embedder, ingestion settings and ingestion code are unchanged.",
        ),
    ] = None,
    route: Annotated[
        str,
        typer.Option(
            "--route",
            metavar="ROUTE",
            help="How turns go in: 'message' (a message event from its speaker, taken by "
            "a tick, as hosts send them) or 'journal' (direct journal entries, the old "
            "route, for comparison).",
        ),
    ] = "message",
) -> None:
    """Ingest every conversation, ask every question, and compare with BM25 and dense.

    Progress goes to stderr: a bar on a terminal, otherwise one line per conversation and stage.
    """
    if data is None:
        raise UsageError(f"No --data given. {_LOCOMO_SOURCE}.")
    if not data.is_file():
        raise UsageError(f"No LoCoMo file at {str(data)!r}. {_LOCOMO_SOURCE}.")
    import asyncio

    from mindspace.evaluation.locomo import ROUTES, run_locomo

    chosen = next((r for r in ROUTES if r == route), None)
    if chosen is None:
        raise UsageError(f"Unknown --route {route!r}; use one of {', '.join(ROUTES)}.")
    from mindspace.runtime import build_embedder

    settings = load_settings()
    embedder = build_embedder(settings)
    if embedder is None:
        raise CliError("The benchmark needs an embedder; unset MINDSPACE_EMBEDDER=none.")
    console = Console(stderr=True)
    with _progress(console) as progress:
        result = asyncio.run(
            run_locomo(
                data,
                embedder=embedder,
                progress=progress,
                workdir=workdir,
                route=chosen,
            )
        )
    for sample_id, how in result.get("cache", {}).items():
        note = "reused the cached ingestion" if how == "reused" else "ingested and cached"
        console.print(f"{sample_id}: {note} in {str(workdir)!r}")
    if as_json:
        typer.echo(json.dumps(_shape(result), indent=2))
    else:
        Console().print(results_table(result))
    if output is not None:
        output.write_text(json.dumps(_shape(result, rankings=True), indent=2) + "\n")
        console.print(f"wrote {str(output)!r}")


@contextmanager
def _progress(console: Console) -> Iterator[Callable[[str, int, int], None]]:
    """A progress callback: a live bar on a terminal, else a line per stage on stderr.

    Redirected output (CI, ``nohup``, a pipe) still shows the run is alive: a bar would
    print nothing there for the ten minutes a full run takes.
    """
    if not console.is_terminal:
        started = time.monotonic()
        last = [""]

        def line(stage: str, done: int, total: int) -> None:
            if stage != last[0]:
                last[0] = stage
                elapsed = time.monotonic() - started
                typer.echo(f"[{elapsed:6.0f} s] {stage} ({done}/{total})", err=True)

        yield line
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("starting", total=None)

        def update(stage: str, done: int, total: int) -> None:
            bar.update(task, description=stage, completed=done, total=total)

        yield update


def _shape(result: dict[str, Any], *, rankings: bool = False) -> dict[str, Any]:
    """The report; with ``rankings`` also every question's ranked dialog ids (for --output)."""
    keys = ("product", "bm25", "dense", "questions", "evidence_dropped", "seconds")
    shaped = {key: result[key] for key in keys}
    if rankings and "rankings" in result:
        shaped["rankings"] = result["rankings"]
    return shaped


def results_table(result: dict[str, Any]) -> Table:
    """Every retriever's overall and per-category scores, side by side."""
    table = Table(
        title=f"LoCoMo retrieval: {result['questions']} questions, "
        f"{result['evidence_dropped']} evidence ids dropped, {result['seconds']} s"
    )
    table.add_column("retriever")
    table.add_column("questions")
    for metric in _METRICS:
        table.add_column(metric, justify="right")
    for name in ("product", "bm25", "dense"):
        board = result[name]
        rows = [("overall 1-4", board["overall_1_4"]), ("overall 1-5", board["overall_1_5"])]
        rows += [(f"cat {c}", scores) for c, scores in board["by_category"].items()]
        for label, scores in rows:
            table.add_row(name, label, *(f"{scores[m]:.1f}" for m in _METRICS))
        table.add_section()
    return table


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench sub-app as a script."""
    try:
        bench_app(args=["locomo", *(argv or [])], standalone_mode=False)
    except CliError as exc:
        typer.echo(f"error: {exc}", err=True)
        return exc.exit_code
    return 0
