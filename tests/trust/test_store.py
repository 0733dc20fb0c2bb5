"""The trust store and the workspace key, on real files: tables of layouts and damage."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from robota.core.trust import (
    TrustStore,
    TrustStoreUnreadable,
    decide,
    preview,
    trust_store_path,
    workspace_root,
)
from robota.core.trust._store import LIMIT, read_size


def store(tmp_path: Path) -> TrustStore:
    return TrustStore(trust_store_path(tmp_path / "data"))


@pytest.mark.parametrize(
    ("layout", "start", "root"),
    [
        ({}, "a/b", "a/b"),  # no repository: the directory itself
        ({"repo/.git": "dir"}, "repo/src/deep", "repo"),
        ({"repo/.git": "file"}, "repo/src", "repo"),  # a worktree's or submodule's .git file
        ({"outer/.git": "dir", "outer/inner/.git": "file"}, "outer/inner/x", "outer/inner"),
        ({"repo/.git": "link"}, "repo/src", "repo/src"),  # a .git link is not followed
        # An empty .git is no repository (Codex's sandbox makes one for a moment in /tmp).
        ({"repo/.git": "empty"}, "repo/src", "repo/src"),
        ({"outer/.git": "dir", "outer/inner/.git": "empty"}, "outer/inner/x", "outer"),
    ],
)
def test_the_key_is_the_git_root_or_the_directory(
    tmp_path: Path, layout: dict[str, str], start: str, root: str
) -> None:
    (tmp_path / start).mkdir(parents=True)
    for name, kind in layout.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind in ("dir", "empty"):
            path.mkdir()
            if kind == "dir":
                (path / "HEAD").write_text("ref: refs/heads/main\n")
        elif kind == "file":
            path.write_text("gitdir: /elsewhere/.git/worktrees/x\n")
        else:
            (tmp_path / "real-git").mkdir()
            path.symlink_to(tmp_path / "real-git")
    assert workspace_root(tmp_path / start) == (tmp_path / root).resolve()


def test_grant_revoke_and_grant_again_with_owner_only_files(tmp_path: Path) -> None:
    trust = store(tmp_path)
    workspace = tmp_path / "w"
    workspace.mkdir()
    assert trust.state(workspace) == "untrusted"
    assert trust.revoke(workspace) is None
    entry = trust.grant(workspace)
    assert (entry.workspace, entry.revoked_at, trust.state(workspace)) == (
        str(workspace),
        None,
        "trusted",
    )
    assert stat.S_IMODE(trust.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(trust.path.parent.stat().st_mode) == 0o700
    revoked = trust.revoke(workspace)
    assert revoked is not None and revoked.revoked_at is not None
    assert trust.state(workspace) == "revoked"
    assert decide(trust, workspace / "sub").restricted  # the directory's own key, not trusted
    trust.grant(workspace)
    assert trust.state(workspace) == "trusted"
    document = json.loads(trust.path.read_text())
    assert document["version"] == 1 and list(document["workspaces"]) == [str(workspace)]
    assert not [p for p in trust.path.parent.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        (b"{not json", "is not valid JSON"),
        (b'{"version": 2, "workspaces": {}}', "is not a version 1 trust store"),
        (b'{"version": 1}', "has no 'workspaces' mapping"),
        (b'{"version": 1, "workspaces": {"relative": {"trusted_at": "x"}}}', "not a workspace"),
        (b'{"version": 1, "workspaces": {"/w": {"trusted_at": 3}}}', "not a workspace"),
        (b"\xff\xfe", "is not valid JSON"),
    ],
)
def test_a_damaged_store_fails_closed_and_is_not_replaced(
    tmp_path: Path, damage: bytes, problem: str
) -> None:
    trust = store(tmp_path)
    trust.grant(tmp_path)
    trust.path.write_bytes(damage)
    decision = decide(trust, tmp_path)
    assert decision.state == "unreadable" and decision.restricted
    assert decision.problem is not None and problem in decision.problem
    with pytest.raises(TrustStoreUnreadable, match="no workspace counts as trusted"):
        trust.grant(tmp_path)
    assert trust.path.read_bytes() == damage


def test_a_store_open_to_others_or_a_link_is_unreadable(tmp_path: Path) -> None:
    trust = store(tmp_path)
    trust.grant(tmp_path)
    trust.path.chmod(0o644)
    assert decide(trust, tmp_path).state == "unreadable"
    assert "open to others" in (decide(trust, tmp_path).problem or "")
    trust.path.chmod(0o600)
    elsewhere = tmp_path / "elsewhere.json"
    trust.path.rename(elsewhere)
    trust.path.symlink_to(elsewhere)
    assert decide(trust, tmp_path).state == "unreadable"  # O_NOFOLLOW: never through a link


def test_status_previews_from_metadata_and_follows_no_link(tmp_path: Path) -> None:
    trust = store(tmp_path)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (repo / ".robota").mkdir()
    config = repo / ".robota" / "config.yaml"
    config.write_text("defaults: {permissionMode: acceptEdits}\n")
    config.chmod(0o000)  # unreadable: the preview never opens it
    try:
        shown = preview(trust, repo / ".robota")
    finally:
        config.chmod(0o600)
    assert shown["workspace"] == str(repo) and shown["git_root"] == str(repo)
    assert (shown["state"], shown["restricted"]) == ("untrusted", True)
    project = shown["project_config"]
    assert isinstance(project, dict)
    assert (project["exists"], project["kind"], project["size"]) == (True, "file", 40)
    assert shown["trust_enables"] and "acceptEdits" not in json.dumps(shown)
    config.unlink()
    secret = tmp_path / "secret.yaml"
    secret.write_text("x" * 10)
    config.symlink_to(secret)
    linked = preview(trust, repo)
    project = linked["project_config"]
    assert isinstance(project, dict)
    assert project["kind"] == "symlink" and "not followed" in str(project["note"])
    assert linked["trust_enables"] == []
    trust.grant(repo)
    assert preview(trust, repo)["state"] == "trusted"
    assert os.path.lexists(config)


def test_concurrent_grants_lose_none(tmp_path: Path) -> None:
    trust = store(tmp_path)
    workspaces = [tmp_path / f"w{i}" for i in range(16)]
    threads = [threading.Thread(target=trust.grant, args=(w,)) for w in workspaces]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(trust.entries()) == sorted(str(w) for w in workspaces)


@pytest.mark.parametrize(
    ("size", "asked"),
    [
        (0, 1),
        (120, 121),
        (LIMIT - 1, LIMIT),
        (LIMIT, LIMIT + 1),
        (LIMIT + 1, LIMIT + 1),  # one past the limit shows; no more is read
        (10 * LIMIT, LIMIT + 1),
        (-1, 1),  # a size no file has: asks for one byte, finds the rest short
    ],
)
def test_a_read_asks_for_the_store_and_one_byte_more_never_the_limit(size: int, asked: int) -> None:
    """A buffered read of n bytes allocates n at once: asked for the 4 MiB limit on every
    turn's trust check, malloc mapped and freed 4 MiB each time and glibc raised its mmap and
    trim thresholds for good, so a burst's freed heap stayed resident (issue 28 s.3)."""
    assert read_size(size) == asked


def test_a_store_past_the_limit_fails_closed_and_one_at_it_is_read(tmp_path: Path) -> None:
    trust = store(tmp_path)
    trust.grant(tmp_path)
    document = json.loads(trust.path.read_text())
    text = json.dumps(document)
    padded = text[:-1] + " " * (LIMIT - len(text)) + "}"
    assert len(padded.encode()) == LIMIT
    trust.path.write_text(padded)
    assert trust.state(tmp_path) == "trusted"
    trust.path.write_text(padded[:-1] + " }")
    assert decide(trust, tmp_path).problem is not None
    assert "is larger than 4 MiB" in str(decide(trust, tmp_path).problem)
