"""Regenerate the reference parts of the docs from the code.

    python scripts/gen_docs.py          # rewrite docs/configuration.md and docs/cli.md
    python scripts/gen_docs.py --check  # exit 1 (naming the page) if either is stale

The settings table comes from ``mindspace.config.Settings``; the CLI reference from every
command's ``--help``. ``tests/test_docs.py`` runs the same comparison in ``make test``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mindspace.hosts.cli.docgen import (
    CLI_BEGIN,
    CLI_END,
    SETTINGS_BEGIN,
    SETTINGS_END,
    cli_reference,
    replace_block,
    settings_table,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"


def main(argv: list[str]) -> int:
    """Write (or with ``--check`` compare) every generated block; 1 when one is stale."""
    check = "--check" in argv
    stale = []
    for page, block, begin, end in (
        (DOCS / "configuration.md", settings_table(), SETTINGS_BEGIN, SETTINGS_END),
        (DOCS / "cli.md", cli_reference(), CLI_BEGIN, CLI_END),
    ):
        new = replace_block(page, block, begin, end)
        if new == page.read_text(encoding="utf-8"):
            continue
        stale.append(page.name)
        if not check:
            page.write_text(new, encoding="utf-8")
    if check and stale:
        print(f"stale: {', '.join(stale)}; run: python scripts/gen_docs.py", file=sys.stderr)
        return 1
    for name in stale:
        print(f"wrote docs/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
