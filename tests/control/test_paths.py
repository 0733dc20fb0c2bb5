"""Where a profile's host keeps its runtime files."""

from __future__ import annotations

from pathlib import Path

from robota.core.config import resolve_profile


def test_a_pinned_profile_keeps_its_runtime_files_under_its_data_dir(tmp_path: Path) -> None:
    profile = resolve_profile({"ROBOTA_HOME": str(tmp_path)})
    assert profile.runtime_dir == tmp_path / "data" / "run"
    assert profile.control_socket == tmp_path / "data" / "run" / "control.sock"
    assert profile.host_lock == tmp_path / "data" / "run" / "host.lock"
    assert profile.host_state_file == tmp_path / "data" / "run" / "host.json"


def test_a_platform_profile_keeps_them_under_its_data_dir() -> None:
    profile = resolve_profile({})
    assert profile.runtime_dir == profile.data_dir / "run"
    assert profile.control_socket.parent == profile.runtime_dir
