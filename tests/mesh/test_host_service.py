"""The host's mesh service in-process, with a store client that records what it is sent: the
lists' marks go through the host's one writer (never a writer of the service's own), and a
reissue that failed is one problem in ``mesh.status`` until a reissue succeeds; the ping
interval a test may shorten (never lengthen)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from robota.core.config import load_config, resolve_profile
from robota.core.store import RaiseMeshMark, Together
from robota.host import PING_ENV, HostMesh, MeshStatus, ping_interval
from robota.mesh import Marks, stored_marks

from ._hosts import signing_device
from ._profiles import _env


class RecordingStore:
    """What ``HostMesh`` needs of a ``StoreClient``: the ops it was sent, each acked at once."""

    def __init__(self) -> None:
        self.ops: list[Any] = []

    def submit(self, op: Any, ack: Any) -> None:
        self.ops.append(op)
        ack(None)

    async def write(self, op: Any, *, timeout: float) -> None:
        self.ops.append(op)

    def marks(self) -> list[tuple[tuple[str, int], ...]]:
        return [
            tuple((o.list, o.seq) for o in op.ops if isinstance(o, RaiseMeshMark))
            for op in self.ops
            if isinstance(op, Together)
        ]


async def test_a_failed_reissue_is_one_problem_until_a_reissue_succeeds(tmp_path: Path) -> None:
    home = signing_device(tmp_path, "  enabled: true\n  listLifetimeSeconds: 60\n")
    environ = _env(home)
    profile = resolve_profile(environ)
    config = load_config(profile, environ=dict(environ))
    store = RecordingStore()
    now = [0.0]
    # No keychain: an in-process test never asks the one of the person running it.
    writer: Any = store  # what HostMesh calls of a StoreClient, recorded
    mesh = HostMesh(config, profile, writer, clock=lambda: now[0], keychain=lambda: None)
    links = await mesh._open()
    assert links is not None, mesh.problems
    now[0] = links.trust.roster.issued_at + 45.0  # past half the 60 s lifetime: due

    credentials = home / "data" / "mesh" / "credentials"
    kept = credentials.read_text()
    credentials.write_text(kept.replace('"signing-key": "', '"signing-key": "!'))
    for _ in range(3):
        await mesh._reissue_if_due(links)
    problems = (await mesh.status(MeshStatus()))["problems"]
    assert isinstance(problems, list) and len(problems) == 1, problems
    assert problems[0].startswith("the lists were not reissued: ")
    assert "signing-key" in problems[0]
    assert links.trust.roster.seq == 1 and store.marks() == []

    credentials.write_text(kept)
    await mesh._reissue_if_due(links)
    assert (await mesh.status(MeshStatus()))["problems"] == []
    assert (links.trust.roster.seq, links.trust.revocations.seq) == (2, 2)
    # The marks went to the host's writer; the service wrote none to the store itself (what
    # ``mesh init`` left there is unchanged).
    assert store.marks() == [(("roster", 2), ("revocations", 2))]
    assert stored_marks(config.storage.sqlite_path) == Marks(1, 1)


@pytest.mark.parametrize(
    ("value", "interval"),
    [
        (None, 15.0),
        ("2", 2.0),
        ("0.5", 0.5),
        ("15", 15.0),
        ("0.1", 15.0),
        ("60", 15.0),
        ("-3", 15.0),
        ("soon", 15.0),
        ("", 15.0),
    ],
)
def test_ping_interval(value: str | None, interval: float) -> None:
    assert ping_interval({} if value is None else {PING_ENV: value}) == interval
