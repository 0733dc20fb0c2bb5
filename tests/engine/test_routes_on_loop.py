"""The engine's routes on its trio loop: many active routes, turns and crashes start no thread
of their own (issue 28 s.3: a chat burst's hundred routes were a hundred threads)."""

from __future__ import annotations

import threading
from pathlib import Path

from robota.core.engine import RouteIdle, TurnFinished, UserInput
from robota.core.testing import Recording, crash

from ._engine import make_engine, of, running, until


async def test_many_active_routes_and_their_turns_add_no_thread(tmp_path: Path) -> None:
    engine = make_engine(tmp_path)
    notices = Recording()
    keys = [f"console:{n}" for n in range(30)]
    for key in keys:
        engine.connect(key, notices.add)
    async with running(engine):
        engine.tell(keys[0], UserInput("warm up"))
        await until(notices, TurnFinished)
        before = {t.ident for t in threading.enumerate()}
        for key in keys:
            engine.tell(key, UserInput("/status"))
        await until(notices, RouteIdle, len(keys))
        assert engine.directory.active == len(keys)
        for key in keys[:5]:
            engine.tell(key, UserInput(f"hello from {key}"))
        finished = await until(notices, TurnFinished, 6)
        started = {t.ident for t in threading.enumerate()} - before
    assert sorted(f.final_text for f in finished[1:]) == sorted(
        f"echo: hello from {key}" for key in keys[:5]
    )
    assert not started, "routes and their turns ran on the loop, starting no thread"


async def test_a_crashed_route_on_the_loop_restarts_and_takes_its_next_prompt(
    tmp_path: Path,
) -> None:
    engine = make_engine(tmp_path)
    notices = Recording()
    engine.connect("console:crash", notices.add)
    async with running(engine):
        engine.tell("console:crash", UserInput("first"))
        await until(notices, TurnFinished)
        address = engine.directory.address("console:crash")
        assert address is not None
        activations = engine.directory.activations
        crash(address, "a route's bug")
        engine.tell("console:crash", UserInput("second"))
        await until(notices, TurnFinished, 2)
        assert engine.directory.activations == activations + 1
    texts = [f.final_text for f in of(notices, TurnFinished)]
    assert texts == ["echo: first", "echo: second"]
    assert len({f.task_id for f in of(notices, TurnFinished)}) == 1
