"""Any OpenAI-compatible ``/v1/embeddings`` endpoint through the official ``openai`` SDK.

Works with OpenAI, vLLM, Ollama, llama.cpp's server, LM Studio, text-embeddings-inference
and anything else that speaks the OpenAI embeddings format. ``aembed`` uses the SDK's async
client (httpx.AsyncClient) and waits between retries with ``asyncio.sleep``, so the engine
awaits it on the event loop (through :func:`~mindspace.embeddings.port.embed_async`); the
sync ``embed`` of the port, whose retries sleep the calling thread, is for sync callers and
worker threads only. As in the LLM adapter, the SDK's own retries are off and
ours are the only ones: bounded, with exponential backoff, on 429, 5xx, timeouts and
connection failures. Vendor errors become :class:`~mindspace.errors.EmbeddingError`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np
import openai

from mindspace.embeddings.port import Vectors
from mindspace.errors import ConfigError, EmbeddingError
from mindspace.llm.providers.openai_compat import error_detail, is_transient
from mindspace.llm.providers.retry import retry_delay

__all__ = ["OpenAICompatibleEmbedder"]

logger = logging.getLogger("mindspace.embeddings.openai")

_PROBE = "dimension probe"


class OpenAICompatibleEmbedder:
    """An embedding model behind an OpenAI-compatible endpoint.

    Empty (or whitespace-only) texts are not sent, since OpenAI rejects them; they get
    all-zero vectors, as the port allows.

    Args:
        base_url: The endpoint's base URL, e.g. ``http://127.0.0.1:11434/v1``.
        model: The embedding model the endpoint serves; also the embedder's ``name``.
        api_key: The key; local servers usually accept any value.
        dim: The vectors' dimension if known; otherwise it is learned from the first
            response. Reading ``dim`` before any ``embed()`` sends one short request,
            and so does ``isinstance(x, Embedder)`` on Python 3.11 (it reads every
            protocol attribute). Every response is checked against it.
        timeout: Seconds per request.
        max_retries: Retries after the first attempt on 429, 5xx, timeouts and
            connection failures.
        batch_size: Most texts per request.
        backoff: Seconds before the first retry; doubled each time, capped at 30 s.
        sleep: How ``embed`` waits between retries (tests pass a recorder instead of
            sleeping); it blocks the calling thread, so ``embed`` is never called on the
            event loop.
        async_sleep: How ``aembed`` waits between retries (``asyncio.sleep``: the loop
            runs other work meanwhile).
    """

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        dim: int | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        batch_size: int = 256,
        backoff: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        async_sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if dim is not None and dim < 1:
            raise ConfigError(f"The embedding dimension must be >= 1, got {dim!r}")
        if batch_size < 1:
            raise ConfigError(f"The embedding batch_size must be >= 1, got {batch_size!r}")
        self.name = model
        self.model = model
        self.base_url = base_url
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.backoff = backoff
        self._sleep = sleep
        self._async_sleep = async_sleep
        self._dim = dim
        self._api_key = api_key or "not-needed"
        self._timeout = timeout
        self._client = openai.OpenAI(
            base_url=base_url, api_key=self._api_key, timeout=timeout, max_retries=0
        )
        # An async client's connection pool belongs to one event loop, so there is one
        # client per loop (a CLI run and a test each start their own loop).
        self._aclient: tuple[asyncio.AbstractEventLoop, openai.AsyncOpenAI] | None = None

    @property
    def dim(self) -> int:
        """The vectors' dimension; asks the endpoint once if it was not given."""
        if self._dim is None:
            self._dim = int(self._request([_PROBE]).shape[1])
        return self._dim

    @dim.setter
    def dim(self, value: int) -> None:
        if value < 1:
            raise ConfigError(f"The embedding dimension must be >= 1, got {value!r}")
        self._dim = value

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in batches; rows are L2-normalised.

        Blocking (retries sleep the thread): on an event loop, await :meth:`aembed`.
        """
        todo = [i for i, text in enumerate(texts) if text.strip()]
        chunks: list[tuple[list[int], Vectors]] = []
        for start in range(0, len(todo), self.batch_size):
            rows = todo[start : start + self.batch_size]
            chunks.append((rows, self._request([texts[i] for i in rows])))
        return self._assemble(len(texts), chunks, self.dim)

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        """What :meth:`embed` returns, without blocking the event loop.

        Requests go through the SDK's async client; a retry waits with ``asyncio.sleep``.
        """
        todo = [i for i, text in enumerate(texts) if text.strip()]
        chunks: list[tuple[list[int], Vectors]] = []
        for start in range(0, len(todo), self.batch_size):
            rows = todo[start : start + self.batch_size]
            chunks.append((rows, await self._arequest([texts[i] for i in rows])))
        if self._dim is None:
            self._dim = int((await self._arequest([_PROBE])).shape[1])
        return self._assemble(len(texts), chunks, self._dim)

    @staticmethod
    def _assemble(count: int, chunks: list[tuple[list[int], Vectors]], dim: int) -> Vectors:
        out = np.zeros((count, dim), dtype=np.float32)
        for rows, vectors in chunks:
            out[rows] = vectors
        return out

    def _request(self, batch: list[str]) -> Vectors:
        """One request for ``batch`` (retried when transient), as normalised float32 rows."""
        attempt = 0
        while True:
            try:
                response = self._client.embeddings.create(
                    model=self.model, input=batch, encoding_format="float"
                )
            except openai.APIError as exc:
                self._sleep(self._retry_delay(exc, attempt))
                attempt += 1
                continue
            return self._vectors(response, len(batch))

    async def _arequest(self, batch: list[str]) -> Vectors:
        """:meth:`_request` on the async client; the loop runs on while a retry waits."""
        attempt = 0
        while True:
            try:
                response = await self._async_client().embeddings.create(
                    model=self.model, input=batch, encoding_format="float"
                )
            except openai.APIError as exc:
                await self._async_sleep(self._retry_delay(exc, attempt))
                attempt += 1
                continue
            return self._vectors(response, len(batch))

    def _retry_delay(self, exc: openai.APIError, attempt: int) -> float:
        """Seconds to wait before retry ``attempt + 1``, or the mapped error if none is left."""
        error = _map_error(exc, self.base_url)
        if attempt >= self.max_retries or not is_transient(exc):
            raise error from exc
        delay = retry_delay(exc, attempt, self.backoff)
        logger.warning(
            "Embedding request to %s failed (%s); retry %d/%d in %.1fs",
            self.base_url,
            error,
            attempt + 1,
            self.max_retries,
            delay,
        )
        return delay

    def _async_client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._aclient is None or self._aclient[0] is not loop:
            client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                timeout=self._timeout,
                max_retries=0,
            )
            self._aclient = (loop, client)
        return self._aclient[1]

    def _vectors(self, response: Any, expected: int) -> Vectors:
        data = getattr(response, "data", None)
        if not isinstance(data, list) or len(data) != expected:
            got = len(data) if isinstance(data, list) else None
            raise EmbeddingError(
                f"The embeddings endpoint at {self.base_url!r} returned {got!r} vectors "
                f"for {expected!r} inputs (model {self.model!r})"
            )
        try:
            ordered = sorted(data, key=lambda item: int(item.index))
            vectors = np.asarray([item.embedding for item in ordered], dtype=np.float32)
        except (AttributeError, TypeError, ValueError) as exc:
            raise EmbeddingError(
                f"The embeddings endpoint at {self.base_url!r} sent vectors that are not "
                f"lists of numbers (model {self.model!r}): {exc}"
            ) from exc
        if vectors.ndim != 2 or vectors.shape[1] == 0:
            raise EmbeddingError(
                f"The embeddings endpoint at {self.base_url!r} sent vectors of uneven or "
                f"zero length (model {self.model!r})"
            )
        if self._dim is None:
            self._dim = int(vectors.shape[1])
        elif vectors.shape[1] != self._dim:
            raise EmbeddingError(
                f"The embeddings endpoint at {self.base_url!r} sent {vectors.shape[1]!r}-d "
                f"vectors, expected {self._dim!r}-d (model {self.model!r}). Check "
                "MINDSPACE_EMBEDDING_MODEL; vectors of different models cannot be mixed."
            )
        if not np.isfinite(vectors).all():
            raise EmbeddingError(
                f"The embeddings endpoint at {self.base_url!r} sent NaN or infinite values "
                f"(model {self.model!r})"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        return vectors


_WHERE = "The embeddings endpoint at {url}"
_ERRORS: tuple[tuple[type[openai.APIError], str], ...] = (
    (openai.APITimeoutError, _WHERE + " did not answer in time"),
    (
        openai.APIConnectionError,
        "Cannot reach the embeddings endpoint at {url}: {reason}. "
        "Check MINDSPACE_EMBEDDING_BASE_URL.",
    ),
    (
        openai.AuthenticationError,
        _WHERE + " refused the API key; check MINDSPACE_EMBEDDING_API_KEY.",
    ),
    (openai.RateLimitError, _WHERE + " is rate limiting requests (429)"),
    (
        openai.NotFoundError,
        _WHERE + " answered 404: {detail}. Check MINDSPACE_EMBEDDING_MODEL and "
        "that the base URL ends in /v1.",
    ),
    (openai.APIStatusError, _WHERE + " answered {status}: {detail}"),
)
"""How each SDK failure is worded, the first matching row winning (a timeout is a
connection error, a 404 a status error); templates over ``url`` (quoted), ``reason``
(the SDK's message without its full stop), ``status`` and ``detail`` (an error answer's
code and own message)."""


def _map_error(exc: openai.APIError, base_url: str) -> EmbeddingError:
    template = next(
        (text for kind, text in _ERRORS if isinstance(exc, kind)), _WHERE + " failed: {exc}"
    )
    status, detail = (
        (exc.status_code, error_detail(exc))
        if isinstance(exc, openai.APIStatusError)
        else (None, "")
    )
    reason = str(exc).rstrip(".")
    text = template.format(url=repr(base_url), reason=reason, status=status, detail=detail, exc=exc)
    return EmbeddingError(text)
