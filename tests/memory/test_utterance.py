"""One rule of what asks, for both its callers: reconciling a write and forming memory.

:func:`is_question` is the rule; reconciling counts a question-shaped sentence without
its mark (a small model's fact), forming memory from a message counts only the mark (what
it leaves out is not kept at all), and both read ``?!`` as a question.
"""

from __future__ import annotations

import pytest

from mindspace.memory.reconcile import Fact, ReconcileRules
from mindspace.memory.utterance import is_question, sentences, statements

WHEN = "2025-12-06T10:00:00Z"


@pytest.mark.parametrize(
    ("text", "reconciling", "forming"),
    [
        ("What do I like to drink?", True, True),
        ("What do I like to drink", True, False),
        ("Do you know where I live", True, False),
        ("Paris?!", True, True),
        ("Really!?", True, True),
        ('Did she say "yes"?', True, True),
        ("Is it raining? Should I stay in?", True, True),
        ("I moved to Berlin. Have you been?", False, False),
        ("Do not feed the dragon.", False, False),
        ("Wow!", False, False),
        ("", False, False),
    ],
)
def test_one_rule_two_readings(text: str, reconciling: bool, forming: bool) -> None:
    assert is_question(text) is reconciling
    assert is_question(text, unmarked=False) is forming


def test_sentences_end_at_a_stop_after_a_word() -> None:
    assert sentences("  I moved to Berlin!  Have you been?? ") == [
        "I moved to Berlin!",
        "Have you been??",
    ]
    # "a ? b" in code is no sentence end.
    assert sentences("x = a ? b : c") == ["x = a ? b : c"]


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        ("What do I like to drink?", False),
        ("Paris?!", False),
        ("Hey Mel! How have you been?", False),
        # Without its mark a message is kept word for word: nothing a person says is
        # dropped on a guess (reconciling then keeps it as said, a question).
        ("What do I like to drink", True),
        ("I moved to Berlin last week! Have you been?", True),
        ("Paris.", True),
    ],
)
def test_forming_memory_leaves_out_only_what_asks_in_so_many_words(
    message: str, kept: bool
) -> None:
    assert statements(message) == (message if kept else "")


def test_reconciling_refuses_a_fact_written_as_a_question_but_keeps_a_quoted_one() -> None:
    rules = ReconcileRules()
    for text in ("Does Dave like red wine", "Dave likes red wine?!"):
        written = Fact(text, "Dave", WHEN, verbatim=False)
        said = Fact(text, "Dave", WHEN, verbatim=True)
        assert rules.decide(written, []).action == "refuse"
        assert rules.decide(said, []).action == "add"
