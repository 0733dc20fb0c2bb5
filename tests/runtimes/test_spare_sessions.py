"""Sessions opened ahead (``robota.runtimes._spare_sessions``): which spec a spare serves, the
pool's rules (once, one per settings, aged out, bounded), and the agent actor handing a spare to
the next print route while opening the one after it, against ``fault_agent.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from robota.core.agents import SessionOpened, SessionSpec
from robota.core.testing import wait_until
from robota.runtimes._spare_sessions import MAX_AGE, MAX_SPARES, SparePool, spare_key

from ..support.agent_actor import Chat, agent, fault_launch

HERE = Path("/tmp/a")
AHEAD = SessionSpec(HERE, open_ahead=True, task_id="t1")


@pytest.mark.parametrize(
    ("spec", "resume_id", "served"),
    [
        (AHEAD, None, True),
        (SessionSpec(HERE, task_id="t1"), None, False),  # a route that takes no spares
        (AHEAD, "thread-1", False),  # a session resumed in a new process
        (SessionSpec(HERE, open_ahead=True, resume_id="thread-1"), None, False),
        (SessionSpec(HERE, open_ahead=True, fork_from="thread-1"), None, False),
    ],
)
def test_only_a_new_session_of_a_route_that_asks_is_served_ahead(
    spec: SessionSpec, resume_id: str | None, served: bool
) -> None:
    assert (spare_key(spec, resume_id) is not None) == served


@pytest.mark.parametrize(
    ("other", "same"),
    [
        (SessionSpec(HERE, open_ahead=True, task_id="t2"), True),  # another task, same opening
        (SessionSpec(Path("/tmp/b"), open_ahead=True), False),
        (SessionSpec(HERE, open_ahead=True, permission_mode="plan"), False),
        (SessionSpec(HERE, open_ahead=True, model="m2"), False),
        (SessionSpec(HERE, open_ahead=True, effort="high"), False),
        (SessionSpec(HERE, open_ahead=True, developer_instructions="be brief"), False),
        (SessionSpec(HERE, open_ahead=True, restricted=True), False),  # no MCP servers
        (SessionSpec(HERE, open_ahead=True, human_approves=False), False),
    ],
)
def test_a_spare_serves_only_the_settings_it_was_opened_with(
    other: SessionSpec, same: bool
) -> None:
    assert (spare_key(other, None) == spare_key(AHEAD, None)) == same


def test_a_spare_is_handed_out_once_and_one_opens_per_settings_at_a_time() -> None:
    pool = SparePool()
    key = spare_key(AHEAD, None)
    assert key is not None
    assert pool.take(key, 0.0) == (None, [])
    assert pool.wants(key)
    assert not pool.wants(key)  # already opening
    assert pool.opened(key, "s1", 1.0) == []
    assert not pool.wants(key)  # one waits
    assert pool.take(key, 2.0) == ("s1", [])
    assert pool.take(key, 2.0) == (None, [])  # never twice
    assert pool.wants(key)
    pool.failed(key)
    assert pool.wants(key)  # a failed opening may be tried again


def test_a_stale_spare_is_closed_not_handed_out() -> None:
    pool = SparePool()
    key = spare_key(AHEAD, None)
    assert key is not None and pool.wants(key)
    pool.opened(key, "s1", 0.0)
    assert pool.take(key, MAX_AGE + 1) == (None, ["s1"])


def test_spares_are_bounded_per_process_the_oldest_closed_first() -> None:
    pool = SparePool()
    keys = [SessionSpec(Path(f"/tmp/{n}")) for n in range(MAX_SPARES + 1)]
    closed: list[str] = []
    for n, key in enumerate(keys):
        assert pool.wants(key)
        closed += pool.opened(key, f"s{n}", float(n))
    assert closed == ["s0"]
    assert len(pool.spares) == MAX_SPARES


def _new_sessions(calls: Path) -> int:
    lines = calls.read_text().splitlines() if calls.exists() else []
    return lines.count("session/new")


async def test_a_print_route_takes_the_session_opened_ahead_and_the_next_one_opens(
    tmp_path: Path,
) -> None:
    calls = tmp_path / "calls"
    async with agent(fault_launch(tmp_path, FAULT_AGENT_CALLS=str(calls))) as host:
        first = Chat(host, "print:1", tmp_path)
        first.open(open_ahead=True, task_id="t1")
        opened = (await first.next(SessionOpened)).session_id
        assert (await first.turn("one")).final_text == "echo: one"
        await wait_until(lambda: _new_sessions(calls) == 2, timeout=10.0)
        spare = opened.rsplit("-", 1)[0] + "-2"

        second = Chat(host, "print:2", tmp_path)
        second.open(open_ahead=True, task_id="t2")
        assert (await second.next(SessionOpened)).session_id == spare
        # The spare never ran a turn: nothing of the first run's conversation is in it.
        assert (await second.turn("HISTORY")).final_text == "history: HISTORY"
        await wait_until(lambda: _new_sessions(calls) == 3, timeout=10.0)  # the next one

        # Other settings, or a route that takes no spares: a session of their own.
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        other = Chat(host, "print:3", elsewhere)
        other.open(open_ahead=True, task_id="t3")
        plain = Chat(host, "cli:4", tmp_path)
        plain.open(task_id="t4")
        ids = {(await chat.next(SessionOpened)).session_id for chat in (other, plain)}
        waiting = opened.rsplit("-", 1)[0] + "-3"
        assert waiting not in ids
        assert len(ids) == 2 and opened not in ids and spare not in ids

        # Two runs at once: one takes the spare, the other opens its own; never shared.
        pair = [Chat(host, f"print:{n}", tmp_path) for n in (5, 6)]
        for n, chat in enumerate(pair):
            chat.open(open_ahead=True, task_id=f"t{5 + n}")
        both = [(await chat.next(SessionOpened)).session_id for chat in pair]
        assert len(set(both)) == 2 and waiting in both
        for chat in pair:
            assert (await chat.turn("HISTORY")).final_text == "history: HISTORY"
        await trio.sleep(0.2)
        assert first.text() == "echo: one"  # no other run's events reached the first
