"""robota.core.engine: conversations as actors (routes, tasks, turns, queues, commands).

A front end (the TUI, print mode, later chat transports) builds an ``Engine`` with the agents
its profile configures, connects a ``deliver`` callable per route key, and tells routes what the
person does; see ``_requests`` and ``_notices`` for the conversation between the two, and
``_route_core`` for the rules a route follows.

Layering, bottom up (a module imports only from the layers below it):

1. ``_requests``, ``_sessions_listing``, ``_notices``   what front ends and routes say: the
   requests in, a ``/sessions`` page as data, the notices out (the slash-command resolver is
   core's ``_commands``, below ``config``, which checks team intents against it)
2. ``_policy``                    what a line of input becomes (pure)
3. ``_context``                   what the routes of one engine share
4. ``_route_effects``             what the route core asks of its shell, and the read port
5. ``_route_state``               a route's state and the moves every handler makes on it
6. ``_route_turns``               a turn from its attempt to its final answer; the queue
7. ``_route_tasks``, ``_route_history``, ``_recovery``, ``_route_let_go``   other tasks;
   ``/sessions``, ``/turns`` and reset; recovery on start; a task's session let go
8. ``_route_commands``            what each slash command does
9. ``_route_core``                ``RouteCore``: a message in, effects out (layers 4-9 are
   pure: no I/O, no threads, ids and clocks injected)
10. ``_route``                    the route actor: the shell that performs the effects
11. ``_recovery_plan``            what the last run left (reads the store)
12. ``_engine``                   the supervision tree as a Service
"""

from .._commands import COMMANDS, CommandSpec, Invocation, NotACommand, Rejected, resolve
from ._context import AgentEntry, EngineContext, Outputs, TaskDefaults, TaskOwning
from ._engine import Engine, EngineAgent
from ._notices import (
    InputQueued,
    InputSteered,
    RouteIdle,
    RouteNotice,
    RouteReply,
    TaskOpened,
    TurnBegan,
    TurnFinished,
    TurnUpdate,
)
from ._policy import (
    Decision,
    Enqueue,
    Prompt,
    RouteState,
    RunCommand,
    Say,
    SteerRunningTurn,
    after_steer_refused,
    decide,
)
from ._recovery import MAX_RECOVERIES, Recover, prompt_answers, recovery_prompt
from ._recovery_plan import RECOVERY_WINDOW
from ._requests import (
    AnswerApproval,
    ForkTask,
    FrontEndRequest,
    Interrupt,
    LetTaskGo,
    NewTask,
    RouteNote,
    SurfaceJoined,
    SurfaceLeft,
    TaskSettings,
    UserInput,
    UseTask,
)
from ._route import ConversationRoute, StoreReads
from ._route_core import RouteCore
from ._route_effects import (
    Ack,
    Answer,
    AttemptNotRecorded,
    ClaimFinal,
    Effect,
    FinalClaimed,
    ListAgentSessions,
    Log,
    MakeDirectory,
    Notify,
    OpenAgentSession,
    PromptQueued,
    QueuedTaken,
    RouteReads,
    Running,
    Tell,
    Write,
)
from ._route_let_go import let_go_refusal
from ._route_state import IdsAndClocks, Restored
from ._route_turns import MAX_RETRIES, retry_prompt
from ._sessions_listing import SessionsEntry, SessionsListing

__all__ = [
    # the engine
    "Engine",
    "EngineAgent",
    "TaskDefaults",
    "TaskOwning",
    "ConversationRoute",
    "EngineContext",
    "AgentEntry",
    "Outputs",
    # front end to route
    "FrontEndRequest",
    "UserInput",
    "NewTask",
    "UseTask",
    "RouteNote",
    "ForkTask",
    "Interrupt",
    "LetTaskGo",
    "let_go_refusal",
    "AnswerApproval",
    "TaskSettings",
    # route to front end
    "RouteNotice",
    "TaskOpened",
    "TurnBegan",
    "TurnUpdate",
    "InputSteered",
    "InputQueued",
    "TurnFinished",
    "RouteReply",
    "SurfaceJoined",
    "SurfaceLeft",
    "SessionsListing",
    "SessionsEntry",
    "RouteIdle",
    # commands
    "COMMANDS",
    "CommandSpec",
    "Invocation",
    "NotACommand",
    "Rejected",
    "resolve",
    # the input policy
    "Decision",
    "Enqueue",
    "Prompt",
    "RouteState",
    "RunCommand",
    "Say",
    "SteerRunningTurn",
    "after_steer_refused",
    "decide",
    # the route core: state, effects, acknowledgements, ports
    "RouteCore",
    "Restored",
    "IdsAndClocks",
    "RouteReads",
    "StoreReads",
    "Effect",
    "Notify",
    "Write",
    "Ack",
    "Answer",
    "ClaimFinal",
    "Tell",
    "OpenAgentSession",
    "ListAgentSessions",
    "Running",
    "MakeDirectory",
    "Log",
    "PromptQueued",
    "AttemptNotRecorded",
    "FinalClaimed",
    "QueuedTaken",
    "MAX_RECOVERIES",
    "MAX_RETRIES",
    # recovery
    "RECOVERY_WINDOW",
    "Recover",
    "prompt_answers",
    "recovery_prompt",
    "retry_prompt",
]
