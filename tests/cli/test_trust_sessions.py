"""Background sessions and the daemon fail closed in an untrusted workspace, on real detached
processes with a real agent: refused (exit 2, naming ``robota trust --yes``) unless started
``--restricted``, which runs them with permission mode ``plan``; a Restricted daemon is never
handed to a plain start once the workspace is trusted."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from robota.core.config import Profile

from ..support.host import sandboxed
from ..support.model_server import FakeModel
from ..support.processes import kill_processes_with_home_under, processes_with_home_under
from ..support.robota import Robota
from ..support.sessions import AGENT, ok_json, registration, robota_cmd, send
from ..support.trust import trust_workspace


@pytest.fixture
def sandbox() -> Iterator[tuple[Robota, Profile]]:
    # A short path: the sessions' sockets live under it.
    root = Path(tempfile.mkdtemp(prefix="robota-trust-", dir="/tmp"))
    try:
        with FakeModel() as model:
            yield sandboxed(root, model, AGENT)
    finally:
        kill_processes_with_home_under(root)
        shutil.rmtree(root, ignore_errors=True)


def untrusted(robota: Robota) -> Path:
    path = robota.root / "project"
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return path


def modes(profile: Profile) -> list[tuple[str, str | None]]:
    with closing(sqlite3.connect(profile.data_dir / "robota.sqlite")) as db:
        return sorted(db.execute("SELECT title, permission_mode FROM tasks").fetchall())


def test_a_background_session_is_refused_untrusted_and_runs_restricted_when_asked(
    sandbox: tuple[Robota, Profile],
) -> None:
    robota, profile = sandbox
    project = untrusted(robota)
    refused = robota_cmd(robota, "session", "start", "--background", "--cwd", str(project))
    assert refused.returncode == 2, refused.stderr
    assert "robota trust --yes" in refused.stderr and str(project) in refused.stderr
    assert ok_json(robota, "session", "list") == []

    started = ok_json(
        robota, "session", "start", "--background", "--restricted", "--name", "r",
        "--cwd", str(project),
    )  # fmt: skip
    assert registration(profile, started["id"]).restricted is True
    assert modes(profile) == [("r", "plan")]
    answered = send(profile, started["id"], "hello restricted")
    assert answered is not None
    assert robota_cmd(robota, "session", "stop", started["id"]).returncode == 0
    assert processes_with_home_under(robota.root) == []


def test_the_daemon_is_refused_untrusted_and_a_restricted_one_never_handed_to_a_plain_start(
    sandbox: tuple[Robota, Profile],
) -> None:
    robota, profile = sandbox
    project = untrusted(robota)
    refused = robota_cmd(robota, "daemon", "start", cwd=project)
    assert refused.returncode == 2 and "robota trust --yes" in refused.stderr, refused.stderr
    assert ok_json(robota, "daemon", "status", cwd=project) == {"running": False}

    daemon_id = ok_json(robota, "daemon", "start", "--restricted", cwd=project)["id"]
    assert ok_json(robota, "daemon", "status", cwd=project)["restricted"] is True
    trust_workspace(robota.home, project)  # trusted since: still not handed to a plain start
    plain = robota_cmd(robota, "daemon", "start", cwd=project)
    assert plain.returncode == 1 and "runs Restricted" in plain.stderr, plain.stderr
    assert ok_json(robota, "daemon", "start", "--restricted", cwd=project)["id"] == daemon_id
    assert robota_cmd(robota, "daemon", "stop", cwd=project).returncode == 0

    trusted_id = ok_json(robota, "daemon", "start", cwd=project)["id"]
    handed = robota_cmd(robota, "daemon", "start", "--restricted", cwd=project)
    assert handed.returncode == 1 and "--restricted start is not handed" in handed.stderr
    assert registration(profile, trusted_id).restricted is False
    assert modes(profile) == [("daemon", "default"), ("daemon", "plan")]
    assert robota_cmd(robota, "daemon", "stop", cwd=project).returncode == 0
    assert processes_with_home_under(robota.root) == []
