"""How print mode reads ``--input-format stream-json`` lines: a pipe on the trio loop itself, any
other stdin through a worker thread; both give the same lines."""

from __future__ import annotations

import io
import os
from pathlib import Path

import trio

from robota.cli._print import _FileLines, _input_lines, _PipeLines


async def read_all(lines: _PipeLines | _FileLines) -> list[str]:
    got = []
    while line := await lines.readline():
        got.append(line)
    lines.close()
    return got


async def test_pipe_lines_survive_any_split_of_the_bytes() -> None:
    text = '{"type": "user", "text": "héllo"}\n\nsecond line\nno newline at the end'
    data = text.encode()
    for size in (1, 2, 3, 7, len(data)):
        read_end, write_end = os.pipe()
        with os.fdopen(read_end, "r", encoding="utf-8") as stdin:
            lines = _input_lines(stdin)
            assert isinstance(lines, _PipeLines)

            async def write(size: int = size, write_end: int = write_end) -> None:
                for start in range(0, len(data), size):
                    os.write(write_end, data[start : start + size])
                    await trio.sleep(0)
                os.close(write_end)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(write)
                got = await read_all(lines)
            assert got == [
                '{"type": "user", "text": "héllo"}\n',
                "\n",
                "second line\n",
                "no newline at the end",
            ], size
            assert os.get_blocking(stdin.fileno()), "stdin is left as it was found"


async def test_files_and_stringio_are_read_through_a_thread(tmp_path: Path) -> None:
    file = tmp_path / "input.jsonl"
    file.write_text("one\ntwo\n")
    with file.open(encoding="utf-8") as stdin:
        lines = _input_lines(stdin)
        assert isinstance(lines, _FileLines)
        assert await read_all(lines) == ["one\n", "two\n"]
    in_memory = _input_lines(io.StringIO("three\n"))
    assert isinstance(in_memory, _FileLines)
    assert await read_all(in_memory) == ["three\n"]
