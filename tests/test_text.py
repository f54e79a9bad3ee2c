"""One text analysis for journal search, memory search, mining and the offline model."""

from __future__ import annotations

from mindspace.journal.evidence import question_keywords
from mindspace.journal.index import query_words
from mindspace.memory import lexical
from mindspace.memory.lexical import LexicalIndex
from mindspace.text import STOPWORDS, keywords, normalized, tokenize, whitespace_words, words


def test_words_are_casefolded_and_cut_at_the_apostrophe() -> None:
    assert words("Alice's Café, don't PANIC! 42 ale_house") == [
        "alice",
        "café",
        "don",
        "panic",
        "42",
        "ale",
        "house",
    ]


def test_keywords_drop_stopwords_but_keep_word_forms() -> None:
    assert keywords("What did Alice say about the brewing of ales?") == [
        "alice",
        "say",
        "brewing",
        "ales",
    ]


def test_tokenize_stems_keywords_for_the_bm25_index() -> None:
    assert tokenize("The barkeep's ales are brewing") == ["barkeep", "ale", "brew"]
    assert tokenize("the and of") == []


def test_memory_and_journal_share_one_stopword_list() -> None:
    assert lexical.STOPWORDS is STOPWORDS
    assert lexical.tokenize is tokenize
    assert {"the", "yourselves", "ll"} <= STOPWORDS


def test_reflection_queries_keep_only_content_words() -> None:
    assert question_keywords("What does Alice think of herself, and why?") == "alice think"


def test_episodic_overlap_splits_on_whitespace_as_the_spec_says() -> None:
    assert query_words is whitespace_words
    assert whitespace_words("Dark ale, by the FIRE") == {"dark", "ale,", "by", "the", "fire"}


def test_normalized_compares_claims_regardless_of_case_and_punctuation() -> None:
    assert normalized("Bob likes  strong cider!") == normalized("bob likes strong cider")


def test_memory_search_finds_a_stemmed_match() -> None:
    index = LexicalIndex()
    index.add("a", "Alice brewed a dark ale")
    index.add("b", "Bob fixed the roof")
    scores = index.scores("who brews ales?")
    assert scores[index.row("a")] > 0 == scores[index.row("b")]
