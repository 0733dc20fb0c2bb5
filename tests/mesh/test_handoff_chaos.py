"""The handoff under crashes (issue 30 §3, "Tests and chaos"): two real hosts in two network
namespaces joined by a veth pair, a real agent against each namespace's fake model, a task with
two turns pushed from the laptop to the desk and both hosts SIGKILLed at every moment of the
handoff in turn (after the offer, mid-transfer, after staging, after the destination's commit
before its acknowledgement went, after the acknowledgement before the source recorded it),
each started again and the link healed; then a second task's handoff with one side killed at
each moment while the other goes on. Each time the task then runs on exactly one device, the
desk, whose copy brought both turns. ``tools/handoff_chaos.py`` repeats such runs N times per
moment.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._handoff_chaos import MOMENTS, Kill, chaos_run, namespace_devices

ONE_SIDE = ("source", "destination", "source", "source", "destination")
"""The second handoff's kills: one side at each moment (the other goes on meanwhile)."""


def test_hosts_killed_at_every_moment_of_a_handoff_leave_the_task_on_one_device(
    tmp_path: Path,
) -> None:
    tag = f"hc{os.getpid() % 100000}"
    with namespace_devices(tmp_path, tag) as (laptop, desk):
        both = [Kill(moment, "both") for moment in MOMENTS]
        first = chaos_run(laptop, desk, both, tmp_path / "accept.log")
        one = [Kill(moment, who) for moment, who in zip(MOMENTS, ONE_SIDE, strict=True)]
        second = chaos_run(laptop, desk, one, tmp_path / "accept.log")
    for outcome, plan in ((first, both), (second, one)):
        assert outcome.kills == [f"{k.moment}/{k.who}" for k in plan], outcome
        assert outcome.settled and outcome.phases == ("committed", "committed"), outcome
        assert outcome.on_destination and not outcome.on_source, outcome
        assert outcome.history_complete, outcome
