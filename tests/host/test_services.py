"""The host's children as services (``robota.host._services``): the ordering decision as a
table, the built-ins as the ``robota.host_services`` group registers them, and a service a
distribution installs started in its place in a real host."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from robota.core import PluginError
from robota.host import (
    BUILTIN_SERVICES,
    HOST_SERVICES_GROUP,
    Host,
    Place,
    host_services,
    service_order,
)

from ..support.host import ask, running_host, sandboxed
from ..support.model_server import FakeModel

BUILTIN_ORDER = ("engine", "taps", "control", "teams", "transports")
INSTALLED_ORDER = ("engine", "taps", "control", "teams", "mesh", "transports")
"""The built-ins and the services this distribution installs itself (the device mesh)."""
BUILTIN_PLACES = [Place(s.name, s.after, s.before) for s in BUILTIN_SERVICES]


@pytest.mark.parametrize(
    ("places", "order"),
    [
        # No constraints: the order they are listed in.
        ([Place("a"), Place("b"), Place("c")], ("a", "b", "c")),
        # ``after`` moves a service behind the one it names.
        ([Place("a", after=("b",)), Place("b")], ("b", "a")),
        # ``before`` moves a service ahead of the one it names.
        ([Place("a"), Place("b", before=("a",))], ("b", "a")),
        # Both: between the two, wherever it was listed.
        (
            [Place("z", after=("a",), before=("b",)), Place("a"), Place("b")],
            ("a", "z", "b"),
        ),
        # A name nobody installed is no constraint.
        ([Place("a", after=("gone",)), Place("b", before=("gone",))], ("a", "b")),
        # Chains resolve transitively.
        (
            [Place("c", after=("b",)), Place("b", after=("a",)), Place("a")],
            ("a", "b", "c"),
        ),
        # The built-ins keep their documented order.
        (BUILTIN_PLACES, BUILTIN_ORDER),
        # A service the transports may ask (the device mesh): after control, before transports.
        (
            [*BUILTIN_PLACES, Place("mesh", after=("control",), before=("transports",))],
            ("engine", "taps", "control", "teams", "mesh", "transports"),
        ),
        # Listed first, it still waits for control, and transports still wait for it.
        (
            [Place("mesh", after=("control",), before=("transports",)), *BUILTIN_PLACES],
            ("engine", "taps", "control", "mesh", "teams", "transports"),
        ),
        # One that must precede the engine goes first.
        (
            [*BUILTIN_PLACES, Place("early", before=("engine",))],
            ("early", "engine", "taps", "control", "teams", "transports"),
        ),
        # Unconstrained plugins come after every built-in listed before them.
        ([*BUILTIN_PLACES, Place("late")], (*BUILTIN_ORDER, "late")),
    ],
)
def test_the_start_order_holds_every_constraint(
    places: list[Place], order: tuple[str, ...]
) -> None:
    assert service_order(places) == order


@pytest.mark.parametrize(
    ("places", "named"),
    [
        ([Place("a"), Place("a")], "registered twice: a"),
        ([Place("a", after=("b",)), Place("b", after=("a",))], "a cycle): a, b"),
        ([Place("a", before=("a",))], "a cycle): a"),
        (
            [*BUILTIN_PLACES, Place("x", after=("transports",), before=("control",))],
            "a cycle): control, teams, transports, x",
        ),
    ],
)
def test_an_order_that_cannot_hold_is_refused_naming_the_services(
    places: list[Place], named: str
) -> None:
    with pytest.raises(PluginError, match="host services") as refused:
        service_order(places)
    assert str(refused.value).endswith(named)


def test_the_builtins_are_the_groups_entry_points() -> None:
    """pyproject registers the built-ins; loading the group gives the very same objects."""
    from robota.core import entry_points

    registered = {entry.name: entry.load() for entry in entry_points(HOST_SERVICES_GROUP)}
    for service in BUILTIN_SERVICES:
        assert registered[service.name] is service
    assert [s.name for s in host_services(BUILTIN_SERVICES)] == list(INSTALLED_ORDER)


PROBE_MODULE = """
import trio

from robota.core import ChildSpec
from robota.host import ServiceSpec

SEEN = []


class Probe:
    def __init__(self, host):
        self.host = host

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED):
        tree = self.host.supervisor
        SEEN.append({name: tree.is_running(name) for name in tree.child_ids})
        task_status.started()
        await trio.sleep_forever()


service = ServiceSpec(
    "probe",
    lambda host: ChildSpec("probe", lambda: Probe(host)),
    after=("control",),
    before=("transports",),
)
"""


def install(
    site: Path, monkeypatch: pytest.MonkeyPatch, module: str, source: str, name: str = "probe"
) -> None:
    """A distribution in ``site``, put on ``sys.path``, whose module ``module`` (``source``)
    registers ``name = module:service`` under the group."""
    site.mkdir(parents=True)
    (site / f"{module}.py").write_text(source)
    dist = site / f"{module}-0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0\n")
    (dist / "entry_points.txt").write_text(f"[{HOST_SERVICES_GROUP}]\n{name} = {module}:service\n")
    monkeypatch.syspath_prepend(str(site))


@pytest.fixture
def installed_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A distribution on ``sys.path`` that registers the host service ``probe`` (its module's
    name, unique to this test, is yielded)."""
    module = "robota_test_probe_service"
    install(tmp_path / "site", monkeypatch, module, PROBE_MODULE)
    yield module
    sys.modules.pop(module, None)


@pytest.mark.parametrize(
    ("name", "source", "why"),
    [
        ("probe", "service = object()\n", "is not a HostService named 'probe'"),
        (
            "probe",
            "from robota.host import ServiceSpec\nservice = ServiceSpec('other', print)\n",
            "is not a HostService named 'probe'",
        ),
        (
            "probe",
            "raise ImportError('no such thing')\n",
            "failed to load: ImportError: no such thing",
        ),
        # A second service under a built-in's name: never a second ``taps`` in the tree.
        (
            "taps",
            "from robota.host import ServiceSpec\nservice = ServiceSpec('taps', print)\n",
            "registered twice: taps",
        ),
    ],
)
def test_a_broken_service_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str, why: str
) -> None:
    module = f"robota_test_broken_{abs(hash(source))}"
    install(tmp_path / "site", monkeypatch, module, source, name)
    try:
        with pytest.raises(PluginError) as refused:
            host_services(BUILTIN_SERVICES)
    finally:
        sys.modules.pop(module, None)
    assert str(refused.value).endswith(why)


async def test_an_installed_service_starts_in_its_place(
    short_root: Path, model: FakeModel, installed_probe: str
) -> None:
    _, profile = sandboxed(short_root, model, "codex-acp")
    hosts: list[Host] = []
    async with running_host(profile, hosts.append) as (socket, stopped):
        (host,) = hosts
        assert host.supervisor.child_ids == [
            "engine",
            "taps",
            "control",
            "teams",
            "probe",
            "mesh",  # installed by this distribution, found after the probe's site
            "transports",
        ]
        (seen,) = sys.modules[installed_probe].SEEN
        # Started after control (and the rest before it) were up, before the transports.
        assert seen == {
            "engine": True,
            "taps": True,
            "control": True,
            "teams": True,
            "mesh": False,
            "probe": True,
            "transports": False,
        }
        assert host.supervisor.is_running("probe")
        assert (await ask(socket, "server.status"))["ready"] is True
        await ask(socket, "server.stop")
        await stopped.wait()
    assert not host.supervisor.is_running("probe")


ENDPOINT_MODULE = """
from dataclasses import dataclass
from typing import ClassVar

import trio

from robota.core import ChildSpec
from robota.core.control import Endpoint
from robota.host import ServiceSpec


@dataclass(frozen=True, slots=True)
class Echo:
    TYPE: ClassVar[str] = "probe.echo"
    text: str


class Probe:
    def __init__(self, host):
        self.profile = host.profile.home
        host.add_endpoints([Endpoint(Echo, self.echo)])

    async def echo(self, request):
        return {"echo": request.text, "profile": str(self.profile)}

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED):
        task_status.started()
        await trio.sleep_forever()


def make(host):
    probe = Probe(host)
    return ChildSpec("probe", lambda: probe)


service = ServiceSpec("probe", make, after=("control",), before=("transports",))
"""


async def test_a_service_serves_its_own_control_requests(
    short_root: Path, model: FakeModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = "robota_test_endpoint_service"
    install(tmp_path / "site", monkeypatch, module, ENDPOINT_MODULE)
    try:
        _, profile = sandboxed(short_root, model, "codex-acp")
        async with running_host(profile) as (socket, stopped):
            answer = await ask(socket, "probe.echo", {"text": "hi"})
            assert answer == {"echo": "hi", "profile": str(profile.home)}
            await ask(socket, "server.stop")
            await stopped.wait()
    finally:
        sys.modules.pop(module, None)
