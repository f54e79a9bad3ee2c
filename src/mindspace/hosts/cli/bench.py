"""``mindspace bench locomo``: retrieval quality on LoCoMo-format conversations."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from mindspace.hosts.cli.common import CliError, load_settings

__all__ = ["bench_app", "main", "results_table"]

bench_app = typer.Typer(help="Benchmarks of the product's memory.", no_args_is_help=True)
_METRICS = ("hit@5", "hit@10", "recall@5", "recall@10")


@bench_app.callback()
def _bench() -> None:
    """Benchmarks of the product's memory."""


@bench_app.command("locomo")
def locomo_command(
    data: Annotated[Path, typer.Option("--data", help="A LoCoMo-format JSON file.")],
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the results as JSON here.")
    ] = None,
    workdir: Annotated[
        Path | None,
        typer.Option(
            "--workdir",
            help="Keep the ingested conversations here and reuse them on the next run "
            "(delete it after changing ingestion).",
        ),
    ] = None,
) -> None:
    """Ingest every conversation, ask every question, and compare with BM25 and dense."""
    if not data.is_file():
        raise CliError(f"No LoCoMo file at {str(data)!r}; pass --data PATH to the JSON file.")
    import asyncio

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from mindspace.evaluation.locomo import run_locomo
    from mindspace.runtime import build_embedder

    settings = load_settings()
    embedder = build_embedder(settings)
    if embedder is None:
        raise CliError("The benchmark needs an embedder; unset MINDSPACE_EMBEDDER=none.")
    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("starting", total=None)

        def progress(stage: str, done: int, total: int) -> None:
            bar.update(task, description=stage, completed=done, total=total)

        result = asyncio.run(
            run_locomo(data, embedder=embedder, progress=progress, workdir=workdir)
        )
    Console().print(results_table(result))
    if json_out is not None:
        json_out.write_text(json.dumps(_shape(result), indent=2) + "\n")
        console.print(f"wrote {str(json_out)!r}")


def _shape(result: dict[str, Any]) -> dict[str, Any]:
    keys = ("product", "bm25", "dense", "questions", "evidence_dropped", "seconds")
    return {key: result[key] for key in keys}


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
        return 1
    return 0
