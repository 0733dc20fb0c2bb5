"""Repeat the handoff's chaos matrix N times per moment and count what went wrong.

    .venv/bin/python tools/handoff_chaos.py [--runs N] [--point P|all] [--seed S] [--loopback]

Two real hosts (a laptop and a desk, codex-acp on the fake model) in two network namespaces
joined by a veth pair (on loopback with ``--loopback``, or where namespaces cannot be made: not
root, no ``ip``), linked (tests/mesh/_handoff_chaos.py). Each run makes a task with two turns on
the laptop and pushes it to the desk, whose operator accepts it; the hosts stop themselves at
the run's moments (``robota.host._handoff_pause``) and are SIGKILLed there, the stopped one, the
other or both (drawn), then started again and the link healed. A run's first kill is at the
point it counts for; with one chance in two a second kill follows at a later moment (drawn too).
Once the run settled, the two stores say where the task can run.

Printed per point: the runs, the task on neither device, on both, its history incomplete on
the device that has it, ok (on exactly one, all its turns), and runs that broke before they
settled (a host that did not start, say: counted apart); with the load average before and
after. Exit 1 when anything went wrong.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import traceback
from contextlib import ExitStack
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.mesh._handoff_chaos import (  # noqa: E402 (needs the path set above)
    MOMENTS,
    Device,
    Tally,
    chaos_run,
    loopback_devices,
    namespace_devices,
    plan_for,
)
from tests.support.model_server import FakeModel  # noqa: E402


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _devices(stack: ExitStack, root: Path, loopback: bool) -> tuple[Device, Device]:
    """The two linked devices, in namespaces unless ``loopback`` or none can be made."""
    for kind in ("ns", "lo"):
        (root / kind).mkdir()
    if not loopback:
        try:
            tag = f"hx{os.getpid() % 100000}"
            return stack.enter_context(namespace_devices(root / "ns", tag))
        except pytest.skip.Exception as why:
            print(f"no namespaces ({why}); on loopback", file=sys.stderr)
    model = stack.enter_context(FakeModel())
    return stack.enter_context(loopback_devices(root / "lo", model.url))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per point (default 5)")
    parser.add_argument("--point", default="all", choices=(*MOMENTS, "all"))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--loopback", action="store_true", help="no network namespaces")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    points = MOMENTS if args.point == "all" else (args.point,)
    tally, broken = Tally(), dict.fromkeys(points, 0)
    print(f"seed {seed}; load average before: {_load()}", flush=True)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="handoff-chaos-") as tmp, ExitStack() as stack:
        root = Path(tmp)
        laptop, desk = _devices(stack, root, args.loopback)
        for n in range(args.runs):
            for point in points:
                plan = plan_for(point, rng)
                try:
                    outcome = chaos_run(laptop, desk, plan, root / "accept.log")
                except Exception:  # a run that broke: counted apart, the hosts restarted
                    broken[point] += 1
                    traceback.print_exc()
                    for device in (laptop, desk):
                        device.stop()
                    for device in (laptop, desk):
                        device.start()
                    continue
                tally.add(point, outcome)
                print(
                    f"run {n + 1} {point}: kills {' '.join(outcome.kills) or '-'}; "
                    f"phases {'/'.join(outcome.phases)}; "
                    f"{'ok' if outcome.ok else 'NOT OK'}"
                    f"{'' if outcome.settled else ' (not settled)'}",
                    flush=True,
                )
    print(f"\n{args.runs} runs per point in {time.monotonic() - began:.0f} s, seed {seed}")
    print(f"load average after: {_load()}")
    print(tally.table())
    print("broken runs: " + ", ".join(f"{p} {n}" for p, n in broken.items()))
    bad = any(row[4] != row[0] for row in tally.rows.values()) or any(broken.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
