"""Taking Evennia's messages apart: speech, markup, names and classification."""

from __future__ import annotations

import pytest

from mindspace.hosts.evennia.perception import (
    Perceived,
    addressed_by_name,
    classify,
    plain,
    split_message,
    spoken_words,
)

NAMES = ("Barkeep", "keeper", "Old Tom")


def test_messages_come_as_text_or_as_text_with_options() -> None:
    assert split_message(('Alice says, "hi"', {"type": "say"})) == ('Alice says, "hi"', "say")
    assert split_message("You see nothing.") == ("You see nothing.", None)
    assert split_message(("Alice waves.",)) == ("Alice waves.", None)
    assert split_message((None, {"type": 3})) == ("", None)
    assert split_message(None) == ("", None)


def test_markup_is_removed_but_literal_pipes_stay() -> None:
    assert plain('|cAlice|n whispers: "|nhello|n"') == 'Alice whispers: "hello"'
    assert plain("a||b |/next|_line \x1b[1mbold\x1b[0m") == "a|b \nnext line bold"


def test_the_spoken_words_are_the_last_quoted_part() -> None:
    assert spoken_words('Alice says, "Barkeep, a "dark" ale"') == 'Barkeep, a "dark" ale'
    assert spoken_words("Alice waves.") == "Alice waves."
    assert spoken_words('Alice says, "' + "x" * 5000 + '"') == "x" * 4000


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Barkeep, a pint", True),
        ("a pint, barkeep!", True),
        ("hey OLD TOM", True),
        ("the barkeeper is out", False),  # whole words only
        ("the keepers left", False),
        ("", False),
    ],
)
def test_addressing_by_name(text: str, expected: bool) -> None:
    assert addressed_by_name(text, NAMES) is expected


def test_classification() -> None:
    assert classify("whisper", "psst", NAMES, alone=False) == "direct_message"
    assert classify("say", "Barkeep, ale", NAMES, alone=False) == "direct_addressing"
    assert classify("say", "nice day", NAMES, alone=False) == "ambient"
    assert classify("say", "nice day", NAMES, alone=True) == "direct_addressing"
    assert classify("say", "nice day", NAMES, alone=True, reply_when_alone=False) == "ambient"
    assert classify("pose", "Alice waves at Barkeep.", NAMES, alone=True) == "direct_addressing"
    assert classify("pose", "Alice waves.", NAMES, alone=True) == "ambient"
    assert classify("arrival", "Alice arrives.", NAMES, alone=True) == "ambient"
    assert classify("arrival", "x", NAMES, alone=True, greet_arrivals=True) == "direct_addressing"
    assert classify("departure", "Alice leaves.", NAMES, alone=True) == "ambient"
    with pytest.raises(ValueError, match="Unknown perceived event type 'shout'"):
        classify("shout", "HEY", NAMES, alone=True)


def test_a_perceived_event_knows_how_to_be_answered() -> None:
    whisper = Perceived("whisper", "psst", "Alice", "direct_message", "Tavern", ("Alice",))
    assert whisper.addressed
    assert whisper.private
    assert whisper.metadata() == {"classification": "direct_message", "present": ["Alice"]}
    ambient = Perceived("say", "nice day", "Bob", "ambient")
    assert not ambient.addressed
    assert not ambient.private
