"""robota.core.engine: conversations as actors (routes, tasks, turns, queues, commands).

A front end (the TUI, print mode, later chat transports) builds an ``Engine`` with the agents
its profile configures, connects a ``deliver`` callable per route key, and tells routes what the
person does; see ``_messages`` for the conversation between the two, and ``_route`` for the
rules a route follows.

Layering, bottom up (a module imports only from the layers below it):

1. ``_commands``, ``_messages``   the slash-command resolver; what front ends and routes say
2. ``_policy``                    what a line of input becomes (pure)
3. ``_context``                   what the routes of one engine share
4. ``_recovery``, ``_route_commands``   recovery on start; what each command does
5. ``_route``                     the route actor
6. ``_engine``                    the supervision tree as a Service
"""

from ._commands import COMMANDS, CommandSpec, Invocation, NotACommand, Rejected, resolve
from ._context import AgentEntry, EngineContext, Outputs, TaskDefaults
from ._engine import Engine, EngineAgent
from ._messages import (
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
from ._recovery import RECOVERY_WINDOW, recovery_prompt, retry_prompt
from ._route import ConversationRoute

__all__ = [
    # the engine
    "Engine",
    "EngineAgent",
    "TaskDefaults",
    "ConversationRoute",
    "EngineContext",
    "AgentEntry",
    "Outputs",
    # front end to route
    "FrontEndRequest",
    "UserInput",
    "NewTask",
    "UseTask",
    "ForkTask",
    "Interrupt",
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
    # recovery
    "RECOVERY_WINDOW",
    "recovery_prompt",
    "retry_prompt",
]
