"""Issue 4 "done when": routed search over SciFact thirds keeps >= 95% of single-library nDCG@10."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from conftest import shared_data

BENCH = Path(__file__).resolve().parents[3] / "bench" / "bench_routing_scifact.py"


@pytest.mark.slow
def test_routed_search_keeps_95_percent_of_single_library_ndcg(tmp_path: Path) -> None:
    data = shared_data("scifact")
    sys.path.insert(0, str(BENCH.parent))
    try:
        spec = importlib.util.spec_from_file_location("bench_routing_scifact", BENCH)
        assert spec is not None and spec.loader is not None
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
    finally:
        sys.path.remove(str(BENCH.parent))
    figures = bench.run(data, tmp_path)
    assert figures["queries"] == 809
    assert figures["ndcg_single"] > 0.66
    assert figures["ratio"] >= 0.95, figures
