"""bench/recall_select.py: fusion settings chosen across data sets, under a floor."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

Loader = Callable[[str], ModuleType]


def _report(hit: float, recall: float) -> dict[str, object]:
    return {"overall_1_4": {"hit@5": hit}, "overall_1_5": {"recall@10": recall}}


def _set(tmp_path: Path, name: str, variants: dict[str, tuple[float, float]]) -> str:
    grid = tmp_path / f"{name}-grid.json"
    grid.write_text(json.dumps({"variants": {v: _report(*f) for v, f in variants.items()}}))
    bench = tmp_path / f"{name}-bench.json"
    bench.write_text(json.dumps({"bm25": _report(50, 55), "dense": _report(60, 65)}))
    return f"{name}={grid},{bench}"


def test_the_choice_is_the_best_worst_margin_over_the_better_component(
    tmp_path: Path, bench_script: Loader, capsys: pytest.CaptureFixture[str]
) -> None:
    select = bench_script("recall_select")
    # "strong" wins big on one set and falls below dense on the other; "steady" stays
    # above both components on both sets, so its worst margin is the best.
    one = _set(tmp_path, "one", {"strong": (90, 90), "steady": (70, 72)})
    two = _set(tmp_path, "two", {"strong": (58, 70), "steady": (68, 70)})
    assert select.main([one, two]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["chosen on every set"] == "steady"
    assert result["per set"]["two"]["margin"] == 5.0  # min(68 - 60, 70 - 65)
    # Held out, each set gets what the other one chooses.
    assert result["leave one set out"]["one"]["chosen on the others"] == "steady"
    # A floor on a set leaves out a variant under it, whatever its margins.
    assert select.main([one, two, "--floor", "one=75,75"]) == 0
    floored = json.loads(capsys.readouterr().out)
    assert floored["chosen on every set"] == "strong"
