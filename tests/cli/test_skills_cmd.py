"""``robota skills`` and the skill ``robota init`` installs: real script, real directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robota.cli._skills import (
    MARKER,
    SkillError,
    SkillState,
    inspect,
    install,
    packaged_files,
    skill_state,
    skills_dir,
    uninstall,
)

from ..support.robota import Robota


@pytest.mark.parametrize(
    ("exists", "marker_ok", "files_match", "state"),
    [
        (False, False, False, SkillState.ABSENT),
        (False, True, True, SkillState.ABSENT),
        (True, False, True, SkillState.UNMANAGED),
        (True, False, False, SkillState.UNMANAGED),
        (True, True, True, SkillState.INSTALLED),
        (True, True, False, SkillState.OUTDATED),
    ],
)
def test_state_table(exists: bool, marker_ok: bool, files_match: bool, state: SkillState) -> None:
    assert skill_state(exists=exists, marker_ok=marker_ok, files_match=files_match) is state


def test_skills_dir_precedence_and_validation(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "ROBOTA_SKILLS_DIR": str(tmp_path / "env")}
    assert skills_dir(tmp_path / "t", env) == tmp_path / "t"
    assert skills_dir(None, env) == tmp_path / "env"
    assert skills_dir(None, {"HOME": str(tmp_path)}) == tmp_path / ".agents" / "skills"
    with pytest.raises(SkillError, match="ROBOTA_SKILLS_DIR must be an absolute path"):
        skills_dir(None, {"ROBOTA_SKILLS_DIR": "relative/dir"})
    with pytest.raises(SkillError, match="--target must be an absolute path"):
        skills_dir("relative", env)


def test_the_packaged_skill_names_the_task_commands() -> None:
    text = packaged_files()["SKILL.md"].decode()
    assert text.startswith("---\nname: robota\ndescription: ")
    for command in ("status", "send", "fork", "newgroup", "forkgroup", "queue", "rename"):
        assert f"robota task {command}" in text
    assert "ROBOTA_TASK_ID" in text and "CODEX_THREAD_ID" in text


def test_install_refresh_uninstall(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    before, after = install(root, "1.0")
    assert (before.state, after.state) == (SkillState.ABSENT, SkillState.INSTALLED)
    skill = root / "robota"
    assert (skill / "SKILL.md").read_bytes() == packaged_files()["SKILL.md"]
    assert json.loads((skill / MARKER).read_text()) == {"managedBy": "robota", "version": "1.0"}
    assert [p.name for p in root.iterdir()] == ["robota"], "no staging directory left behind"

    (skill / "SKILL.md").write_text("edited\n")
    assert inspect(skill).state is SkillState.OUTDATED
    _, refreshed = install(root, "1.1")
    assert refreshed.state is SkillState.INSTALLED
    assert refreshed.installed_version == "1.1"
    assert (skill / "SKILL.md").read_bytes() == packaged_files()["SKILL.md"]

    assert uninstall(root).state is SkillState.INSTALLED
    assert not skill.exists()
    assert root.exists()
    assert uninstall(root).state is SkillState.ABSENT


def test_an_unmanaged_directory_is_never_touched(tmp_path: Path) -> None:
    skill = tmp_path / "robota"
    skill.mkdir()
    (skill / "SKILL.md").write_text("the user's own skill\n")
    assert inspect(skill).state is SkillState.UNMANAGED
    with pytest.raises(SkillError, match="was not installed by robota"):
        install(tmp_path, "1.0")
    with pytest.raises(SkillError, match="was not installed by robota"):
        uninstall(tmp_path)
    # A marker that is not robota's does not make it managed either.
    (skill / MARKER).write_text('{"managedBy": "someone-else"}')
    with pytest.raises(SkillError):
        uninstall(tmp_path)
    assert (skill / "SKILL.md").read_text() == "the user's own skill\n"


def test_a_symlink_or_a_file_of_that_name_is_unmanaged(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    install(elsewhere, "1.0")
    root = tmp_path / "skills"
    root.mkdir()
    (root / "robota").symlink_to(elsewhere / "robota")
    assert inspect(root / "robota").state is SkillState.UNMANAGED
    with pytest.raises(SkillError):
        uninstall(root)
    assert (elsewhere / "robota" / "SKILL.md").exists()
    (root / "robota").unlink()
    (root / "robota").write_text("a file")
    with pytest.raises(SkillError):
        install(root, "1.0")


def test_uninstall_keeps_a_managed_directory_holding_foreign_files(tmp_path: Path) -> None:
    install(tmp_path, "1.0")
    (tmp_path / "robota" / "notes.md").write_text("mine\n")
    assert inspect(tmp_path / "robota").extra_files == ("notes.md",)
    with pytest.raises(SkillError, match=r"robota did not install \(notes\.md\)"):
        uninstall(tmp_path)
    assert (tmp_path / "robota" / MARKER).exists()
    assert (tmp_path / "robota" / "notes.md").read_text() == "mine\n"


def test_the_commands(robota: Robota, tmp_path: Path) -> None:
    default = tmp_path / "user" / ".agents" / "skills" / "robota"
    assert robota.run_json("skills", "status")["state"] == "absent"
    installed = robota.run_json("skills", "install")
    assert (installed["action"], installed["state"]) == ("installed", "installed")
    assert installed["path"] == str(default)
    assert robota.run("skills", "install").stdout == f"up to date: {default}\n"
    assert robota.run("skills", "status").stdout.startswith(f"{default}: installed (robota ")

    target = tmp_path / "other"
    env = {"ROBOTA_SKILLS_DIR": str(target)}
    assert robota.run_json("skills", "install", env=env)["path"] == str(target / "robota")
    assert robota.run_json("skills", "uninstall", "--target", str(target))["action"] == "removed"
    assert not (target / "robota").exists()

    (target / "robota").mkdir()
    refused = robota.run("skills", "uninstall", "--target", str(target), "--json")
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["ok"] is False
    assert "was not installed by robota" in refused.stderr
    assert (target / "robota").is_dir()

    bad = robota.run("skills", "status", env={"ROBOTA_SKILLS_DIR": "rel"})
    assert bad.returncode == 2
    assert "ROBOTA_SKILLS_DIR must be an absolute path, found 'rel'" in bad.stderr


def test_init_installs_then_refreshes_the_skill(robota: Robota, tmp_path: Path) -> None:
    skill = tmp_path / "user" / ".agents" / "skills" / "robota"
    first = robota.run("init")
    assert first.returncode == 0, first.stderr
    assert f"Skill: installed {skill}\n" in first.stdout
    (skill / "SKILL.md").write_text("old\n")
    result = robota.run_json("init")
    assert result["skill"]["state"] == "installed"
    assert (skill / "SKILL.md").read_bytes() == packaged_files()["SKILL.md"]


def test_init_leaves_an_unmanaged_skill_alone(robota: Robota, tmp_path: Path) -> None:
    skill = tmp_path / "user" / ".agents" / "skills" / "robota"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("mine\n")
    result = robota.run_json("init")
    assert result["ok"] is True
    assert result["skill"]["state"] == "unmanaged"
    assert (skill / "SKILL.md").read_text() == "mine\n"
