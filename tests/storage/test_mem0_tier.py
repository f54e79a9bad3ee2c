"""The Mem0 tier offline: nothing leaves the machine, restarts reuse the vectors, settings.

The contract itself runs in ``tests/memory/test_semantic_port.py`` (the ``mem0`` cases).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mindspace
from mindspace.config import Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.errors import ConfigError
from mindspace.memory.prompts import ASSISTANT_FACT_EXTRACTION_PROMPT
from mindspace.memory.records import Memory
from mindspace.runtime import open_store
from mindspace.state.semantic import SearchRequest
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore
from mindspace.storage.mem0_semantic import Mem0SemanticIndex, mem0_semantic
from mindspace.storage.mem0_setup import NO_LLM_URL, open_mem0
from mindspace.testing.chat_server import ChatCompletionsServer

WHEN = "2025-12-06T10:00:00Z"

# Run in a fresh interpreter so that Mem0's import-time telemetry set-up is part of what
# is watched. Every connection and name lookup is recorded; a non-local one is refused
# (never attempted). The last attempt, to a documentation address, shows the watch works.
WATCHED_RUN = r"""
import json, socket, sys

seen = []
LOCAL = ("127.0.0.1", "::1", "localhost")
real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
real_getaddrinfo = socket.getaddrinfo


def is_local(family, address):
    if family == socket.AF_UNIX:
        return True
    host = str(address[0] if isinstance(address, tuple) else address)
    return host in LOCAL or host.startswith("127.")


def connect(self, address):
    seen.append(["connect", int(self.family), repr(address), is_local(self.family, address)])
    if not is_local(self.family, address):
        raise OSError("refused by the test: not loopback")
    return real_connect(self, address)


def connect_ex(self, address):
    seen.append(["connect", int(self.family), repr(address), is_local(self.family, address)])
    if not is_local(self.family, address):
        return 111
    return real_connect_ex(self, address)


def getaddrinfo(host, *args, **kwargs):
    local = is_local(socket.AF_INET, (host,))
    seen.append(["lookup", 0, repr(host), local])
    if not local:
        raise socket.gaierror("refused by the test: not loopback")
    return real_getaddrinfo(host, *args, **kwargs)


socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
socket.getaddrinfo = getaddrinfo

import numpy as np
from mindspace.config import Settings
from mindspace.memory.records import Memory
from mindspace.state.semantic import SearchRequest
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore
from mindspace.storage.mem0_semantic import mem0_semantic

store = SqlStore(sys.argv[1], semantic=mem0_semantic(Settings(mem0_path=sys.argv[2])))
info = store.open_assistant("keeper", create=True)
cache = StateCache(store, info.id, info.revision)
index = store.semantic_index(cache, "hand")
unit = cache.begin()
for n, text in enumerate(["Alice keeps bees", "Bob repairs clocks", "The cellar floods"]):
    vector = np.zeros(4, dtype=np.float32)
    vector[n] = 1.0
    unit.put(Memory(id=f"mem_{n}", content=text, created_at="2025-12-06T10:00:00Z",
                    occurred_at="2025-12-06T10:00:00Z", embedder="hand",
                    embedding=vector.tobytes()))
cache.commit(unit)
hits = index.search(SearchRequest("bees", np.eye(4, dtype=np.float32)[0]), limit=3)
near = index.nearest(np.eye(4, dtype=np.float32)[:1], k=2, threshold=0.5, exclude=["mem_0"])
unit = cache.begin()
unit.delete(Memory, "mem_1")
cache.commit(unit)
count = index.count()

import mem0.memory.main as main
import mem0.memory.telemetry as telemetry

telemetry._shutdown_oss_telemetry()  # flushes whatever PostHog queued, were it on
telemetry.client_telemetry.close()
attempted = len(seen)
try:
    socket.create_connection(("192.0.2.1", 9), timeout=0.1)
except OSError:
    pass
print(json.dumps({
    "hits": [h.key for h in hits], "near": [n.key for n in near[0]], "count": count,
    "seen": seen, "attempted": attempted,
    "flags": [telemetry.MEM0_TELEMETRY, main.MEM0_TELEMETRY],
}))
"""


def test_nothing_leaves_the_machine_even_with_mem0_telemetry_asked_for(tmp_path: Path) -> None:
    src = str(Path(mindspace.__file__).resolve().parents[1])
    env = {
        **os.environ,
        "PYTHONPATH": src,
        "MEM0_TELEMETRY": "True",  # the user's environment asks for telemetry
        "MEM0_DIR": str(tmp_path / "mem0-home"),
    }
    url = f"sqlite:///{tmp_path / 'mindspace.db'}"
    done = subprocess.run(
        [sys.executable, "-c", WATCHED_RUN, url, str(tmp_path / "mem0")],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["hits"][0] == "mem_0"
    assert report["near"] == []  # the other memories are orthogonal
    assert report["count"] == 2
    assert report["flags"] == [False, False]
    during, sentinel = report["seen"][: report["attempted"]], report["seen"][report["attempted"] :]
    assert [entry for entry in during if not entry[3]] == []
    # The watch works: the deliberate attempt at a remote address was seen (and refused).
    assert sentinel
    assert not any(entry[3] for entry in sentinel)


def memory(key: str, content: str, axis: int) -> Memory:
    vector = np.zeros(4, dtype=np.float32)
    vector[axis] = 1.0
    return Memory(
        id=key,
        content=content,
        created_at=WHEN,
        occurred_at=WHEN,
        embedder="hand",
        embedding=vector.tobytes(),
    )


def test_a_restart_reuses_mem0s_vectors_and_catches_up_on_missed_writes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'mindspace.db'}"
    semantic = mem0_semantic(Settings(mem0_path=tmp_path / "mem0"))
    store = SqlStore(url, semantic=semantic)
    info = store.open_assistant("keeper", create=True)
    cache = StateCache(store, info.id, info.revision)
    first = store.semantic_index(cache, "hand")
    assert isinstance(first, Mem0SemanticIndex)
    unit = cache.begin()
    for n, text in enumerate(["Alice keeps bees", "Bob repairs clocks", "The cellar floods"]):
        unit.put(memory(f"mem_{n}", text, n))
    cache.commit(unit)
    assert first.count() == 3
    handle = first._mem0()
    ids = {payload["mindspace_id"]: mem0_id for mem0_id, payload in handle.listing(first.scope)}
    assert sorted(ids) == ["mem_0", "mem_1", "mem_2"]
    # The persona-safe extraction prompt is Mem0's custom instructions, and its LLM is
    # our endpoint (none configured: a closed loopback port), for anyone who infers.
    assert handle.memory.config.custom_instructions == ASSISTANT_FACT_EXTRACTION_PROMPT
    assert str(handle.memory.llm.client.base_url).rstrip("/") == NO_LLM_URL

    # Written while no Mem0 index listened (a plain store on the same database).
    plain = SqlStore(url)
    other = StateCache(plain, info.id, plain.open_assistant("keeper", create=False).revision)
    unit = other.begin()
    unit.delete(Memory, "mem_1")
    unit.put(memory("mem_3", "Dmitri collects maps", 3))
    other.commit(unit)
    plain.close()

    again = SqlStore(url, semantic=semantic)
    cache = StateCache(again, info.id, again.open_assistant("keeper", create=False).revision)
    second = again.semantic_index(cache, "hand")
    assert second.count() == 3
    kept = {payload["mindspace_id"]: mem0_id for mem0_id, payload in handle.listing(first.scope)}
    assert sorted(kept) == ["mem_0", "mem_2", "mem_3"]
    assert kept["mem_0"] == ids["mem_0"]  # unchanged memories were not written again
    assert [
        h.key for h in second.search(SearchRequest("maps", np.eye(4, dtype=np.float32)[3]), limit=3)
    ] == ["mem_3"]
    store.close()
    again.close()


def test_the_setting_selects_mem0_for_every_assistant(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'mindspace.db'}",
        semantic_backend="MEM0",
        mem0_path=tmp_path / "mem0",
        embedder="hashing",
    )
    store = open_store(settings)
    assert isinstance(store, SqlStore)
    info = store.open_assistant("keeper", create=True)
    cache = StateCache(store, info.id, info.revision)
    assert isinstance(store.semantic_index(cache, "hashing"), Mem0SemanticIndex)
    store.close()
    assert not isinstance(
        SqlStore(settings.resolved_database_url()).semantic_index(cache, None), Mem0SemanticIndex
    )


def test_a_mem0_path_in_use_by_another_process_is_refused_with_advice(tmp_path: Path) -> None:
    semantic = mem0_semantic(Settings(mem0_path=tmp_path / "mem0"))
    store = SqlStore(f"sqlite:///{tmp_path / 'mindspace.db'}", semantic=semantic)
    info = store.open_assistant("keeper", create=True)
    cache = StateCache(store, info.id, info.revision)
    index = store.semantic_index(cache, "hand")
    unit = cache.begin()
    unit.put(memory("mem_0", "Alice keeps bees", 0))
    cache.commit(unit)
    assert index.count() == 1  # this process now holds the directory
    other = (
        "import sys\n"
        "from pathlib import Path\n"
        "from mindspace.errors import StorageError\n"
        "from mindspace.storage.mem0_setup import _qdrant_client\n"
        "try:\n"
        "    _qdrant_client(Path(sys.argv[1]))\n"
        "except StorageError as exc:\n"
        "    print(exc)\n"
    )
    src = str(Path(mindspace.__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-c", other, str(tmp_path / "mem0")],
        env={**os.environ, "PYTHONPATH": src},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "MINDSPACE_MEM0_PATH" in done.stdout, done.stderr[-2000:]
    store.close()


def test_mem0s_own_inference_asks_our_endpoint_with_the_persona_safe_prompt(
    tmp_path: Path,
) -> None:
    # The index never infers; a user calling Mem0 directly with infer=True reaches our
    # endpoint (here the local scripted server), never OpenAI, with spec 003's prompt.
    embedder = HashingEmbedder(64)
    with ChatCompletionsServer() as server:
        server.reply(json.dumps({"memory": [{"id": "0", "text": "Alice keeps bees"}]}))
        handle = open_mem0(
            dim=embedder.dim,
            collection="inference",
            path=None,
            embedder=lambda: embedder,
            llm_base_url=server.url,
            llm_model="scripted",
            llm_api_key=None,
        )
        added = handle.memory.add("I keep bees, by the way.", agent_id="a1", infer=True)
        assert [r["memory"] for r in added["results"]] == ["Alice keeps bees"]
        [request] = server.requests
    assert request["model"] == "scripted"
    system, user = request["messages"]
    assert ASSISTANT_FACT_EXTRACTION_PROMPT.strip() not in system["content"]
    assert ASSISTANT_FACT_EXTRACTION_PROMPT.strip() in user["content"]


def test_without_the_extra_the_store_refuses_to_open_and_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "mem0" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'mindspace.db'}", semantic_backend="mem0"
    )
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[mem0\]'"):
        open_store(settings)
