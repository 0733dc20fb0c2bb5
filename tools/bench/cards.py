"""Card rendering benchmark: render time per update and bytes per card, per platform.

    .venv/bin/python tools/bench/cards.py [--quick] [--tools N]

One turn of N tool calls (default 1000: started, two output deltas, completed; a reasoning
summary every 10 tools, a commentary message every 25) is fed into a ``TurnView``; after every
tool completes, each renderer draws the update the card actor would send. Printed per renderer:
p50 and p99 render time, the ratio against a baseline measured in the same run on the same
views (``json.dumps`` of the view snapshot, what persisting the turn costs), and the bytes of
the last card. The issue's bar: a Feishu render under 2 ms at p99 (a long render holds the
interpreter and delays every socket of the process).
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Any

from robota.core.events import (
    ReasoningDelta,
    RuntimeEvent,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUpdated,
    TurnCompleted,
    TurnStarted,
)
from robota.core.presentation import (
    FeishuRenderer,
    TurnView,
    render_slack_progress,
    render_terminal,
)


def turn(tools: int) -> list[list[RuntimeEvent]]:
    """The turn's events, batched per update point (one batch per tool)."""
    batches: list[list[RuntimeEvent]] = [[TurnStarted("bench")]]
    for i in range(tools):
        batch: list[RuntimeEvent] = []
        if i % 25 == 0:
            batch.append(TextDelta(f"m{i}", f"Now looking at part {i // 25} of the codebase."))
        if i % 10 == 0:
            batch.append(ReasoningDelta(f"r{i}", f"**Checking module {i // 10}**\n\nreading"))
        command = f"/bin/bash -lc 'rg -n pattern src/module_{i}.py | head -20'"
        batch.append(ToolStarted(f"call_{i:05d}", "command", "rg", command=command, cwd="/w"))
        batch.append(ToolUpdated(f"call_{i:05d}", output_delta=f"src/module_{i}.py:1: match\n"))
        batch.append(ToolUpdated(f"call_{i:05d}", output_delta="src/other.py:9: match\n" * 5))
        batch.append(ToolCompleted(f"call_{i:05d}", "completed", exit_code=0))
        batches.append(batch)
    batches.append([TextDelta("final", "All done."), TurnCompleted("bench", "completed")])
    return batches


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def measure(tools: int) -> dict[str, tuple[list[float], int]]:
    feishu_grouped = FeishuRenderer(agent="codex")
    feishu_timeline = FeishuRenderer(agent="codex", layout="timeline")
    renderers: dict[str, Callable[[TurnView], Any]] = {
        "baseline: json.dumps(view.to_json())": lambda v: json.dumps(v.to_json()),
        "feishu grouped": lambda v: feishu_grouped.render(v, elapsed=10.0).json,
        "feishu timeline": lambda v: feishu_timeline.render(v, elapsed=10.0).json,
        "slack": lambda v: json.dumps(render_slack_progress(v, agent="codex").payload()),
        "terminal (all)": lambda v: "\n".join(render_terminal(v, agent="codex")),
        "terminal (last 20 items)": lambda v: "\n".join(render_terminal(v, agent="codex", last=20)),
    }
    samples: dict[str, list[float]] = {name: [] for name in renderers}
    sizes: dict[str, int] = {}
    view = TurnView()
    gc.collect()
    for batch in turn(tools):
        for event in batch:
            view.apply(event)
        for name, render in renderers.items():
            started = time.perf_counter()
            out = render(view)
            samples[name].append(time.perf_counter() - started)
            sizes[name] = len(out.encode("utf-8"))
    return {name: (samples[name], sizes[name]) for name in renderers}


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 tools instead of 1000")
    parser.add_argument("--tools", type=int, default=1000)
    args = parser.parse_args()
    tools = 200 if args.quick else args.tools
    results = measure(tools)
    baseline = results["baseline: json.dumps(view.to_json())"][0]
    rows = [("renderer", "p50", "p99", "p99 vs baseline", "bytes (last card)")]
    for name, (samples, size) in results.items():
        rows.append(
            (
                name,
                ms(percentile(samples, 50)),
                ms(percentile(samples, 99)),
                f"{percentile(samples, 99) / percentile(baseline, 99):.2f}x",
                f"{size:,}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print(f"{tools} tool calls, {tools + 2} updates per renderer")
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
