"""Small actors the kernel tests share."""

from __future__ import annotations

import threading
from typing import Any

from robota.core import Actor
from robota.core.testing import Recording


class Journaled(Actor):
    """Writes ("start", name) and ("stop", name) to a shared journal."""

    def __init__(self, name: str, journal: list[tuple[str, str]]) -> None:
        super().__init__()
        self.name = name
        self.journal = journal

    def started(self) -> None:
        self.journal.append(("start", self.name))

    def receive(self, message: Any) -> Any:
        if message == "stop":
            self.stop()
        return None

    def stopping(self) -> None:
        self.journal.append(("stop", self.name))


class Gated(Actor):
    """Records messages; on "hold" it blocks until ``gate`` is set; "boom" crashes it."""

    def __init__(self, recording: Recording, gate: threading.Event) -> None:
        super().__init__()
        self.recording = recording
        self.gate = gate

    def started(self) -> None:
        self.recording._count_start()

    def receive(self, message: Any) -> Any:
        self.recording.add(message)
        if message == "hold":
            if not self.gate.wait(10):
                raise TimeoutError("gate never opened")
        elif message == "boom":
            raise RuntimeError("boom")
        elif message == "stop":
            self.stop()
        return None


class FailsToStart(Actor):
    def __init__(self, recording: Recording) -> None:
        super().__init__()
        self.recording = recording

    def started(self) -> None:
        self.recording._count_start()
        raise RuntimeError("cannot start")
