"""``robota trust`` and the fail-closed print mode, end to end with real processes: the
store's status, grant and revoke as JSON, ``robota -p`` refused in an untrusted workspace
(exit 2, naming ``robota trust --yes``), and ``--restricted`` running a real agent in ``plan``
mode (the sandbox the agent tells the model is read-only) with the project's settings
ignored, which a trusted workspace applies."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..support.model_server import FakeModel
from ..support.processes import processes_with_home_under
from ..support.real_agents import write_real_agents_config
from ..support.robota import Robota
from ..support.trust import trust_store_of


@pytest.fixture
def model() -> Iterator[FakeModel]:
    with FakeModel() as fake:
        yield fake


def project(robota: Robota, settings: str | None = None) -> Path:
    """A git repository outside the trusted sandbox root's key (its own root)."""
    path = robota.root / "project"
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "src").mkdir()
    if settings is not None:
        (path / ".robota").mkdir()
        (path / ".robota" / "config.yaml").write_text(settings)
    return path


def as_json(robota: Robota, *args: str, cwd: Path) -> dict[str, Any]:
    done = robota.run(*args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert isinstance(result, dict)
    return result


def test_status_grant_and_revoke_as_json(robota: Robota) -> None:
    write_real_agents_config(robota, ["codex"])
    repo = project(robota, "defaults: {permissionMode: bypassPermissions}\n")
    status = as_json(robota, "trust", "status", cwd=repo / "src")
    assert (status["workspace"], status["git_root"], status["state"]) == (
        str(repo),
        str(repo),
        "untrusted",
    )
    assert status["restricted"] is True and status["project_config"]["exists"] is True
    assert "bypassPermissions" not in json.dumps(status), "content is never read"

    for refused in (("trust",), ("trust", "revoke")):
        done = robota.run(*refused, cwd=repo)
        assert done.returncode == 2 and "--yes" in done.stderr, done.stderr
    assert as_json(robota, "trust", "status", cwd=repo)["state"] == "untrusted"

    assert as_json(robota, "trust", "--yes", cwd=repo / "src") == {
        "workspace": str(repo),
        "state": "trusted",
    }
    trusted = as_json(robota, "trust", "status", cwd=repo)
    assert (trusted["state"], trusted["restricted"]) == ("trusted", False)
    assert trusted["trusted_at"]
    store = trust_store_of(robota.home).path
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.parent.stat().st_mode) == 0o700

    assert as_json(robota, "trust", "revoke", "--yes", cwd=repo)["state"] == "revoked"
    revoked = as_json(robota, "trust", "status", cwd=repo)
    assert (revoked["state"], revoked["restricted"]) == ("revoked", True)
    assert revoked["revoked_at"]

    store.write_text("{damaged")
    unreadable = as_json(robota, "trust", "status", cwd=repo)
    assert (unreadable["state"], unreadable["restricted"]) == ("unreadable", True)
    again = robota.run("trust", "--yes", cwd=repo)
    assert again.returncode == 1 and "not valid JSON" in again.stderr
    assert store.read_text() == "{damaged", "a damaged store is never replaced"


def _turn_bodies(model: FakeModel, prompt: str) -> list[str]:
    return [json.dumps(r.body) for r in model.requests if r.prompt == prompt]


def test_print_mode_fails_closed_and_runs_restricted_in_plan_mode(
    robota: Robota, model: FakeModel
) -> None:
    write_real_agents_config(robota, ["codex"], model.url, model_catalog=True)
    repo = project(robota, "defaults: {permissionMode: bypassPermissions}\n")

    refused = robota.run("-p", "UNTRUSTED", "--cwd", str(repo))
    assert refused.returncode == 2, refused.stderr
    assert "robota trust --yes" in refused.stderr and "not trusted" in refused.stderr
    assert _turn_bodies(model, "UNTRUSTED") == [], "no prompt reached the agent"

    restricted = robota.run(
        "-p", "SHELL: echo restricted", "--cwd", str(repo), "--restricted",
        "--output-format", "stream-json",
    )  # fmt: skip
    assert restricted.returncode == 0, restricted.stderr
    objects = [json.loads(line) for line in restricted.stdout.splitlines()]
    marks = [o for o in objects if o["type"] == "restricted"]
    assert len(marks) == 1 and marks[0]["mode"] == "plan"
    # The project's bypassPermissions is ignored: plan mode, nobody to approve, declined.
    resolved = [o for o in objects if o["type"] == "approval_resolved"]
    assert [(o["decision"], o["by"]) for o in resolved] == [("decline", "policy")]
    (body, *_) = _turn_bodies(model, "SHELL: echo restricted")
    assert "read-only" in body, "plan mode reached the agent as its read-only sandbox"

    assert robota.run("trust", "--yes", cwd=repo).returncode == 0
    trusted = robota.run(
        "-p", "SHELL: echo trusted", "--cwd", str(repo), "--output-format", "stream-json"
    )
    assert trusted.returncode == 0, trusted.stderr
    objects = [json.loads(line) for line in trusted.stdout.splitlines()]
    assert not [o for o in objects if o["type"] == "restricted"]
    # The project's bypassPermissions applies: the command runs without an approval.
    assert not [o for o in objects if o["type"] == "approval_requested"]
    assert "trusted" in objects[-1]["result"]
    (body, *_) = _turn_bodies(model, "SHELL: echo trusted")
    assert "read-only" not in body

    assert robota.run("trust", "revoke", "--yes", cwd=repo).returncode == 0
    revoked = robota.run("-p", "REVOKED", "--cwd", str(repo))
    assert revoked.returncode == 2 and "revoked" in revoked.stderr
    assert "robota trust --yes" in revoked.stderr
    trust_store_of(robota.home).path.write_text("[]")
    unreadable = robota.run("-p", "UNREADABLE", "--cwd", str(repo))
    assert unreadable.returncode == 2 and "cannot be established" in unreadable.stderr
    assert _turn_bodies(model, "REVOKED") == _turn_bodies(model, "UNREADABLE") == []
    assert processes_with_home_under(robota.root / "agents") == []


def test_a_restricted_print_turn_on_codex_acp_writes_nothing(
    robota: Robota, model: FakeModel
) -> None:
    """codex-acp advertises no ``plan`` mode: Restricted's plan falls back to its
    ``read-only``, so the agent asks before an edit, nobody is there to approve it in print
    mode, and the file the model asked for is never written."""
    write_real_agents_config(robota, ["codex-acp"], model.url, model_catalog=True)
    repo = project(robota, "defaults: {permissionMode: bypassPermissions}\n")
    done = robota.run(
        "-p", "WRITE: made.txt written while restricted", "--cwd", str(repo), "--restricted",
        "--output-format", "stream-json",
    )  # fmt: skip
    objects = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o["mode"] for o in objects if o["type"] == "restricted"] == ["plan"], done.stderr
    asked = [o["kind"] for o in objects if o["type"] == "approval_requested"]
    assert asked == ["file_change"], done.stdout  # read-only: the agent asks before the edit
    resolved = [o for o in objects if o["type"] == "approval_resolved"]
    assert [(o["decision"], o["by"]) for o in resolved] == [("decline", "policy")]
    assert not (repo / "made.txt").exists(), "a Restricted turn wrote the workspace"
    assert processes_with_home_under(robota.root / "agents") == []
