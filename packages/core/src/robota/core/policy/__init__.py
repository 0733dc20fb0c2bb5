"""robota.core.policy: what a team group may ask of its project's agent, decided before it asks.

A team (``teams.<name>`` in config.yaml) makes one group chat the front door of one project.
This package is its decision code, all pure (no I/O, no clock, no threads: times are passed
in), each concept in its own module and tested with tables:

* ``_permissions``  role (admin whitelist, transport owner) x level -> allow | reject |
  confirm-needed | group-rejected; the name heuristic for undeclared intents;
* ``_switch``       whether a message asks to turn the bot on or off (never done from chat);
* ``_acks``         whether a message is a short acknowledgement ("ok", "继续", "thanks");
* ``_intents``      what a message is (plain text, a built-in, a project intent, an engine
  command, an unknown key), an intent's prompt, a request's tags and permission mode;
* ``_inbound``      what one message leads to: all of the above in their order, one outcome;
* ``_confirm``      pending confirmations of ``admin-confirm`` intents (15 minutes);
* ``_tags``         resource tags and their conflicts;
* ``_busy``         the busy placeholder while the operator's turn holds a request back;
* ``_scheduler``    the dispatch scheduler: slots, conflicts, per-sender order, the queue;
* ``_records``      the scheduler's state and the confirmations as the store keeps them (JSON);
* ``_replies``      the fixed, localised replies, and a team's transport defaults;
* ``_notes``        online/offline notes, ``/status`` and ``/queue``, a team task's developer
  instructions (the group-reply rules);
* ``_text``         folding chat text (case, ASCII and CJK punctuation) for the detectors.

It imports only ``robota.core.config`` (the team section and its vocabulary) and
``robota.core._commands`` (the engine's chat commands, which a team group lists and guards);
the team actor, the store's team tables and the chat transports build on it.
"""

from ._acks import MAX_LENGTH as ACK_MAX_LENGTH
from ._acks import AckKind, detect_ack
from ._busy import PLACEHOLDER_SECONDS, placeholder_due, waits_for_operator
from ._confirm import (
    CONFIRM_SECONDS,
    CONFIRM_WORDS,
    Cancelled,
    Confirmations,
    Confirmed,
    Expired,
    Pending,
    is_confirmation,
)
from ._inbound import (
    Answer,
    Command,
    Confirm,
    FollowUp,
    Ignore,
    Inbound,
    Report,
    Run,
    confirmed,
    inbound,
)
from ._intents import (
    Ask,
    Builtin,
    EngineCommand,
    Parsed,
    ProjectIntent,
    SwitchRequest,
    UnknownIntent,
    intent_name,
    parse_message,
    permission_mode_for,
    render_prompt,
    request_tags,
)
from ._notes import (
    context_bar,
    context_percent,
    offline_note,
    online_note,
    queue_text,
    status_text,
    team_instructions,
)
from ._permissions import (
    COMMAND_INTENT_PREFIX,
    DECISIONS,
    RISKY_NAME,
    RISKY_SUFFIXES,
    Check,
    Decision,
    Level,
    Role,
    check,
    decide,
    heuristic_level,
    level_of,
    role_of,
)
from ._records import (
    confirmations_from_json,
    confirmations_to_json,
    scheduler_from_json,
    scheduler_to_json,
)
from ._replies import (
    REPLIES,
    ack_reply,
    decision_reply,
    help_text,
    queued_reply,
    reply,
    team_locale,
    team_time_zone,
)
from ._scheduler import (
    Complete,
    Ended,
    Queued,
    Rejected,
    Request,
    Running,
    Scheduler,
    SchedulerEffect,
    SchedulerMessage,
    SchedulerState,
    Started,
    Submit,
    Sweep,
    Waiting,
    Withdrawn,
)
from ._switch import COMMAND_PREFIXES, is_switch_request
from ._tags import conflict, conflict_reason, tags_conflict

__all__ = [
    # permissions
    "COMMAND_INTENT_PREFIX",
    "DECISIONS",
    "RISKY_NAME",
    "RISKY_SUFFIXES",
    "Check",
    "Decision",
    "Level",
    "Role",
    "check",
    "decide",
    "heuristic_level",
    "level_of",
    "role_of",
    # messages
    "Ask",
    "Builtin",
    "EngineCommand",
    "Parsed",
    "ProjectIntent",
    "SwitchRequest",
    "UnknownIntent",
    "intent_name",
    "parse_message",
    "permission_mode_for",
    "render_prompt",
    "request_tags",
    "COMMAND_PREFIXES",
    "is_switch_request",
    "ACK_MAX_LENGTH",
    "AckKind",
    "detect_ack",
    # one message, all of the above
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
    # confirmations
    "CONFIRM_SECONDS",
    "CONFIRM_WORDS",
    "Cancelled",
    "Confirmations",
    "Confirmed",
    "Expired",
    "Pending",
    "is_confirmation",
    # the scheduler
    "Complete",
    "Ended",
    "Queued",
    "Rejected",
    "Request",
    "Running",
    "Scheduler",
    "SchedulerEffect",
    "SchedulerMessage",
    "SchedulerState",
    "Started",
    "Submit",
    "Sweep",
    "Waiting",
    "Withdrawn",
    "conflict",
    "conflict_reason",
    "tags_conflict",
    # the busy placeholder
    "PLACEHOLDER_SECONDS",
    "placeholder_due",
    "waits_for_operator",
    # the store's JSON of a team's registry
    "confirmations_from_json",
    "confirmations_to_json",
    "scheduler_from_json",
    "scheduler_to_json",
    # replies
    "REPLIES",
    "ack_reply",
    "decision_reply",
    "help_text",
    "queued_reply",
    "reply",
    "team_locale",
    "team_time_zone",
    # notes, /status, /queue, a team task's instructions
    "context_bar",
    "context_percent",
    "offline_note",
    "online_note",
    "queue_text",
    "status_text",
    "team_instructions",
]
