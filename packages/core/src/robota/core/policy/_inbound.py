"""What one message in a team group leads to, before the team's state is consulted.

The order, for a sender who is heard (``role_of``; anyone else is ``Ignore``d):

1. parse (``_intents``): a switch request wins over everything;
2. check the permission of the intent it invokes (``_permissions``): every outcome but
   ``Ignore`` carries the ``Check``, which the team actor writes to the audit;
3. by decision: ``reject`` and ``group-rejected`` are ``Answer``ed with their fixed reply;
   ``confirm-needed`` is ``Confirm`` (the actor records a pending confirmation and asks);
   ``allow`` depends on what the message is:

   * an unknown key: ``Answer`` "no such action" (never the agent's);
   * ``/help``: ``Answer`` with the help text; ``/status``, ``/queue``: ``Report`` (the answer
     needs the team's registry);
   * an engine command: ``Command`` for the thread's task (admins only, by level);
   * plain text inside a request's thread: ``FollowUp`` to that thread's task, with the
     immediate reply when it is an acknowledgement ("继续" gets "继续中", thanks gets none);
   * plain text outside a thread, or a project intent anywhere: ``Run``, a new request with
     its prompt, tags and permission mode, for the scheduler.

``confirmed`` turns a confirmed ``Pending`` into its ``Run``, checking the permission again
(roles are never cached: an admin removed from the list in the meantime is refused; an intent
removed from the config is answered as unknown).

A pending confirmation is answered before this runs (``Confirmations.answer``: the same
sender's next message in that thread); only a message it does not consume comes here.
Pure: the team's config and the message in, one outcome out.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._records import replace
from ..config import PermissionMode, TeamConfig
from ._acks import detect_ack
from ._confirm import Pending
from ._intents import (
    Ask,
    Builtin,
    EngineCommand,
    ProjectIntent,
    UnknownIntent,
    intent_name,
    parse_message,
    permission_mode_for,
    render_prompt,
    request_tags,
)
from ._permissions import Check
from ._permissions import check as check_intent
from ._replies import ack_reply, decision_reply, help_text, reply, team_locale

__all__ = [
    "Answer",
    "Command",
    "Confirm",
    "FollowUp",
    "Ignore",
    "Inbound",
    "Report",
    "Run",
    "confirmed",
    "inbound",
]


@dataclass(frozen=True, slots=True)
class Ignore:
    """The sender is not among the team's members: no reaction, no audit."""


@dataclass(frozen=True, slots=True)
class Answer:
    check: Check
    text: str


@dataclass(frozen=True, slots=True)
class Confirm:
    check: Check
    args: str
    text: str
    """The question to ask in the thread."""


@dataclass(frozen=True, slots=True)
class Report:
    check: Check
    name: str
    """``status`` or ``queue``."""


@dataclass(frozen=True, slots=True)
class Command:
    check: Check
    name: str
    args: str


@dataclass(frozen=True, slots=True)
class FollowUp:
    check: Check
    text: str
    ack: str | None
    """The immediate reply to an acknowledgement, if one is due."""


@dataclass(frozen=True, slots=True)
class Run:
    check: Check
    prompt: str
    tags: tuple[str, ...]
    permission_mode: PermissionMode | None
    """``None``: the task default (an admin's request)."""


Inbound = Ignore | Answer | Confirm | Report | Command | FollowUp | Run


def inbound(
    team: TeamConfig,
    *,
    sender: str,
    text: str,
    chat: str,
    in_thread: bool,
    owner: str | None,
    prefix: str = "/",
) -> Inbound:
    """What ``sender``'s ``text`` in ``team``'s group leads to; ``in_thread``: the message is
    inside a request's thread; ``owner``: the transport's owner (always an admin)."""
    parsed = parse_message(text, team, prefix)
    check = check_intent(sender, intent_name(parsed), team, owner)
    if check is None:
        return Ignore()
    role = check.role
    locale = team_locale(team)
    refusal = decision_reply(locale, check)
    if check.decision == "confirm-needed":
        assert refusal is not None
        return Confirm(check, parsed.args if isinstance(parsed, ProjectIntent) else "", refusal)
    if refusal is not None:
        return Answer(check, refusal)
    if isinstance(parsed, UnknownIntent):
        return Answer(check, reply(locale, "unknown_intent"))
    if isinstance(parsed, Builtin):
        if parsed.name == "help":
            return Answer(check, help_text(team, prefix))
        return Report(check, parsed.name)
    if isinstance(parsed, EngineCommand):
        return Command(check, parsed.name, parsed.args)
    if isinstance(parsed, Ask) and in_thread:
        kind = detect_ack(parsed.text)
        return FollowUp(check, parsed.text, ack_reply(locale, kind) if kind else None)
    if isinstance(parsed, ProjectIntent):
        prompt = render_prompt(
            parsed.intent, args=parsed.args, project=str(team.project), chat=chat, sender=sender
        )
    else:
        assert isinstance(parsed, Ask)
        prompt = parsed.text
    return Run(check, prompt, request_tags(parsed, role, team), permission_mode_for(role, team))


def confirmed(
    team: TeamConfig, pending: Pending, *, chat: str, owner: str | None
) -> Ignore | Answer | Run:
    """The request a confirmed ``pending`` runs, its decision made again (now ``allow``)."""
    again = check_intent(pending.sender, pending.intent, team, owner)
    if again is None:
        return Ignore()
    locale = team_locale(team)
    intent = team.intents.get(pending.intent)
    if intent is None:
        return Answer(again, reply(locale, "unknown_intent"))
    refusal = decision_reply(locale, again) if again.decision != "confirm-needed" else None
    if refusal is not None:
        return Answer(again, refusal)
    prompt = render_prompt(
        intent, args=pending.args, project=str(team.project), chat=chat, sender=pending.sender
    )
    return Run(
        replace(again, decision="allow"),
        prompt,
        request_tags(ProjectIntent(intent, pending.args), again.role, team),
        permission_mode_for(again.role, team),
    )
