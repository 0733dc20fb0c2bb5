"""The one distribution builds as a wheel whose ``robota`` namespace holds every package."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_wheel_contains_the_namespace_and_imports_without_the_source_tree(
    tmp_path: Path,
) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        check=True,
        timeout=300,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("robota-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "robota/__init__.py" not in names, "robota must stay a namespace package"
    code_dirs = {
        n.rsplit("/", 1)[0] for n in names if n.startswith("robota/") and n.endswith(".py")
    }
    for package in sorted(code_dirs - {"robota"}):
        if "/_" not in "/" + package.split("/", 1)[-1]:
            assert f"{package}/__init__.py" in names, f"{package} has no facade in the wheel"
    assert "robota/cli/templates/config.yaml" in names, "init's templates must ship"
    assert "robota/cli/skills/robota/SKILL.md" in names, "the agent skill must ship"
    assert "robota/core/__init__.py" in names
    assert "robota/cli/__init__.py" in names
    assert "robota/mesh/__init__.py" in names
    assert "robota/host/__init__.py" in names
    assert "robota/transports/feishu/__init__.py" in names
    assert "robota/mcp/__init__.py" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "robota = robota.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()

    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--quiet",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        timeout=300,
        capture_output=True,
    )
    # -S: no site processing, so the editable install's .pth cannot put the source tree on
    # sys.path; dependencies come from this venv's site-packages, robota from the wheel only.
    deps = sysconfig.get_paths()["purelib"]
    probe = (
        "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]];"
        "import robota.core, robota.cli, robota.core.testing, robota.runtimes, robota.host;"
        "import robota.mesh; robota.mesh.device_id(robota.mesh.new_key());"
        "import robota.transports.feishu, robota.transports.slack, robota.mcp;"
        "from robota.core.config import template_text;"
        "assert 'agents:' in template_text('config.yaml');"
        "print(robota.core.__file__); print(robota.cli.__file__); print(robota.host.__file__)"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", probe, str(target), deps],
        check=True,
        timeout=60,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert all(path.startswith(str(target)) for path in out), out
