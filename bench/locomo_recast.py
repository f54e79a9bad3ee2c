"""LoCoMo recast as a "User" talking to an "Assistant" that answers at length.

A development set of a different shape from LoCoMo's two friends chatting: one
speaker of each conversation becomes ``User``, the other becomes ``Assistant``, and
every assistant turn becomes a long answer (the original reply, often a restatement of
what the user just said, then several of the same speaker's replies from other
sessions as "more thoughts"). The evidence stays on the user's turns only: a question
survives when every evidence turn is the user's and it does not name the other
speaker; the user's name in it becomes "the user". So the assistant's long answers are
lexically and semantically close distractors, never the evidence, as in a real
assistant's history. Session dates are kept.

The output has LoCoMo's JSON shape, so ``mindspace bench locomo --data OUT`` reads it.
LoCoMo is CC BY-NC 4.0 (non-commercial, attribution: Maharana et al., ACL 2024), so the
output must stay outside this repository: write it where ``--out`` or the environment
variable ``MINDSPACE_BENCH_DATA`` (a directory) says::

    PYTHONPATH=src python bench/locomo_recast.py --data locomo_dev.json \\
        --out "$MINDSPACE_BENCH_DATA/locomo_recast.json" [--user a|b|both] [--samples 2] \\
        [--asker third-person|first-person]

``--evidence assistant`` writes the other shape: the evidence is what the *assistant*
said, in the middle of a long answer (one to three turns of *other* conversations of the
input before the original reply, two to four after it, about 200 words), and a question
is kept when every evidence turn is the assistant's; the assistant speaker's name in it
becomes "the assistant" ("you" with ``--asker first-person``). The filler comes from other
conversations, so it never holds this conversation's evidence: the answer's middle must be
found, not its opening (MiniLM reads only a text's first 256 tokens).

Deterministic: the same input and ``--seed`` give the same file. Prints a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from pathlib import Path
from typing import Any, Literal

from mindspace.evaluation.locomo_data import normalize_evidence

USER = "User"
ASSISTANT = "Assistant"
EXTRA_REPLIES = (3, 6)
"""How many of the assistant-speaker's other replies each long answer appends."""
ASKERS = {"third-person": ("the user", "the user's"), "first-person": ("I", "my")}
ANSWERERS = {
    "third-person": ("the assistant", "the assistant's"),
    "first-person": ("you", "your"),
}
Asker = Literal["third-person", "first-person"]
Evidence = Literal["user", "assistant"]
FILLER_BEFORE = (1, 3)
FILLER_AFTER = (2, 4)
"""How many turns of other conversations an answer holds before and after the reply."""
ECHO_RATE = 0.5
"""How often an answer opens by restating the user's last turn, as assistants do."""


def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(name)}('s)?\b")


def _second_person(text: str, name: str) -> str:
    """The user's name, as the assistant would say it: 'you', 'your'."""

    def word(match: re.Match[str]) -> str:
        said = "your" if match.group(1) else "you"
        starts = not text[: match.start()].strip() or text[: match.start()].rstrip()[-1] in ".!?"
        return said.capitalize() if starts else said

    return _name_pattern(name).sub(word, text)


def _sessions(conversation: dict[str, Any]) -> list[int]:
    numbers = []
    n = 1
    while f"session_{n}_date_time" in conversation:
        if conversation.get(f"session_{n}"):
            numbers.append(n)
        n += 1
    return numbers


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]


def recast(
    sample: dict[str, Any],
    side: str,
    seed: int,
    asker: Asker = "third-person",
    evidence_on: Evidence = "user",
    filler: list[str] | None = None,
) -> dict[str, Any]:
    """One LoCoMo sample with speaker ``side`` ('a' or 'b') as the user.

    ``asker`` is how a question names the user: "the user" (third-person, as a model's
    recall query would) or "I"/"my" (first-person, as the user asks; the query names
    no speaker, so a speaker rule cannot fire). Grammar is not repaired ("When is I").
    ``evidence_on`` "assistant": questions about the assistant's replies, each reply in
    the middle of ``filler`` (turns of other conversations).
    """
    conversation = sample["conversation"]
    user_name = str(conversation[f"speaker_{side}"])
    other_name = str(conversation["speaker_b" if side == "a" else "speaker_a"])
    rng = random.Random(f"{seed}:{sample.get('sample_id')}:{side}")
    numbers = _sessions(conversation)
    replies = [
        (n, str(turn.get("text", "")))
        for n in numbers
        for turn in conversation[f"session_{n}"]
        if turn["speaker"] == other_name and len(str(turn.get("text", ""))) > 40
    ]
    out: dict[str, Any] = {"speaker_a": USER, "speaker_b": ASSISTANT}
    user_turns: set[str] = set()
    for n in numbers:
        out[f"session_{n}_date_time"] = conversation[f"session_{n}_date_time"]
        turns = []
        last_user = ""
        for turn in conversation[f"session_{n}"]:
            text = str(turn.get("text", ""))
            if turn["speaker"] == user_name:
                user_turns.add(str(turn["dia_id"]))
                new = {"speaker": USER, "dia_id": turn["dia_id"], "text": text}
                if turn.get("blip_caption"):
                    new["blip_caption"] = turn["blip_caption"]
                last_user = text
            elif evidence_on == "assistant":
                pool = filler or []
                before = rng.sample(pool, min(len(pool), rng.randint(*FILLER_BEFORE)))
                after = rng.sample(pool, min(len(pool), rng.randint(*FILLER_AFTER)))
                parts = [*before, f"As for you: {text}", *after]
                long_answer = "\n\n".join(_second_person(p, user_name) for p in parts)
                new = {"speaker": ASSISTANT, "dia_id": turn["dia_id"], "text": long_answer}
            else:
                others = [t for m, t in replies if m != n]
                extra = rng.sample(others, min(len(others), rng.randint(*EXTRA_REPLIES)))
                parts = []
                if last_user and rng.random() < ECHO_RATE:
                    parts.append(f'You said: "{_first_sentence(last_user)}"')
                parts.append(text)
                if turn.get("blip_caption"):
                    parts.append(f"(Here is a photo of {turn['blip_caption']}.)")
                if extra:
                    parts.append("A few more thoughts, in case they help:")
                    parts.extend(f"{i}. {t}" for i, t in enumerate(extra, 1))
                long_answer = "\n\n".join(_second_person(p, user_name) for p in parts)
                new = {"speaker": ASSISTANT, "dia_id": turn["dia_id"], "text": long_answer}
            turns.append(new)
        out[f"session_{n}"] = turns
    known = {str(t["dia_id"]) for n in numbers for t in conversation[f"session_{n}"]}
    qa = []
    for item in sample.get("qa", []):
        evidence, _ = normalize_evidence(item.get("evidence", []), known)
        question = str(item["question"])
        wanted = user_turns if evidence_on == "user" else known - user_turns
        if not evidence or not set(evidence) <= wanted:
            continue
        if evidence_on == "user" and _name_pattern(other_name).search(question):
            continue
        renamed = _name_pattern(user_name).sub(
            lambda m: ASKERS[asker][1] if m.group(1) else ASKERS[asker][0], question
        )
        renamed = _name_pattern(other_name).sub(
            lambda m: ANSWERERS[asker][1] if m.group(1) else ANSWERERS[asker][0], renamed
        )
        qa.append({**item, "question": renamed, "evidence": evidence})
    return {
        "sample_id": f"{sample.get('sample_id')}-{side}",
        "asker": USER,  # the questions are the user's (evaluation/locomo.py, askers)
        "conversation": out,
        "qa": qa,
    }


def _filler(samples: list[dict[str, Any]], own: dict[str, Any]) -> list[str]:
    """Replies of over 40 characters from every conversation of ``samples`` but ``own``."""
    return [
        str(turn.get("text", ""))
        for sample in samples
        if sample.get("sample_id") != own.get("sample_id")
        for n in _sessions(sample["conversation"])
        for turn in sample["conversation"][f"session_{n}"]
        if len(str(turn.get("text", ""))) > 40
    ]


def main(argv: list[str] | None = None) -> int:
    """Write the recast file; print a summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a LoCoMo-format JSON file")
    default_dir = os.environ.get("MINDSPACE_BENCH_DATA")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(default_dir) / "locomo_recast.json" if default_dir else None,
        help="where to write (default: $MINDSPACE_BENCH_DATA/locomo_recast.json)",
    )
    parser.add_argument("--user", choices=("a", "b", "both"), default="both")
    parser.add_argument("--samples", type=int, default=0, help="only the first N samples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--asker", choices=tuple(ASKERS), default="third-person")
    parser.add_argument(
        "--evidence",
        choices=("user", "assistant"),
        default="user",
        help="whose turns the kept questions' evidence is",
    )
    args = parser.parse_args(argv)
    if args.out is None:
        parser.error("no --out given and MINDSPACE_BENCH_DATA is not set")
    everything = json.loads(args.data.read_text())
    samples = everything[: args.samples] if args.samples else everything
    sides = ("a", "b") if args.user == "both" else (args.user,)
    recast_samples = [
        recast(s, side, args.seed, args.asker, args.evidence, _filler(everything, s))
        for s in samples
        for side in sides
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(recast_samples, indent=1) + "\n")
    turns = [
        t
        for s in recast_samples
        for k, v in s["conversation"].items()
        if k.startswith("session_") and isinstance(v, list)
        for t in v
    ]
    words = {
        who: [len(t["text"].split()) for t in turns if t["speaker"] == who]
        for who in (USER, ASSISTANT)
    }
    summary = {
        "out": str(args.out),
        "samples": len(recast_samples),
        "questions": sum(len(s["qa"]) for s in recast_samples),
        "turns": len(turns),
        "mean_words": {who: round(sum(w) / max(1, len(w)), 1) for who, w in words.items()},
    }
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
