"""A transport's part in ``robota init`` is its plugin's init step (``SetsUpOnInit``).

The CLI turns init's flags for a transport into an ``InitRequest`` and hands it to the plugin;
the Feishu plugin's step reads it as its options (the flags' table is test_init_feishu's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from robota.core.config import InitRequest, SetsUpOnInit, resolve_profile
from robota.transports import feishu, slack
from robota.transports.feishu import _init_step


def test_feishu_declares_an_init_step_and_slack_none() -> None:
    assert isinstance(feishu.plugin, SetsUpOnInit)
    assert not isinstance(slack.plugin, SetsUpOnInit)


@pytest.mark.parametrize(
    ("request_", "options"),
    [
        (
            InitRequest(),
            _init_step.Options(False, False, False, None, None, False),
        ),
        (
            InitRequest(skip=True, interactive=True),
            _init_step.Options(True, False, False, None, None, True),
        ),
        (
            InitRequest(setup=True, reconfigure=True, domain="https://open.larksuite.com"),
            _init_step.Options(False, True, True, "https://open.larksuite.com", None, False),
        ),
        (
            InitRequest(options={"lark-domain": "http://127.0.0.1:9"}),
            _init_step.Options(False, False, False, None, "http://127.0.0.1:9", False),
        ),
    ],
)
def test_the_feishu_step_reads_the_request_as_its_options(
    monkeypatch: pytest.MonkeyPatch, request_: InitRequest, options: _init_step.Options
) -> None:
    seen: list[Any] = []

    def run(profile: object, given: _init_step.Options, **_: object) -> _init_step.FeishuOutcome:
        seen.append(given)
        return _init_step.FeishuOutcome("skipped")

    monkeypatch.setattr(_init_step, "run_feishu", run)
    profile = resolve_profile({"ROBOTA_HOME": str(Path("/nowhere"))})
    outcome = feishu.plugin.init_step(profile, request_, on_wait=lambda _pid: None)
    assert seen == [options]
    assert outcome.error is None and outcome.json()["status"] == "skipped"
