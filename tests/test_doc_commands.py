"""Every shell command in README.md and docs/ runs as written (scripts/docs_commands.py).

The rule for what counts as a command, what the harness changes and which commands
cannot run here (with the reason) are in the script's docstring and tables, and in
docs/doc-commands.md, which is generated from them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from mindspace.testing.postgres import LocalPostgres

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))

import docs_commands  # noqa: E402  (scripts/ is not a package)


def _pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_every_fenced_block_names_its_language_and_hides_no_command() -> None:
    problems = [
        f"{p.where}: {p.message}" for page in _pages() for p in docs_commands.extract(page, REPO)[1]
    ]
    assert problems == []


def test_every_table_entry_still_matches_a_command_in_the_docs() -> None:
    assert docs_commands.stale_entries() == []


def test_doc_commands_md_is_generated_from_the_tables() -> None:
    expected = docs_commands.markdown_table()
    assert (REPO / "docs" / "doc-commands.md").read_text() == expected, (
        "docs/doc-commands.md is stale; run: PYTHONPATH=src python scripts/docs_commands.py "
        "--table > docs/doc-commands.md"
    )


def test_install_hints_work_from_a_clone_or_a_git_url() -> None:
    # mindspace is on no public index: `pip install "mindspace[x]"` fails for everyone.
    hints = [
        f"{path.relative_to(REPO)}: {line.strip()}"
        for path in [*_pages(), *sorted((REPO / "src").rglob("*.py"))]
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.search(r"""pip install [^\n]*["']mindspace\[""", line) and "@ git+" not in line
    ]
    assert hints == []


@pytest.mark.slow
def test_every_command_in_the_docs_runs_as_written(postgres: LocalPostgres, tmp_path: Path) -> None:
    lines: list[str] = []
    results, problems = docs_commands.run_docs(tmp_path, postgres.new_database, echo=lines.append)
    failed = [r for r in results if r.status == "fail"]
    report = "\n".join(lines)
    assert problems == []
    summary = "\n".join(
        f"{r.command.page}:{r.command.line}  {r.command.text}\n    {r.detail}" for r in failed
    )
    assert failed == [], f"{len(failed)} command(s) failed:\n{summary}\n\nThe run:\n{report}"
    ran = {r.command.text for r in results if r.status == "ok"}
    skipped = {r.command.text for r in results if r.status == "skip"}
    # The table's reasons are what the run reports, and the core commands really ran.
    assert skipped == set(docs_commands.SKIP)
    for text in (
        "mindspace demo",
        "mindspace chat --as Alice",
        "mindspace import barkeep.jsonl --db postgresql+psycopg://...",
        "mindspace doctor --base-url http://127.0.0.1:8080/v1 --model qwen --json",
        'curl -N -H "$AUTH" $API/assistants/innkeeper/stream',
    ):
        assert text in ran, report
