"""The generated reference pages are what tools/gen_docs.py makes now: the configuration
reference from the validator's key tables, the CLI reference from the click commands. A key
added to the validator, or an option to a command, without regenerating fails here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[2] / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

import gen_docs  # noqa: E402


def generated(page: Path) -> str:
    """What the generator makes of ``page`` in a fresh interpreter, as ``gen_docs.py`` runs: click
    keeps each command's help option from the first context that asked for it, so a command a
    test invoked on its own earlier in this process would print ``--help`` without ``-h``."""
    maker = gen_docs.PAGES[page].__name__
    code = f"import sys; sys.path.insert(0, {str(TOOLS)!r}); import gen_docs; "
    code += f"sys.stdout.write(gen_docs.{maker}())"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout


@pytest.mark.parametrize("page", sorted(gen_docs.PAGES), ids=lambda page: page.name)
def test_the_checked_in_page_is_what_the_generator_makes(page: Path) -> None:
    assert page.read_text(encoding="utf-8") == generated(page), (
        f"{page.name} is stale: run python tools/gen_docs.py"
    )


def test_every_key_the_validator_allows_is_on_the_configuration_page() -> None:
    from robota.core import transport_names, transport_plugin
    from robota.core.config import CONFIG_SECTIONS, PROJECT_SECTIONS, DescribesKeys, key_names

    page = gen_docs.config_page()
    sections = [*CONFIG_SECTIONS]
    for name in transport_names():
        plugin = transport_plugin(name)
        assert isinstance(plugin, DescribesKeys), f"{name} does not describe its keys"
        sections.append((f"transports.{name}", plugin.config_keys))
    for path, keys in sections:
        section = page.partition(f"## `{path}`\n")[2].partition("\n## ")[0]
        assert section, path
        for name in key_names(keys):
            assert f"| `{name}` |" in section, f"{path}.{name}"
    for path, keys in PROJECT_SECTIONS:
        section = page.partition(f"`.robota/config.yaml`: `{path}`\n")[2].partition("\n##")[0]
        assert section, path
        for name in key_names(keys):
            assert f"| `{name}` |" in section, f".robota/config.yaml {path}.{name}"


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ("defaults", "permisionMode"),  # a typo is refused, not documented
        ("storage", "path"),
        ("transports.feishu", "token"),
    ],
)
def test_a_key_outside_the_tables_is_refused_by_the_validator(
    tmp_path: Path, section: str, key: str
) -> None:
    """The tables are the validator's: a key they do not list is a configuration error."""
    from robota.core import ConfigError
    from robota.core.config import parse_config, resolve_profile

    head, _, tail = section.partition(".")
    body = {
        "defaults": "defaults:\n  agent: codex\n  permisionMode: plan\n",
        "storage": "defaults:\n  agent: codex\nstorage:\n  path: x.sqlite\n",
        "transports.feishu": (
            "defaults:\n  agent: codex\ntransports:\n  feishu:\n    appId: a\n"
            "    appSecret: b\n    userOpenId: c\n    token: d\n"
        ),
    }[section]
    text = "agents:\n  codex:\n    kind: app-server\n    command: codex\n" + body
    with pytest.raises(ConfigError) as caught:
        parse_config(
            text,
            file=tmp_path / "config.yaml",
            environ={},
            profile=resolve_profile({"ROBOTA_HOME": str(tmp_path)}),
            start_dir=tmp_path,
        )
    assert key in str(caught.value)
    assert (tail or head) in str(caught.value)


def test_check_names_a_stale_page_and_writing_makes_it_current(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "docs" / "reference" / "page.md"
    monkeypatch.setattr(gen_docs, "ROOT", tmp_path)
    monkeypatch.setattr(gen_docs, "PAGES", {page: lambda: "# A page\n"})
    assert gen_docs.main(["--check"]) == 1  # missing
    assert "docs/reference/page.md is stale" in capsys.readouterr().err
    assert gen_docs.main([]) == 0
    assert page.read_text(encoding="utf-8") == "# A page\n"
    assert gen_docs.main(["--check"]) == 0
    page.write_text("# An edited page\n", encoding="utf-8")
    assert gen_docs.main(["--check"]) == 1
