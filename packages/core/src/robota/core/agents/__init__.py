"""robota.core.agents: the runtime-neutral conversation between routes and agents.

Routes (and print mode, and tests) speak to an agent through these messages only; the runtime
plugins (App Server, ACP) implement the other side. See ``_messages`` for the protocol.
"""

from ._messages import (
    PERMISSION_MODES,
    AgentFailure,
    AgentNotice,
    AgentRequest,
    AgentSessionInfo,
    CloseSession,
    DecideApproval,
    Deliver,
    InterruptTurn,
    ListSessions,
    OpenSession,
    PermissionMode,
    SessionEvent,
    SessionOpened,
    SessionsListed,
    SessionSpec,
    StartTurn,
    Steered,
    SteerRefused,
    SteerTurn,
    TurnAccepted,
    TurnRefused,
)

__all__ = [
    "PERMISSION_MODES",
    "AgentFailure",
    "AgentNotice",
    "AgentRequest",
    "AgentSessionInfo",
    "CloseSession",
    "DecideApproval",
    "Deliver",
    "InterruptTurn",
    "ListSessions",
    "OpenSession",
    "PermissionMode",
    "SessionEvent",
    "SessionOpened",
    "SessionSpec",
    "SessionsListed",
    "StartTurn",
    "SteerRefused",
    "SteerTurn",
    "Steered",
    "TurnAccepted",
    "TurnRefused",
]
