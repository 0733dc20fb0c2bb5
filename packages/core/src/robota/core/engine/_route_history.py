"""A route's history commands: ``/sessions``, ``/switch``, ``/turns`` and resetting to a turn.

``/sessions`` shows robota's own tasks merged with the threads every agent that can
(``list_sessions``: an App Server agent's ``thread/list``, with those of Codex Desktop, the
Codex CLI or another client of the same agent home), one order by last activity, numbered
across pages so ``/switch N`` names one entry whatever page it was on. The agents answer later
(``ListSessions`` -> ``SessionsListed``), so the route keeps the pending listing and replies
once every agent answered or failed; an agent that fails costs its entries and a line saying
so, never the listing.

Resetting (``/turns reset TURN``) forks the agent thread that ran the chosen turn through that
turn and binds the task to the fork: the task keeps its id, title, agent, directory, settings
and route; the turns after the chosen one stay listed (they happened), and the next turn's
parent is the chosen one. An agent without ``fork_at_turn`` (ACP's) is refused.
Nothing on disk is reverted, which the listing says before anyone resets.

Functions of ``RouteData``, pure: reads through its port, writes and agent requests as effects.
"""

from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path

from .._plugins import PluginError, runtime_plugins
from .._records import replace
from ..agents import AgentSessionInfo, CloseSession, SessionOpened, SessionsListed
from ..store import ResetTaskToTurn, Task, TurnAttempt
from ._notices import RouteReply
from ._route_effects import ListAgentSessions, Notify, Tell
from ._route_state import BUSY, Listing, ListingEntry, PendingReset, RouteData
from ._route_tasks import prompt_summary, use_task
from ._sessions_listing import SessionsEntry, SessionsListing

__all__ = [
    "reset_failed",
    "reset_opened",
    "sessions",
    "sessions_listed",
    "switch",
    "turns",
]

SESSIONS_PAGE = 5
TURNS_PAGE = 10
RESET_WARNING = "Reset continues the conversation from a turn; it never reverts local files."


# -- /sessions and /switch ---------------------------------------------------------------------


def sessions(route: RouteData, args: str) -> None:
    words = args.split()
    page = 1
    if words and words[-1].isdigit():
        page = max(1, int(words.pop()))
    search = " ".join(words) or None
    listers = [a.name for a in route.agents.values() if a.capabilities.list_sessions]
    listing = Listing(search, page, set(listers))
    if not listers:
        _show(route, listing)
        return
    ref = route.ids.ref()
    route.listings[ref] = listing
    for name in listers:
        route.emit(ListAgentSessions(name, ref, search, SESSIONS_PAGE * page + 1))


def sessions_listed(route: RouteData, listed: SessionsListed) -> None:
    agent = listed.agent
    listing = route.listings.get(listed.ref)
    if listing is None or agent not in listing.waiting:
        return
    listing.waiting.discard(agent)
    if listed.error is not None:
        listing.failures.append(f"{agent}: its threads could not be listed ({listed.error})")
    listing.threads.extend((agent, thread) for thread in listed.sessions)
    if not listing.waiting:
        del route.listings[listed.ref]
        _show(route, listing)
        route.maybe_idle()


def _show(route: RouteData, listing: Listing) -> None:
    wanted = SESSIONS_PAGE * listing.page + 1
    entries = [
        ListingEntry(t.agent, t.updated_at, task=t)
        for t in route.reads.tasks(limit=wanted, search=listing.search)
    ]
    bound = route.reads.bound_sessions([thread.session_id for _, thread in listing.threads])
    for agent, thread in listing.threads:
        if (agent, thread.session_id) in bound:
            continue  # robota's own task, listed (or not, by the search) as such
        entries.append(ListingEntry(agent, thread.updated_at or 0.0, thread=thread))
    entries.sort(key=lambda e: e.updated_at, reverse=True)
    route.last_listing = entries
    start = SESSIONS_PAGE * (listing.page - 1)
    shown = tuple(
        _entry(route, number, entry)
        for number, entry in enumerate(entries[start : start + SESSIONS_PAGE], start=start + 1)
    )
    page = SessionsListing(
        shown,
        listing.page,
        listing.search,
        more=len(entries) > start + SESSIONS_PAGE,
        failures=tuple(listing.failures),
    )
    route.effects.append(Notify(RouteReply(route.key, sessions_text(page), listing=page)))


def sessions_text(page: SessionsListing) -> str:
    """The lines a terminal shows for a ``/sessions`` page."""
    lines = [f"{entry.number}. {_describe(entry)}" for entry in page.entries]
    search = page.search
    if not lines:
        lines.append("no tasks" + (f" matching {search!r}" if search else ""))
    elif page.more:
        lines.append(f"more: /sessions {search + ' ' if search else ''}{page.page + 1}")
    lines.extend(page.failures)
    if page.entries:
        lines.append("/switch N (or a task id) makes one current")
    return "\n".join(lines)


def _entry(route: RouteData, number: int, entry: ListingEntry) -> SessionsEntry:
    if entry.task is not None:
        task = entry.task
        return SessionsEntry(
            number,
            task.agent,
            entry.updated_at,
            task.title or "untitled",
            task.last_turn_status or "new",
            str(task.cwd),
            task_id=task.id,
            current=route.task is not None and task.id == route.task.id,
        )
    thread = entry.thread
    assert thread is not None
    return SessionsEntry(
        number,
        entry.agent,
        entry.updated_at,
        thread.title or "untitled",
        "external",
        str(thread.cwd) if thread.cwd else None,
        session_id=thread.session_id,
    )


def _describe(entry: SessionsEntry) -> str:
    when = datetime.fromtimestamp(entry.updated_at).strftime("%Y-%m-%d %H:%M")
    if entry.task_id is not None:
        current = "  <- current" if entry.current else ""
        return (
            f"{entry.task_id}  {when}  {entry.agent:<10} {entry.state:<11} {entry.title}  "
            f"({entry.cwd}){current}"
        )
    where = f"  ({entry.cwd})" if entry.cwd else ""
    return f"{entry.session_id}  {when}  {entry.agent:<10} {entry.state:<11} {entry.title}{where}"


def switch(route: RouteData, args: str) -> None:
    wanted = args.strip()
    if not wanted:
        route.reply("/switch needs a number from /sessions, a task id or a title", error=True)
        return
    if wanted.isdigit():
        number = int(wanted)
        if 1 <= number <= len(route.last_listing):
            _switch_to(route, route.last_listing[number - 1])
            return
        # A task id is 12 hex digits, now and then with no letter among them: a number that is
        # a whole task's id is that task (a shorter one stays an entry number, not a prefix).
        whole = [t for t in route.reads.find_task(wanted) if t.id == wanted]
        if not whole:
            route.reply(f"no entry {number} in the last /sessions", error=True)
            return
        _switch_to(route, ListingEntry(whole[0].agent, whole[0].updated_at, task=whole[0]))
        return
    found = route.reads.find_task(wanted)
    if len(found) > 1:
        listed = ", ".join(t.id for t in found)
        route.reply(f"{wanted!r} names several tasks: {listed}", error=True)
        return
    if found:
        _switch_to(route, ListingEntry(found[0].agent, found[0].updated_at, task=found[0]))
        return
    threads = [e for e in route.last_listing if e.thread and e.thread.session_id == wanted]
    if not threads:
        route.reply(f"no task {wanted!r}", error=True)
        return
    _switch_to(route, threads[0])


def _switch_to(route: RouteData, entry: ListingEntry) -> None:
    if entry.task is not None:
        task = entry.task
    else:
        thread = entry.thread
        assert thread is not None
        adopted = route.reads.task_with_remote(entry.agent, thread.session_id)
        if adopted is None:
            _adopt_session(route, entry.agent, thread)
            return
        task = adopted
    if use_task(route, task.id):
        route.reply(f"switched to task {task.id}")


def _adopt_session(route: RouteData, agent: str, session: AgentSessionInfo) -> None:
    """Make an agent's session robota has no task for (one another client started) a task of
    this route, and resume it."""
    if route.turn is not None:
        route.reply(BUSY, error=True)
        return
    cwd = session.cwd if session.cwd and route.reads.is_dir(Path(session.cwd)) else None
    task = route.fresh_task(
        agent,
        cwd or route.defaults.cwd,
        remote_id=session.session_id,
        title=session.title,
        permission_mode=route.defaults.permission_mode,
    )
    route.bind_task(task, create=True)
    route.open_session(task)
    route.reply(f"switched to task {task.id} ({agent}'s session {session.session_id})")


# -- /turns and reset ------------------------------------------------------------------------


def turns(route: RouteData, args: str) -> None:
    task = route.task
    if task is None:
        route.reply("no task yet", error=True)
        return
    words = args.split()
    if words and words[0] in ("reset", "show"):
        if len(words) != 2:
            route.reply(f"usage: /turns {words[0]} TURN (TURN from /turns)", error=True)
            return
        (_reset if words[0] == "reset" else _show_turn)(route, task, words[1])
        return
    page = int(words[0]) if len(words) == 1 and words[0].isdigit() and int(words[0]) > 0 else 1
    done = route.reads.turn_attempts(task.id, status="completed", limit=TURNS_PAGE * page + 1)
    shown = done[TURNS_PAGE * (page - 1) : TURNS_PAGE * page]
    if not shown:
        route.reply("no completed turns")
        return
    head = route.reads.head_attempt(task)
    lines = [RESET_WARNING]
    for attempt in shown:
        when = datetime.fromtimestamp(attempt.finished_at or attempt.updated_at).strftime(
            "%m-%d %H:%M"
        )
        mark = "<- current" if head and attempt.id == head.id else "/turns reset " + attempt.id[:8]
        lines.append(f"{attempt.id[:8]}  {when}  {prompt_summary(attempt.prompt, 50):<50}  {mark}")
    if len(done) > TURNS_PAGE * page:
        lines.append(f"more: /turns {page + 1}")
    lines.append("/turns show TURN shows a turn's answer again")
    route.reply("\n".join(lines))


def _one_turn(route: RouteData, task: Task, ref: str) -> TurnAttempt | None:
    found = route.reads.find_turn_attempt(task.id, ref)
    if len(found) != 1:
        problem = "names several turns" if found else "is no turn of this task"
        route.reply(f"{ref!r} {problem}; /turns lists them", error=True)
        return None
    return found[0]


def _show_turn(route: RouteData, task: Task, ref: str) -> None:
    """A turn's prompt and answer again: what a front end that was gone missed."""
    attempt = _one_turn(route, task, ref)
    if attempt is None:
        return
    outcome = attempt.final_text or attempt.error or "(no answer)"
    route.reply(
        f"turn {attempt.id[:8]} ({attempt.status})\n"
        f"> {prompt_summary(attempt.prompt, 200)}\n\n{outcome}"
    )


def _reset(route: RouteData, task: Task, ref: str) -> None:
    if route.turn is not None or route.resetting is not None:
        route.reply(BUSY, error=True)
        return
    if task.agent not in route.agents or not route.can(task).fork_at_turn:
        route.reply(
            f"reset needs {_forking_agents()}; {task.agent} cannot fork a session at a turn",
            error=True,
        )
        return
    attempt = _one_turn(route, task, ref)
    if attempt is None:
        return
    if attempt.status != "completed" or attempt.remote_turn_id is None:
        route.reply(f"turn {attempt.id[:8]} did not complete: only completed turns", error=True)
        return
    head = route.reads.head_attempt(task)
    if head is not None and head.id == attempt.id:
        route.reply(f"the conversation already stands at turn {attempt.id[:8]}")
        return
    thread = attempt.remote_session_id or task.remote_id
    if thread is None:
        route.reply(f"turn {attempt.id[:8]} has no thread to fork", error=True)
        return
    route.resetting = PendingReset(task.id, attempt, thread)
    if task.id in route.opened:
        route.emit(Tell(task.agent, CloseSession(task.id)))
        route.opened.discard(task.id)
    route.open_session(task)


def reset_opened(route: RouteData, opened: SessionOpened) -> bool:
    """Finish a reset when its fork opened; ``False`` when ``opened`` is no reset's."""
    pending, task = route.resetting, route.task
    if pending is None or task is None or not opened.key == pending.task_id == task.id:
        return False
    route.resetting = None
    attempt = pending.attempt
    route.write(ResetTaskToTurn(task.id, attempt.id, opened.session_id))
    route.task = replace(task, remote_id=opened.session_id, head_attempt_id=attempt.id)
    when = datetime.fromtimestamp(attempt.finished_at or attempt.updated_at)
    route.reply(
        f"reset to turn {attempt.id[:8]} ({prompt_summary(attempt.prompt, 60)!r}, completed "
        f"{when:%Y-%m-%d %H:%M}, agent turn {attempt.remote_turn_id}); the next prompt "
        f"continues from there. Local files are as they are now."
    )
    route.maybe_idle()
    return True


def reset_failed(route: RouteData) -> None:
    """The fork did not open: the task stays bound to its thread, which reopens on use."""
    if route.resetting is not None:
        route.resetting = None
        route.reply("reset failed: the conversation stays where it was", error=True)
        route.maybe_idle()


@functools.cache
def _forking_agents() -> str:
    """What a reset needs, in the words of the installed runtime plugins whose protocol forks a
    thread through a turn (their ``title``, else their kind): core names no kind. Read once,
    on the first refusal: the plugins are the installation's, loaded by then."""
    try:
        plugins = runtime_plugins()
    except PluginError:
        plugins = {}
    titles = [
        str(getattr(plugin, "title", kind))
        for kind, plugin in plugins.items()
        if plugin.capabilities.fork_at_turn
    ]
    if not titles:
        return "an agent that forks a thread through a turn"
    article = "an" if titles[0][:1].lower() in "aeiou" else "a"
    return f"{article} {' or '.join(titles)} agent (or another that forks a thread through a turn)"
