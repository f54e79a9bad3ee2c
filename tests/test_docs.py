"""The documentation a user reads matches the code."""

from __future__ import annotations

import re
from pathlib import Path

from mindspace.config import Settings
from mindspace.hosts.cli.docgen import (
    CLI_BEGIN,
    CLI_END,
    SETTINGS_BEGIN,
    SETTINGS_END,
    cli_reference,
    settings_rows,
    settings_table,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_configuration_md_lists_every_setting() -> None:
    text = (DOCS / "configuration.md").read_text()
    missing = [n for n in Settings.model_fields if f"`MINDSPACE_{n.upper()}`" not in text]
    assert missing == [], f"docs/configuration.md does not list: {missing}"


def _rows(text: str) -> dict[str, str]:
    """``{variable: default}`` of every ``| `MINDSPACE_X` | default | ... |`` table row."""
    found = re.findall(r"^\| (`MINDSPACE_[A-Z0-9_]+`) \| ([^|]*?) \|", text, flags=re.MULTILINE)
    return dict(found)


def test_every_setting_table_is_generated_from_the_settings_model() -> None:
    text = (DOCS / "configuration.md").read_text()
    start, end = text.find(SETTINGS_BEGIN), text.find(SETTINGS_END)
    assert 0 <= start < end, "docs/configuration.md lost its settings markers"
    documented = _rows(text[start:end])
    expected = {var: default for var, default, _ in settings_rows()}
    undocumented = sorted(set(expected) - set(documented))
    wrong = {
        v: (documented[v], d) for v, d in expected.items() if v in documented and documented[v] != d
    }
    gone = sorted(set(documented) - set(expected))
    assert undocumented == [], f"settings missing from docs/configuration.md: {undocumented}"
    assert wrong == {}, f"defaults in docs/configuration.md differ (doc, code): {wrong}"
    assert gone == [], f"docs/configuration.md lists settings that no longer exist: {gone}"
    assert text[start : end + len(SETTINGS_END)] == settings_table(), (
        "docs/configuration.md's settings table is stale; run: python scripts/gen_docs.py"
    )


def test_topic_tables_agree_with_the_settings_model() -> None:
    """The hand-written tables name real settings, and a plain default matches the code."""
    text = (DOCS / "configuration.md").read_text()
    prose = text[: text.find(SETTINGS_BEGIN)]
    expected = {var: default for var, default, _ in settings_rows()}
    unknown = sorted(set(_rows(prose)) - set(expected))
    assert unknown == [], f"docs/configuration.md documents unknown settings: {unknown}"
    wrong = {
        var: (shown, expected[var])
        for var, shown in _rows(prose).items()
        if re.fullmatch(r"`[^`]*`", shown) and shown != expected[var]
    }
    assert wrong == {}, f"defaults in the topic tables differ (doc, code): {wrong}"


def test_cli_reference_matches_every_help_page() -> None:
    text = (DOCS / "cli.md").read_text()
    start, end = text.find(CLI_BEGIN), text.find(CLI_END)
    assert 0 <= start < end, "docs/cli.md lost its cli markers"
    assert text[start : end + len(CLI_END)] == cli_reference(), (
        "docs/cli.md is stale; run: python scripts/gen_docs.py"
    )


def test_install_lines_work_without_a_package_index() -> None:
    """mindspace is on no public index: ``pip install "mindspace[x]"`` alone would fail."""
    pages = [DOCS.parent / "README.md", *sorted(DOCS.glob("*.md"))]
    bad = [
        f"{page.name}: {line.strip()}"
        for page in pages
        for line in page.read_text().splitlines()
        if re.search(r"pip install ['\"]?mindspace\[", line) and "@ git+" not in line
    ]
    assert bad == [], f"use pip install -e '.[extra]' or 'mindspace[extra] @ git+URL': {bad}"
