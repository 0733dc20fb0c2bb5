"""The interactive UI under Textual's headless pilot, against an in-memory engine double.

The double (``FakeEngine``) sits exactly at the engine boundary: it is run by the TUI's real
engine thread under trio, receives the real request types through ``tell`` and answers with the
real notice types, delivered from a thread of its own as the engine's actors do. The end-to-end
test in ``test_tui_tmux.py`` drives the real engine and a real agent in a real terminal.

Textual's pilot is asyncio; pytest-trio owns ``async def`` tests here, so each test is a plain
function that runs its scenario with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import trio
from textual.pilot import Pilot
from textual.widgets import Markdown, Static

from robota.cli._tui import _widgets as tui_widgets
from robota.cli._tui._app import RobotaApp, Start
from robota.cli._tui._complete import History, complete
from robota.cli._tui._engine_thread import EngineThread
from robota.cli._tui._run import build
from robota.cli._tui._widgets import ApprovalBar, PromptInput, TurnCard
from robota.core.engine import (
    AnswerApproval,
    ForkTask,
    FrontEndRequest,
    InputQueued,
    InputSteered,
    Interrupt,
    NewTask,
    RouteNotice,
    RouteReply,
    TaskDefaults,
    TaskOpened,
    TaskSettings,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
    UserInput,
    UseTask,
)
from robota.core.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    PlanEntry,
    PlanUpdated,
    ReasoningDelta,
    RuntimeEvent,
    TextDelta,
    ToolCompleted,
    ToolStarted,
    ToolUpdated,
    TurnCompleted,
    TurnStarted,
)
from robota.core.frontend import FrontEndPort
from robota.core.store import Task, TaskMobility, TurnAttempt

from ..support.records import make_task

ROUTE = "console:test"
CWD = Path("/work/project")


class FakeEngine:
    """The engine's surface, in memory: records requests, delivers what the test sends."""

    def __init__(self, tasks: Sequence[Task] = (), *, release: threading.Event | None = None):
        self.tasks = list(tasks)
        self.history: dict[str, list[TurnAttempt]] = {}
        self.told: list[FrontEndRequest] = []
        self.deliver: Callable[[object], None] | None = None
        self.defaults = TaskDefaults(agent="codex", cwd=CWD)
        self.running = threading.Event()
        self.stopped = threading.Event()
        self._release = release
        self._actor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fake-actor")

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        if self._release is not None:  # a slow start: the store opening, recovery
            await trio.to_thread.run_sync(self._release.wait, 5)
        task_status.started()
        self.running.set()
        try:
            await trio.sleep_forever()
        finally:
            self.stopped.set()
            self._actor.shutdown(wait=True)

    def connect(self, route_key: str, deliver: Callable[[object], None]) -> None:
        assert route_key == ROUTE
        self.deliver = deliver

    def disconnect(self, route_key: str) -> None:
        assert route_key == ROUTE

    def tell(self, route_key: str, request: FrontEndRequest) -> None:
        assert route_key == ROUTE
        self.told.append(request)

    def find_tasks(self, wanted: str) -> list[Task]:
        """A superset of the store's candidates: the core's resolver picks among them."""
        found = [t for t in self.tasks if t.id.startswith(wanted) or t.title == wanted]
        return sorted(found, key=lambda t: -t.updated_at)

    def recent_tasks(self, *, limit: int = 50, search: str | None = None) -> list[Task]:
        found = [t for t in self.tasks if not search or search in t.id or search in (t.title or "")]
        if search:
            found += [t for t in self.tasks if search in t.cwd and t not in found]
        return sorted(found, key=lambda t: -t.updated_at)[:limit]

    def latest_task(self, cwd: Path, agent: str | None = None) -> Task | None:
        here = [t for t in self.tasks if Path(t.cwd) == cwd and agent in (None, t.agent)]
        return max(here, key=lambda t: t.updated_at, default=None)

    def task_history(self, task_id: str, *, limit: int = 10) -> list[TurnAttempt]:
        return self.history.get(task_id, [])[-limit:]

    def send(self, *notices: RouteNotice) -> None:
        """Deliver from the double's own 'actor' thread, in order, as the engine does."""
        deliver = self.deliver
        assert deliver is not None, "the TUI never connected"
        for notice in notices:
            self._actor.submit(deliver, notice)

    def turn(self, attempt: str, *events: RuntimeEvent, prompt: str = "hello") -> None:
        self.send(TurnBegan(ROUTE, "t1", attempt, prompt))
        self.update(attempt, TurnStarted(f"remote-{attempt}"), *events)

    def update(self, attempt: str, *events: RuntimeEvent) -> None:
        self.send(*(TurnUpdate(ROUTE, "t1", attempt, event) for event in events))

    def requests(self, kind: type[Any]) -> list[Any]:
        return [r for r in list(self.told) if isinstance(r, kind)]


def task(task_id: str, *, cwd: Path = CWD, title: str | None = None, age: float = 0) -> Task:
    now = time.time() - age
    return make_task(
        task_id,
        cwd=str(cwd),
        remote_id=f"thread-{task_id}",
        title=title,
        last_turn_status="completed",
        created_at=now,
        updated_at=now,
    )


Scenario = Callable[[Pilot[None], RobotaApp, FakeEngine], Awaitable[None]]


def drive(
    scenario: Scenario, *, engine: FakeEngine | None = None, start: Start | None = None
) -> RobotaApp:
    """Run the TUI headless with its real engine thread around ``engine``; stop it after."""
    fake = engine if engine is not None else FakeEngine()
    app, thread = build(fake, route_key=ROUTE, start=start or Start())

    async def main() -> None:
        thread.start()
        async with app.run_test(size=(110, 40)) as pilot:
            await until(pilot, lambda: fake.deliver is not None, "the TUI connects its route")
            await scenario(pilot, app, fake)

    try:
        asyncio.run(main())
    finally:
        assert thread.stop(10), "the engine thread did not stop"
    assert fake.stopped.is_set() or not fake.running.is_set(), "the engine's run was not cancelled"
    return app


async def until(
    pilot: Pilot[None], check: Callable[[], object], what: str, timeout: float = 5
) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting until {what}")
        await pilot.pause(0.02)


def transcript_text(app: RobotaApp) -> str:
    """What the transcript shows, as plain text: notes, prompts, cards and answers."""
    parts: list[str] = []
    for widget in app.query("#transcript > *"):
        if isinstance(widget, Markdown):
            parts.append(widget.source)
        elif isinstance(widget, Static):
            parts.append(str(widget.content))
    return "\n".join(parts)


def card_text(app: RobotaApp) -> str:
    cards = list(app.query(TurnCard))
    return str(cards[-1].content) if cards else ""


def status_text(app: RobotaApp) -> str:
    return str(app.query_one("#status", Static).content)


async def type_line(pilot: Pilot[None], app: RobotaApp, text: str) -> None:
    await until(pilot, lambda: not app.query_one(PromptInput).disabled, "the prompt is usable")
    app.query_one(PromptInput).focus()
    await pilot.press(*text)
    await pilot.press("enter")


# -- the conversation -------------------------------------------------------------------------


def test_a_new_task_opens_and_the_answer_streams_in() -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await type_line(pilot, app, "hello")
        await until(pilot, lambda: fake.requests(UserInput), "the prompt reaches the engine")
        assert fake.told[0] == NewTask(TaskSettings())
        assert fake.requests(UserInput) == [UserInput("hello")]

        fake.send(TaskOpened(ROUTE, "t1", "codex", str(CWD), "thread-1", resumed=False))
        fake.turn("a1", TextDelta("m1", "Hello, "), TextDelta("m1", "wor"))
        await until(pilot, lambda: "Hello, wor" in card_text(app), "the partial answer shows")
        assert "Hello, world" not in transcript_text(app)
        assert "> hello" in transcript_text(app)
        assert "task t1" in status_text(app)
        assert "Working" in status_text(app)

        fake.update("a1", TextDelta("m1", "ld!"), TurnCompleted("remote-a1", "completed"))
        fake.send(TurnFinished(ROUTE, "t1", "a1", "completed", "Hello, world!"))
        await until(pilot, lambda: app.query(Markdown), "the final answer shows")
        assert app.query_one(Markdown).source == "Hello, world!"
        await until(pilot, lambda: "idle" in status_text(app), "the status says idle")

    drive(scenario)


def test_a_tool_shows_with_its_output_reasoning_and_plan_from_the_turn_view() -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        fake.turn(
            "a1",
            ReasoningDelta("r1", "**Listing the files**"),
            ToolStarted("c1", "command", "ls", command="/bin/bash -lc 'ls -1'"),
            ToolUpdated("c1", output_delta="alpha.txt\nbeta.txt\n"),
            PlanUpdated((PlanEntry("look around", "in_progress"), PlanEntry("report", "pending"))),
        )
        await until(pilot, lambda: "beta.txt" in card_text(app), "the tool's output shows")
        card = card_text(app)
        assert "ls -1" in card  # the launcher is stripped for display
        assert "alpha.txt" in card
        assert "Listing the files" in card
        assert "[>] look around" in card
        assert "[ ] report" in card

        fake.update("a1", ToolCompleted("c1", "completed", exit_code=0))
        fake.send(TurnFinished(ROUTE, "t1", "a1", "completed", None))
        await until(pilot, lambda: "alpha.txt" not in card_text(app), "finished output folds")
        await pilot.press("ctrl+o")
        await until(pilot, lambda: "alpha.txt" in card_text(app), "Ctrl-O unfolds the output")

    drive(scenario)


def test_typing_during_a_turn_sends_user_input_and_shows_the_steer_and_the_queue() -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        fake.turn("a1", TextDelta("m1", "working on it"))
        await until(pilot, lambda: "working on it" in card_text(app), "the turn runs")
        await type_line(pilot, app, "also check the tests")
        await until(pilot, lambda: fake.requests(UserInput), "the steer reaches the engine")
        assert fake.requests(UserInput) == [UserInput("also check the tests")]
        assert fake.requests(Interrupt) == []

        fake.send(InputSteered(ROUTE, "a1", "also check the tests"))
        await until(pilot, lambda: "> you: also check the tests" in card_text(app), "steer shows")
        fake.send(InputQueued(ROUTE, 7, "and then the docs", ahead=0))
        await until(pilot, lambda: "1 queued" in status_text(app), "the queue shows")
        assert "queued: and then the docs" in transcript_text(app)

    drive(scenario)


def test_commands_are_sent_as_typed_and_replies_show() -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await type_line(pilot, app, "/status")
        await until(pilot, lambda: fake.requests(UserInput), "the command reaches the engine")
        assert fake.requests(UserInput) == [UserInput("/status")]
        fake.send(RouteReply(ROUTE, "task t1 · codex · idle"), RouteReply(ROUTE, "nope", "error"))
        await until(pilot, lambda: "nope" in transcript_text(app), "the replies show")
        assert "task t1 · codex · idle" in transcript_text(app)
        errors = [str(w.content) for w in app.query("#transcript > .error").results(Static)]
        assert errors == ["nope"]

    drive(scenario)


# -- Tab completion -----------------------------------------------------------------------------


def test_tab_completes_a_command_and_lists_an_ambiguous_prefix() -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await until(pilot, lambda: not app.query_one(PromptInput).disabled, "the prompt is usable")
        prompt = app.query_one(PromptInput)
        await pilot.press("/", "n", "e", "tab")
        assert prompt.value == "/new "
        assert prompt.has_focus, "Tab must complete, not move the focus"

        prompt.value = ""
        await pilot.press("/", "s", "tab")
        assert prompt.value == "/s"
        hint = str(app.query_one("#hint", Static).content)
        assert "/sessions" in hint and "/status" in hint and "/stop" in hint
        await pilot.press("t", "a", "tab", "enter")
        await until(pilot, lambda: fake.requests(UserInput), "the completed command is sent")
        assert fake.requests(UserInput) == [UserInput("/status ")]

    drive(scenario)


def test_completion_rules() -> None:
    names = ("new", "nosteer", "status", "stop", "sessions", "exit")
    assert complete("/ne", 3, names) == complete("/ne", 3, names)
    done = complete("/ne", 3, names)
    assert done is not None and (done.text, done.cursor) == ("/new ", 5)
    done = complete("/st", 3, names)
    assert done is not None and (done.text, done.candidates) == ("/st", ("status", "stop"))
    done = complete("/NE --dir x", 2, names)
    assert done is not None and done.text == "/new --dir x"
    done = complete("/zz", 3, names)
    assert done is not None and done.text == "/zz" and done.candidates == ()
    assert complete("hello", 5, names) is None
    assert complete("//usr", 5, names) is None
    assert complete("/new --dir", 9, names) is None  # past the command name


def test_history_walks_back_and_restores_the_draft() -> None:
    history = History()
    history.add("one")
    history.add("two")
    history.add("two")
    assert history.older("draft") == "two"
    assert history.older("two") == "one"
    assert history.older("one") is None
    assert history.newer() == "two"
    assert history.newer() == "draft"
    assert history.newer() is None


# -- approvals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "decision"),
    [("a", "accept"), ("s", "accept_for_session"), ("d", "decline"), ("c", "cancel")],
)
def test_an_approval_is_answered_with_a_key(key: str, decision: ApprovalDecision) -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        fake.turn(
            "a1",
            ToolStarted("c1", "command", "rm", command="rm -rf build"),
            ApprovalRequested(
                "ap-1", "command", "Run rm -rf build?", tool_id="c1", command="rm -rf build"
            ),
        )
        bar = app.query_one(ApprovalBar)
        await until(pilot, lambda: bar.has_focus, "the approval takes the keys")
        shown = str(bar.content)
        assert "Run rm -rf build?" in shown
        assert "[a] allow once" in shown and "[s] allow for this session" in shown
        assert "[d] decline" in shown and "[c] cancel" in shown
        assert "waiting for approval" in status_text(app).lower()

        await pilot.press(key)
        await until(pilot, lambda: fake.requests(AnswerApproval), "the answer reaches the engine")
        assert fake.requests(AnswerApproval) == [AnswerApproval("ap-1", decision)]
        await until(pilot, lambda: not bar.has_class("-shown"), "the choice goes away")
        assert app.query_one(PromptInput).has_focus

        fake.update("a1", ApprovalResolved("ap-1", decision))
        await pilot.press("a")  # no approval waits: the key is text for the prompt again
        assert fake.requests(AnswerApproval) == [AnswerApproval("ap-1", decision)]
        assert app.query_one(PromptInput).value == "a"

    drive(scenario)


def test_a_pending_approval_shows_once_and_its_keys_have_one_name() -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        fake.turn("a1", ApprovalRequested("ap-1", "command", "Run make clean?", command="make"))
        bar = app.query_one(ApprovalBar)
        await until(pilot, lambda: bar.has_focus, "the approval takes the keys")
        await until(pilot, lambda: "waiting for approval" in card_text(app), "the card says so")
        screen = f"{transcript_text(app)}\n{bar.content}"
        assert screen.count("Run make clean?") == 1, screen
        assert "[c] cancel the turn" in str(bar.content)
        assert "cancel the task" not in screen

    drive(scenario)


def test_a_question_another_surface_answered_is_withdrawn_and_says_who() -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        fake.turn("a1", ApprovalRequested("ap-1", "command", "Run make clean?", command="make"))
        bar = app.query_one(ApprovalBar)
        await until(pilot, lambda: bar.has_focus, "the approval takes the keys")
        fake.update("a1", ApprovalResolved("ap-1", "accept", answerer="ws:2"))
        await until(pilot, lambda: bar.approval is None, "the question is withdrawn")
        await until(
            pilot,
            lambda: "Run make clean?: accept · answered by ws:2" in transcript_text(app),
            "the transcript says who answered",
        )
        await pilot.press("y")  # nothing waits: the key is text, not a second answer
        assert fake.requests(AnswerApproval) == []

    drive(scenario)


def test_keys_typed_just_before_an_approval_appears_do_not_answer_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The guard's clock moves only when the test says: keystrokes in quick succession, which a
    # loaded machine cannot replay in real time.
    now = [100.0]
    monkeypatch.setattr(tui_widgets, "guard_clock", lambda: now[0])

    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        fake.turn("a1", TextDelta("m1", "thinking"))
        await until(pilot, lambda: "thinking" in card_text(app), "the turn runs")
        await type_line(pilot, app, "")
        await pilot.press("s", "o")  # typing a steer...
        fake.update("a1", ApprovalRequested("ap-2", "file_change", "Write notes.md?"))
        bar = app.query_one(ApprovalBar)
        await until(pilot, lambda: bar.has_focus, "the approval shows")
        await pilot.press("d")  # ...whose next letter lands on the choice
        await pilot.pause(0.1)
        assert fake.requests(AnswerApproval) == []
        now[0] += 0.5
        await pilot.press("d")
        await until(pilot, lambda: fake.requests(AnswerApproval), "a deliberate key answers")
        assert fake.requests(AnswerApproval) == [AnswerApproval("ap-2", "decline")]

    drive(scenario)


# -- Ctrl-C -------------------------------------------------------------------------------------


def test_ctrl_c_interrupts_the_turn_and_a_second_one_exits() -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        fake.turn("a1", TextDelta("m1", "a long answer"))
        await until(pilot, lambda: "a long answer" in card_text(app), "the turn runs")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: fake.requests(Interrupt), "the interrupt reaches the engine")
        assert app.is_running
        assert "Interrupting" in status_text(app)
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running, "the second Ctrl-C exits")
        assert fake.requests(Interrupt) == [Interrupt()]

    app = drive(scenario)
    assert app.return_code == 0


def test_ctrl_c_while_idle_exits_without_interrupting() -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await until(pilot, lambda: fake.requests(NewTask), "the route opens")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not app.is_running, "Ctrl-C exits")
        assert fake.requests(Interrupt) == []

    drive(scenario)


def test_an_interrupted_turn_ends_and_the_next_ctrl_c_exits() -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        fake.turn("a1", TextDelta("m1", "partial"))
        await until(pilot, lambda: "partial" in card_text(app), "the turn runs")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: fake.requests(Interrupt), "the interrupt is sent")
        fake.update("a1", TurnCompleted("remote-a1", "interrupted"))
        fake.send(TurnFinished(ROUTE, "t1", "a1", "interrupted", None))
        await until(pilot, lambda: "idle" in status_text(app), "the turn ended")
        assert "codex · interrupted" in card_text(app)
        assert "partial" in transcript_text(app)  # the text so far stays as the answer
        fake.turn("a2", TextDelta("m2", "next"), prompt="again")
        await until(pilot, lambda: "next" in card_text(app), "a new turn runs")
        await pilot.press("ctrl+c")  # a new turn: interrupt again, not exit
        await until(pilot, lambda: len(fake.requests(Interrupt)) == 2, "the second interrupt")
        assert app.is_running

    drive(scenario)


# -- choosing the task --------------------------------------------------------------------------


def test_resume_without_an_id_shows_the_picker_and_uses_the_chosen_task() -> None:
    tasks = [task("t-old", title="old work", age=3600), task("t-new", title="new work", age=60)]

    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await until(pilot, lambda: app.screen.query("#picker-list"), "the picker shows")
        options = app.screen.query_one("#picker-list")
        await until(pilot, lambda: getattr(options, "option_count", 0) == 2, "tasks are listed")
        assert fake.told == [], "nothing is sent before a task is chosen"
        await pilot.press("down", "enter")
        await until(pilot, lambda: fake.told, "the choice reaches the engine")
        assert fake.told == [UseTask("t-old")]

    drive(scenario, engine=FakeEngine(tasks), start=Start(resume=True))


def done_turn(task_id: str, prompt: str, answer: str) -> TurnAttempt:
    now = time.time()
    return TurnAttempt(
        id=f"a-{prompt}",
        task_id=task_id,
        route_key=ROUTE,
        status="completed",
        prompt=prompt,
        images=(),
        anchor_message_id=None,
        remote_turn_id=None,
        retry_count=0,
        recovery_count=0,
        error=None,
        heartbeat_at=now,
        created_at=now,
        updated_at=now,
        final_text=answer,
    )


def test_a_resumed_task_shows_its_earlier_turns_once() -> None:
    engine = FakeEngine([task("t-old", title="old work")])
    engine.history["t-old"] = [
        done_turn("t-old", "first question", "first answer"),
        done_turn("t-old", "second question", "**second** answer"),
    ]

    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await until(pilot, lambda: fake.told, "the route opens")
        assert fake.told == [UseTask("t-old")]
        opened = TaskOpened(ROUTE, "t-old", "codex", str(CWD), "thread-1", resumed=True)
        fake.send(opened)
        await until(pilot, lambda: "**second** answer" in transcript_text(app), "history shows")
        fake.send(opened)  # the agent restarted and the session reopened
        fake.turn("a-new", TextDelta("m1", "now"), prompt="third question")
        await until(pilot, lambda: "third question" in transcript_text(app), "the new turn")
        text = transcript_text(app)
        assert text.count("earlier in this task (last 2 turns)") == 1, text
        order = ["first question", "first answer", "second question", "**second** answer"]
        positions = [text.index(part) for part in [*order, "third question"]]
        assert positions == sorted(positions), text

    drive(scenario, engine=engine, start=Start(resume="t-old"))


def test_the_picker_searches_and_escape_starts_a_new_task() -> None:
    tasks = [task("t-1", title="fix the parser"), task("t-2", title="write docs")]

    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await until(pilot, lambda: app.screen.query("#picker-list"), "the picker shows")
        options = app.screen.query_one("#picker-list")
        await pilot.press(*"docs")
        await until(pilot, lambda: getattr(options, "option_count", 0) == 1, "the search narrows")
        await pilot.press("escape")
        await until(pilot, lambda: fake.told, "the route opens")
        assert fake.told == [NewTask(TaskSettings(model="m1"))]

    drive(
        scenario,
        engine=FakeEngine(tasks),
        start=Start(resume=True, settings=TaskSettings(model="m1")),
    )


def test_resume_by_title_forks_when_asked() -> None:
    tasks = [task("t-1", title="fix the parser"), task("t-2", title="write docs")]

    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await until(pilot, lambda: fake.told, "the route opens")
        assert fake.told == [ForkTask("t-2", "docs, again")]

    start = Start(resume="write docs", fork=True, settings=TaskSettings(title="docs, again"))
    drive(scenario, engine=FakeEngine(tasks), start=start)


def test_an_ambiguous_resume_opens_the_picker_on_its_matches() -> None:
    tasks = [task("t-1a", title="one"), task("t-1b", title="two"), task("t-2", title="three")]

    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await until(pilot, lambda: app.screen.query("#picker-list"), "the picker shows")
        options = app.screen.query_one("#picker-list")
        await until(pilot, lambda: getattr(options, "option_count", 0) == 2, "matches listed")
        await pilot.press("enter")
        await until(pilot, lambda: fake.told, "the choice reaches the engine")
        assert fake.told in ([UseTask("t-1a")], [UseTask("t-1b")])

    drive(scenario, engine=FakeEngine(tasks), start=Start(resume="t-1"))


def test_an_unknown_resume_says_so_and_starts_a_new_task() -> None:
    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await until(pilot, lambda: fake.told, "the route opens")
        assert fake.told == [NewTask(TaskSettings(agent="qwen"))]
        assert "no task named 'nothing-like-it'" in transcript_text(app)

    drive(scenario, start=Start(resume="nothing-like-it", settings=TaskSettings(agent="qwen")))


def test_continue_takes_the_latest_task_in_this_directory() -> None:
    tasks = [
        task("t-here-old", age=600),
        task("t-below", cwd=CWD / "sub", age=1),
        task("t-here", age=60),
        task("t-elsewhere", cwd=Path("/elsewhere"), age=0),
    ]

    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await until(pilot, lambda: fake.told, "the route opens")
        assert fake.told == [UseTask("t-here")]

    drive(scenario, engine=FakeEngine(tasks), start=Start(continue_=True))


def test_continue_without_an_earlier_task_starts_a_new_one() -> None:
    tasks = [task("t-elsewhere", cwd=Path("/elsewhere"))]

    async def scenario(pilot: Pilot[None], app: RobotaApp, fake: FakeEngine) -> None:
        await until(pilot, lambda: fake.told, "the route opens")
        assert fake.told == [NewTask(TaskSettings(agent="qwen"))]
        assert "no earlier task" in transcript_text(app)

    start = Start(continue_=True, settings=TaskSettings(agent="qwen"))
    drive(scenario, engine=FakeEngine(tasks), start=start)


# -- keeping `robota --help` fast ----------------------------------------------------------------


HELD = "task t-held is driven by host (pid 7); the terminal does not open its agent session"


@pytest.mark.parametrize(
    ("start", "pick", "asked", "told"),
    [
        (Start(resume="t-held"), False, ["t-held"], []),
        (Start(continue_=True), False, ["t-held"], []),  # t-held is the latest here
        (Start(resume=True), True, ["t-held"], []),  # the picker's first row
        (Start(resume="t-free"), False, ["t-free"], [UseTask("t-free")]),
        (Start(resume="t-held", fork=True), False, [], [ForkTask("t-held", None)]),
        (Start(), False, [], [NewTask(TaskSettings())]),
    ],
)
def test_a_task_another_live_process_drives_is_refused_and_the_tui_exits_1(
    start: Start, pick: bool, asked: list[str], told: list[FrontEndRequest]
) -> None:
    """One owner per task: a task taken up as it is is claimed first (``take_task``), and the
    TUI leaves, saying why, when another live process drives it; a fork or a new task is
    this terminal's own and asks nothing."""
    fake = FakeEngine([task("t-free", age=60), task("t-held", age=1)])
    asks: list[str] = []

    async def takes(task_id: str) -> str | None:
        asks.append(task_id)
        return HELD if task_id == "t-held" else None

    link = FrontEndPort(fake).subscribe(ROUTE)
    thread = EngineThread(fake, link=link, takes=takes)
    app = RobotaApp(thread, link, start)

    async def main() -> None:
        thread.start()
        async with app.run_test(size=(110, 40)) as pilot:
            if pick:
                await until(pilot, lambda: app.screen.query("#picker-list"), "the picker shows")
                await pilot.press("enter")
            await until(pilot, lambda: fake.told or not app.is_running, "the task is decided")
            await pilot.pause(0.1)

    try:
        asyncio.run(main())
    finally:
        assert thread.stop(10)
    assert (asks, fake.told) == (asked, told)
    refused = "t-held" in asked
    assert (app.return_code, app.refused) == ((1, HELD) if refused else (None, None))


def test_a_task_pushed_to_another_device_is_said_let_go_and_read_only() -> None:
    """A push runs in the host, another process: the TUI reads its task's mobility, says it is
    moving and then where it moved (naming the device), lets the task go, and answers a prompt
    to it itself (nothing reaches the engine) while commands still go through."""
    fake = FakeEngine()
    mobility: dict[str, TaskMobility] = {}
    let_go: list[str] = []
    link = FrontEndPort(fake).subscribe(ROUTE)
    names = {"desk-1": "desk"}
    thread = EngineThread(
        fake, link=link, moves=mobility.get, lets_go=let_go.append, names=names.get
    )
    app = RobotaApp(thread, link, Start())

    async def main() -> None:
        thread.start()
        async with app.run_test(size=(110, 40)) as pilot:
            await until(pilot, lambda: fake.deliver is not None, "the TUI connects its route")
            fake.send(TaskOpened(ROUTE, "t1", "codex", str(CWD), "thread-1", resumed=False))
            await until(pilot, lambda: "task t1" in status_text(app), "the task opens")

            mobility["t1"] = TaskMobility("moving", "desk-1", "h1")
            await until(pilot, lambda: "moving to desk" in status_text(app), "moving", 10)
            assert "task t1 is moving to device desk (desk-1) (handoff h1)" in transcript_text(app)
            assert let_go == []

            mobility["t1"] = TaskMobility("moved", "desk-1", "h1")
            await until(pilot, lambda: let_go == ["t1"], "the task is let go", 10)
            await until(pilot, lambda: "read-only" in status_text(app), "read-only", 10)
            assert "read-only · moved to desk" in status_text(app)
            assert (
                "task t1 has moved to device desk (desk-1) (handoff h1): continue it there. "
                "This terminal no longer drives it" in transcript_text(app)
            )

            await type_line(pilot, app, "one more thing")
            await until(
                pilot,
                lambda: "this view is read-only" in transcript_text(app),
                "the prompt is answered here",
            )
            await type_line(pilot, app, "/new")
            await until(pilot, lambda: fake.requests(UserInput), "the command goes through")
            assert fake.requests(UserInput) == [UserInput("/new")]

            # A new task opened: the view drives it (the moved one stays read-only).
            fake.send(TaskOpened(ROUTE, "t2", "codex", str(CWD), "thread-2", resumed=False))
            await until(pilot, lambda: "task t2" in status_text(app), "the new task opens")
            assert "read-only" not in status_text(app)
            await type_line(pilot, app, "hello")
            await until(pilot, lambda: len(fake.requests(UserInput)) == 2, "the prompt is sent")
            assert let_go == ["t1"]

    try:
        asyncio.run(main())
    finally:
        assert thread.stop(10)


def test_help_and_the_tui_entry_point_import_no_textual() -> None:
    probe = (
        "import sys\n"
        "from robota.cli import cli\n"
        "from robota.cli._tui import run_tui\n"
        "try:\n"
        "    cli.main(['--help'], prog_name='robota')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted({'textual', 'rich'} & {name.split('.')[0] for name in sys.modules}))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert "Usage: robota" in completed.stdout
    assert completed.stdout.strip().splitlines()[-1] == "[]"


# -- the engine thread --------------------------------------------------------------------------


def test_an_engine_that_fails_ends_the_tui_with_its_error() -> None:
    class Broken(FakeEngine):
        async def run(
            self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
        ) -> None:
            raise RuntimeError("the store is locked")

    app, thread = build(Broken(), route_key=ROUTE, start=Start())

    async def main() -> None:
        thread.start()
        async with app.run_test() as pilot:
            await until(pilot, lambda: not app.is_running, "the TUI exits")

    asyncio.run(main())
    assert thread.stop(5)
    assert app.return_code == 1
    assert "the store is locked" in str(app.engine_error)


def test_the_inbox_wakes_its_consumer_once_per_burst() -> None:
    inbox = FrontEndPort(FakeEngine()).subscribe(ROUTE)  # the route's link is the TUI's inbox
    wakes: list[int] = []
    inbox.deliver(1)  # before a consumer: kept
    inbox.attach(lambda: wakes.append(1))
    assert wakes == [1]
    threads = [threading.Thread(target=inbox.deliver, args=(n,)) for n in range(2, 50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wakes == [1], "no second wake before the first drain"
    assert sorted(inbox.drain()) == list(range(1, 50))
    inbox.deliver(99)
    assert wakes == [1, 1]
    inbox.close()
    inbox.deliver(100)
    assert inbox.drain() == []


def test_requests_told_before_the_engine_started_reach_it_in_order() -> None:
    release = threading.Event()
    fake = FakeEngine(release=release)
    thread = EngineThread(fake, link=FrontEndPort(fake).subscribe(ROUTE))
    thread.tell(UserInput("one"))  # before the trio loop exists
    thread.start()
    thread.tell(UserInput("two"))  # the loop may exist, the engine does not run yet
    assert fake.told == []
    release.set()
    assert fake.running.wait(5)
    thread.tell(UserInput("three"))
    deadline = time.monotonic() + 5
    while len(fake.told) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fake.told == [UserInput("one"), UserInput("two"), UserInput("three")]
    assert thread.stop(5)
    assert fake.stopped.is_set()
    thread.tell(UserInput("four"))  # after the stop: dropped, never raises
    assert len(fake.told) == 3
