"""The engine's quiet passivation and its shared readers, with a real store and agent."""

from __future__ import annotations

from pathlib import Path

from robota.core.engine import RouteIdle, TaskOpened, TurnFinished, UserInput
from robota.core.testing import Recording, wait_until

from ._engine import make_engine, of, running, until


async def test_a_quiet_route_passivates_and_its_next_prompt_goes_on_in_its_task(
    tmp_path: Path,
) -> None:
    engine = make_engine(tmp_path, quiet_after=0.2)
    notices = Recording()
    engine.connect("console:quiet", notices.add)
    async with running(engine):
        engine.tell("console:quiet", UserInput("hello"))
        [first] = await until(notices, TurnFinished)
        await until(notices, RouteIdle)
        await wait_until(lambda: engine.directory.passivations == 1, timeout=20)
        assert engine.directory.active == 0
        engine.tell("console:quiet", UserInput("again"))
        await until(notices, TurnFinished, 2)
    second = of(notices, TurnFinished)[1]
    assert (second.task_id, second.final_text) == (first.task_id, "echo: again")
    assert {o.task_id for o in of(notices, TaskOpened)} == {first.task_id}
    assert engine.directory.activations == 2


async def test_many_routes_read_through_a_few_connections(tmp_path: Path) -> None:
    engine = make_engine(tmp_path)
    notices = Recording()
    keys = [f"console:{n}" for n in range(12)]
    for key in keys:
        engine.connect(key, notices.add)
    async with running(engine):
        for key in keys:
            engine.tell(key, UserInput("/status"))
        await until(notices, RouteIdle, len(keys))
        assert engine.directory.active == len(keys)
        assert 1 <= engine.context.readers.opened <= engine.context.readers.size
    assert engine.context.readers.opened == 0, "the engine's end closed its readers"


async def test_a_wave_of_passivations_closes_the_shared_readers_until_the_next_read(
    tmp_path: Path,
) -> None:
    """Issue 28 s.3: once the routes of a burst passivated, the engine's readers give back
    their page caches (closed); the next route's read opens one again."""
    engine = make_engine(tmp_path, quiet_after=0.2)
    notices = Recording()
    keys = [f"console:{n}" for n in range(6)]
    for key in keys:
        engine.connect(key, notices.add)
    async with running(engine):
        for key in keys:
            engine.tell(key, UserInput("/status"))
        await until(notices, RouteIdle, len(keys))
        assert engine.context.readers.opened >= 1
        await wait_until(lambda: engine.directory.active == 0, timeout=20)
        await wait_until(lambda: engine.context.readers.opened == 0, timeout=10)
        engine.tell(keys[0], UserInput("hello"))
        await until(notices, TurnFinished)
        assert engine.context.readers.opened >= 1
