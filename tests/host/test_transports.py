"""The host's chat transports: which sections become children, what each reports, readiness."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from robota.core import PluginError
from robota.core.config import Config, Transports, load_config, resolve_profile
from robota.core.frontend import TransportContext, TransportStatus
from robota.host import TRANSPORT_START, HostTransports, enabled_transports, host_locale


@pytest.mark.parametrize(
    ("environ", "locale"),
    [
        ({}, "en"),
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "zh_CN.UTF-8", "LC_ALL": "C.UTF-8"}, "en"),
        ({"LC_MESSAGES": "zh_TW", "LANG": "en_US"}, "zh"),
        ({"LC_ALL": "", "LANG": "ZH_cn"}, "zh"),
        ({"LANG": "de_DE.UTF-8"}, "en"),
    ],
)
def test_host_locale(environ: Mapping[str, str], locale: str) -> None:
    assert host_locale(environ) == locale


@dataclass(frozen=True)
class Section:
    enabled: bool = True


class Served:
    name = "served"

    def __init__(self) -> None:
        self.contexts: list[TransportContext] = []

    def validate(self, reader: object, section: object) -> object:
        return section

    def agent_env(self, settings: object) -> dict[str, str]:
        return {"ROBOTA_SERVED": "1", "NOT_OURS": "x"}

    def service(self, context: TransportContext) -> Connecting:
        self.contexts.append(context)
        return Connecting(context)


class Connecting:
    def __init__(self, context: TransportContext) -> None:
        self.context = context

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        self.context.report(TransportStatus("connected"))


class ValidatesOnly:
    name = "validates-only"

    def validate(self, reader: object, section: object) -> object:
        return section


@pytest.fixture
def config(tmp_path: Path) -> Config:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text(
        "agents:\n  a:\n    kind: acp\n    command: /bin/true\ndefaults:\n  agent: a\n"
    )
    return load_config(resolve_profile({"ROBOTA_HOME": str(home)}), environ={})


def with_chat(config: Config, chat: dict[str, object]) -> Config:
    from dataclasses import replace

    return replace(config, transports=Transports(chat=chat, installed=frozenset(chat)))


def test_each_enabled_section_is_a_child_and_readiness_waits_for_all(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = Served()

    def plugin(name: str) -> object:
        if name == "served":
            return served
        if name == "validates-only":
            return ValidatesOnly()
        if name == "broken":
            raise PluginError("transport plugin 'broken' failed to load: ImportError: x")
        raise KeyError(name)

    monkeypatch.setattr("robota.host._transports.transport_plugin", plugin)
    chat: dict[str, object] = {
        "served": Section(),
        "off": Section(enabled=False),
        "validates-only": Section(),
        "broken": Section(),
        "missing": Section(),
    }
    config = with_chat(config, chat)
    assert list(enabled_transports(config)) == ["served", "validates-only", "broken", "missing"]

    transports = HostTransports(
        config,
        resolve_profile({"ROBOTA_HOME": str(config.file.parent)}),
        port=None,  # type: ignore[arg-type]  # never used by these children
        store=None,  # type: ignore[arg-type]
        clock=lambda: 1234.5,
    )
    assert [spec.id for spec in transports.specs] == ["transport:served"]
    listed = {entry["name"]: entry for entry in transports.as_json()}
    assert listed["served"] == {"name": "served", "state": "connecting"}
    assert listed["validates-only"]["state"] == "failed"
    assert "cannot be served" in str(listed["validates-only"]["detail"])
    assert "failed to load" in str(listed["broken"]["detail"])
    assert listed["missing"]["detail"] == "no transport plugin 'missing'"
    assert "off" not in listed
    assert not transports.ready

    service = transports.specs[0].factory()
    (context,) = served.contexts
    assert (context.name, context.started_at, context.settings) == (
        "served",
        1234.5,
        chat["served"],
    )
    trio.run(service.run)  # type: ignore[union-attr]
    assert listed != (after := {e["name"]: e for e in transports.as_json()})
    assert after["served"] == {"name": "served", "state": "connected"}
    assert not transports.ready, "the failed ones still hold readiness back"


def test_no_enabled_transport_is_ready_at_once(config: Config) -> None:
    config = with_chat(config, {"off": Section(enabled=False)})
    transports = HostTransports(
        config,
        resolve_profile({"ROBOTA_HOME": str(config.file.parent)}),
        port=None,  # type: ignore[arg-type]
        store=None,  # type: ignore[arg-type]
    )
    assert (transports.specs, transports.as_json(), transports.ready) == ([], [], True)


def unserved(config: Config) -> HostTransports:
    """``HostTransports`` whose children never run (what they report is the test's)."""
    return HostTransports(
        config,
        resolve_profile({"ROBOTA_HOME": str(config.file.parent)}),
        port=None,  # type: ignore[arg-type]
        store=None,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("states", "ready", "settled"),
    [
        ([], True, True),
        ([TransportStatus("connected")], True, True),
        ([TransportStatus("failed", "refused")], False, True),
        ([TransportStatus("connected"), TransportStatus("failed", "refused")], False, True),
        ([TransportStatus("connecting")], False, False),
        ([TransportStatus("connecting", "refused; next attempt in 2 s")], False, False),
        ([TransportStatus("connected"), TransportStatus("connecting")], False, False),
    ],
)
def test_ready_and_settled(
    config: Config, states: list[TransportStatus], ready: bool, settled: bool
) -> None:
    transports = unserved(config)
    transports.status = {f"t{n}": status for n, status in enumerate(states)}
    assert (transports.ready, transports.settled) == (ready, settled)


@pytest.mark.parametrize(
    ("status", "entry"),
    [
        (TransportStatus("connecting"), {"state": "connecting"}),
        (
            TransportStatus(
                "connecting", "endpoint call failed: ConnectError; next attempt in 2 s"
            ),
            {
                "state": "connecting",
                "detail": "endpoint call failed: ConnectError; next attempt in 2 s",
            },
        ),
        (TransportStatus("connected"), {"state": "connected"}),
        (TransportStatus("failed"), {"state": "failed", "detail": "failed"}),
        (TransportStatus("failed", "refused"), {"state": "failed", "detail": "refused"}),
    ],
)
def test_each_state_is_listed_with_its_detail(
    config: Config, status: TransportStatus, entry: dict[str, object]
) -> None:
    transports = unserved(config)
    transports.status = {"t": status}
    assert transports.as_json() == [{"name": "t", **entry}]


def test_the_host_waits_a_few_seconds_at_most_for_a_transport_to_start(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin's service that never says it started is left to run: the transports'
    supervisor goes on after ``TRANSPORT_START``, not the kernel's default 30 s."""
    monkeypatch.setattr("robota.host._transports.transport_plugin", lambda _name: Served())
    (spec,) = unserved(with_chat(config, {"served": Section()})).specs
    assert spec.start_timeout == TRANSPORT_START <= 5.0
