"""The TUI's widgets: the prompt, the approval choice, a turn's card, the status line, the picker.

Each widget shows what the app hands it and reports what the person did as a Textual message;
none of them talks to the engine.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Literal

from rich.text import Text
from textual import events, work
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from robota.core.presentation import (
    Approval,
    TerminalRenderer,
    TurnView,
    format_elapsed,
    strip_launcher,
)

from ._complete import History, complete

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from robota.core.events import ApprovalDecision
    from robota.core.store import Task

__all__ = [
    "APPROVAL_KEYS",
    "ApprovalBar",
    "LiveTurn",
    "PromptInput",
    "TaskPicker",
    "TurnCard",
    "task_label",
]

APPROVAL_KEYS: dict[ApprovalDecision, tuple[str, str]] = {
    "accept": ("a", "allow once"),
    "accept_for_session": ("s", "allow for this session"),
    "decline": ("d", "decline"),
    "cancel": ("c", "cancel the turn"),
}
"""Each decision's key and what the bar calls it. ``decline``: the agent is told no and the turn
goes on; ``cancel``: declined, and the agent interrupts the turn at once (App Server's
``cancel``, ACP's ``cancelled`` outcome); the task stays, the next prompt continues it."""

TYPING_GUARD = 0.4
"""Seconds after the last keystroke in the prompt during which a newly shown approval ignores
keys: a person typing a steer must not answer it with the letter that happened to come next."""


def guard_clock() -> float:
    """The clock of the typing guard, looked up at each use so a test can hold it still: the
    guard is about keystrokes in quick succession, which a loaded machine cannot replay in real
    time."""
    return time.monotonic()


class PromptInput(Input):
    """The one-line prompt: Tab completes slash commands, Up and Down walk the history."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "complete", "Complete", show=False),
        Binding("up", "older", "Previous line", show=False),
        Binding("down", "newer", "Next line", show=False),
    ]

    class Candidates(Message):
        """Several commands match what was typed (empty: clear the hint)."""

        def __init__(self, names: tuple[str, ...]) -> None:
            super().__init__()
            self.names = names

    def __init__(self, names: Sequence[str], *, id: str | None = None) -> None:
        super().__init__(
            placeholder="Ask, or /command (Tab completes)",
            suggester=SuggestFromList([f"/{n}" for n in names], case_sensitive=False),
            id=id,
        )
        self._names = tuple(names)
        self.history = History()
        self.last_typed = 0.0

    def on_key(self) -> None:
        self.last_typed = guard_clock()

    def typing(self) -> bool:
        """A line is being typed: its last keystroke is within ``TYPING_GUARD``."""
        return bool(self.value) and guard_clock() - self.last_typed < TYPING_GUARD

    def action_complete(self) -> None:
        done = complete(self.value, self.cursor_position, self._names)
        if done is None:
            return
        if done.text == self.value and not done.candidates:
            self.app.bell()
        self.value = done.text
        self.cursor_position = done.cursor
        self.post_message(self.Candidates(done.candidates))

    def action_older(self) -> None:
        line = self.history.older(self.value)
        if line is not None:
            self.value = line
            self.cursor_position = len(line)

    def action_newer(self) -> None:
        line = self.history.newer()
        if line is not None:
            self.value = line
            self.cursor_position = len(line)


class ApprovalBar(Static, can_focus=True):
    """The oldest unanswered approval of the running turn and the keys that answer it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            Binding(key, f"answer('{decision}')", label)
            for decision, (key, label) in APPROVAL_KEYS.items()
        ),
        Binding("escape", "leave", "Back to the prompt", show=False),
    ]

    class Answered(Message):
        def __init__(self, approval_id: str, decision: ApprovalDecision) -> None:
            super().__init__()
            self.approval_id = approval_id
            self.decision = decision

    class Left(Message):
        """The person went back to the prompt without answering."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.approval: Approval | None = None
        self.armed_at = 0.0

    def show_approval(self, approval: Approval | None, waiting: int, *, guarded: bool) -> None:
        """Show ``approval`` (``None`` hides the bar); ``waiting`` more are behind it. A newly
        shown one that is ``guarded`` ignores keys for ``TYPING_GUARD``."""
        if approval is None:
            self.approval = None
            self.remove_class("-shown")
            self.update("")
            return
        if self.approval is None or self.approval.approval_id != approval.approval_id:
            self.armed_at = guard_clock() + (TYPING_GUARD if guarded else 0.0)
        self.approval = approval
        self.add_class("-shown")
        text = Text()
        text.append("Approval needed: ", style="bold yellow")
        text.append(approval.title)
        if waiting:
            text.append(f"  (+{waiting} more)", style="dim")
        if approval.command:
            text.append(f"\n  $ {strip_launcher(approval.command)}")
        if approval.cwd:
            text.append(f"\n  in {approval.cwd}", style="dim")
        if approval.reason:
            text.append(f"\n  {approval.reason}", style="dim")
        choices = "  ".join(
            f"[{APPROVAL_KEYS[d][0]}] {APPROVAL_KEYS[d][1]}" for d in approval.decisions
        )
        text.append(f"\n  {choices}   [Esc] back to the prompt", style="yellow")
        self.update(text)

    def action_answer(self, decision: ApprovalDecision) -> None:
        approval = self.approval
        if approval is None or decision not in approval.decisions:
            self.app.bell()
            return
        if guard_clock() < self.armed_at:
            return  # typed ahead into a choice that was not on the screen yet
        self.post_message(self.Answered(approval.approval_id, decision))

    def action_leave(self) -> None:
        self.post_message(self.Left())


@dataclass(eq=False)
class LiveTurn:
    """A turn on the screen: the view the card is drawn from, and what the TUI did to it."""

    attempt_id: str
    prompt: str
    started: float = field(default_factory=time.monotonic)
    view: TurnView = field(default_factory=TurnView)
    ended: float | None = None
    interrupt_sent: bool = False
    answered: set[str] = field(default_factory=set)
    """Approvals answered here whose resolution has not come back yet."""

    @property
    def elapsed(self) -> float:
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    def unanswered(self) -> list[Approval]:
        return [a for a in self.view.pending_approvals if a.approval_id not in self.answered]


class TurnCard(Static):
    """One turn's activity, drawn from the turn's ``TurnView`` by a ``TerminalRenderer``: the
    same model and renderer as print mode's progress, and the same view the chat cards use.
    The renderer is held for the turn, so a repaint redraws only the blocks that changed.
    Pending approvals are left out: the ``ApprovalBar`` shows them, with the keys."""

    def __init__(self, turn: LiveTurn, *, agent: str) -> None:
        super().__init__("", classes="card")
        self.turn = turn
        self.renderer = TerminalRenderer(agent=agent)

    def paint(self, expanded: Collection[str] | Literal["all"] = ()) -> None:
        turn = self.turn
        lines = self.renderer.render(
            turn.view, elapsed=turn.elapsed, color=True, expanded=expanded, approvals=False
        )
        self.update(Text.from_ansi("\n".join(lines)))


def task_label(task: Task, now: float | None = None) -> str:
    """One picker row: title, agent, working directory, age, last turn's status, id."""
    age = format_elapsed((now if now is not None else time.time()) - task.updated_at)
    parts = [
        task.title or "(untitled)",
        task.agent,
        task.cwd,
        f"{age} ago",
        task.last_turn_status or "no turns",
        task.id,
    ]
    return "  ·  ".join(parts)


class TaskPicker(ModalScreen["Task | None"]):
    """Recent tasks, newest first, searchable; Enter picks one, Esc picks none."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(
        self, load: Callable[[str | None], Sequence[Task]], search: str | None = None
    ) -> None:
        super().__init__()
        self._load = load
        self._search = search
        self._tasks: dict[str, Task] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="picker"):
            yield Static("Resume a task  (type to search · Enter resume · Esc new task)")
            yield Input(
                self._search or "", placeholder="search id, title or directory", id="picker-search"
            )
            yield OptionList(id="picker-list")

    def on_mount(self) -> None:
        self.query_one("#picker-search", Input).focus()
        self._refresh(self._search)

    def on_input_changed(self, event: Input.Changed) -> None:
        self._refresh(event.value.strip() or None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        options = self.query_one("#picker-list", OptionList)
        index = options.highlighted
        if index is not None and options.option_count:
            self._pick(options.get_option_at_index(index).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._pick(event.option.id)

    def _pick(self, task_id: str | None) -> None:
        task = self._tasks.get(task_id or "")
        if task is not None:
            self.dismiss(task)

    def on_key(self, event: events.Key) -> None:
        # Up and Down move through the list while the search keeps the focus.
        if event.key in ("up", "down"):
            options = self.query_one("#picker-list", OptionList)
            (options.action_cursor_up if event.key == "up" else options.action_cursor_down)()
            event.stop()

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    @work(exclusive=True, group="picker")
    async def _refresh(self, search: str | None) -> None:
        if search is not None:
            await asyncio.sleep(0.15)  # let a fast typist finish the word first
        tasks = await asyncio.to_thread(self._load, search)
        options = self.query_one("#picker-list", OptionList)
        options.clear_options()
        self._tasks = {t.id: t for t in tasks}
        now = time.time()
        options.add_options([Option(task_label(t, now), id=t.id) for t in tasks])
        if tasks:
            options.highlighted = 0
