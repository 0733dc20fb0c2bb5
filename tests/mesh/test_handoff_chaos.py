"""The handoff under crashes (issue 30 §3, "Tests and chaos"): two real hosts in two network
namespaces joined by a veth pair, a real agent against each namespace's fake model, a task with
two turns pushed from the laptop to the desk and both hosts SIGKILLed at every moment of the
handoff in turn (after the offer, mid-transfer, after staging, after the destination's commit
before its acknowledgement went, after the acknowledgement before the source recorded it),
each started again and the link healed: the task then runs on exactly one device, the desk,
whose copy brought both turns. ``tools/handoff_chaos.py`` repeats such runs N times per moment.
"""

from __future__ import annotations

import os
from pathlib import Path

from ._handoff_chaos import MOMENTS, Kill, chaos_run, namespace_devices


def test_both_hosts_killed_at_every_moment_of_one_handoff_leave_the_task_on_one_device(
    tmp_path: Path,
) -> None:
    tag = f"hc{os.getpid() % 100000}"
    with namespace_devices(tmp_path, tag) as (laptop, desk):
        plan = [Kill(moment, "both") for moment in MOMENTS]
        outcome = chaos_run(laptop, desk, plan, tmp_path / "accept.log")
    assert outcome.kills == [f"{moment}/both" for moment in MOMENTS], outcome
    assert outcome.settled and outcome.phases == ("committed", "committed"), outcome
    assert outcome.on_destination and not outcome.on_source, outcome
    assert outcome.history_complete, outcome
