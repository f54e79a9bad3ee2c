"""The tables of docs_commands.py: what cannot run here, what the harness changes, and why.

Every key is a command's text exactly as docs_commands.py extracts it (lines joined with
single spaces, no trailing comment). An entry that matches no command fails the test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

_INSTALL = (
    "Installs into the environment that runs the check; `make test` installed every extra "
    "with `pip install -e '.[dev,...]'` from the clone, and the commands the extra serves "
    "run here."
)
_EVENNIA = (
    "A step of 'From zero to a talking NPC', which `scripts/evennia_from_docs.py` follows "
    "block by block (a new virtualenv and game: minutes, so not in `make test`)."
)
_MODEL_SERVER = (
    "Starts a model server that is not installed here and needs a multi-GB model; the "
    "scripted chat-completions server stands in for it in the section's other commands."
)

SKIP: dict[str, str] = {
    "make run": (
        "Creates .venv and installs into it; what it then runs, `mindspace demo`, runs "
        "here (README.md's command list)."
    ),
    "make test": "The suite this check is part of.",
    ". .venv/bin/activate": (
        "The check's `mindspace` is on PATH already; tests/e2e/test_first_run.py runs "
        "`make run` and README.md's next commands, this line included, in a fresh clone."
    ),
    "pip install -e .": _INSTALL,
    'pip install -e ".[server]"': _INSTALL,
    'pip install -e ".[anthropic]"': _INSTALL,
    "pip install -e '.[mcp]'": _INSTALL,
    'pip install -e ".[mem0]"': _INSTALL,
    'pip install -e ".[otel]"': _INSTALL,
    "pip install -e '.[server,postgres,fleet]'": _INSTALL,
    'pip install "mindspace[server] @ git+<the repository\'s URL>"': (
        "`<the repository's URL>` is the reader's to fill in, and it needs the network."
    ),
    "mindspace bench locomo --data locomo10.json": (
        "LoCoMo's data is not shipped (CC BY-NC 4.0) and a run takes minutes; "
        "tests/evaluation/test_locomo.py runs the command on a conversation of its own, "
        "bench/RESULTS.md has the figures."
    ),
    "python -m venv evenv": _EVENNIA,
    ". evenv/bin/activate": _EVENNIA,
    'pip install "evennia>=5,<7"': _EVENNIA,
    "evennia --init mygame": _EVENNIA,
    "cd mygame": _EVENNIA,
    "evennia migrate": _EVENNIA,
    'pip install -e "path/to/mindspace[evennia]"': _EVENNIA,
    "evennia start": _EVENNIA,
    "ollama pull qwen2.5:7b": _MODEL_SERVER,
    "llama-server -m qwen2.5-7b-instruct-q4_k_m.gguf --jinja -c 16384 --port 8080": (_MODEL_SERVER),
    "vllm serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice --tool-call-parser hermes": (
        _MODEL_SERVER
    ),
    "createuser mindspace --pwprompt": (
        "Needs a PostgreSQL server's admin tools and asks for a password; the check makes a "
        "fresh database on a local PostgreSQL server instead (mindspace.testing.postgres)."
    ),
    "createdb --owner mindspace mindspace": (
        "Needs a PostgreSQL server's admin tools; the check makes a fresh database on a "
        "local PostgreSQL server instead."
    ),
    "pip install opentelemetry-exporter-otlp-proto-http": (
        "Installs a package that is not in `make test`'s environment (the OTLP exporter)."
    ),
    "docker run --rm -p 4318:4318 -p 16686:16686 jaegertracing/all-in-one": (
        "Needs Docker and pulls an image from a registry."
    ),
    "MINDSPACE_OTEL=1 OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 "
    "OTEL_SERVICE_NAME=tavern mindspace serve": (
        "Needs the OTLP exporter and the collector of the two lines above; `mindspace serve` "
        "with MINDSPACE_OTEL=1 runs (and is probed) earlier on the page."
    ),
}
"""Commands that cannot run in the check: the reason, shown in docs/doc-commands.md."""

PLACEHOLDERS: dict[str, str] = {
    "http://127.0.0.1:11434/v1": "{chat_url}",
    "http://127.0.0.1:8080/v1": "{chat_url}",
    "http://127.0.0.1:8000/v1": "{chat_url}",
    "http://127.0.0.1:1234/v1": "{chat_url}",
    "https://api.openai.com/v1": "{chat_url}",
    "https://openrouter.ai/api/v1": "{chat_url}",
    "MINDSPACE_LLM_PROVIDER=anthropic": (
        "MINDSPACE_LLM_PROVIDER=anthropic MINDSPACE_LLM_BASE_URL={messages_url}"
    ),
    "postgresql+psycopg://mindspace:SECRET@db.internal:5432/mindspace": "{pg_url}",
    "postgresql+psycopg://mindspace@db/mindspace": "{pg_url}",
    "postgresql+psycopg://...": "{pg_url}",
    "http://127.0.0.1:8765": "{kept_url}",
}
"""Text replaced wherever it appears: the docs' example endpoints become the check's own.

``chat_url``: a scripted chat-completions server (mindspace.testing) that answers like a
coherent model; ``messages_url``: the same for Anthropic's Messages API (the docs leave
the base URL at Anthropic's); ``pg_url``: a fresh database on a local PostgreSQL server,
one per page; ``kept_url``: the page's server that stays up (:data:`SERVERS`).
"""

CAPTURES: dict[str, str] = {
    "evt_3f2a...": r'"event_id":\s*"(evt_[^"]+)"',
}
"""Abbreviated ids: replaced by the last match of the pattern in the page's output so far."""

STDIN: dict[str, str] = {
    "mindspace chat --as Alice": "Hello, I'm Alice. I like dark ale.\n",
    "mindspace chat --as Dave": "Hello! My name is Dave and I prefer red wine.\n",
    "mindspace chat": "Hello, I'm Alice. I like dark ale.\n",
}
"""What is typed into a command that reads the terminal (the rest read nothing: EOF)."""

EXIT_STATUS: dict[str, int] = {}
"""Commands whose documented exit status is not 0."""

SETUP: dict[str, tuple[str, ...]] = {
    # What `make run` leaves: the demo in .mindspace/ (README.md's next commands read it).
    "README.md": ("MINDSPACE_DATA_DIR=.mindspace mindspace demo",),
    "docs/export.md": ("mindspace demo --db mindspace.db",),
    "docs/scale-out.md": ("mindspace demo --db mindspace.db",),
}
"""What a page assumes exists: an assistant ``barkeep`` in ``mindspace.db`` (the demo's)."""

FRESH_SHELL_PAGES: frozenset[str] = frozenset({"docs/llm-providers.md"})
"""Pages whose sections are alternatives (one recipe per provider): a new shell at each
heading, so that one recipe's exports do not leak into the next."""


@dataclass(frozen=True)
class Server:
    """A long-running command: how to know it is up.

    ``http``: ``GET /v1/health`` answers ``{"status": "ok"}`` (its ``--port`` becomes a
    free one); ``ready``: it printed :attr:`ready`. ``keep``: it stays up until the
    page ends (``kept_url`` points at it); else it is stopped with Ctrl+C at once and must
    exit 0 (or 130) without a traceback.
    """

    kind: Literal["http", "ready"]
    ready: str = ""
    keep: bool = False


_READY = Server("ready", ready="press Ctrl+C to stop")

SERVERS: dict[str, Server] = {
    "mindspace demo --serve": Server("http"),
    "mindspace serve --port 8765": Server("http"),
    "mindspace worker --db postgresql+psycopg://...": _READY,
    "mindspace serve": Server("http"),
    # Kept for http.md's curl examples; on its own database, because a server ticks the
    # assistants of its database and the page's `mindspace demo --serve` writes the default
    # one (two writers on one assistant: the demo stops at the conflict, as it should).
    "mindspace serve --db tavern.db --port 9000": Server("http", keep=True),
    'MINDSPACE_API_TOKEN=$(python -c "import secrets; print(secrets.token_urlsafe(32))") '
    "mindspace serve --host 0.0.0.0": Server("http"),
    "MINDSPACE_OTEL=1 MINDSPACE_API_TOKEN=change-me-0123456789 "
    "mindspace serve --host 0.0.0.0 --port 8765": Server("http"),
    'mindspace serve --db "$MINDSPACE_DATABASE_URL" --ticks queue --host 0.0.0.0': Server("http"),
    'mindspace worker --db "$MINDSPACE_DATABASE_URL" --concurrency 16': _READY,
    'curl -N -H "$AUTH" $API/assistants/innkeeper/stream': Server("ready", ready="event: hello"),
}
"""Long-running commands (servers, a stream): started, probed once and stopped."""


def markdown_table() -> str:
    """docs/doc-commands.md: which commands cannot run in the check, and what it changes."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [
        "# Commands in the docs, checked",
        "",
        "Every shell command in README.md and docs/ runs as written in `make test`",
        "(`tests/test_doc_commands.py`, by `scripts/docs_commands.py`): on a fresh SQLite",
        "database per page, with this checkout's `mindspace` on PATH. A command runs when it",
        "exits 0 and prints no traceback. Commands are the lines of ```` ```sh ```` blocks",
        "and lines starting `$ `; the script's docstring has the full rule. This page is",
        "generated:",
        "`PYTHONPATH=src python scripts/docs_commands.py --table > docs/doc-commands.md`.",
        "",
        "## Commands that cannot run there",
        "",
        "| command | why |",
        "|---|---|",
    ]
    grouped: dict[str, list[str]] = {}
    for text, why in SKIP.items():
        grouped.setdefault(why, []).append(text)
    lines += [
        f"| {'<br>'.join(f'`{cell(t)}`' for t in texts)} | {cell(why)} |"
        for why, texts in grouped.items()
    ]
    lines += [
        "",
        "## What the check changes",
        "",
        "- `MINDSPACE_EMBEDDER=hashing`: MiniLM takes seconds to load in each process.",
        "- Long-running commands are started, probed once and stopped with Ctrl+C; their",
        "  `--port` becomes a free one:",
        "",
    ]
    lines += [
        f"  - `{cell(text)}`: "
        + ("`GET /v1/health`" if server.kind == "http" else f"waits for `{cell(server.ready)}`")
        + (", kept up until the page ends" if server.keep else "")
        for text, server in SERVERS.items()
    ]
    lines += ["", "- Text replaced wherever it appears:", ""]
    lines += [f"  - `{cell(text)}` -> `{cell(value)}`" for text, value in PLACEHOLDERS.items()]
    lines += [
        "",
        "  (`chat_url` and `messages_url`: scripted model servers in the check's process;",
        "  `pg_url`: a fresh database on a local PostgreSQL server; `kept_url`: the page's",
        "  server that stays up.)",
        "",
        "- Ids the docs abbreviate are the ones the page printed: "
        + ", ".join(f"`{cell(k)}`" for k in CAPTURES)
        + ".",
        "- Typed into commands that read the terminal: "
        + ", ".join(f"`{cell(k)}` gets `{cell(v.strip())}`" for k, v in STDIN.items())
        + ".",
        "- What a page assumes exists, made first: "
        + "; ".join(f"{page}: `{'`, `'.join(cmds)}`" for page, cmds in SETUP.items())
        + ".",
        "- "
        + ", ".join(sorted(FRESH_SHELL_PAGES))
        + ": a new shell at each heading (its sections are alternatives).",
        "",
    ]
    return "\n".join(lines)
