"""Request types the control tests register, shaped like the host's will be."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True, slots=True)
class Status:
    TYPE: ClassVar[str] = "status"


@dataclass(frozen=True, slots=True)
class TaskSend:
    TYPE: ClassVar[str] = "task.send"
    task: str
    text: str
    wait: bool = False
    timeout: float | None = None


@dataclass(frozen=True, slots=True)
class Shapes:
    TYPE: ClassVar[str] = "shapes"
    count: int = 0
    tags: list[str] = field(default_factory=list)
    env: dict[str, int] = field(default_factory=dict)
    blob: Any = None


ALL = (Status, TaskSend, Shapes)
