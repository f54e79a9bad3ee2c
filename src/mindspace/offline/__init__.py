"""The offline model: a deterministic, rule-based stand-in for an LLM (no network).

It sits above the domain: its skills answer the prompts that the journal, memory and
workspace send, and reuse their rules (importance heuristics, chunking, the persona
guard). The domain and the engine never import it; the composition root
(:mod:`mindspace.runtime`) builds it when no model is configured, and tests and the
evaluation harnesses use it directly. ``model`` holds the model and its skill order; the
other modules hold the skills of one area each.
"""

from __future__ import annotations

from mindspace.offline.model import OFFLINE_MODEL_NAME, OFFLINE_NOTICE, OfflineLLM, Skill

__all__ = ["OFFLINE_MODEL_NAME", "OFFLINE_NOTICE", "OfflineLLM", "Skill"]
