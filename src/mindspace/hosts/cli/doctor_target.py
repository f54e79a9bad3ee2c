"""Which LLM ``mindspace doctor`` probes: the provider the assistant would use, its URL and key."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

from mindspace.hosts.cli.common import CliError

if TYPE_CHECKING:
    from mindspace.config import Settings

__all__ = ["Provider", "probe_target"]

Provider = Literal["openai", "anthropic"]
"""How the doctor talks to the endpoint: chat completions or Anthropic's Messages API."""


def probe_target(
    settings: Settings, base_url: str | None, api_key: str | None
) -> tuple[Provider, str | None, str | None, str | None]:
    """The provider to probe, its URL (None: the offline model), the key and where it came from.

    The provider is the one the assistant would use (``MINDSPACE_LLM_PROVIDER``, else
    chat completions when a URL is set); ``--base-url`` alone probes chat completions.
    The key is ``--api-key``, else ``MINDSPACE_LLM_API_KEY``, else (for ``anthropic``)
    ``ANTHROPIC_API_KEY``, as the provider itself reads them.

    Args:
        settings: The ``MINDSPACE_LLM_*`` settings.
        base_url: ``--base-url``, if given.
        api_key: ``--api-key``, if given.

    Raises:
        CliError: ``MINDSPACE_LLM_PROVIDER`` names a provider the doctor cannot probe.
    """
    name = settings.resolved_llm_provider
    keys: tuple[str, ...]
    url: str | None
    if name == "anthropic":
        from mindspace.llm.providers.anthropic_wire import ANTHROPIC_BASE_URL

        keys = ("MINDSPACE_LLM_API_KEY", "ANTHROPIC_API_KEY")
        url = base_url or settings.llm_base_url or ANTHROPIC_BASE_URL
        provider: Provider = "anthropic"
    elif name in ("openai", "offline") or base_url:
        keys = ("MINDSPACE_LLM_API_KEY",)
        url = base_url or (settings.llm_base_url if name == "openai" else None)
        provider = "openai"
    else:
        raise CliError(
            f"mindspace doctor probes the 'openai' and 'anthropic' providers, not {name!r} "
            "(MINDSPACE_LLM_PROVIDER); unset it, or pass --base-url and --model to probe an "
            "OpenAI-compatible endpoint."
        )
    if api_key:
        return provider, url, "--api-key", api_key
    if settings.llm_api_key is not None and settings.llm_api_key.get_secret_value():
        return provider, url, keys[0], settings.llm_api_key.get_secret_value()
    if len(keys) > 1 and os.environ.get(keys[1]):
        return provider, url, keys[1], os.environ[keys[1]]
    return provider, url, None, None
