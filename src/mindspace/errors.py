"""The mindspace exception tree.

Two families live here, and they are kept apart on purpose:

* ``ToolError`` and its subclasses are errors the *model* can recover from. The tool
  framework turns them into tool results in the spec's error shape
  (``{"success": False, "error": ..., "suggestion": ..., **extra}``) so the model can
  rephrase or retry. They are never raised out of ``Assistant.call_tool``.
* Everything else is for the *developer* or the *host*: misconfiguration, storage
  failures, a provider that keeps failing, an event or approval id that does not exist.
  Their messages say what to do next. A host input error is never a ``ToolError``: the
  model did not make it and cannot fix it.

Every class carries ``http_status``, the status an HTTP host answers with; hosts map an
error by ``isinstance`` (through this attribute), so subclasses inherit their parent's.

::

    MindspaceError
    ├── ConfigError                  bad or missing settings (also a ValueError)
    ├── StorageError                 the database failed or is unusable
    │   ├── MigrationError           schema cannot be brought up to date
    │   └── ConcurrencyError         another process changed the assistant mid-call
    ├── InvalidInputError            a host or developer passed unusable input (also a ValueError)
    ├── RecordNotFoundError          a host asked for an event or approval that is not there
    │   └── AssistantNotFoundError   no assistant with that key (and create=False)
    ├── AlreadyExistsError           a host tried to create what exists (an assistant key)
    ├── ComponentError               prompt component id collides or slots are full
    ├── ToolExecutionError           a tool crashed (a bug, not bad input); has __cause__
    ├── LLMError                     the language model could not answer
    │   ├── LLMConnectionError       network failure or timeout reaching the provider
    │   ├── LLMRateLimitError        429 after the bounded retries
    │   ├── LLMProviderError         5xx or another provider-side failure
    │   ├── LLMAuthenticationError   the key was refused
    │   └── LLMResponseError         the reply could not be understood
    ├── EmbeddingError               the embeddings endpoint failed or answered badly
    └── ToolError                    recoverable: sent back to the model as a result
        ├── UnknownToolError         no such tool (lists the closest names)
        ├── InvalidArgumentsError    arguments failed validation
        ├── NotFoundError            a goal, project or entry id does not exist
        ├── ConflictError            the thing already exists (duplicate key)
        ├── InvalidStateError        the operation does not apply in this state
        ├── PersonaViolationError    content references the assistant itself
        └── ToolFailedError          the tool ran but could not do its job
"""

from __future__ import annotations

from typing import Any, ClassVar


class MindspaceError(Exception):
    """Base class of every error raised by mindspace."""

    http_status: ClassVar[int] = 500
    """The HTTP status a host answers with for this error (and its subclasses)."""


class _ExplainedError(Exception):
    """An error that says what went wrong and what to do next, as hosts and the model see it.

    Args:
        error: What went wrong, quoting the offending values.
        suggestion: What the caller should do next.
        **extra: Further fields a host (or the model's tool result) may show.
    """

    def __init__(self, error: str, suggestion: str = "", **extra: Any) -> None:
        super().__init__(error)
        self.error = error
        self.suggestion = suggestion
        self.extra = extra


class ConfigError(MindspaceError, ValueError):
    """A setting or an identifier given by the developer is missing or invalid."""

    http_status = 422


class InvalidInputError(_ExplainedError, MindspaceError, ValueError):
    """A host or developer passed input the engine cannot accept (an event, a decision).

    Args:
        error: What is wrong, quoting the offending value.
        suggestion: What to do next.
    """

    http_status = 422


class RecordNotFoundError(_ExplainedError, MindspaceError, LookupError):
    """A host asked for an event, an approval or another record that does not exist.

    Args:
        error: What is missing, quoting the id.
        suggestion: Where to find the valid ids.
        **extra: Further fields a host may show (``pending``: the valid ids).
    """

    http_status = 404


class AlreadyExistsError(_ExplainedError, MindspaceError):
    """A host tried to create something that exists already (an assistant key).

    Args:
        error: What exists, quoting its key.
        suggestion: What to do instead.
    """

    http_status = 409


class StorageError(MindspaceError):
    """The store failed or holds data that cannot be used."""

    http_status = 503


class MigrationError(StorageError):
    """The database schema cannot be brought up to date."""

    http_status = 500


class ConcurrencyError(StorageError):
    """Another writer changed the assistant's state while a call was running."""

    http_status = 409


class AssistantNotFoundError(RecordNotFoundError):
    """No assistant exists under the requested key."""


class ComponentError(MindspaceError):
    """A prompt component id collides with another or its slot range is full."""


class ToolExecutionError(MindspaceError):
    """A tool raised an unexpected exception; the original is chained as ``__cause__``."""


class LLMError(MindspaceError):
    """The language model could not produce an answer."""

    http_status = 502


class LLMConnectionError(LLMError):
    """The provider could not be reached, or did not answer in time."""


class LLMRateLimitError(LLMError):
    """The provider kept answering 429 after the bounded retries."""


class LLMProviderError(LLMError):
    """The provider answered with a server error or another failure."""


class LLMAuthenticationError(LLMError):
    """The provider refused the API key."""


class LLMResponseError(LLMError):
    """The provider's reply could not be understood."""


class EmbeddingError(MindspaceError):
    """The embeddings endpoint could not be reached, failed, or answered unusably."""

    http_status = 502


class ToolError(_ExplainedError, MindspaceError):
    """An error the model can recover from; becomes a tool result in the spec's shape.

    Args:
        error: What went wrong, quoting the offending values.
        suggestion: What the caller should do next.
        **extra: Further fields for the result (``available_projects``, ...).
    """

    http_status = 400

    def to_result(self) -> dict[str, Any]:
        """The tool result in the spec's error shape."""
        result: dict[str, Any] = {"success": False, "error": self.error}
        if self.suggestion:
            result["suggestion"] = self.suggestion
        result.update(self.extra)
        return result


class UnknownToolError(ToolError):
    """No tool has the requested name."""

    http_status = 404


class InvalidArgumentsError(ToolError):
    """The arguments failed validation against the tool's schema."""

    http_status = 422


class NotFoundError(ToolError):
    """A referenced goal, project or entry does not exist."""

    http_status = 404


class ConflictError(ToolError):
    """The thing to be created already exists."""

    http_status = 409


class InvalidStateError(ToolError):
    """The operation does not apply to the current state."""

    http_status = 409


class PersonaViolationError(ToolError):
    """Content refers to the assistant's own actions or identity."""

    http_status = 422


class ToolFailedError(ToolError):
    """The tool ran but could not complete its job (for example, the LLM's reply was unusable)."""
