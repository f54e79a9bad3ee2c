"""Issue 11 acceptance: a model that never calls a tool still leaves memories behind.

A 10-turn ``mindspace chat --as Alice`` against a chat-completions server that answers
only in plain text, through the real ``openai`` client over HTTP, in real processes:
Alice's words are observations on her profile at once, and after ``mindspace sleep
--run`` (whose fact-mining request gets a scripted extractor reply) they are memories
that ``recall_memories`` finds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mindspace.memory.prompts import ASSISTANT_FACT_EXTRACTION_PROMPT
from mindspace.testing import ChatCompletionsServer

TURNS = [
    "Good evening! Busy night?",
    "I traded my old sword for a sturdy shield at the market.",
    "I'm allergic to oak, so keep me away from the oak benches.",
    "How is the stew tonight?",
    "My budget for the week is 40 gold.",
    "My best friend is called Tomas Reed.",
    "Do you have music on Fridays?",
    "My favourite drink is dark cherry ale.",
    "The weather has been awful lately.",
    "Good night, see you tomorrow.",
]

FACTS = [
    ("Alice traded her old sword for a sturdy shield at the market", 5),
    ("Alice is allergic to oak", 8),
    ("Alice's budget for the week is 40 gold", 6),
    ("Alice's best friend is Tomas Reed", 6),
    ("Alice's favourite drink is dark cherry ale", 5),
]

SAID = dict(zip((f for f, _ in FACTS), (TURNS[i] for i in (1, 2, 4, 5, 7)), strict=True))
"""Each fact and the turn it was said in."""

QUESTIONS = {
    "What did Alice trade her sword for?": FACTS[0][0],
    "Which wood is Alice allergic to?": FACTS[1][0],
    "How much gold can Alice spend this week?": FACTS[2][0],
    "Who is Alice's best friend?": FACTS[3][0],
    "What does Alice like to drink?": FACTS[4][0],
}


def _env(tmp_path: Path, server: ChatCompletionsServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update(
        {
            "MINDSPACE_DATA_DIR": str(tmp_path),
            "MINDSPACE_LLM_BASE_URL": server.url,
            "MINDSPACE_LLM_MODEL": "plain-text",
            "MINDSPACE_LLM_API_KEY": "test-key",
            "COLUMNS": "200",
            "PYTHONIOENCODING": "utf-8",
        }
    )
    return env


def _mindspace(
    env: dict[str, str], db: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mindspace.hosts.cli.app",
            *args,
            "--db",
            str(db),
            "--assistant",
            "barkeep",
        ],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        env=env,
        check=False,
    )


def _json(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_a_plain_text_model_still_remembers_what_alice_said(tmp_path: Path) -> None:
    db = tmp_path / "tavern.db"
    with ChatCompletionsServer() as server:
        for n in range(len(TURNS)):
            server.reply(f"Of course, Alice. (reply {n + 1})")
        # The night: one fact-mining request for Alice's thread, then the entity
        # consolidation of her observations (no journal entries, so nothing to score).
        server.reply(
            json.dumps([{"fact": f, "entity": "Alice", "importance": i} for f, i in FACTS])
        )
        server.reply(json.dumps({"allergy": "oak", "favourite_drink": "dark cherry ale"}))
        env = _env(tmp_path, server)

        chat = _mindspace(env, db, "chat", "--as", "Alice", stdin="\n".join(TURNS) + "\n/quit\n")
        assert chat.returncode == 0, chat.stderr
        assert "barkeep says to Alice: Of course, Alice. (reply 10)" in chat.stdout
        chat_requests = server.requests[: len(TURNS)]
        assert all(r.get("tools") for r in chat_requests)  # tools were offered, never used

        # At once, before any night: Alice's words are on her profile.
        profile = _json(_mindspace(env, db, "entities", "show", "Alice", "--json"))
        observed = [(o["text"], o["verbatim"]) for o in profile["observations"]]
        assert observed == [(f'Alice said: "{turn}"', True) for turn in TURNS]
        assert profile["relationship"]["interaction_count"] == len(TURNS)
        # ... and in memory, word for word (issue 34: formation, before any model call).
        before = _json(_mindspace(env, db, "tool", "recall_memories", "--args", '{"query": "oak"}'))
        assert before["memories"][0]["content"] == TURNS[2]
        assert before["memories"][0]["metadata"]["source"] == "message"
        assert before["memories"][0]["metadata"]["source_entity"] == "Alice"

        night = _mindspace(env, db, "sleep", "--run")
        assert night.returncode == 0, night.stdout + night.stderr
        assert "The night is done" in night.stdout
        assert "Conversations mined" in night.stdout
        # Every mined fact is in Alice's own words, which formation keeps verbatim: each
        # becomes one more source of her message, none a second memory of it.
        mined = "10 messages mined in 1 request: 0 facts stored as memories"
        assert f"{mined}, {len(FACTS)} already known" in night.stdout
        mining = server.requests[len(TURNS)]["messages"]
        assert mining[0]["content"].startswith("Extract facts from this conversation with Alice.")
        assert ASSISTANT_FACT_EXTRACTION_PROMPT in mining[0]["content"]
        assert all(f"Alice: {turn}" in mining[0]["content"] for turn in TURNS)
        assert server.pending == 0

    for question, fact in QUESTIONS.items():
        found = _json(
            _mindspace(
                env, db, "tool", "recall_memories", "--args", json.dumps({"query": question})
            )
        )
        # The words the fact came from lead, with the mined write-up among their sources.
        best = found["memories"][0]
        assert best["content"] == SAID[fact], (question, found["memories"])
        assert fact in [s.get("text") for s in best["metadata"]["sources"]]
        assert best["metadata"]["source_entity"] == "Alice"
        assert best["metadata"]["source"] in ("conversation", "message")
        assert best["metadata"]["source_trust"] == 0.9

    profile = _json(_mindspace(env, db, "entities", "show", "Alice", "--json"))
    assert profile["attributes"] == {"allergy": "oak", "favourite_drink": "dark cherry ale"}
    assert all(o["consolidated"] for o in profile["observations"])
