"""An engine that keeps one owner per task (``EngineContext.owning``, the terminal's): its route
asks before it takes up an existing task (``/switch``, ``UseTask``) and before it gives its
current task input, and tells every task it binds (made by ``/new``, switched to) where it
binds it. The fault agent and a real engine run; the owning is a recording double."""

from __future__ import annotations

from pathlib import Path

import trio

from robota.core.engine import NewTask, RouteReply, TaskOpened, TaskSettings, UserInput, UseTask
from robota.core.store import CreateTask, Database, StoreClient
from robota.core.testing import Recording, wait_until

from ._engine import ROUTE, make_engine, of, running, until

HELD = "task held is driven by host (pid 7); the terminal does not open its agent session"


class Owning:
    """Refuses what ``held`` names; records what was asked and bound."""

    def __init__(self) -> None:
        self.held: dict[str, str] = {"held": HELD}
        self.asked: list[tuple[str, str]] = []
        self.bound_tasks: list[tuple[str, str]] = []

    def refusal(self, db: Database, route_key: str, task_id: str) -> str | None:
        assert db is not None
        self.asked.append((route_key, task_id))
        return self.held.get(task_id)

    def bound(self, store: StoreClient, route_key: str, task_id: str) -> None:
        assert store is not None
        self.bound_tasks.append((route_key, task_id))


async def _task(store: StoreClient, task_id: str, cwd: Path) -> None:
    await store.write(CreateTask(task_id, "fault", str(cwd), "acp"), timeout=10)


async def _replies(notices: Recording, count: int) -> list[str]:
    return [r.text for r in await until(notices, RouteReply, count)]


def test_switching_to_a_task_another_process_drives_is_refused_and_opens_nothing(
    tmp_path: Path,
) -> None:
    owning = Owning()

    async def main() -> None:
        engine = make_engine(tmp_path, owning=owning)
        notices = Recording()
        engine.connect(ROUTE, notices.add)
        async with running(engine):
            for task_id in ("held", "free"):
                await _task(engine.store, task_id, tmp_path)
            engine.tell(ROUTE, NewTask(TaskSettings(), announce=False))
            await wait_until(lambda: len(owning.bound_tasks) == 1, timeout=20)
            ((_, first),) = owning.bound_tasks
            assert first not in ("held", "free")  # the task /new made, bound where it is made

            engine.tell(ROUTE, UserInput("/switch held"))
            assert (await _replies(notices, 1))[-1] == HELD
            engine.tell(ROUTE, UserInput("/switch free"))
            assert (await _replies(notices, 2))[-1] == "switched to task free"
            await until(notices, TaskOpened)
            assert [t.task_id for t in of(notices, TaskOpened)] == ["free"]  # never "held"
            assert owning.bound_tasks == [(ROUTE, first), (ROUTE, "free")]
            assert (ROUTE, "held") in owning.asked

            # Another process took the current task since: its input is refused, saying who.
            owning.held["free"] = "task free is driven by someone else"
            engine.tell(ROUTE, UserInput("hello"))
            assert (await _replies(notices, 3))[-1] == "task free is driven by someone else"

            engine.tell(ROUTE, UseTask("held"))
            assert (await _replies(notices, 4))[-1] == HELD
            await trio.sleep(0.2)
            assert owning.bound_tasks == [(ROUTE, first), (ROUTE, "free")]

    trio.run(main)
