"""Kill a chat host N times at random moments and count what a person would have seen go wrong.

    .venv/bin/python tools/chaos.py [--kills N] [--transport feishu|slack|team|all] [--seed S]

Per transport, a real host (``robota server run``'s process, with codex-acp on the fake model)
serves the tests' fake platform (tests/transports/chaos.py: the Feishu Open Platform, Slack, a
Feishu team group with one slot). One message after another, each host is SIGKILLed at a moment
drawn at random from ``chaos.MOMENTS`` (after the message's reaction, between the platform
keeping the turn's card and the host's record of it, mid-turn, during the turn
continued after the last kill, between the terminal card and the final, between the platform
keeping the final and the host's record of it, between the terminal reaction and the removal
of the working one, while a queued prompt waits) or at a random delay
of up to 3 s after the message was pushed (``random``), and started again, until N kills were
made; an event a killed host never acknowledged is delivered again to the next, as the platform
does. Then a last host runs until everything settled (or 120 s).

Printed per transport: the kills, the messages, and what went wrong: messages lost (no final),
doubled (more than one final), with stale reactions (the working one left, or no terminal one),
cards left running, cards redrawn as running after they ended, cards posted twice (a second
progress message for one turn); then the moments drawn. Exit 1
when anything went wrong.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.chaos import (  # noqa: E402 (needs the path set above)
    MOMENTS,
    Run,
    Tally,
    feishu_chaos,
    host_logs,
    slack_chaos,
)

DRAWN = (*MOMENTS, "random")


async def kills(run: Run, count: int, rng: random.Random) -> Tally:
    while run.tally.kills < count:
        await run.killed(rng.choice(DRAWN), rng)
    return await run.settle()


async def one(transport: str, count: int, rng: random.Random, keep: bool) -> Tally:
    root = Path(tempfile.mkdtemp(prefix="robota-chaos-", dir="/tmp"))
    try:
        if transport == "slack":
            async with slack_chaos(root) as run:
                tally = await kills(run, count, rng)
        else:
            async with feishu_chaos(root, team=transport == "team") as run:
                tally = await kills(run, count, rng)
    except BaseException:
        # A host that never came up (or a wait that ran out) ends the run: its logs say why.
        if keep:
            print(_logs(root), file=sys.stderr)
        raise
    else:
        if not tally.clean and keep:
            print(_logs(root), file=sys.stderr)
        return tally
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _logs(root: Path) -> str:
    """The end of the hosts' logs and of their output (``host.log``: what a host printed
    before it logged anything, a traceback)."""
    output = root / "host.log"
    printed = output.read_text(errors="replace")[-4000:] if output.exists() else ""
    return host_logs(root)[-8000:] + "\n-- host output --\n" + printed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kills", type=int, default=100, help="kills per transport (100)")
    parser.add_argument("--transport", choices=("feishu", "slack", "team", "all"), default="all")
    parser.add_argument("--seed", type=int, default=None, help="the random moments' seed")
    parser.add_argument("--logs", action="store_true", help="print the hosts' logs on a failure")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    transports = ("feishu", "slack", "team") if args.transport == "all" else (args.transport,)
    print(f"seed {seed}", flush=True)
    clean = True
    for transport in transports:
        rng = random.Random(f"{seed}:{transport}")
        tally = trio.run(one, transport, args.kills, rng, args.logs)
        print(tally.line(transport), flush=True)
        print(f"  moments: {dict(sorted(tally.moments.items()))}", flush=True)
        for label, items in (
            ("lost", tally.lost),
            ("doubled", tally.doubled),
            ("stale", tally.stale),
            ("running", tally.running),
            ("redrawn", tally.redrawn),
            ("posted twice", tally.twice),
        ):
            if items:
                print(f"  {label}: {items}", flush=True)
        clean = clean and tally.clean
    return 0 if clean else 1


if __name__ == "__main__":
    raise SystemExit(main())
