"""The three options of every command on one assistant, stated once: ``--json``, ``--db``,
``--assistant``; and ``--actor`` of every command that changes it as a user.

A command decorated with :func:`on_assistant` takes them as one :class:`Target` parameter
named ``target``; Typer still sees (and ``--help`` and docs/cli.md still list) the three
options, after the command's own, as when each command spelled them out. One decorated
with :func:`as_user_on_assistant` has ``--actor`` before them (:attr:`Target.user`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from mindspace.hosts.cli.common import (
    AssistantOption,
    DbOption,
    JsonOption,
    dump,
    load_settings,
    open_cli_assistant,
    run_once,
    say,
)

if TYPE_CHECKING:  # the engine is imported in the commands' bodies (start-up time)
    from mindspace.engine import Actor, Assistant

__all__ = ["ActorOption", "Target", "as_user_on_assistant", "on_assistant"]

ActorOption = Annotated[
    str,
    typer.Option("--actor", metavar="NAME", help="Who makes the change, for the history."),
]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Target:
    """Which assistant a command works on, and whether it answers in JSON.

    Attributes:
        as_json: ``--json``: print the result as JSON.
        db: ``--db``: the database (None: the settings' one).
        assistant: ``--assistant``: its key (None: the settings' one).
        actor: ``--actor``: the user a change is recorded as made by (``cli`` unless
            given; only commands decorated with :func:`as_user_on_assistant` take it).
    """

    as_json: bool
    db: str | None
    assistant: str | None
    actor: str = "cli"

    @property
    def user(self) -> Actor:
        """The user ``actor``, as the history records who made a change."""
        from mindspace.engine import Actor

        return Actor("user", self.actor)

    def open(self, *, create: bool = False) -> Assistant:
        """The assistant; by default never created (commands that read or edit)."""
        return open_cli_assistant(load_settings(), self.db, self.assistant, create=create)

    def change(self, change: Callable[[Assistant], Coroutine[Any, Any, _T]]) -> _T:
        """Open the assistant (never creating one) and run one recorded change on it."""
        opened = self.open()
        return run_once(opened, change(opened))

    def report(self, value: object, line: str) -> None:
        """Print what a command did: ``value`` as JSON with --json, else ``line``."""
        if self.as_json:
            dump(value)
        else:
            say(line)


# The options as the commands used to declare them, last and in this order.
_OPTIONS = (
    inspect.Parameter(
        "as_json", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=JsonOption
    ),
    inspect.Parameter("db", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=DbOption),
    inspect.Parameter(
        "assistant", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=AssistantOption
    ),
)
_ACTOR = inspect.Parameter(
    "actor", inspect.Parameter.KEYWORD_ONLY, default="cli", annotation=ActorOption
)


def on_assistant(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with ``--json``, ``--db`` and ``--assistant`` as its ``target``.

    Typer reads a command's options from its signature, so the returned function's
    signature is the command's without ``target``, followed by the three options.
    """
    return _with_target(command, _OPTIONS)


def as_user_on_assistant(command: Callable[..., None]) -> Callable[..., None]:
    """:func:`on_assistant` for a command that changes the assistant: ``--actor`` too.

    The option comes right after the command's own, before the three of
    :func:`on_assistant`; the command records its change as made by ``target.user``.
    """
    return _with_target(command, (_ACTOR, *_OPTIONS))


def _with_target(
    command: Callable[..., None], options: tuple[inspect.Parameter, ...]
) -> Callable[..., None]:
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "target"]

    @functools.wraps(command)
    def run(
        *args: Any,
        as_json: bool,
        db: str | None,
        assistant: str | None,
        actor: str = "cli",
        **kwargs: Any,
    ) -> None:
        command(*args, target=Target(as_json, db, assistant, actor), **kwargs)

    parameters = [*own, *options]
    run.__dict__["__signature__"] = signature.replace(parameters=parameters)
    run.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    return run
