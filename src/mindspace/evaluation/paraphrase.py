"""Paraphrase recall: do the facts people told the assistant reach the prompt when asked?

The labelled set (``paraphrases.json`` beside this module, written for mindspace) holds
facts players tell an NPC - allergies, trades, budgets, friends, drinks, quests, debts,
fears, family - each with the question its teller asks later in other words ("do you
remember I'm allergic to oak?" for "Alice is allergic to oak"), split into a calibration
and a held-out part; plus filler memories that answer none of the questions and a few
off-topic messages.

Everything goes through the product: one assistant stores every fact and filler with
the ``store_memory`` tool (third-person facts as a mining step writes them, and some as
the player said them, with the player as ``source_entity``), so each question's
unrelated memories are all the other facts and the filler. Each question then arrives
as a message event from its teller and the assistant ticks; the figures are read from
the ``semantic_memories`` component of the prompt that tick assembled. The model is a
stand-in that only replies, so nothing is stored while asking.

Per split:

- ``reach_rate``: the share of questions whose labelled fact is in the component.
- ``unrelated_share``: for each question, the memories in the component other than its
  labelled fact divided by all memories in the component (0 for an empty component),
  averaged over the split's questions. ``unrelated_pooled`` is the same ratio over all
  memories shown in the split.
- ``shared_terms_per_question``: how many search terms (stemmed, stopwords dropped) a
  question shares with its fact, on average: how much of a paraphrase it is.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mindspace.clock import ManualClock
from mindspace.config import Settings
from mindspace.embeddings.port import Embedder
from mindspace.engine import Assistant
from mindspace.errors import ConfigError
from mindspace.llm.scripted import FunctionLLM
from mindspace.memory.lexical import tokenize
from mindspace.runtime import Runtime

__all__ = [
    "DATA_PATH",
    "Fact",
    "ParaphraseSet",
    "SplitName",
    "load_paraphrase_set",
    "run_paraphrase_recall",
]

DATA_PATH = Path(__file__).with_name("paraphrases.json")
SplitName = Literal["calibration", "heldout"]
SPLITS: tuple[SplitName, ...] = ("calibration", "heldout")
COMPONENT = "semantic_memories"


@dataclass(frozen=True)
class Fact:
    """One labelled fact and the paraphrased question that should bring it back."""

    id: str
    fact: str
    question: str
    asker: str
    split: SplitName
    source_entity: str | None = None


@dataclass(frozen=True)
class ParaphraseSet:
    """The labelled facts, the filler memories and the off-topic messages."""

    facts: tuple[Fact, ...]
    filler: tuple[str, ...]
    offtopic: tuple[tuple[str, str], ...]

    def split(self, name: SplitName) -> list[Fact]:
        """The facts of one split."""
        return [f for f in self.facts if f.split == name]


def load_paraphrase_set(path: Path = DATA_PATH) -> ParaphraseSet:
    """Read and check the labelled set.

    Raises:
        ConfigError: the file is missing or malformed (the message says where).
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        facts = tuple(
            Fact(
                id=str(item["id"]),
                fact=str(item["fact"]),
                question=str(item["question"]),
                asker=str(item["asker"]),
                split=_split(item["split"]),
                source_entity=item.get("source_entity"),
            )
            for item in raw["facts"]
        )
        filler = tuple(str(text) for text in raw["filler"])
        offtopic = tuple((str(o["asker"]), str(o["message"])) for o in raw["offtopic"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"Cannot read the paraphrase set {str(path)!r}: {exc!r}. "
            "Restore the file from the repository."
        ) from exc
    contents = [f.fact for f in facts] + list(filler)
    if len(set(contents)) != len(contents) or len({f.id for f in facts}) != len(facts):
        raise ConfigError(f"The paraphrase set {str(path)!r} repeats a fact, filler or id.")
    return ParaphraseSet(facts, filler, offtopic)


def _split(value: object) -> SplitName:
    for name in SPLITS:
        if value == name:
            return name
    raise ValueError(f"unknown split {value!r}; use one of {SPLITS!r}")


async def _store(assistant: Assistant, content: str, entity: str | None) -> str:
    args: dict[str, Any] = {"content": content}
    if entity:
        args["source_entity"] = entity
    result = await assistant.call_tool("store_memory", args)
    if not result.get("success"):
        raise ConfigError(f"Storing {content!r} failed: {result.get('error')!r}")
    return str(result["content"])


async def _component(assistant: Assistant, asker: str, message: str) -> list[str]:
    """The lines of the semantic-memory component of the prompt for this message."""
    assistant.enqueue_event(message, source_entity=asker)
    result = await assistant.tick()
    if result.prompt is None:
        raise ConfigError(f"The tick for {message!r} assembled no prompt ({result.status!r}).")
    for component in result.prompt.components:
        if component.key == COMPONENT:
            return [line for line in component.content.splitlines() if line.startswith("- ")]
    return []


def _shown(lines: Sequence[str], known: Sequence[str]) -> list[str]:
    """Which stored contents the component's lines show (``- [date] content ...``)."""
    shown = []
    for line in lines:
        body = line.split("] ", 1)[-1]
        matches = [c for c in known if body.startswith(c)]
        # The longest match: a content may begin with another, shorter one.
        shown.append(max(matches, key=len) if matches else body)
    return shown


def _score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    shown = sum(r["shown"] for r in rows)
    unrelated = sum(r["unrelated"] for r in rows)
    reached = sum(1 for r in rows if r["reached"])
    shares = [r["unrelated"] / r["shown"] if r["shown"] else 0.0 for r in rows]
    return {
        "facts": n,
        "reached": reached,
        "reach_rate": round(reached / n, 4) if n else 0.0,
        "unrelated_share": round(sum(shares) / n, 4) if n else 0.0,
        "unrelated_pooled": round(unrelated / shown, 4) if shown else 0.0,
        "memories_per_question": round(shown / n, 2) if n else 0.0,
        "empty_components": sum(1 for r in rows if not r["shown"]),
        "shared_terms_per_question": round(sum(r["shared_terms"] for r in rows) / n, 2)
        if n
        else 0.0,
        "missed": [r["id"] for r in rows if not r["reached"]],
    }


async def run_paraphrase_recall(
    *,
    embedder: Embedder,
    splits: Sequence[SplitName] = SPLITS,
    settings: Settings | None = None,
    data: ParaphraseSet | None = None,
    details: bool = False,
) -> dict[str, Any]:
    """Store the set in a fresh assistant, ask every question of ``splits``, score.

    Returns a dict with one report per split (see the module docstring), the off-topic
    messages' average component size, the store size and the seconds taken; with
    ``details`` also each question's component.
    """
    started = time.perf_counter()
    labelled = data or load_paraphrase_set()
    config = settings or Settings()
    with tempfile.TemporaryDirectory(prefix="mindspace-paraphrase-") as tmp:
        # The harness is a host of the product: its assistant comes from the root.
        runtime = Runtime.from_settings(
            config,
            Path(tmp) / "paraphrase.db",
            llm=FunctionLLM(lambda messages, tools: "Noted."),
            clock=ManualClock(),
            embedder=embedder,
        )
        try:
            assistant = runtime.open("keeper")
            known = [await _store(assistant, f.fact, f.source_entity) for f in labelled.facts]
            known += [await _store(assistant, text, None) for text in labelled.filler]
            stored_s = time.perf_counter() - started
            report: dict[str, Any] = {}
            for name in splits:
                rows = []
                for fact in labelled.split(name):
                    shown = _shown(await _component(assistant, fact.asker, fact.question), known)
                    reached = fact.fact in shown
                    rows.append(
                        {
                            "id": fact.id,
                            "reached": reached,
                            "shown": len(shown),
                            "unrelated": len(shown) - int(reached),
                            "question": fact.question,
                            "shared_terms": len(
                                set(tokenize(fact.fact)) & set(tokenize(fact.question))
                            ),
                            "component": shown,
                        }
                    )
                report[name] = _score(rows)
                if details:
                    report[name]["questions"] = rows
            sizes = [
                len(await _component(assistant, asker, message))
                for asker, message in labelled.offtopic
            ]
        finally:
            runtime.close()
    report["offtopic"] = {
        "messages": len(sizes),
        "memories_per_message": round(sum(sizes) / len(sizes), 2) if sizes else 0.0,
    }
    report["memories_stored"] = len(known)
    report["settings"] = {
        "memory_relevance_threshold": config.memory_relevance_threshold,
        "memory_relevance_window": config.memory_relevance_window,
        "memory_speaker_query_weight": config.memory_speaker_query_weight,
        "memory_min_source_trust": config.memory_min_source_trust,
        "embedder": embedder.name,
    }
    report["seconds"] = {
        "store": round(stored_s, 1),
        "total": round(time.perf_counter() - started, 1),
    }
    return report
