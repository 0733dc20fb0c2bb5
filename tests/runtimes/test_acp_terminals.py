"""The environment of an ACP terminal robota runs for an agent: an agent's (secrets and
robota's settings scrubbed, its non-secret context kept), plus the session's task
(``ROBOTA_TASK_ID``), plus what the request asks for. Real ``/bin/sh`` processes."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from robota.runtimes._acp_host import FileAccess, Terminals, terminal_environment

SCRIPT = (
    'echo "task=${ROBOTA_TASK_ID-unset} home=${ROBOTA_HOME-unset} "'
    '"secret=${FEISHU_APP_SECRET-unset} log=${ROBOTA_LOG_LEVEL-unset} asked=${ASKED-unset}"'
)


async def test_a_terminal_names_its_task_and_never_sees_a_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FEISHU_APP_SECRET", "s3cret-value")
    monkeypatch.setenv("ROBOTA_LOG_LEVEL", "debug")  # robota's own setting: not an agent's
    monkeypatch.setenv("ROBOTA_HOME", str(tmp_path / "home"))
    request = {
        "command": SCRIPT,
        "env": [{"name": "ASKED", "value": "yes"}, {"name": "SLACK_BOT_TOKEN", "value": "x"}],
    }
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            terminals = Terminals(nursery)
            created = await terminals.create(
                request, FileAccess(tmp_path), {"ROBOTA_TASK_ID": "ab12cd34ef56"}
            )
            status = await terminals.wait_for_exit(created)
            output = terminals.output(created)["output"]
            terminals.close()
    assert status == {"exitCode": 0, "signal": None}
    assert output == (
        f"task=ab12cd34ef56 home={tmp_path / 'home'} secret=unset log=unset asked=yes\n"
    )


@pytest.mark.parametrize(
    ("inherited", "session", "requested", "expected"),
    [
        ({"PATH": "/bin", "FEISHU_X": "s"}, {}, [], {"PATH": "/bin"}),
        ({"ROBOTA": "1", "ROBOTA_CONFIG": "/c"}, {}, [], {"ROBOTA": "1", "ROBOTA_CONFIG": "/c"}),
        # A request cannot name a reserved variable, not even the task's.
        (
            {},
            {"ROBOTA_TASK_ID": "t1"},
            [{"name": "ROBOTA_TASK_ID", "value": "t2"}],
            {"ROBOTA_TASK_ID": "t1"},
        ),
        ({}, {}, [{"name": "A", "value": 1}, {"nope": True}, "junk"], {"A": "1"}),
        ({}, {}, "not a list", {}),
    ],
)
def test_terminal_environment(
    inherited: dict[str, str],
    session: dict[str, str],
    requested: object,
    expected: dict[str, str],
) -> None:
    assert terminal_environment(inherited, session, requested) == expected
