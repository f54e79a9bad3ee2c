"""The documentation a user reads matches the code."""

from __future__ import annotations

from pathlib import Path

from mindspace.config import Settings

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_configuration_md_lists_every_setting() -> None:
    text = (DOCS / "configuration.md").read_text()
    missing = [n for n in Settings.model_fields if f"`MINDSPACE_{n.upper()}`" not in text]
    assert missing == [], f"docs/configuration.md does not list: {missing}"
