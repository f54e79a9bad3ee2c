"""bench/fusion_probe.py: reciprocal-rank fusion of a run's rankings, scored as the run is."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

Loader = Callable[[str], ModuleType]


def test_an_id_less_memory_keeps_its_slot_as_a_miss(bench_script: Loader) -> None:
    probe = bench_script("fusion_probe")
    # The product's fifth slot is the evidence only if the id-less memories before it
    # are dropped; the benchmark counts them as misses, so the probe must too.
    row = {
        "category": 4,
        "evidence": ["D1:5"],
        "product": ["D1:1", "", "", "D1:2", "D1:3", "D1:5"],
        "bm25": [],
        "dense": [],
    }
    assert probe.score([row], (1.0, 0.0, 0.0)) == {"hit@5 (1-4)": 0.0, "recall@10 (1-5)": 100.0}


def test_fusion_lifts_what_the_components_agree_on(tmp_path: Path, bench_script: Loader) -> None:
    probe = bench_script("fusion_probe")
    row = {
        "category": 1,
        "evidence": ["D2:9"],
        "product": ["D1:1", "D1:2", "D1:3", "D1:4", "D1:5", "D1:6", "D2:9"],
        "bm25": ["D2:9", "D3:1"],
        "dense": ["D2:9", "D3:2"],
    }
    assert probe.score([row], (1.0, 0.0, 0.0))["hit@5 (1-4)"] == 0.0
    assert probe.score([row], (1.0, 1.0, 1.0))["hit@5 (1-4)"] == 100.0
    out = tmp_path / "run.json"
    out.write_text(json.dumps({"rankings": [row]}))
    assert probe.main([str(out)]) == 0
