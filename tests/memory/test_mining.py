"""The night mines the day's conversations for facts (memory without tool use)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections import Counter, deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from mindspace import Assistant, FunctionLLM, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.modes import OperatingMode
from mindspace.errors import LLMConnectionError
from mindspace.llm.port import LLMResponse, Message, ToolSchema
from mindspace.memory.mining import MINED_TAG, MiningState
from mindspace.memory.prompts import ASSISTANT_FACT_EXTRACTION_PROMPT
from mindspace.memory.records import Memory
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on
from mindspace.testing.inspect import stored_records

EXTRACT = "Extract facts from this conversation with "


class PlainTextModel:
    """A model that never calls a tool: chat turns get text; mining gets scripted answers.

    ``answers`` are played to the mining requests (and their repairs) in order; a string
    "raise" makes that request fail as an unreachable endpoint would.
    """

    def __init__(self, *answers: str) -> None:
        self.answers: deque[str] = deque(answers)
        self.mining: list[list[Message]] = []

    def add(self, *answers: str) -> None:
        self.answers.extend(answers)

    def __call__(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        first = messages[0].content or ""
        if first.startswith(EXTRACT):
            self.mining.append(list(messages))
            answer = self.answers.popleft()
            if answer == "raise":
                raise LLMConnectionError("the endpoint is unreachable")
            return answer
        if tools:
            return "Noted."
        return "{}"  # entity consolidation and anything else of the night

    @property
    def prompts(self) -> list[str]:
        return [m[0].content or "" for m in self.mining if len(m) == 1]


def _facts(*facts: tuple[str, str | None, int]) -> str:
    return json.dumps([{"fact": f, "entity": e, "importance": i} for f, e, i in facts])


async def _chat(assistant: Assistant, who: str, *lines: str) -> None:
    for line in lines:
        assistant.enqueue_event(line, source_entity=who)
        result = await assistant.tick()
        assert result.status == "done", result.error
        assert result.tool_calls == []


async def _night(assistant: Assistant, max_ticks: int = 30) -> list[dict[str, Any]]:
    """Sleep and tick until the night is done; the mining results of every tick."""
    if assistant.views.mode().mode != "sleep":
        await assistant.sleep("closing time")
    mined = []
    for _ in range(max_ticks):
        result = await assistant.tick()
        assert result.sleep is not None
        ops = result.sleep.operations
        if "mine_conversations" in ops:
            mined.append(ops["mine_conversations"])
        if ops.get("run_dreaming_tick", {}).get("remaining", 1) == 0:
            return mined
    raise AssertionError("the night did not finish")


def _mined(assistant: Assistant) -> list[Memory]:
    """Every mined fact, as a memory of its own or as a source of the speaker's quote.

    A fact mined from words formation already keeps verbatim is one more source of
    that memory (memory/reconcile.py); it is shown here as the memory with the mined
    text, so a test reads what mining found wherever reconciling put it.
    """
    facts = []
    for m in stored_records(assistant, Memory):
        if MINED_TAG in m.tags:
            facts.append(m)
        facts += [
            m.model_copy(update={"content": s.text})
            for s in m.sources[1:]
            if s.source == "conversation" and s.text
        ]
    return facts


async def test_a_plain_text_chat_becomes_memories_after_one_night(
    make_assistant: Callable[..., Assistant],
) -> None:
    model = PlainTextModel(
        _facts(
            ("Alice is allergic to oak", "Alice", 7),
            ("Alice's budget is 50 gold", "Alice", 6),
            ("The bridge to the north is out", None, 4),
        )
    )
    assistant = make_assistant(llm=FunctionLLM(model), embedder=HashingEmbedder(256))
    await _chat(
        assistant, "Alice", "I'm allergic to oak.", "My budget is 50 gold.", "The north bridge?"
    )
    assert _mined(assistant) == []

    mined = await _night(assistant)

    assert len(model.prompts) == 1
    prompt = model.prompts[0]
    assert prompt.startswith(EXTRACT + "Alice.")
    assert ASSISTANT_FACT_EXTRACTION_PROMPT in prompt
    assert "Alice: I'm allergic to oak.\nyou: Noted.\nAlice: My budget is 50 gold." in prompt
    assert mined[0]["messages"] == 3
    assert mined[0]["facts_stored"] == 1  # the bridge; the other two restate Alice's words
    assert [d.split(" (= ")[0] for d in mined[0]["duplicates"]] == [
        "Alice is allergic to oak",
        "Alice's budget is 50 gold",
    ]
    memories = {m.content: m for m in _mined(assistant)}
    assert set(memories) == {
        "Alice is allergic to oak",
        "Alice's budget is 50 gold",
        "The bridge to the north is out",
    }
    # What Alice said in so many words is one memory: her quote, with the mined
    # write-up as its second source (issue 34: one fact said once is one memory).
    oak = memories["Alice is allergic to oak"]
    assert MINED_TAG not in oak.tags
    assert [(s.source, s.verbatim) for s in oak.sources] == [
        ("message", True),
        ("conversation", False),
    ]
    assert (oak.source_entity, oak.source_trust) == ("Alice", 0.9)
    assert oak.importance >= 7  # the restatement keeps the surer importance
    bridge = memories["The bridge to the north is out"]  # asked, never stated: its own memory
    assert MINED_TAG in bridge.tags
    assert (bridge.source, bridge.importance_method) == ("conversation", "llm")
    assert bridge.source_trust == 0.6  # hearsay

    found = await assistant.call_tool("recall_memories", {"query": "is Alice allergic to oak?"})
    assert found["memories"][0]["content"] == "I'm allergic to oak."
    assert [m["content"] for m in found["memories"]].count("I'm allergic to oak.") == 1


async def test_facts_about_the_assistant_are_refused(
    make_assistant: Callable[..., Assistant],
) -> None:
    model = PlainTextModel(
        _facts(
            ("I helped Alice find a room", "Alice", 5),
            ("The assistant poured Alice an ale", "Alice", 5),
            ("Barkeep served Alice a stew", "Alice", 5),
            ("Alice's sword is broken", "Alice", 6),
        )
    )
    assistant = make_assistant(
        llm=FunctionLLM(model), embedder=HashingEmbedder(256), self_names=("Barkeep",)
    )
    await _chat(assistant, "Alice", "My sword is broken, thanks for the stew.")
    mined = await _night(assistant)
    assert [m.content for m in _mined(assistant)] == ["Alice's sword is broken"]
    assert mined[0]["rejected"] == [
        "I helped Alice find a room",
        "The assistant poured Alice an ale",
        "Barkeep served Alice a stew",
    ]


async def test_each_message_is_mined_once_across_nights_and_restarts(
    make_assistant: Callable[..., Assistant], store: SqlStore, clock: ManualClock
) -> None:
    model = PlainTextModel(_facts(("Alice keeps 3 goats", "Alice", 4)))
    assistant = make_assistant(llm=FunctionLLM(model), embedder=HashingEmbedder(256))
    await _chat(assistant, "Alice", "I keep 3 goats.")
    await _chat(assistant, "Bob", "Hello.")
    model.add("[]")  # Bob's thread
    await _night(assistant)
    assert len(model.prompts) == 2
    await assistant.wake("morning")

    # A new process: the watermark is in the database, not in memory.
    model.add(_facts(("Alice keeps 5 hens", "Alice", 4)))
    again = assistant_on(
        store, "barkeep", llm=FunctionLLM(model), clock=clock, embedder=HashingEmbedder(256)
    )
    await _chat(again, "Alice", "I keep 5 hens too.")
    await _night(again)
    assert len(model.prompts) == 3
    assert "goats" not in model.prompts[2]
    assert "Alice: I keep 5 hens too." in model.prompts[2]
    assert sorted(m.content for m in _mined(again)) == ["Alice keeps 3 goats", "Alice keeps 5 hens"]

    await again.wake("morning")
    await _night(again)  # nothing new was said: no request at all
    assert len(model.prompts) == 3
    # Both facts were said in so many words: sources of the quotes, no new memory.
    assert again._core.read().doc(MiningState).facts_stored == 0


async def test_batches_and_requests_per_tick_are_bounded(
    make_assistant: Callable[..., Assistant], tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, mining_messages_per_call=2, mining_calls_per_tick=1)
    model = PlainTextModel("[]", "[]", "[]")
    assistant = make_assistant(
        llm=FunctionLLM(model), embedder=HashingEmbedder(256), settings=settings
    )
    lines = [f"Line {n} of the story goes here." for n in range(5)]
    await _chat(assistant, "Alice", *lines)
    await assistant.sleep("closing time")

    first = await assistant.tick()
    assert first.sleep is not None
    assert first.sleep.operations["mine_conversations"]["remaining"] == 3
    assert assistant._core.read().doc(OperatingMode).sleep_phase == "compacting"  # not done yet
    mined = [first.sleep.operations["mine_conversations"], *await _night(assistant)]

    assert [m["requests"] for m in mined if m["requests"]] == [1, 1, 1]
    spoken = [[ln for ln in p.splitlines() if ln.startswith("Alice: ")] for p in model.prompts]
    assert [len(s) for s in spoken] == [2, 2, 1]
    assert Counter(line for s in spoken for line in s) == Counter(f"Alice: {ln}" for ln in lines)


async def test_zero_requests_per_tick_turns_mining_off(
    make_assistant: Callable[..., Assistant], tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, mining_calls_per_tick=0)
    model = PlainTextModel()
    assistant = make_assistant(
        llm=FunctionLLM(model), embedder=HashingEmbedder(256), settings=settings
    )
    await _chat(assistant, "Alice", "I'm allergic to oak.")
    mined = await _night(assistant)  # the night ends without asking
    assert model.mining == []
    assert mined[0]["requests"] == 0
    assert _mined(assistant) == []


async def test_an_unusable_answer_gets_one_repair(
    make_assistant: Callable[..., Assistant],
) -> None:
    model = PlainTextModel(
        "Sure! Alice is allergic to oak.",
        '```json\n[{"fact": "Alice is allergic to oak", "entity": "Alice", "importance": 7}]\n```',
    )
    assistant = make_assistant(llm=FunctionLLM(model), embedder=HashingEmbedder(256))
    await _chat(assistant, "Alice", "I'm allergic to oak.")
    mined = await _night(assistant)
    assert mined[0]["requests"] == 2
    repair = model.mining[1]
    assert [m.role for m in repair] == ["user", "assistant", "user"]
    assert "holds no JSON value" in (repair[2].content or "")
    assert [m.content for m in _mined(assistant)] == ["Alice is allergic to oak"]


@pytest.mark.parametrize(
    "bad",
    [
        '[{"fact": "Alice is allergic to oak", "entity": "Alice", "importance": 11}]',
        '[{"entity": "Alice", "importance": 5}]',
        '{"fact": "Alice is allergic to oak"}',
        "I cannot help with that.",
    ],
)
async def test_an_answer_still_unusable_after_the_repair_is_passed_over_and_labelled(
    make_assistant: Callable[..., Assistant], bad: str
) -> None:
    model = PlainTextModel(bad, bad)
    assistant = make_assistant(llm=FunctionLLM(model), embedder=HashingEmbedder(256))
    await _chat(assistant, "Alice", "I'm allergic to oak.", "Truly.")
    mined = await _night(assistant)  # the night still ends
    assert mined[0]["skipped_messages"] == 2
    assert mined[0]["problems"][0].startswith("Alice: unusable after one repair: ")
    assert _mined(assistant) == []
    await assistant.wake("morning")
    await _night(assistant)
    assert len(model.mining) == 2  # not asked again: a second try would fail the same way


async def test_an_unreachable_model_leaves_the_messages_for_the_next_night(
    make_assistant: Callable[..., Assistant],
) -> None:
    model = PlainTextModel("raise")
    assistant = make_assistant(llm=FunctionLLM(model), embedder=HashingEmbedder(256))
    await _chat(assistant, "Alice", "I'm allergic to oak.")
    mined = await _night(assistant)
    assert "LLMConnectionError" in mined[0]["error"]
    assert mined[0]["completed"] is True  # the night is not held up by a failing endpoint
    assert _mined(assistant) == []
    assert assistant._core.read().doc(MiningState).mined_through == {}

    await assistant.wake("morning")
    model.add(_facts(("Alice is allergic to oak", "Alice", 7)))
    await _night(assistant)
    assert [m.content for m in _mined(assistant)] == ["Alice is allergic to oak"]


async def test_a_fact_already_remembered_is_not_stored_again(
    make_assistant: Callable[..., Assistant], tmp_path: Path
) -> None:
    # The hashing embedder scores paraphrases lower than MiniLM: a lower threshold makes
    # every candidate "similar enough", so the numbers and negation rules decide.
    settings = Settings(data_dir=tmp_path, memory_restate_threshold=0.5)
    model = PlainTextModel(
        _facts(
            ("Alice is allergic to oak.", "Alice", 7),
            ("Alice's budget is 80 gold", "Alice", 6),
            ("Alice does not like mead", "Alice", 4),
        )
    )
    assistant = make_assistant(
        llm=FunctionLLM(model), embedder=HashingEmbedder(256), settings=settings
    )
    for content in ("Alice is allergic to oak", "Alice's budget is 50 gold", "Alice likes mead"):
        stored = await assistant.call_tool(
            "store_memory", {"content": content, "source_entity": "Alice"}
        )
        assert stored["success"] is True
    await _chat(
        assistant, "Alice", "I'm allergic to oak. My budget is 80 gold now. I do not like mead."
    )
    mined = await _night(assistant)
    # The first restates the stored memory; the other two restate Alice's own words
    # (kept verbatim by formation), not the older values they differ from.
    assert len(mined[0]["duplicates"]) == 3
    assert mined[0]["duplicates"][0].startswith("Alice is allergic to oak.")
    quote = {d.split(" (= ")[1] for d in mined[0]["duplicates"][1:]}
    (said,) = [m for m in stored_records(assistant, Memory) if m.content.startswith("I'm allergic")]
    assert quote == {f"{said.id})"}
    # Other numbers or the opposite claim are news, however similar the words.
    assert sorted(m.content for m in _mined(assistant)) == [
        "Alice does not like mead",
        "Alice's budget is 80 gold",
    ]


async def test_the_offline_model_mines_a_chat_into_third_person_facts(
    make_assistant: Callable[..., Assistant],
) -> None:
    assistant = make_assistant(llm=OfflineLLM(announce=False), embedder=HashingEmbedder(256))
    await _chat_any(
        assistant,
        "Alice",
        "I'm allergic to oak.",
        "I traded my sword for a shield.",
        "Could you pour me an ale?",
    )
    await _night(assistant)
    mined = {m.content: m for m in _mined(assistant)}
    assert set(mined) == {"Alice is allergic to oak", "Alice traded their sword for a shield"}
    assert mined["Alice is allergic to oak"].source_entity == "Alice"


async def _chat_any(assistant: Assistant, who: str, *lines: str) -> None:
    # The offline model may call tools in a chat turn; only the turn's success matters.
    for line in lines:
        assistant.enqueue_event(line, source_entity=who)
        assert (await assistant.tick()).status == "done"


def test_the_offline_extractor_answers_only_with_the_speakers_own_statements() -> None:
    from mindspace.offline.memory import fact_mining_skill

    prompt = (
        EXTRACT
        + "Alice.\nAlice: My budget is 50 gold. Thanks, you are kind!\nyou: I am glad.\n"
        + "Alice: My friend Tom runs the mill. Where is it?\n"
        + "Alice: Remember that the mill closes at dusk.\n"
    )
    answer = fact_mining_skill([Message("user", prompt)], [])
    assert answer is not None
    assert json.loads(answer) == [
        {"fact": "Alice's budget is 50 gold", "entity": "Alice", "importance": 7},
        {"fact": "Alice's friend Tom runs the mill", "entity": "Alice", "importance": 7},
        {"fact": "The mill closes at dusk", "entity": None, "importance": 5},
    ]


WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from mindspace import ManualClock, Settings
    from mindspace.testing.assistants import assistant_on
    from mindspace.embeddings import HashingEmbedder
    from mindspace.offline import OfflineLLM
    from mindspace.storage import SqlStore

    async def main() -> None:
        settings = Settings(
            data_dir=sys.argv[2], mining_messages_per_call=1, mining_calls_per_tick=1
        )
        assistant = assistant_on(
            SqlStore.from_path(sys.argv[1]), "miner", settings=settings,
            llm=OfflineLLM(announce=False), embedder=HashingEmbedder(256),
            clock=ManualClock(),  # the test's time: the night ends hours after it began
        )
        n = 0
        while True:
            result = await assistant.tick()
            n += 1
            print("tick", n, result.sleep.phase, flush=True)
            ops = result.sleep.operations
            if "run_dreaming_tick" in ops and ops["run_dreaming_tick"]["remaining"] == 0:
                return

    asyncio.run(main())
    """
)


async def test_a_night_killed_while_mining_mines_each_message_once(
    make_assistant: Callable[..., Assistant], db_path: Path, tmp_path: Path
) -> None:
    def chat(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        return LLMResponse(text="Noted.")

    assistant = make_assistant("miner", llm=FunctionLLM(chat))
    for n in range(30):
        await _chat(assistant, ("Alice", "Bob", "Carol")[n % 3], f"I keep {n} goats in my barn.")
    await assistant.sleep("closing time")

    first = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(db_path), str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert first.stdout is not None
    for line in first.stdout:
        if line.startswith("tick 12 "):
            assert line.split()[2] == "compacting"
            break
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=30)

    second = subprocess.run(
        [sys.executable, "-c", WORKER, str(db_path), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert second.returncode == 0, second.stderr
    assert "compacting" in second.stdout  # it resumed mid-mining

    again = make_assistant("miner", embedder=HashingEmbedder(256))
    mined = Counter(m.content for m in _mined(again))
    who = ("Alice", "Bob", "Carol")
    assert mined == Counter(f"{who[n % 3]} keeps {n} goats in their barn" for n in range(30))
