"""Loading the benchmark scripts of bench/ (not a package) for their tests."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

_BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture
def bench_script() -> Callable[[str], ModuleType]:
    """Loads ``bench/<name>.py`` as a module."""

    def load(name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(name, _BENCH / f"{name}.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
