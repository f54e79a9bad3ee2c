"""Is a claim supported by what was said? The check every extracted fact passes.

A model that extracts facts may invent them: small models parrot a prompt's example
("Dana is allergic to oak", ``{"drink": "dark ale"}``) or fill in what sounds likely.
Whatever the model, a fact, an attribute or a consolidated memory is kept only when the
source text supports it: at least :data:`SUPPORT_THRESHOLD` of the claim's content
words (stopwords left out, Snowball-stemmed as memory search stems them,
:func:`mindspace.text.tokenize`) occur in the source. The names of whom the claim is
about are not counted: "Dana" is the speaker's name, not something Dana said.

The rule is lexical on purpose: it needs no model, so it holds for every model, and a
third-person rewrite ("I'm allergic to oak" -> "Dana is allergic to oak") or a light
paraphrase ("My dog is called Biscuit" -> "Dana has a dog named Biscuit", 2 of 3 words)
passes, while an answer made of the prompt's own example shares no word with it.

Example:
    >>> is_supported("Dana is allergic to oak", ["I am allergic to oak pollen"], names=["Dana"])
    True
    >>> is_supported("Dana drinks dark ale", ["My dog is called Biscuit"], names=["Dana"])
    False
"""

from __future__ import annotations

from collections.abc import Iterable

from mindspace.text import tokenize

__all__ = ["SUPPORT_THRESHOLD", "is_supported", "unsupported_words"]

SUPPORT_THRESHOLD = 0.5
"""Share of a claim's content words that must occur in its source."""

# Words a third-person rewrite adds that the speaker never says about themselves.
_REWRITE_WORDS = frozenset(tokenize("user player person people someone speaker"))


def _terms(claim: str, names: Iterable[str]) -> list[str]:
    ignored = set(tokenize(" ".join(names))) | _REWRITE_WORDS
    return list(dict.fromkeys(t for t in tokenize(claim) if t not in ignored))


def unsupported_words(
    claim: str, sources: Iterable[str], *, names: Iterable[str] = ()
) -> list[str]:
    """The claim's content words (stemmed) that occur in none of ``sources``.

    Args:
        claim: A fact, an attribute value or a memory.
        sources: The text it must come from (the speaker's own words, an entry...).
        names: Whom the claim is about; their names are not counted.
    """
    said = set(tokenize(" ".join(sources)))
    return [t for t in _terms(claim, names) if t not in said]


def is_supported(
    claim: str,
    sources: Iterable[str],
    *,
    names: Iterable[str] = (),
    threshold: float = SUPPORT_THRESHOLD,
) -> bool:
    """``claim`` shares at least ``threshold`` of its content words with ``sources``.

    A claim with no content word besides the names ("Dana is") is not supported: it
    says nothing that could have been said.
    """
    names = list(names)
    terms = _terms(claim, names)
    if not terms:
        return False
    missing = unsupported_words(claim, sources, names=names)
    return (len(terms) - len(missing)) / len(terms) >= threshold
