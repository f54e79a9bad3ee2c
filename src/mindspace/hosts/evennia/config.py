"""Per-assistant configuration, looked up the Evennia way.

Every option ``NAME`` is looked up, first found wins, in:

1. the character's Attribute ``mindspace_NAME`` (``set Barkeep/mindspace_llm_model = ...``),
2. the character class's attribute ``mindspace_NAME``,
3. the Django setting ``MINDSPACE_NAME`` (in ``server/conf/settings.py``),
4. the default: for mindspace's own settings the ``MINDSPACE_NAME`` environment
   variable or the documented default (``docs/configuration.md``); for the options
   below, the default given here.

Options: every field of :class:`mindspace.config.Settings` (``llm_base_url``,
``llm_model``, ``llm_api_key``, ``tick_rate_awake``, ``embedder``, ``database_url``...),
plus those of :class:`EvenniaOptions` (``thinking_delay``, ``names``, ``system_prompt``...).
The assistant's key (``mindspace_key``) is an Attribute set when the character is created.

The mindspace store is its own SQLite file, ``<GAME_DIR>/server/mindspace.db`` next to
Evennia's ``evennia.db3``, unless ``database_url`` names another (any SQLAlchemy URL, or
a file path). It is never the game's Django database: mindspace's store is written from
its asyncio thread, where Django refuses to run. Several assistants share one store,
isolated by key.

Resolve configuration on the reactor thread (it reads Attributes and Django settings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mindspace.config import Settings, database_url
from mindspace.errors import ConfigError

__all__ = [
    "DEFAULT_FAILURE_MESSAGE",
    "DEFAULT_SLEEP_MESSAGE",
    "DEFAULT_THINKING_MESSAGE",
    "DEFAULT_WAKE_MESSAGE",
    "STORE_FILE_NAME",
    "AssistantConfig",
    "EvenniaOptions",
    "default_key",
    "default_system_prompt",
    "lookup",
    "names_of",
    "resolve_config",
]

PREFIX = "mindspace_"
STORE_FILE_NAME = "mindspace.db"
DEFAULT_THINKING_MESSAGE = "{name} thinks about what {speaker} said..."
DEFAULT_SLEEP_MESSAGE = "{name} is fast asleep and does not answer."
DEFAULT_WAKE_MESSAGE = "{name} stirs and slowly wakes up."
DEFAULT_DOZE_MESSAGE = "{name} dozes off."
DEFAULT_ASLEEP_LOOK = "{name} is asleep."
DEFAULT_AWAKE_MESSAGE = "{name} wakes up."
DEFAULT_FAILURE_MESSAGE = "I'm sorry, I was distracted. Could you say that again?"
_MISSING = object()


class EvenniaOptions(BaseModel):
    """Options of the Evennia integration itself (beyond mindspace's ``Settings``)."""

    model_config = ConfigDict(extra="forbid")

    thinking_delay: float = Field(
        default=3.0,
        ge=0,
        description="Seconds before a 'thinking...' emote when a reply is slow; 0 turns it off.",
    )
    thinking_message: str = Field(
        default=DEFAULT_THINKING_MESSAGE,
        min_length=1,
        description="The emote; {name} is the assistant, {speaker} who spoke ('you' in private).",
    )
    sleep_message: str = Field(
        default=DEFAULT_SLEEP_MESSAGE,
        description="Shown to whoever speaks to the assistant while it is in deep sleep "
        "(it does not wake); {name} is the assistant, {speaker} who spoke; empty: nothing.",
    )
    wake_message: str = Field(
        default=DEFAULT_WAKE_MESSAGE,
        description="Shown when speaking to it wakes it from light sleep (its answer "
        "follows once it is awake); same placeholders; empty: nothing.",
    )
    doze_message: str = Field(
        default=DEFAULT_DOZE_MESSAGE,
        description="Shown to the room when the assistant falls asleep (its schedule, a "
        "command, its own go_to_sleep); {name} is the assistant; empty: nothing.",
    )
    awake_message: str = Field(
        default=DEFAULT_AWAKE_MESSAGE,
        description="Shown to the room when the assistant wakes up; empty: nothing.",
    )
    asleep_look: str = Field(
        default=DEFAULT_ASLEEP_LOOK,
        description="Added to its description in `look` while it sleeps (and '(asleep)' to "
        "its name in the room's list); {name} is the assistant; empty: nothing added.",
    )
    failure_message: str = Field(
        default=DEFAULT_FAILURE_MESSAGE,
        description="Said in character to the speaker when the model fails (the error "
        "goes to the log and `assistant <name> status`); empty: nothing is said.",
    )
    names: tuple[str, ...] = Field(
        default=(),
        description="Extra names the assistant answers to (its key and aliases always count).",
    )
    reply_when_alone: bool = Field(
        default=True,
        description="Speech in a room where only the speaker and the assistant are counts "
        "as addressed to it, even without its name.",
    )
    greet_arrivals: bool = Field(
        default=False,
        description="Arrivals are addressed events (the assistant may greet) instead of ambient.",
    )
    system_prompt: str | None = Field(
        default=None,
        description="The operator's system prompt given to a new assistant; later changes "
        "go through `assistant <name> prompt <text>`. Default: a prompt naming the "
        "character and the game (its description and place are added at every tick).",
    )


@dataclass(frozen=True)
class AssistantConfig:
    """Everything needed to open one character's assistant, resolved on the reactor thread."""

    key: str
    settings: Settings
    options: EvenniaOptions
    store_url: str
    system_prompt: str
    names: tuple[str, ...] = ()
    sources: dict[str, str] = field(default_factory=dict)


def lookup(obj: Any, name: str, default: Any = None, *, django_settings: Any = None) -> Any:
    """One option: Attribute, class attribute, Django setting, then ``default``.

    Returns:
        The value found first (``default`` when none is set anywhere).
    """
    value, _source = _lookup(obj, name, django_settings)
    return default if value is _MISSING else value


def _lookup(obj: Any, name: str, django_settings: Any) -> tuple[Any, str]:
    attr = PREFIX + name
    attributes = getattr(obj, "attributes", None)
    if attributes is not None and attributes.has(attr):
        return attributes.get(attr), f"Attribute {attr!r} of {_describe(obj)}"
    value = getattr(type(obj), attr, None)
    if value is not None:
        return value, f"class attribute {type(obj).__name__}.{attr}"
    setting = f"MINDSPACE_{name.upper()}"
    value = getattr(django_settings, setting, None) if django_settings is not None else None
    if value is not None:
        return value, f"Django setting {setting}"
    return _MISSING, "default"


def default_key(character_key: str) -> str:
    """The assistant key for a character named ``character_key``: ``Old Tom`` -> ``old-tom``."""
    slug = re.sub(r"[^a-z0-9]+", "-", character_key.strip().lower()).strip("-")
    return slug[:64] or "assistant"


def default_system_prompt(name: str, game: str) -> str:
    """The operator prompt a new assistant starts with.

    It holds no description or place: those are read from the game at every tick (the
    "Your character" part of the prompt), so ``desc`` and moves take effect at once.
    """
    return (
        f"You are {name}, a character in {game}, a text-based multiplayer game. Stay in "
        f"character: your description and where you are come with every turn. You hear "
        f"what is said around you. When someone speaks to you by name or whispers to "
        f"you, answer as {name} would, in a sentence or two of plain speech: that answer "
        "is said aloud in the room (or whispered back to a whisper). When nobody spoke "
        "to you, nothing you write is heard: act only through your tools (say, emote, "
        "move, ...). Use them to look around and remember what matters."
    )


def resolve_config(character: Any, *, django_settings: Any = None) -> AssistantConfig:
    """The configuration of ``character``'s assistant. Call on the reactor thread.

    Raises:
        ConfigError: a value is invalid; the message names where it was set.
    """
    if django_settings is None:
        from django.conf import settings

        django_settings = settings
    sources: dict[str, str] = {}

    def found(name: str) -> Any:
        value, source = _lookup(character, name, django_settings)
        if value is not _MISSING:
            sources[name] = source
        return value

    key = _key_of(character)
    overrides = {
        name: value
        for name in Settings.model_fields
        if name not in ("assistant_key", "data_dir") and (value := found(name)) is not _MISSING
    }
    options_given = {
        name: value
        for name in EvenniaOptions.model_fields
        if (value := found(name)) is not _MISSING
    }
    options = _validated(EvenniaOptions, options_given, sources, character)
    store_url = _store_url(overrides.pop("database_url", None), django_settings)
    settings = _validated(Settings, {**overrides, "database_url": store_url}, sources, character)
    prompt = options.system_prompt or default_system_prompt(
        str(character.key), str(getattr(django_settings, "SERVERNAME", "this game"))
    )
    return AssistantConfig(
        key=key,
        settings=settings,
        options=options,
        store_url=store_url,
        system_prompt=prompt,
        names=names_of(character, options),
        sources=sources,
    )


def names_of(character: Any, options: EvenniaOptions) -> tuple[str, ...]:
    """The names ``character`` answers to: its key, its aliases and ``options.names``."""
    aliases = character.aliases.all() if getattr(character, "aliases", None) else []
    names = [str(character.key), *(str(a) for a in aliases), *options.names]
    return tuple(dict.fromkeys(n.strip() for n in names if n and n.strip()))


def _key_of(character: Any) -> str:
    value = lookup(character, "key")
    if value is None:
        return default_key(str(character.key))
    if not isinstance(value, str) or not value.strip() or value != value.strip():
        raise ConfigError(
            f"mindspace_key of {_describe(character)} is {value!r}; set it to a non-empty "
            f"name without surrounding spaces, e.g. `set {character.key}/mindspace_key = "
            f"{default_key(str(character.key))}`."
        )
    return value


def _store_url(given: Any, django_settings: Any) -> str:
    if given is None:
        env = Settings().database_url
        if env:
            return env
        game_dir = getattr(django_settings, "GAME_DIR", None)
        if not game_dir:
            raise ConfigError(
                "Cannot place the mindspace store: Django's settings have no GAME_DIR; set "
                "MINDSPACE_DATABASE_URL in server/conf/settings.py."
            )
        given = Path(game_dir) / "server" / STORE_FILE_NAME
    text = str(given).strip()
    if not text:
        raise ConfigError(
            "MINDSPACE_DATABASE_URL is empty; remove it to use <GAME_DIR>/server/"
            f"{STORE_FILE_NAME}, or give a SQLAlchemy URL or a file path."
        )
    return database_url(text)


def _validated(model: Any, values: dict[str, Any], sources: dict[str, str], obj: Any) -> Any:
    try:
        return model(**values)
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            name = str(error["loc"][0]) if error.get("loc") else "?"
            where = sources.get(name, "the environment (MINDSPACE_" + name.upper() + ")")
            problems.append(f"{name} from {where}: {error['msg']} (got {error.get('input')!r})")
        raise ConfigError(
            f"Invalid mindspace configuration for {_describe(obj)}: "
            + "; ".join(problems)
            + ". Fix the value where it is set (see docs/evennia.md, Configuration)."
        ) from exc


def _describe(obj: Any) -> str:
    dbref = getattr(obj, "dbref", None)
    return f"{getattr(obj, 'key', obj)!s}({dbref})" if dbref else str(getattr(obj, "key", obj))
