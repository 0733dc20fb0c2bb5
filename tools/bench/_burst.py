"""Memory after a burst (issue 28 s.3): the host's idle RSS before a chat burst and after it.

Both figures come from the same run and the same host process (``/proc/PID/status``, the host
alone, its agents' processes apart), each read once the host is idle:

* before: ``BEFORE_QUIET`` seconds after the turns before the burst (their routes passivated,
  5 s after they settled, and the route sweep's wave over);
* after: ``AFTER_QUIET`` seconds after the burst's last answer: its routes passivated, the chat
  transport's lanes let go (``RETIRE_AFTER`` 60 s quiet, looked at every 15 s) and the route
  sweep's ``after_passivations`` run, which collects cyclic garbage and gives glibc's free heap
  back (``robota.core.kernel.release_free_memory``): ``gc`` has had its chance.

The ratio after / before is held to ``TARGET`` (within 10 %). ``--quick`` runs read both sooner
(``QUICK_QUIET``): they show the rows work, not the figure.
"""

from __future__ import annotations

from pathlib import Path

import trio
from _real import rss_kib, verdict

__all__ = [
    "AFTER_QUIET",
    "BEFORE_QUIET",
    "QUICK_QUIET",
    "TARGET",
    "IdleRss",
    "idle_rss",
    "rows",
    "threads",
]

BEFORE_QUIET = 15.0
AFTER_QUIET = 90.0
QUICK_QUIET = (2.0, 5.0)
TARGET = 1.10


class IdleRss:
    """One reading: the host's RSS (MB) and its threads."""

    __slots__ = ("mb", "threads")

    def __init__(self, mb: float, threads: int) -> None:
        self.mb = mb
        self.threads = threads


def threads(pid: int) -> int:
    """The threads of one process (``/proc``): the host's actors run one each."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


async def idle_rss(pid: int, since: float, quiet: float) -> IdleRss:
    """The host's RSS once ``quiet`` seconds passed after ``since`` (``trio.current_time``)."""
    await trio.sleep_until(since + quiet)
    return IdleRss(rss_kib(pid) / 1024, threads(pid))


def rows(
    label: str,
    before: IdleRss,
    after: IdleRss,
    quiet: tuple[float, float] = (BEFORE_QUIET, AFTER_QUIET),
) -> list[str]:
    """The two readings (``quiet``: the seconds each waited) and their ratio against the
    target."""
    ratio = after.mb / before.mb if before.mb else float("inf")
    return [
        f"host RSS idle before the {label}  {before.mb:6.1f} MB ({before.threads} threads, "
        f"{quiet[0]:g} s after the turns before it)",
        f"host RSS idle after the {label}   {after.mb:6.1f} MB ({after.threads} threads, "
        f"{quiet[1]:g} s after its last answer)",
        f"  after / before {ratio:.3f}  target <= {TARGET:.2f}: {verdict(ratio, TARGET)}",
    ]
