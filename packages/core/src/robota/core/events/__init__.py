"""robota.core.events: one event model for every agent protocol, and the retry classifier.

Runtimes translate App Server notifications and ACP session updates into ``RuntimeEvent``s;
routes, cards, print mode and the store read nothing else. ``classify_failure`` decides whether a
failed turn is worth another attempt; ``event_to_json``/``event_from_json`` are the events'
``stream-json`` form.
"""

from ._classify import NO_CODES, RETRYABLE, ClassifiesFailures, classify_failure
from ._json import (
    EVENT_TYPES,
    EventFormatError,
    dataclass_from_json,
    dataclass_to_json,
    event_from_json,
    event_to_json,
)
from ._model import (
    ApprovalDecision,
    ApprovalKind,
    ApprovalRequested,
    ApprovalResolved,
    ErrorCategory,
    FileChange,
    PlanEntry,
    PlanUpdated,
    ReasoningDelta,
    RuntimeEvent,
    TextDelta,
    ToolCompleted,
    ToolKind,
    ToolStarted,
    ToolStatus,
    ToolUpdated,
    TurnCompleted,
    TurnError,
    TurnStarted,
    TurnStatus,
    Usage,
    UsageUpdated,
)

__all__ = [
    # as JSON (stream-json)
    "EVENT_TYPES",
    "EventFormatError",
    "dataclass_from_json",
    "dataclass_to_json",
    "event_from_json",
    "event_to_json",
    # the events
    "RuntimeEvent",
    "TurnStarted",
    "TextDelta",
    "ReasoningDelta",
    "ToolStarted",
    "ToolUpdated",
    "ToolCompleted",
    "PlanUpdated",
    "UsageUpdated",
    "ApprovalRequested",
    "ApprovalResolved",
    "TurnCompleted",
    # their parts
    "FileChange",
    "PlanEntry",
    "TurnError",
    "Usage",
    # vocabularies
    "ApprovalDecision",
    "ApprovalKind",
    "ErrorCategory",
    "ToolKind",
    "ToolStatus",
    "TurnStatus",
    # failures
    "RETRYABLE",
    "NO_CODES",
    "ClassifiesFailures",
    "classify_failure",
]
