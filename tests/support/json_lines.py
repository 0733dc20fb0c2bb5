"""Reading a child process's stdout as JSON lines, each read bounded by a timeout (the SDK
acceptance tests of tests/transports run the official SDKs as children that print a line per
step)."""

from __future__ import annotations

import json

import trio

__all__ = ["JsonLines"]


class JsonLines:
    def __init__(self, stream: trio.abc.ReceiveStream, *, timeout: float) -> None:
        self.stream = stream
        self.timeout = timeout
        self.buffer = b""

    async def next(self) -> dict[str, object]:
        """The next line, a JSON object; fails when the child exits or is silent too long."""
        with trio.fail_after(self.timeout):
            while b"\n" not in self.buffer:
                chunk = await self.stream.receive_some(65536)
                assert chunk, "the child exited"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        parsed = json.loads(line)
        assert isinstance(parsed, dict)
        return parsed
