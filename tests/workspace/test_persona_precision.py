"""The persona guard's precision and recall on the labelled set (issue 13, item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mindspace.workspace.persona import PersonaGuard, guard_figures

_SET = json.loads((Path(__file__).parent / "persona_labelled.json").read_text(encoding="utf-8"))
LABELLED = [(row["text"], bool(row["self_reference"])) for row in _SET["sentences"]]
SELF_NAMES = tuple(_SET["self_names"])

PRECISION_TARGET = 0.97
RECALL_TARGET = 0.95


def test_the_labelled_set_is_large_and_mixed() -> None:
    assert len(LABELLED) >= 150
    assert len({sentence for sentence, _ in LABELLED}) == len(LABELLED)
    positives = sum(1 for _, is_self in LABELLED if is_self)
    assert 0.3 < positives / len(LABELLED) < 0.7


def test_precision_and_recall_meet_the_targets(capsys: pytest.CaptureFixture[str]) -> None:
    figures = guard_figures(PersonaGuard(SELF_NAMES), LABELLED)
    with capsys.disabled():
        print(
            f"\npersona guard on {figures['sentences']} labelled sentences: "
            f"precision {figures['precision']:.3f}, recall {figures['recall']:.3f} "
            f"(false positives {figures['false_positives']!r}, "
            f"false negatives {figures['false_negatives']!r})"
        )
    assert figures["precision"] >= PRECISION_TARGET, figures
    assert figures["recall"] >= RECALL_TARGET, figures


@pytest.mark.parametrize(
    ("content", "phrase"),
    [
        ("World War I ended; I helped Alice", "I helped"),
        ('Alice said "my sword is broken" and thanked me', "me"),
        ("Player: I want a sword.\nNote: my stock is low", "my"),
    ],
)
def test_a_rejection_names_the_phrase_outside_the_quoted_words(content: str, phrase: str) -> None:
    match = PersonaGuard().find(content)
    assert match is not None
    assert match.phrase == phrase
    assert content[match.start :].startswith(phrase)
    assert match.start > 10  # the numeral, the quote and the speaker's line are skipped


@pytest.mark.parametrize(
    ("content", "is_self"),
    [
        ("Note to self: I promised Bob a room.", True),
        ("Self note: my cellar leaks", True),
        ("Barkeep says: I am tired", True),
        ("Guard captain: I want the gate closed", False),
    ],
)
def test_a_label_or_the_assistant_before_a_colon_is_no_other_speaker(
    content: str, is_self: bool
) -> None:
    assert PersonaGuard(["Barkeep"]).is_clean(content) is not is_self
