"""Text analysis shared by journal search, memory search, fact mining and the offline model.

One stopword list and one word splitter, so that a word that counts for memory search
counts the same way for the journal:

* :func:`words`: casefolded words of any script, contractions cut at the apostrophe
  (``"Alice's"`` -> ``"alice"``);
* :func:`keywords`: :func:`words` without :data:`STOPWORDS`, unstemmed (reflection's
  questions become journal queries this way);
* :func:`tokenize`: :func:`keywords`, Snowball-stemmed (the memory BM25 index's terms);
* :func:`whitespace_words`: the journal's episodic relevance, which spec 004 §5 defines
  as the overlap of lowercased, whitespace-split words;
* :func:`normalized`: a text reduced to its ``\\w+`` runs, to compare two claims.

Example:
    >>> tokenize("The barkeep's ales are brewing")
    ['barkeep', 'ale', 'brew']
"""

from __future__ import annotations

import re

import Stemmer

__all__ = ["STOPWORDS", "keywords", "normalized", "tokenize", "whitespace_words", "words"]

# Letters and digits of any script (``[^\W_]``), so "café" stays one word.
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_UNICODE_WORD = re.compile(r"\w+")
_STEMMER = Stemmer.Stemmer("english")

_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during each
few for from further had has have having he her here hers herself him himself his
how i if in into is it its itself just me more most my myself no nor not now of off
on once only or other our ours ourselves out over own same she should so some such
than that the their theirs them themselves then there these they this those through
to too under until up very was we were what when where which while who whom why
will with would you your yours yourself yourselves s t d ll m re ve
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
"""English function words that never decide a search (NLTK's list, casefolded)."""


def words(text: str) -> list[str]:
    """The casefolded word tokens of ``text`` (runs of letters and digits).

    Args:
        text: Any text.

    Returns:
        The words in order, each cut at its apostrophe (``"don't"`` -> ``"don"``).
    """
    found = (w.split("'")[0] for w in _WORD.findall(text.casefold()))
    return [w for w in found if w]


def keywords(text: str) -> list[str]:
    """The content words of ``text``: :func:`words` without :data:`STOPWORDS`, unstemmed."""
    return [w for w in words(text) if w not in STOPWORDS]


def tokenize(text: str) -> list[str]:
    """The search terms of ``text``: :func:`keywords`, Snowball-stemmed (memory BM25)."""
    return list(_STEMMER.stemWords(keywords(text)))


def whitespace_words(text: str) -> set[str]:
    """Lowercased, whitespace-split words: the keyword overlap of spec 004 §5."""
    return set(text.lower().split())


def normalized(text: str) -> str:
    """``text`` casefolded and reduced to its word runs, one space apart."""
    return " ".join(_UNICODE_WORD.findall(text.casefold()))
