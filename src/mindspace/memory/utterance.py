"""Whether a person's message is worth remembering: one that states something.

A message becomes memory at once (:mod:`mindspace.engine.formation`), before any model
reads it, so the choice is made by rules that need no model and that are right by
construction rather than tuned:

* **A question is not a fact.** A message whose every sentence asks ("What do I like to
  drink?") is not kept: it states nothing, and must never come back as "Dave likes to
  drink". A message that also states something ("I moved to Berlin! Have you been?")
  is kept word for word, its question included: it is a record of what was said (the
  question is never turned into a fact), recall ranks a memory that ends in a question
  below answers, and the question is what finds the answer that follows it.
  Whether a text asks is one rule, :func:`is_question`, which reconciling every memory
  write uses too (:mod:`mindspace.memory.reconcile`: a fact written as a question is
  refused); here only a sentence that asks in so many words (its question mark) counts.
* **Greetings and filler carry nothing.** A sentence whose every content word is a word
  of social talk ("Hi!", "Thanks so much!", "Wow, that's great!") states nothing, and
  neither does a greeting with a name ("Hey Mel!"). The word list is a closed class of
  discourse words (greetings, thanks, acknowledgements, interjections), not a tuned list.
* **Short is not empty.** A one-word answer ("Paris.") is kept: it has a content word,
  and the memory's context holds the question it answers.
"""

from __future__ import annotations

import re
from functools import lru_cache

from mindspace.text import keywords, words

__all__ = ["FILLER_WORDS", "is_question", "sentences", "statements"]

_FILLER_TEXT = """
hi hey hello hiya heya howdy yo greetings morning afternoon evening night good great
nice cool awesome amazing wonderful fantastic lovely sweet wow whoa oh ah ahh aw aww
haha hahaha hehe lol lmao yes yeah yep yup yea no nope nah ok okay k kk sure alright
right fine thanks thank thx ty cheers please welcome bye goodbye cya see soon later
take care congrats congratulations sorry hmm hm um uh er well indeed totally
absolutely definitely really true agreed exactly glad happy hear know get got
"""
FILLER_WORDS: frozenset[str] = frozenset(_FILLER_TEXT.split())
"""Words of social talk: a sentence made only of these (and stopwords) says nothing."""

_GREETINGS = frozenset({"hi", "hey", "hello", "hiya", "heya", "howdy", "yo", "greetings"})
# A sentence ends at . ! ? (or a run of them) right after a non-space character, followed
# by space or the end; "a ? b : c" in code is no sentence end.
_SENTENCE = re.compile(r"\S.*?(?:(?<=\S)[.!?]+(?=\s|$)|$)", re.DOTALL)
_MARK = re.compile(r"[?!]*\?[?!]*$")
"""A question mark at the end, alone or in a run with exclamation marks (``?!``, ``!?``)."""
_QUESTION_START = re.compile(
    r"^(?:(?:who|whom|whose|what|which|when|where|why|how)(?:'s|\s+(?:is|are|was|were|do|does"
    r"|did|can|could|will|would|should|has|have|had|much|many|long|often|old|about|come|if))"
    r"|(?:do|does|did|is|are|was|were|can|could|will|would|should|shall|has|have|had|may|"
    r"might|must|am|isn't|aren't|don't|doesn't|didn't|won't|can't|couldn't|wouldn't)"
    r"\s+(?:i|you|he|she|it|we|they|there|this|that|anyone|someone|your|my|the|a|an|"
    r"(?-i:[A-Z][a-z]+))\b)",
    re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, in order (none for blank text)."""
    return [s for m in _SENTENCE.finditer(text.strip()) if (s := m.group(0).strip())]


@lru_cache(maxsize=4096)
def is_question(text: str, *, unmarked: bool = True) -> bool:
    """The text only asks: every sentence of it is a question.

    A sentence is a question when it ends with a question mark (``?``, ``?!``, ``!?``,
    before closing quotes and brackets), or, with ``unmarked``, when it opens the way
    questions do and does not end like a statement ("What do I like to drink", "Do you
    know where I live"): small models often drop the mark from a fact they write. A
    statement with a question after it ("I moved to Berlin. Have you been?") holds a
    fact and is not a question.

    Args:
        text: A memory's, a fact's or a message's text (or one sentence of it).
        unmarked: Count question-shaped sentences without a mark. Reconciling a write
            does (a fact written as a question is refused, and a quoted question restates
            nothing); forming memory from a person's message does not
            (:func:`statements`): what it leaves out is not kept at all, so only a
            sentence that asks in so many words is left out.

    Returns:
        True when nothing in the text is stated, only asked.
    """
    said = sentences(text)
    return bool(said) and all(_asks(s, unmarked) for s in said)


def _asks(sentence: str, unmarked: bool) -> bool:
    bare = sentence.rstrip(" \"')]")
    if _MARK.search(bare):
        return True
    if not unmarked or bare.endswith((".", "!", ";", ":")):
        return False
    return bool(_QUESTION_START.match(sentence))


def _says_nothing(sentence: str) -> bool:
    """Only filler and function words, or a greeting with at most two words after it."""
    content = [w for w in keywords(sentence) if w not in FILLER_WORDS]
    if not content:
        return True
    said = words(sentence)
    return said[0] in _GREETINGS and len(said) <= 3


def statements(text: str) -> str:
    """``text`` stripped when it states something, else "" (it only asks or chats).

    Args:
        text: A message as its speaker sent it.

    Returns:
        The whole message, word for word, when at least one sentence is a statement
        with a content word; "" when every sentence is a question, a greeting or filler.

    Example:
        >>> statements("I moved to Berlin last week! Have you been?")
        'I moved to Berlin last week! Have you been?'
        >>> statements("Hey Mel! How have you been?")
        ''
    """
    stripped = text.strip()
    if any(
        not is_question(s, unmarked=False) and not _says_nothing(s) for s in sentences(stripped)
    ):
        return stripped
    return ""
