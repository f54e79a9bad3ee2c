"""Public names imported on first use (PEP 562), so that importing a package stays cheap.

``import mindspace`` and ``mindspace --help`` must not load the engine, SQLAlchemy or a
model SDK; a package lists each public name with the module that defines it and gets
its module-level ``__getattr__`` and ``__dir__`` from :func:`lazy_exports`. It is for
start-up cost only, never to hide an import cycle: the ``packages-acyclic`` contract
(pyproject.toml) checks the imports it defers as well.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of a package whose names load on first use.

    Args:
        package: The package's ``__name__`` (for the error message).
        exports: Each public name and the module that defines it.
        namespace: The package's ``globals()``; a loaded name is kept there.
    """

    def get(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted({*namespace, *exports})

    return get, names
