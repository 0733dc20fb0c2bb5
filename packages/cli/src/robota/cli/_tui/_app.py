"""The Textual app: one route's conversation on the screen, and the keys that drive it.

Notices arrive through the route's ``RouteLink`` (the front-end port, ``robota.core.frontend``),
which wakes the UI loop once per burst; ``_drain`` applies the whole burst and repaints once, at
most ``PAINT_HZ`` times a second, and the link's end is the engine's. Everything the person does
goes to the engine as a request through the ``EngineLink`` (``tell`` never blocks).

Screen, top to bottom: the transcript (notes, each turn's prompt, its card, its answer), the
approval choice (only while one waits), a hint line, the prompt, the status line.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from rich.text import Text
from textual import work
from textual.app import App
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Markdown, Static

from robota.core.engine import (
    AnswerApproval,
    ForkTask,
    FrontEndRequest,
    InputQueued,
    InputSteered,
    Interrupt,
    NewTask,
    RouteIdle,
    RouteNotice,
    RouteReply,
    TaskOpened,
    TaskSettings,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
    UserInput,
    UseTask,
)
from robota.core.events import ApprovalResolved
from robota.core.frontend import AmbiguousTask, RouteLink, TaskNotFound, resolve_task
from robota.core.presentation import STATE_LABELS, UserSteer, format_elapsed

from ._complete import command_names
from ._driver import hangup_safe
from ._engine_thread import EngineStopped
from ._standing import POLL_SECONDS, moved_note, read_only_refusal, standing_label
from ._widgets import ApprovalBar, LiveTurn, PromptInput, TaskPicker, TurnCard

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.driver import Driver
    from textual.widget import Widget

    from robota.core.store import Task, TaskMobility, TurnAttempt

__all__ = ["EngineLink", "RobotaApp", "Start"]

PAINT_HZ = 30
HISTORY_TURNS = 10
"""Completed turns shown again when a task is resumed."""
KEYS_HINT = "Enter send · Tab complete · ↑↓ history · Ctrl-O tool output · Ctrl-C interrupt / exit"


class EngineLink(Protocol):
    """The app's side of the engine thread (``EngineThread`` is one)."""

    def tell(self, request: FrontEndRequest) -> None: ...

    @property
    def default_agent(self) -> str: ...

    def recent_tasks(
        self, *, limit: int = 50, search: str | None = None, timeout: float = 60
    ) -> list[Task]: ...

    def find_tasks(self, wanted: str, timeout: float = 60) -> list[Task]: ...

    def latest_task(
        self, cwd: Path | None, agent: str | None = None, timeout: float = 60
    ) -> Task | None: ...

    def task_history(
        self, task_id: str, *, limit: int = 10, timeout: float = 60
    ) -> list[TurnAttempt]: ...

    def take_task(self, task_id: str, timeout: float = 60) -> str | None:
        """This terminal owns ``task_id`` from now on, or why it may not (another live
        process drives it: one owner per task)."""

    def task_mobility(self, task_id: str, timeout: float = 60) -> TaskMobility | None:
        """Whether ``task_id`` moves to or moved to another device (``_standing``)."""

    def let_go(self, task_id: str, timeout: float = 60) -> None:
        """This terminal no longer owns ``task_id`` (it moved to another device)."""

    def device_name(self, device: str, timeout: float = 60) -> str | None:
        """``device``'s name in this profile's mesh roster, ``None`` when it names none."""


class _Wake(Message):
    """Notices wait in the route's link, or it ended."""


@dataclass(frozen=True, slots=True)
class Start:
    """Which task the route starts on (see ``run_tui``)."""

    resume: str | bool | None = None
    continue_: bool = False
    fork: bool = False
    settings: TaskSettings = field(default_factory=TaskSettings)
    """A new task's settings; ``cwd`` is also where ``continue_`` looks."""
    attached: str | None = None
    """The task of the background session this terminal attached to: the route is the
    session's and already on it, so nothing is picked or told."""
    on_turn: Callable[[], None] | None = None
    """Called when a turn begins and when it ends (``HostBeacon``: a team's operator)."""


class RobotaApp(App[None]):
    """The interactive UI of one route."""

    TITLE = "robota"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    Screen { layout: vertical; }
    #transcript { height: 1fr; padding: 0 1; }
    #transcript > .note { color: $text-muted; }
    #transcript > .error { color: $error; }
    #transcript > .prompt { color: $accent; text-style: bold; margin-top: 1; }
    #transcript > .card { margin: 0 0 0 2; }
    #transcript > Markdown { margin: 0 0 0 2; padding: 0; }
    #approval { display: none; height: auto; padding: 0 1; border: tall $warning; }
    #approval.-shown { display: block; }
    #approval:focus { border: tall $warning-lighten-2; }
    #hint { height: 1; padding: 0 1; color: $text-muted; }
    #prompt { border: tall $accent; }
    #status { height: 1; padding: 0 1; background: $panel; }
    #picker { width: 90%; height: 80%; border: tall $accent; background: $surface; }
    #picker-list { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "interrupt", "Interrupt / exit", priority=True),
        Binding("ctrl+o", "toggle_output", "Tool output", priority=True),
        Binding("ctrl+d", "end_of_input", show=False, priority=True),
        Binding("pageup", "scroll_transcript(-1)", show=False, priority=True),
        Binding("pagedown", "scroll_transcript(1)", show=False, priority=True),
    ]

    def __init__(self, link: EngineLink, notices: RouteLink, start: Start):
        super().__init__()
        self.link = link
        self.notices = notices
        self.opening = start
        self.agent = start.settings.agent or link.default_agent
        self.task_id: str | None = None
        self.turn: LiveTurn | None = None
        self.cards: list[TurnCard] = []
        self.queued: dict[int, str] = {}
        self._replayed: set[str] = set()
        """Tasks whose earlier turns this session showed (an agent restart reopens a task)."""
        self.expanded: Literal["all"] | tuple[()] = ()
        self.engine_error: BaseException | None = None
        self.refused: str | None = None
        """Why the task to take up is not this terminal's (``take_task``): said on leaving."""
        self.standing: dict[str, TaskMobility | None] = {}
        """Each task's mobility as last read (``_standing``)."""
        self.moved: dict[str, TaskMobility] = {}
        """Tasks that moved to another device while this terminal showed them: read-only."""
        self.device_names: dict[str, str | None] = {}
        """The other devices' roster names, read once each."""
        self._polled = 0.0
        self._reading = False
        self.signal_number: int | None = None
        self._route_open = False
        self._paint_due = False
        self._last_paint = 0.0
        self._names = command_names()
        self._terminal_fd: int | None = None
        self._prompt_line: Static | None = None
        self.transcript = VerticalScroll(id="transcript", can_focus=False)
        self.approval_bar = ApprovalBar(id="approval")
        self.hint_line = Static(KEYS_HINT, id="hint")
        self.prompt = PromptInput(self._names, id="prompt")
        self.status_line = Static("", id="status")

    # -- layout and lifecycle -------------------------------------------------------------------

    def get_driver_class(self) -> type[Driver]:
        return hangup_safe(super().get_driver_class())

    def compose(self) -> ComposeResult:
        # Held, not queried: the app's queries search the active screen, which is the picker
        # while it is open.
        yield self.transcript
        yield self.approval_bar
        yield self.hint_line
        yield self.prompt
        yield self.status_line

    def on_mount(self) -> None:
        self.transcript.anchor()
        prompt = self.prompt
        prompt.disabled = True  # until the route's task is chosen: a line typed earlier
        # could land on the task the route had in an earlier run
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(signum, self._terminate, signum)
            except (NotImplementedError, RuntimeError, ValueError):
                pass  # a loop outside the main thread cannot: its runner handles signals
        # post_message is Textual's thread-safe door: the drain then runs as the app's own
        # handler (a bare call_soon_threadsafe would run outside the app's context).
        self.notices.attach(lambda: self.post_message(_Wake()))
        self._terminal_fd = _terminal_fd()
        self.set_interval(1.0, self._tick)
        self._paint_status()
        self._open_route()

    def on_unmount(self) -> None:
        self.notices.close()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            try:
                loop.remove_signal_handler(signum)
            except (NotImplementedError, RuntimeError, ValueError):
                pass

    def _terminate(self, signum: int) -> None:
        self.signal_number = signum
        self.exit(return_code=128 + signum)

    # -- choosing the task ----------------------------------------------------------------------

    @work(exclusive=True, group="open")
    async def _open_route(self) -> None:
        start = self.opening
        if start.attached is not None:
            self.task_id = start.attached
            self.note(f"attached to task {start.attached} · /exit or Ctrl-D detaches")
            self._route_open = True
            self.prompt.disabled = False
            self.prompt.focus()
            self._paint_status()
            return
        request: FrontEndRequest | None = None
        try:
            search: str | None = None
            if isinstance(start.resume, str):
                found = await asyncio.to_thread(self.link.find_tasks, start.resume)
                try:
                    request = self._use(resolve_task(start.resume, found))
                except AmbiguousTask:
                    search = start.resume  # let the person pick among them
                except TaskNotFound as error:
                    self.note(f"{error}; starting a new one", "error")
            if request is None and (start.resume is True or search is not None):
                chosen = await self.push_screen_wait(TaskPicker(self._picker_tasks, search))
                if chosen is not None:
                    request = self._use(chosen)
            elif start.continue_:
                settings = start.settings
                latest = await asyncio.to_thread(
                    self.link.latest_task, settings.cwd, settings.agent
                )
                if latest is not None:
                    request = self._use(latest)
                else:
                    self.note("no earlier task in this directory; starting a new one")
            if isinstance(request, UseTask):
                # One owner per task: never its agent session opened beside the process
                # that holds it.
                refused = await asyncio.to_thread(self.link.take_task, request.task_id)
                if refused is not None:
                    self.refused = refused
                    self.exit(return_code=1)
                    return
        except EngineStopped as error:
            self.note(str(error), "error")
            return
        if request is None:
            request = NewTask(start.settings)
        self.link.tell(request)
        self._route_open = True
        self.prompt.disabled = False
        self.prompt.focus()
        self._paint_status()

    def _use(self, task: Task) -> FrontEndRequest:
        self.agent = task.agent
        if self.opening.fork:
            return ForkTask(task.id, self.opening.settings.title)
        return UseTask(task.id)

    def _picker_tasks(self, search: str | None) -> Sequence[Task]:
        return self.link.recent_tasks(limit=50, search=search)

    # -- notices --------------------------------------------------------------------------------

    def on__wake(self) -> None:
        self._drain()

    def _drain(self) -> None:
        notices = self.notices
        for notice in notices.drain():
            self._notice(notice)
        if notices.ended:
            self._engine_down(notices.reason)
        self._schedule_paint()

    def _notice(self, notice: RouteNotice) -> None:
        if isinstance(notice, TurnUpdate):
            turn = self.turn
            if turn is not None and turn.attempt_id == notice.attempt_id:
                resolved = notice.event
                if isinstance(resolved, ApprovalResolved):
                    self._withdrawn(turn, resolved)
                turn.view.apply(notice.event)
                if isinstance(resolved, ApprovalResolved):
                    turn.answered.discard(resolved.approval_id)
        elif isinstance(notice, TurnBegan):
            self._turn_began(notice)
        elif isinstance(notice, TurnFinished):
            self._turn_finished(notice)
        elif isinstance(notice, InputSteered):
            if self.turn is not None and self.turn.attempt_id == notice.attempt_id:
                self.turn.view.apply(UserSteer(notice.text))
        elif isinstance(notice, InputQueued):
            self.queued[notice.prompt_id] = notice.text
            ahead = f" ({notice.ahead} ahead)" if notice.ahead else ""
            self.note(f"queued{ahead}: {notice.text}")
        elif isinstance(notice, TaskOpened):
            self.task_id, self.agent = notice.task_id, notice.agent
            how = "resumed" if notice.resumed else "opened"
            if notice.forked_from:
                how = f"forked from {notice.forked_from}"
            # A new task opens with its first prompt: say so above that prompt.
            above = self._prompt_line if self.turn is not None else None
            self.note(f"task {notice.task_id} {how} · {notice.agent} · {notice.cwd}", before=above)
            if notice.resumed and not notice.forked_from and notice.task_id not in self._replayed:
                self._replayed.add(notice.task_id)
                self.run_worker(self._replay(notice.task_id, above))
        elif isinstance(notice, RouteReply):
            self.note(notice.text, "error" if notice.level == "error" else "note")
        elif isinstance(notice, RouteIdle):
            self.queued.clear()

    async def _replay(self, task_id: str, before: Widget | None) -> None:
        """Show a resumed task's last turns (prompt and answer) above what happens now."""
        try:
            history = await asyncio.to_thread(self.link.task_history, task_id, limit=HISTORY_TURNS)
        except EngineStopped:
            return
        if not history:
            return
        if before is None and self.turn is not None:
            before = self._prompt_line  # a turn began meanwhile: the past goes above it
        shown: list[Widget] = [
            Static(Text(f"earlier in this task (last {len(history)} turns)"), classes="note")
        ]
        for attempt in history:
            shown.append(Static(Text("> " + attempt.prompt), classes="prompt"))
            shown.append(Markdown(attempt.final_text or "(no answer)"))
        self.transcript.mount(*shown, before=before)

    def _turn_began(self, notice: TurnBegan) -> None:
        if self.opening.on_turn is not None:
            self.opening.on_turn()
        if self.turn is not None:  # a finish we never heard of: freeze what we have
            self.turn.ended = time.monotonic()
        for prompt_id, text in list(self.queued.items()):
            if text == notice.prompt:  # the oldest queued prompt with this text runs now
                del self.queued[prompt_id]
                break
        self.task_id = notice.task_id
        self.turn = LiveTurn(notice.attempt_id, notice.prompt)
        self.turn.view.restricted = notice.restricted
        marker = "(recovery) > " if notice.recovery else "> "
        card = TurnCard(self.turn, agent=self.agent or "agent")
        self.cards.append(card)
        transcript = self.transcript
        self._prompt_line = Static(Text(marker + notice.prompt), classes="prompt")
        transcript.mount(self._prompt_line)
        transcript.mount(card)

    def _turn_finished(self, notice: TurnFinished) -> None:
        if self.opening.on_turn is not None:
            self.opening.on_turn()
        turn = self.turn
        if turn is None or turn.attempt_id != notice.attempt_id:
            return
        view = turn.view
        if not view.terminal:  # the engine ended it without the agent's own completion
            view.apply(notice.as_event(view.turn_id or notice.attempt_id))
        turn.ended = time.monotonic()
        self.turn = None
        self._paint_cards()
        answer = notice.final_text if notice.final_text is not None else view.final_text
        transcript = self.transcript
        if answer and answer.strip():
            # Right below its card: notes that came during the turn (a queued prompt, a
            # command's reply) follow the answer instead of splitting it from its activity.
            transcript.mount(Markdown(answer), after=self.cards[-1])
        if turn.interrupt_sent:
            self._hint(None)

    def _engine_down(self, error: BaseException | None) -> None:
        if error is None:
            return
        self.engine_error = error
        self.exit(return_code=1)

    # -- what the person does -------------------------------------------------------------------

    def on_input_submitted(self, event: PromptInput.Submitted) -> None:
        if not isinstance(event.input, PromptInput):
            return
        text = event.value
        event.input.value = ""
        self._hint(None)
        if not text.strip():
            return
        event.input.history.add(text)
        if text.strip() == "/exit":
            self.exit()
            return
        command = text.lstrip().startswith("/") and not text.lstrip().startswith("//")
        moved = self.moved.get(self.task_id or "")
        if moved is not None and not command and self.task_id is not None:
            # Its agent session here missed what was said there: nothing more reaches it.
            self.note(read_only_refusal(self.task_id, moved, self._device_of(moved)), "error")
            return
        if command:
            self.note(f"> {text.strip()}")  # commands leave no turn to show what was typed
        self.link.tell(UserInput(text))

    def on_prompt_input_candidates(self, event: PromptInput.Candidates) -> None:
        self._hint("  ".join(f"/{n}" for n in event.names) if event.names else None)

    def on_approval_bar_answered(self, event: ApprovalBar.Answered) -> None:
        if self.turn is not None:
            self.turn.answered.add(event.approval_id)
        self.link.tell(AnswerApproval(event.approval_id, event.decision))
        self._paint()

    def _withdrawn(self, turn: LiveTurn, resolved: ApprovalResolved) -> None:
        """A question this terminal did not answer was: the bar withdraws it (the view drops
        it); say which surface answered (a policy says so in its own reply)."""
        if resolved.approval_id in turn.answered or resolved.answerer in (None, "policy"):
            return
        asked = next(
            (a for a in turn.view.pending_approvals if a.approval_id == resolved.approval_id),
            None,
        )
        if asked is not None:
            self.note(f"{asked.title}: {resolved.decision} · answered by {resolved.answerer}")

    def on_approval_bar_left(self) -> None:
        self.prompt.focus()

    def action_interrupt(self) -> None:
        turn = self.turn
        if turn is not None and not turn.interrupt_sent:
            turn.interrupt_sent = True
            self.link.tell(Interrupt())
            self._hint("interrupting the turn · Ctrl-C again exits")
            self._paint_status()
            return
        self.exit()

    def action_end_of_input(self) -> None:
        """Ctrl-D on an empty prompt leaves, as a shell does (attached: only detaches)."""
        if not self.prompt.value:
            self.exit()

    def action_toggle_output(self) -> None:
        self.expanded = () if self.expanded == "all" else "all"
        self._paint_cards(everything=True)

    def action_scroll_transcript(self, direction: int) -> None:
        transcript = self.transcript
        if direction < 0:
            transcript.scroll_page_up(animate=False)
        else:
            transcript.scroll_page_down(animate=False)

    # -- painting -------------------------------------------------------------------------------

    def note(
        self, text: str, kind: Literal["note", "error"] = "note", *, before: Widget | None = None
    ) -> None:
        self.transcript.mount(Static(Text(text), classes=kind), before=before)

    def _hint(self, text: str | None) -> None:
        self.hint_line.update(Text(text if text is not None else KEYS_HINT))

    def _schedule_paint(self) -> None:
        if self._paint_due:
            return
        wait = self._last_paint + 1 / PAINT_HZ - time.monotonic()
        if wait <= 0:
            self._paint()
            return
        self._paint_due = True
        self.set_timer(wait, self._paint)

    def _tick(self) -> None:
        if self._terminal_fd is not None and _hung_up(self._terminal_fd):
            # The terminal went away without a SIGHUP reaching us (a shell that ignores it):
            # Textual would read end-of-file forever, so leave as SIGHUP would have.
            self._terminate(signal.SIGHUP)
            return
        now = time.monotonic()
        due = now - self._polled >= POLL_SECONDS and not self._reading
        if self._route_open and self.task_id is not None and due:
            self._polled, self._reading = now, True
            self.run_worker(self._read_standing(self.task_id), group="standing")
        if self.turn is not None:
            self._paint()

    async def _read_standing(self, task_id: str) -> None:
        """Notice a handoff of the task (``_standing``): pushed from the host, another
        process, nothing tells this terminal's engine."""
        try:
            mobility = await asyncio.to_thread(self.link.task_mobility, task_id)
        except EngineStopped:
            return
        finally:
            self._reading = False
        if mobility is not None and mobility.peer not in self.device_names:
            try:
                name = await asyncio.to_thread(self.link.device_name, mobility.peer)
            except EngineStopped:
                name = None
            self.device_names[mobility.peer] = name
        before = self.standing.get(task_id)
        self.standing[task_id] = mobility
        said = moved_note(task_id, before, mobility, self._device_of(mobility))
        if mobility is not None and mobility.state == "moved" and task_id not in self.moved:
            self.moved[task_id] = mobility
            if said is not None:
                self.note(said, "error")
            try:  # the task is no longer this terminal's: another process may take it back up
                await asyncio.to_thread(self.link.let_go, task_id)
            except EngineStopped:
                pass
        elif said is not None and task_id not in self.moved:
            self.note(said)
        self._paint_status()

    def _device_of(self, mobility: TaskMobility | None) -> str | None:
        return None if mobility is None else self.device_names.get(mobility.peer)

    def _paint(self) -> None:
        self._paint_due = False
        self._last_paint = time.monotonic()
        self._paint_cards()
        self._paint_approval()
        self._paint_status()

    def _paint_cards(self, *, everything: bool = False) -> None:
        if everything:
            for card in self.cards:
                card.paint(self.expanded)
        elif self.cards:
            self.cards[-1].paint(self.expanded)

    def _paint_approval(self) -> None:
        bar = self.approval_bar
        waiting = self.turn.unanswered() if self.turn is not None else []
        was_shown = bar.approval is not None
        prompt = self.prompt
        # Only a line being typed needs the guard; the Enter that sent a prompt does not.
        guarded = prompt.typing()
        bar.show_approval(waiting[0] if waiting else None, len(waiting) - 1, guarded=guarded)
        if waiting and not was_shown:
            bar.focus()
        elif not waiting and was_shown and bar.has_focus:
            prompt.focus()

    def _paint_status(self) -> None:
        turn = self.turn
        parts = [
            self.agent or "default agent",
            f"task {self.task_id}" if self.task_id else "new task",
        ]
        if not self._route_open:
            parts.append("choosing a task")
        elif turn is None:
            parts.append("idle")
        else:
            state = STATE_LABELS[turn.view.display_state]
            if turn.interrupt_sent:
                state = "Interrupting"
            parts += [state, format_elapsed(turn.elapsed)]
        if self.queued:
            parts.append(f"{len(self.queued)} queued")
        if self.task_id is not None:
            standing = self.moved.get(self.task_id) or self.standing.get(self.task_id)
            label = standing_label(standing, self._device_of(standing))
            if label is not None:
                parts.append(label)
        self.status_line.update(Text(" · ".join(parts)))


def _terminal_fd() -> int | None:
    """The terminal the UI reads from, when it is one (not under the headless pilot)."""
    try:
        fd = sys.__stdin__.fileno() if sys.__stdin__ is not None else -1
    except (OSError, ValueError):
        return None
    return fd if fd >= 0 and os.isatty(fd) else None


def _hung_up(fd: int) -> bool:
    try:
        os.tcgetpgrp(fd)
    except OSError:
        return True  # EIO: the terminal was hung up (its window closed, its tmux pane killed)
    return False
