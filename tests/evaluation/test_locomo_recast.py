"""bench/locomo_recast.py: LoCoMo recast as a user and an assistant with long answers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mindspace.evaluation.locomo_data import load_samples

Loader = Callable[[str], ModuleType]


def _conversation() -> list[dict[str, Any]]:
    def turn(dia: str, who: str, text: str) -> dict[str, str]:
        return {"speaker": who, "dia_id": dia, "text": text}

    return [
        {
            "sample_id": "conv-x",
            "conversation": {
                "speaker_a": "Nora",
                "speaker_b": "Jon",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    turn("D1:1", "Nora", "I adopted a greyhound called Pixel last week."),
                    turn("D1:2", "Jon", "Nora, that's lovely! Greyhounds are gentle dogs."),
                    turn("D1:3", "Nora", "She sleeps on the sofa all day."),
                ],
                "session_2_date_time": "10:00 am on 20 June, 2023",
                "session_2": [
                    turn("D2:1", "Jon", "I finally finished restoring my old sailing boat."),
                    turn("D2:2", "Nora", "I moved to Leeds for the new job."),
                ],
            },
            "qa": [
                {
                    "question": "What dog did Nora adopt?",
                    "answer": "a greyhound",
                    "evidence": ["D1:1"],
                    "category": 4,
                },
                {
                    "question": "Where does Nora's job take her?",
                    "answer": "Leeds",
                    "evidence": ["D2:2"],
                    "category": 4,
                },
                # Evidence on the other speaker's turn: it would be an assistant answer.
                {
                    "question": "What did Nora's friend restore?",
                    "answer": "a boat",
                    "evidence": ["D2:1"],
                    "category": 4,
                },
                # Names the other speaker: there is no such person in a user's chat.
                {
                    "question": "What does Jon think of Nora's dog?",
                    "answer": "gentle",
                    "evidence": ["D1:1"],
                    "category": 4,
                },
            ],
        }
    ]


@pytest.fixture
def recast(bench_script: Loader) -> ModuleType:
    return bench_script("locomo_recast")


def _run(recast: ModuleType, tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    source = tmp_path / "locomo.json"
    source.write_text(json.dumps(_conversation()))
    out = tmp_path / "recast.json"
    assert recast.main(["--data", str(source), "--out", str(out), "--user", "a", *args]) == 0
    data: list[dict[str, Any]] = json.loads(out.read_text())
    # The benchmark's own loader reads it.
    samples = load_samples(out)
    assert [s.speakers for s in samples] == [("User", "Assistant")]
    return data


def test_assistant_turns_become_long_answers_and_only_user_evidence_is_asked(
    recast: ModuleType, tmp_path: Path
) -> None:
    (sample,) = _run(recast, tmp_path)
    conversation = sample["conversation"]
    reply = conversation["session_1"][1]
    assert reply["speaker"] == "Assistant"
    # The original reply leads, the user's name turned to "you", and another session's
    # reply follows as a long answer.
    assert "You, that's lovely!" in reply["text"]
    assert "sailing boat" in reply["text"]
    assert [t["speaker"] for t in conversation["session_1"]] == ["User", "Assistant", "User"]
    assert [q["question"] for q in sample["qa"]] == [
        "What dog did the user adopt?",
        "Where does the user's job take her?",
    ]
    assert all(q["evidence"] in (["D1:1"], ["D2:2"]) for q in sample["qa"])


def test_first_person_questions_name_no_speaker(recast: ModuleType, tmp_path: Path) -> None:
    (sample,) = _run(recast, tmp_path, "--asker", "first-person")
    assert [q["question"] for q in sample["qa"]] == [
        "What dog did I adopt?",
        "Where does my job take her?",
    ]


def test_the_same_seed_gives_the_same_file(
    recast: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MINDSPACE_BENCH_DATA", raising=False)
    first = _run(recast, tmp_path)
    assert _run(recast, tmp_path) == first
    with pytest.raises(SystemExit):
        recast.main(["--data", str(tmp_path / "locomo.json")])  # nowhere to write


def test_assistant_evidence_sits_in_the_middle_of_an_answer_of_other_conversations(
    recast: ModuleType, tmp_path: Path
) -> None:
    other = {
        "sample_id": "conv-y",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Ben",
            "session_1_date_time": "9:00 am on 1 June, 2023",
            "session_1": [
                {"speaker": "Ada", "dia_id": "D1:1", "text": "The orchard harvest was big " * 3},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Our choir sang at the abbey " * 3},
            ],
        },
        "qa": [],
    }
    source = tmp_path / "locomo.json"
    source.write_text(json.dumps([*_conversation(), other]))
    out = tmp_path / "recast.json"
    args = ["--data", str(source), "--out", str(out), "--user", "a", "--samples", "1"]
    assert recast.main([*args, "--evidence", "assistant"]) == 0
    (sample,) = json.loads(out.read_text())
    assert sample["asker"] == "User"  # who asks: the harness passes it to recall
    answer = sample["conversation"]["session_2"][0]["text"]
    paragraphs = answer.split("\n\n")
    # The reply is inside, framed by turns of the other conversation only.
    held = [n for n, p in enumerate(paragraphs) if "sailing boat" in p]
    assert held
    assert 0 < held[0] < len(paragraphs) - 1
    assert all("orchard" in p or "choir" in p for n, p in enumerate(paragraphs) if n != held[0])
    # Only questions about the assistant's turns, its name now "the assistant".
    assert [q["question"] for q in sample["qa"]] == ["What did the user's friend restore?"]
    assert recast.main([*args, "--evidence", "assistant", "--asker", "first-person"]) == 0
    (first,) = json.loads(out.read_text())
    assert [q["question"] for q in first["qa"]] == ["What did my friend restore?"]
