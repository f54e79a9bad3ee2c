"""The memory tiers: working memory, entity profiles and semantic memories (spec 003).

A regular package (not a namespace one) so that import analysis sees its modules: the
architecture contracts (tests/test_architecture.py) check what they import.
"""
