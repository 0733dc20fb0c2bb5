"""The reaper ends agent process groups that outlive robota, and only those."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from robota.runtimes._reaper import MARK, Reaper, watcher_command

STUBBORN = (
    "import signal, sys, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "print('ready', flush=True)\n"
    "time.sleep(60)\n"
)
"""An agent that ignores SIGTERM (and never reads its stdin, so EOF means nothing to it)."""

POLITE = "import time\nprint('ready', flush=True)\ntime.sleep(60)\n"


@contextmanager
def group(program: str, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """A process in a session (and process group) of its own, as robota starts agents."""
    process = subprocess.Popen(
        [sys.executable, "-c", program],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        process.stdout.close()


def test_groups_still_watched_at_the_end_are_terminated_then_killed() -> None:
    reaper = Reaper(grace=0.5)
    with group(STUBBORN) as stubborn, group(POLITE) as polite, group(POLITE) as forgotten:
        for process in (stubborn, polite, forgotten):
            reaper.watch(process.pid)
        reaper.forget(forgotten.pid)
        watcher = reaper.pid
        assert watcher is not None
        reaper.close()  # what robota's death does to the pipe
        assert polite.wait(timeout=5) == -signal.SIGTERM
        assert stubborn.wait(timeout=5) == -signal.SIGKILL
        assert forgotten.poll() is None, "a group robota ended itself is left alone"
    assert not _alive(watcher), "the watcher exits once it has ended the groups"


def test_the_watcher_ignores_lines_that_name_no_group() -> None:
    with group(POLITE) as polite:
        watcher = subprocess.Popen(
            watcher_command(0.5), stdin=subprocess.PIPE, text=True, start_new_session=True
        )
        # (Groups 0 and 1 are refused too, by the same check; a test that got that wrong
        # would signal every process it may, so it is not tried here.)
        lines = "nonsense\n+\n-x\n+12ab\n++5\n- 7\n" + f"+{polite.pid}\n"
        watcher.communicate(lines, timeout=10)
        assert watcher.returncode == 0
        assert polite.wait(timeout=5) == -signal.SIGTERM  # only the one well-formed group


def test_marked_processes_end_with_robota_though_no_group_was_named() -> None:
    """A child that robota died too early to ``watch`` (and one the agent put in a session of
    its own) ends by its mark; another robota's marked process and an unmarked one stay."""
    reaper, other = Reaper(grace=0.5), Reaper(grace=0.5)
    env = dict(os.environ)
    with (
        group(STUBBORN, reaper.marked(env)) as unnamed,
        group(POLITE, reaper.marked(env)) as polite,
        group(POLITE, other.marked(env)) as others,
        group(POLITE, env) as unmarked,
    ):
        reaper.close()
        assert unnamed.wait(timeout=5) == -signal.SIGKILL
        assert polite.wait(timeout=5) == -signal.SIGTERM
        assert others.poll() is None and unmarked.poll() is None
        other.close()
        assert others.wait(timeout=5) == -signal.SIGTERM
        assert unmarked.poll() is None


def test_the_mark_names_no_group_twice_and_no_low_group() -> None:
    """A watched group that is also marked is signalled once; the watcher exits on time."""
    reaper = Reaper(grace=0.5)
    with group(POLITE, reaper.marked(dict(os.environ))) as polite:
        reaper.watch(polite.pid)
        watcher = reaper.pid
        assert watcher is not None
        assert f"{MARK}=" not in Path(f"/proc/{watcher}/environ").read_text()
        reaper.close()
        assert polite.wait(timeout=5) == -signal.SIGTERM
    assert not _alive(watcher)


def test_an_agent_outlives_no_sigkilled_robota(tmp_path: Path) -> None:
    """A process that starts an agent the way robota does, then dies by SIGKILL."""
    assert_agent_ends_with_its_killed_owner(
        tmp_path,
        f"""
        import sys, time, trio
        from robota.runtimes._process import AgentProcess

        async def main():
            agent = await AgentProcess.start(
                "stubborn", [sys.executable, "-c", {STUBBORN!r}], env={{}}
            )
            await agent.process.stdout.receive_some()  # it is up and asleep
            print(agent.pid, flush=True)
            await trio.sleep(60)

        trio.run(main)
        """,
    )


def test_a_robota_killed_between_the_spawn_and_the_watch_leaves_no_agent(tmp_path: Path) -> None:
    """The window the mark closes: the host SIGKILLed after its agent's fork, before ``watch``."""
    assert_agent_ends_with_its_killed_owner(
        tmp_path,
        f"""
        import os, subprocess, sys, time
        from robota.runtimes._reaper import REAPER

        agent = subprocess.Popen(
            [sys.executable, "-c", {STUBBORN!r}],
            stdout=subprocess.PIPE,
            env=REAPER.marked(os.environ),
            start_new_session=True,
        )
        agent.stdout.readline()
        print(agent.pid, flush=True)  # and never REAPER.watch(agent.pid)
        time.sleep(60)
        """,
    )


def assert_agent_ends_with_its_killed_owner(tmp_path: Path, owner_program: str) -> None:
    """Run ``owner_program`` (it prints its agent's pid once the agent is up), SIGKILL it, and
    see the agent end within 15 s."""
    owner_script = tmp_path / "owner.py"
    owner_script.write_text(textwrap.dedent(owner_program))
    owner = subprocess.Popen([sys.executable, str(owner_script)], stdout=subprocess.PIPE, text=True)
    agent_pid = 0
    try:
        assert owner.stdout is not None
        agent_pid = int(owner.stdout.readline())
        assert _alive(agent_pid)
        owner.kill()
        owner.wait(timeout=10)
        deadline = time.monotonic() + 15
        while _alive(agent_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(agent_pid), "the agent outlived its SIGKILLed owner"
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait(timeout=10)
        assert owner.stdout is not None
        owner.stdout.close()
        if agent_pid and _alive(agent_pid):
            os.killpg(agent_pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Running and not a zombie (the agent's parent is gone; init reaps it when it can)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"
