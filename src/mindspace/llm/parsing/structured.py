"""Strict structured output: every answer we parse from a model goes through here.

The contract (docs/journal.md, "Structured answers"):

1. The prompt asks for one JSON value of a documented shape (a bare integer counts: it
   is JSON).
2. The reply is read strictly, by :func:`extract_json`:

   * the whole reply (whitespace trimmed) is one JSON value; or else
   * the reply holds exactly one fenced code block (```json or plain ```), whose
     content is one JSON value; or else
   * the reply holds exactly one JSON object or array amid prose. Scalars (numbers,
     strings) are never picked out of prose: "the first 2 digits may not match" holds
     no answer.

   The value is then validated by a pydantic model in strict mode (no "7" for 7, no 7.5
   for an integer, no extra items beyond the documented bounds).
3. When that fails, exactly ONE repair request is made: the conversation, the refused
   answer, and a message quoting what was wrong and asking for only the corrected JSON.
4. When the repair fails too, the result is the caller's documented fallback, labelled
   ``"fallback"`` with the reasons, never passed off as the model's answer.

A model that cannot be reached (:class:`~mindspace.errors.LLMError`) is not an unusable
answer: that error propagates so callers can tell "no answer" from "a bad answer".
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from mindspace.errors import LLMResponseError
from mindspace.llm.port import LLM, Message
from mindspace.validation import replace_not_text, replace_not_text_in

__all__ = [
    "REPAIR_PROMPT",
    "Obtained",
    "Structured",
    "ask_structured",
    "ask_structured_via",
    "extract_json",
    "parse_structured",
    "repair_structured",
]

M = TypeVar("M", bound=BaseModel)

Obtained = Literal["parsed", "repaired", "fallback"]
"""How a structured value was obtained: first answer, the one repair, or the fallback."""

REPAIR_PROMPT = """Your previous answer could not be used: {reason}
Answer again with only {expected}. No other text, no explanation."""

_EXCERPT = 120
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Structured(Generic[M]):
    """A structured answer and how it was obtained.

    Attributes:
        value: The validated value; the fallback (possibly None) when ``obtained`` is
            ``"fallback"``.
        obtained: ``"parsed"`` (first answer), ``"repaired"`` (the repair answer) or
            ``"fallback"`` (neither answer was usable).
        replies: The raw replies, in order (one or two).
        errors: Why each refused reply was refused, in order.
    """

    value: M | None
    obtained: Obtained
    replies: tuple[str, ...]
    errors: tuple[str, ...] = ()

    @property
    def reason(self) -> str | None:
        """Why the last refused reply was refused, or None when nothing was refused."""
        return self.errors[-1] if self.errors else None


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 3] + "..."


def extract_json(text: str) -> Any:
    """The one JSON value in a reply, by the strict rule in this module's docstring.

    Raises:
        LLMResponseError: the reply holds no JSON value, or more than one candidate.
    """
    stripped = text.strip()
    if not stripped:
        raise LLMResponseError("the answer was empty")
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    fences = _FENCE.findall(stripped)
    if len(fences) > 1:
        raise LLMResponseError(f"the answer holds {len(fences)} code blocks; expected one")
    if fences:
        language, body = fences[0][0].lower(), fences[0][1].strip()
        if language not in ("", "json"):
            raise LLMResponseError(f"the code block is marked {language!r}; expected json")
        try:
            return json.loads(body)
        except json.JSONDecodeError as exc:
            raise LLMResponseError(f"the code block is not valid JSON ({exc.msg})") from exc
    found = _embedded_values(stripped)
    if len(found) == 1:
        return found[0]
    if found:
        raise LLMResponseError(
            f"the answer holds {len(found)} JSON values amid its text; expected exactly one"
        )
    raise LLMResponseError(f"the answer holds no JSON value: {_excerpt(stripped)!r}")


def _embedded_values(text: str) -> list[Any]:
    """Top-level JSON objects and arrays that appear within prose, left to right."""
    values: list[Any] = []
    position = 0
    while position < len(text):
        starts = [i for i in (text.find("{", position), text.find("[", position)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        values.append(value)
        position = end
    return values


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:3]:
        where = ".".join(str(p) for p in item["loc"]) or "the value"
        parts.append(f"{where}: {item['msg']} (got {_excerpt(repr(item.get('input')))})")
    more = error.error_count() - 3
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def parse_structured(text: str, model: type[M]) -> M:
    """Read ``text`` strictly as one JSON value and validate it with ``model``.

    Raises:
        LLMResponseError: no single JSON value, or it does not fit ``model``; the message
            says what was wrong (it is what the repair request quotes).
    """
    # The model's text and escapes ("\\u0000") may hold what is not text: U+FFFD instead.
    value, _ = replace_not_text_in(extract_json(replace_not_text(text)[0]))
    try:
        return model.model_validate(value, strict=True)
    except ValidationError as exc:
        raise LLMResponseError(
            f"the JSON does not have the expected shape: {_describe(exc)}"
        ) from exc


async def ask_structured(
    llm: LLM,
    messages: Sequence[Message],
    model: type[M],
    *,
    expected: str,
    fallback: M | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> Structured[M]:
    """Ask for a structured answer: parse strictly, repair once, then fall back.

    Args:
        llm: The model.
        messages: The conversation that asks for the answer (its prompt names the shape).
        model: The pydantic model the answer must validate against (strict mode).
        expected: The shape in a few words, for the repair request
            (e.g. ``"a JSON array of 3 question strings"``).
        fallback: The value returned, labelled ``"fallback"``, when both answers fail.
        max_tokens: Passed to the model on both requests.
        temperature: Passed to the model on both requests.

    Returns:
        The value and how it was obtained, with the raw replies and refusal reasons.

    Raises:
        LLMError: the model could not be reached (on either request).
    """
    response = await llm.complete(messages, max_tokens=max_tokens, temperature=temperature)
    return await repair_structured(
        llm,
        messages,
        response.text or "",
        model,
        expected=expected,
        finish_reason=response.finish_reason,
        fallback=fallback,
        max_tokens=max_tokens,
        temperature=temperature,
    )


async def repair_structured(
    llm: LLM,
    messages: Sequence[Message],
    first: str,
    model: type[M],
    *,
    expected: str,
    finish_reason: str | None = None,
    fallback: M | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
) -> Structured[M]:
    """:func:`ask_structured` for a first answer obtained elsewhere (e.g. a context session).

    ``messages`` is the conversation that produced ``first``; the one repair request, if
    needed, continues it.

    Raises:
        LLMError: the model could not be reached for the repair.
    """
    try:
        return Structured(parse_structured(first, model), "parsed", (first,))
    except LLMResponseError as exc:
        first_error = _with_cut(str(exc), finish_reason)
    repair = [
        *messages,
        Message("assistant", first),
        Message("user", REPAIR_PROMPT.format(reason=first_error, expected=expected)),
    ]
    response = await llm.complete(repair, max_tokens=max_tokens, temperature=temperature)
    second = response.text or ""
    try:
        value = parse_structured(second, model)
    except LLMResponseError as exc:
        second_error = _with_cut(str(exc), response.finish_reason)
        return Structured(fallback, "fallback", (first, second), (first_error, second_error))
    return Structured(value, "repaired", (first, second), (first_error,))


def _with_cut(reason: str, finish_reason: str | None) -> str:
    # A reply cut at the token limit is the likely cause; saying so helps the repair.
    if finish_reason == "length":
        return reason + " (the answer was cut off at the length limit; answer shorter)"
    return reason


async def ask_structured_via(
    ask: Callable[[str], Awaitable[str]],
    task: str,
    model: type[M],
    *,
    expected: str,
    fallback: M | None = None,
) -> Structured[M]:
    """:func:`ask_structured` through a session instead of a bare model call.

    ``ask`` runs one session for a task and returns its final text (the engine runs it in
    a context type: components, tool filter, iteration limit). The one repair is a second
    session whose task is the first one followed by the refused answer and the reason.

    Raises:
        LLMError: the model could not be reached (in either session).
    """
    first = await ask(task)
    try:
        return Structured(parse_structured(first, model), "parsed", (first,))
    except LLMResponseError as exc:
        first_error = str(exc)
    repair = f"{task}\n\nYour previous answer was:\n{first}\n\n" + REPAIR_PROMPT.format(
        reason=first_error, expected=expected
    )
    second = await ask(repair)
    try:
        value = parse_structured(second, model)
    except LLMResponseError as exc:
        return Structured(fallback, "fallback", (first, second), (first_error, str(exc)))
    return Structured(value, "repaired", (first, second), (first_error,))
