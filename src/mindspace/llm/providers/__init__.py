"""The vendor adapters of the LLM port: OpenAI-compatible endpoints and Anthropic's API.

Only the composition root (:mod:`mindspace.runtime`) and ``mindspace doctor`` build them;
the domain and the engine never import this package (an import-linter contract in
pyproject.toml). :mod:`~mindspace.llm.providers.sdk` holds what both SDK adapters share:
the error mapping table, the retry loop and the model list; :mod:`~mindspace.llm.providers.retry`
the SDK-free retry policy, which the OpenAI-compatible embedder uses too.
"""
