"""Plugins own their parts of config.yaml: runtime kinds and chat transport sections.

A plugin is registered the way a third-party distribution registers one: a ``*.dist-info``
directory with an ``entry_points.txt`` in a directory on ``sys.path``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from robota.core import ConfigError, TransportPlugin, runtime_kinds, transport_names
from robota.core.config import profile_environment
from robota.transports.feishu import FeishuSettings

from ._plugins import MATRIX_PLUGIN, Site, site
from ._validate import HOME, MINIMAL, _parse

__all__ = ["site"]  # the fixture, from _plugins.py


def _error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        _parse(text)
    assert caught.value.file == str(HOME / "config.yaml")
    return caught.value


def test_the_shipped_plugins_are_found_by_name() -> None:
    assert set(runtime_kinds()) == {"app-server", "acp"}
    assert set(transport_names()) == {"feishu", "slack"}


def test_a_third_party_runtime_kind_is_accepted_once_its_plugin_is_installed(site: Site) -> None:
    text = MINIMAL.replace("kind: acp", "kind: echo-rt")
    refused = _error(text)
    assert (refused.key, refused.found) == ("agents.mine.kind", "'echo-rt'")
    assert refused.expected == "one of app-server, acp (the installed runtime plugins)"

    # The entry point's module does not exist: validation reads names and loads nothing.
    site.install("robota-echo-runtime", "robota.runtimes", {"echo-rt": "robota_test_echo:plugin"})
    assert _parse(text).agents["mine"].kind == "echo-rt"
    refused = _error(MINIMAL.replace("kind: acp", "kind: nope"))
    assert refused.expected == "one of app-server, acp, echo-rt (the installed runtime plugins)"


def test_a_transport_section_is_validated_by_its_plugin(site: Site) -> None:
    site.module("robota_test_matrix", MATRIX_PLUGIN)
    site.install("robota-matrix", "robota.transports", {"matrix": "robota_test_matrix:plugin"})
    section = "transports:\n  matrix:\n    room: '!ops'\n    token: ${MATRIX_TOKEN}\n"
    config = _parse(MINIMAL + section, {"MATRIX_TOKEN": "matrix-token-value"})
    matrix = config.transports.get("matrix")
    assert type(matrix).__name__ == "MatrixSettings"
    assert (matrix.room, matrix.token) == ("!ops", "matrix-token-value")  # type: ignore[attr-defined]
    assert config.transports.matrix is matrix
    assert list(config.transports.chat) == ["matrix"]
    assert config.transports.feishu is None  # installed, not configured
    # What the plugin read as a secret is one, like every other credential.
    assert "matrix-token-value" in config.secrets

    # Its errors read like core's: file, key, found, expected.
    error = _error(MINIMAL + "transports:\n  matrix:\n    room: ops\n    token: t\n")
    assert str(error) == (
        f"{HOME / 'config.yaml'}: transports.matrix.room: found 'ops', expected a room id like !abc"
    )
    error = _error(MINIMAL + "transports:\n  matrix:\n    room: '!ops'\n    tokn: t\n")
    assert (error.key, error.found) == ("transports.matrix", "unknown key 'tokn'")


def test_an_unknown_transport_is_refused_naming_the_installed_ones() -> None:
    error = _error(MINIMAL + "transports:\n  console:\n    enabled: true\n  matrix:\n    x: 1\n")
    assert error.key == "transports.matrix"
    assert error.found == "a section for 'matrix', which no installed transport plugin provides"
    assert error.expected == (
        "one of console, ws, feishu, slack (installed transport plugins: feishu, slack)"
    )


def test_a_broken_transport_plugin_is_a_config_error_naming_it(site: Site) -> None:
    site.module("robota_test_broken", "raise ImportError('missing dependency: nio')\n")
    site.install("robota-broken", "robota.transports", {"matrix": "robota_test_broken:plugin"})
    error = _error(MINIMAL + "transports:\n  matrix:\n    room: x\n")
    assert error.key == "transports.matrix"
    assert "failed to load: ImportError: missing dependency: nio" in error.found
    assert "'matrix' transport plugin" in error.expected


def test_a_registered_object_that_is_no_transport_plugin_is_refused(site: Site) -> None:
    site.module("robota_test_broken", "plugin = object()\n")
    site.install("robota-broken", "robota.transports", {"matrix": "robota_test_broken:plugin"})
    error = _error(MINIMAL + "transports:\n  matrix:\n    room: x\n")
    assert "is not a TransportPlugin named 'matrix'" in error.found


def test_the_shipped_transports_are_transport_plugins() -> None:
    from robota.transports import feishu, slack

    assert isinstance(feishu.plugin, TransportPlugin) and feishu.plugin.name == "feishu"
    assert isinstance(slack.plugin, TransportPlugin) and slack.plugin.name == "slack"
    config = _parse(
        MINIMAL + "transports:\n  feishu:\n    appId: a\n    appSecret: s\n"
        "    respondToOwnerOnly: false\n"
    )
    assert isinstance(config.transports.feishu, FeishuSettings)


def test_profile_drops_the_credentials_of_every_installed_transport(site: Site) -> None:
    site.install("robota-matrix", "robota.transports", {"matrix": "robota_test_matrix:plugin"})
    inherited = {"MATRIX_TOKEN": "t", "SLACK_BOT_TOKEN": "x", "FEISHU_APP_ID": "a", "KEEP": "1"}
    env = profile_environment(inherited, profile="p", cwd=HOME)
    assert {name for name in inherited if name in env} == {"KEEP"}


LAZY_PROBE = r"""
import json, sys
from pathlib import Path
from robota.core.config import parse_config, resolve_profile, template_text
console = "  console:\n    enabled: true\n"
text = template_text("config.yaml").replace(console, console + sys.argv[1], 1)
parse_config(text, file=Path("/p/config.yaml"), environ={}, profile=resolve_profile(
    {"ROBOTA_HOME": "/p"}), start_dir=Path("/p"))
print(json.dumps(sorted(m for m in sys.modules if m.startswith("robota."))))
"""


@pytest.mark.parametrize(
    ("extra", "loaded"),
    [
        ("", set()),
        (
            "  feishu:\n    appId: a\n    appSecret: s\n    respondToOwnerOnly: false\n",
            {"robota.transports.feishu"},
        ),
    ],
)
def test_config_loading_imports_a_plugin_only_for_its_section(extra: str, loaded: set[str]) -> None:
    out = subprocess.run(
        [sys.executable, "-c", LAZY_PROBE, extra],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    modules = set(json.loads(out.stdout))
    plugins = {m for m in modules if m.startswith(("robota.transports.", "robota.runtimes"))}
    # A plugin is a public package (robota.transports.slack); the distribution's private
    # helpers its plugins share (robota.transports._tls) are none.
    public = {m for m in plugins if m.count(".") == 2 and not m.rpartition(".")[2].startswith("_")}
    assert public == loaded
    assert "robota.runtimes" not in modules and "robota.transports._net" not in modules


def test_core_config_names_no_transport() -> None:
    root = Path(__file__).resolve().parents[2] / "packages/core/src/robota/core"
    sources = [*sorted((root / "config").glob("*.py")), root / "_plugins.py"]
    named = [
        str(p) for p in sources if any(w in p.read_text().lower() for w in ("feishu", "slack"))
    ]
    assert named == []
