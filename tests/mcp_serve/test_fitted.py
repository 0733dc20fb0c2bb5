"""``robota.mcp.fitted``: a tool's structured content within the result limit, its ``answer``
cut (with the note giving the full length) so a long answer keeps its task and turn beside it;
and a ``robota_run`` whose answer is longer than the limit, end to end on codex."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from robota.mcp import MAX_RESULT_CHARS, fitted

from ..support.model_server import FakeModel
from ..support.real_agents import write_real_agents_config
from ..support.robota import Robota
from ._client import client

RUN = {"task": "t1", "turn": "a1", "status": "completed", "approvals": []}


def size(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False))


@pytest.mark.parametrize(
    ("answer", "char"),
    [
        (10, "x"),
        (MAX_RESULT_CHARS - 200, "x"),
        (MAX_RESULT_CHARS, "x"),
        (100_000, "x"),
        (30_000, '"'),  # each one two characters of JSON
        (30_000, "\n"),
        (30_000, "\u00e9"),  # one character as it is (not \\u escaped)
        (40_000, "\x01"),  # six characters of JSON each
    ],
)
def test_a_run_fits_with_its_answer_cut(answer: int, char: str) -> None:
    structured = {**RUN, "answer": char * answer}
    shown = fitted(structured)
    assert shown is not None and size(shown) <= MAX_RESULT_CHARS
    assert {k: shown[k] for k in RUN} == RUN
    if size(structured) <= MAX_RESULT_CHARS:
        assert shown == structured
    else:
        text = str(shown["answer"])
        note = f"[robota: cut at {len(text)} of {answer} characters]"
        assert text.endswith(note) and text.startswith(char * 10)
        assert size(shown) > MAX_RESULT_CHARS - 1000, "not cut much more than needed"


@pytest.mark.parametrize(
    "structured",
    [
        {"tasks": [{"id": str(i), "title": "t" * 100} for i in range(400)]},
        {**RUN, "answer": 7, "extra": "z" * MAX_RESULT_CHARS},
        {**RUN, "answer": "a", "extra": "z" * MAX_RESULT_CHARS},
    ],
)
def test_what_cannot_fit_is_left_out(structured: dict[str, object]) -> None:
    assert fitted(structured) is None


def test_small_content_is_whole() -> None:
    assert fitted({"tasks": []}) == {"tasks": []}


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


async def test_a_run_longer_than_the_limit_is_cut_and_keeps_its_task(
    robota: Robota, model: FakeModel
) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    prompt = "long " + "word " * 6_000  # answered ECHO: <prompt>, over 30 000 characters
    full = len(f"ECHO: {prompt}".strip())
    async with client(robota) as session:
        ran = await session.call_tool("robota_run", {"prompt": prompt})
        assert not ran.is_error
        (text,) = [c.text for c in ran.content]  # type: ignore[union-attr]
        assert len(text) <= MAX_RESULT_CHARS
        assert text.startswith("ECHO: long word word")
        assert text.endswith(f"of {full} characters]")
        run = ran.structured_content
        assert run is not None and size(run) <= MAX_RESULT_CHARS
        assert run["status"] == "completed" and run["task"]
        assert run["answer"].endswith(f"of {full} characters]")
        again = await session.call_tool("robota_run", {"prompt": "short", "task": run["task"]})
        assert again.structured_content["answer"] == "ECHO: short"
