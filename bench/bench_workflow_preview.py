"""Benchmark: workflow preview time vs a plain ``yaml.safe_load`` of the same text.

Run: ``python bench/bench_workflow_preview.py [--nodes 5000]``. Measures the largest shared Dify
export (71 nodes) and a generated 5,000-node graph, with and without exported positions (the latter
exercises the layered layout). Baselines run in the same process: PyYAML's ``safe_load``
(pure Python) and ``load`` with the libyaml ``CSafeLoader`` (parse only, no checks).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ragspine.workflows import PreviewLimits, preview

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "dify" / "deep_researcher.yml"


def timed(function: Callable[[], Any], repeats: int) -> float:
    """Median wall time in seconds over ``repeats`` runs (after one warm-up)."""
    function()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def generated_export(count: int, *, positions: bool) -> str:
    """A ``kind: app`` export with ``count`` nodes: a chain with if-else branches every 10 nodes."""
    nodes = []
    edges = []
    for index in range(count):
        node_type = "if-else" if index % 10 == 5 else "llm"
        data: dict[str, Any] = {
            "type": node_type,
            "title": f"Step {index}",
            "desc": "",
            "model": {"provider": "openai", "name": "gpt-4o", "completion_params": {}},
            "prompt_template": [{"role": "system", "text": f"You are step {index}. " * 5}],
        }
        if node_type == "if-else":
            data["cases"] = [{"case_id": "true", "conditions": [], "logical_operator": "and"}]
        item: dict[str, Any] = {"id": f"n{index}", "type": "custom", "data": data}
        if positions:
            item.update(
                position={"x": 300.0 * (index // 20), "y": 120.0 * (index % 20)},
                positionAbsolute={"x": 300.0 * (index // 20), "y": 120.0 * (index % 20)},
                width=244,
                height=90,
            )
        nodes.append(item)
        if index:
            parent = index - 1
            handle = "true" if parent % 10 == 5 else "source"
            edges.append(
                {
                    "id": f"e{index}",
                    "source": f"n{parent}",
                    "target": f"n{index}",
                    "sourceHandle": handle,
                    "targetHandle": "target",
                }
            )
            if parent % 10 == 5 and index + 1 < count:
                edges.append(
                    {
                        "id": f"f{index}",
                        "source": f"n{parent}",
                        "target": f"n{index + 1}",
                        "sourceHandle": "false",
                        "targetHandle": "target",
                    }
                )
    doc = {
        "app": {"name": "generated", "mode": "workflow"},
        "kind": "app",
        "version": "0.3.1",
        "workflow": {"graph": {"nodes": nodes, "edges": edges}},
    }
    return yaml.dump(doc, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), sort_keys=False)


def report(label: str, text: str, repeats: int, limits: PreviewLimits) -> None:
    size_kb = len(text.encode("utf-8")) / 1024
    result = preview(text, limits=limits)
    ours = timed(lambda: preview(text, limits=limits), repeats)
    pure = timed(lambda: yaml.safe_load(text), repeats)
    fast_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    fast = timed(lambda: yaml.load(text, Loader=fast_loader), repeats)
    svg = timed(result.to_svg, repeats)
    print(
        f"{label}: {len(result.nodes)} nodes, {len(result.edges)} edges, {size_kb:.0f} kB\n"
        f"  preview (load + checks + layout)  {ours * 1000:9.1f} ms\n"
        f"  baseline yaml.safe_load           {pure * 1000:9.1f} ms   ratio {ours / pure:5.2f}x\n"
        f"  baseline yaml CSafeLoader         {fast * 1000:9.1f} ms   ratio {ours / fast:5.2f}x\n"
        f"  to_svg                            {svg * 1000:9.1f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5_000, help="size of the generated graph")
    args = parser.parse_args()
    print(
        f"python {sys.version.split()[0]}, PyYAML {yaml.__version__}, "
        f"libyaml {'yes' if yaml.__with_libyaml__ else 'no'}"
    )
    limits = PreviewLimits(max_bytes=64 * 1024 * 1024)
    if SHARED.exists():
        report("deep_researcher.yml (largest shared export)", SHARED.read_text("utf-8"), 15, limits)
    else:
        print(f"skipped shared export: {SHARED} not found")
    for positions in (True, False):
        text = generated_export(args.nodes, positions=positions)
        label = f"generated {args.nodes:,} nodes " + (
            "with positions" if positions else "without positions"
        )
        report(label, text, 1, limits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
