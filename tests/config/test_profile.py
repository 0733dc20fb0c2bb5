"""Profiles: where things live, how --profile/--config rewrite the environment, and loading."""

from __future__ import annotations

from pathlib import Path

import pytest

from robota.core import ConfigError
from robota.core.config import load_config, profile_environment, resolve_profile, template_text


def test_robota_home_puts_everything_under_one_directory(tmp_path: Path) -> None:
    profile = resolve_profile({"ROBOTA_HOME": "rel/home"}, cwd=tmp_path)
    home = tmp_path / "rel" / "home"
    assert profile.pinned
    assert profile.home == home
    assert profile.config_file == home / "config.yaml"
    assert profile.env_file == home / ".env"
    assert profile.default_sqlite_path == home / "data" / "robota.sqlite"
    assert profile.default_log_path == home / "logs" / "robota.log"
    assert profile.init_lock == home / "init.lock"


def test_robota_config_overrides_the_config_file_only(tmp_path: Path) -> None:
    profile = resolve_profile(
        {"ROBOTA_HOME": str(tmp_path / "home"), "ROBOTA_CONFIG": "other.yaml"}, cwd=tmp_path
    )
    assert profile.config_file == tmp_path / "other.yaml"
    # The .env still comes from the profile home.
    assert profile.env_file == tmp_path / "home" / ".env"


def test_platform_directories_without_robota_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    profile = resolve_profile({})
    assert not profile.pinned
    assert profile.config_file == tmp_path / ".config" / "robota" / "config.yaml"
    assert profile.data_dir == tmp_path / ".local" / "share" / "robota"
    assert profile.log_dir.is_relative_to(tmp_path / ".local" / "state" / "robota")


def test_profile_option_pins_both_variables_and_drops_chat_credentials(tmp_path: Path) -> None:
    inherited = {
        "PATH": "/bin",
        "ROBOTA_CONFIG": "/elsewhere/config.yaml",
        "FEISHU_APP_SECRET": "prod",
        "SLACK_BOT_TOKEN": "xoxb-prod",
        "OPENAI_API_KEY": "kept",
    }
    env = profile_environment(inherited, profile="p", cwd=tmp_path)
    assert env == {
        "PATH": "/bin",
        "OPENAI_API_KEY": "kept",
        "ROBOTA_HOME": str(tmp_path / "p"),
        "ROBOTA_CONFIG": str(tmp_path / "p" / "config.yaml"),
    }
    assert inherited["FEISHU_APP_SECRET"] == "prod"  # the input is not modified


def test_config_option_sets_an_absolute_config_path(tmp_path: Path) -> None:
    env = profile_environment({"SLACK_BOT_TOKEN": "x"}, config="c.yaml", cwd=tmp_path)
    assert env == {"SLACK_BOT_TOKEN": "x", "ROBOTA_CONFIG": str(tmp_path / "c.yaml")}
    with pytest.raises(ValueError, match="cannot be combined"):
        profile_environment({}, profile="p", config="c.yaml")


# -- loading ---------------------------------------------------------------------------------


def _write_profile(home: Path, config: str, env: str) -> None:
    home.mkdir()
    (home / "config.yaml").write_text(config)
    (home / ".env").write_text(env)


FEISHU = """\
transports:
  feishu:
    appId: ${FEISHU_APP_ID}
    appSecret: ${FEISHU_APP_SECRET}
    userOpenId: ou_owner
"""


def test_dotenv_is_loaded_first_and_the_environment_wins(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _write_profile(
        home,
        _with_feishu(template_text("config.yaml")),
        "FEISHU_APP_ID=from-dotenv\nFEISHU_APP_SECRET=dotenv-secret-value\n",
    )
    environ = {"ROBOTA_HOME": str(home), "FEISHU_APP_ID": "from-environment"}
    config = load_config(environ=environ, start_dir=tmp_path)
    feishu = config.transports.feishu
    assert feishu is not None
    assert feishu.app_id == "from-environment"
    assert feishu.app_secret == "dotenv-secret-value"
    # The .env values were added to the environment they were loaded into; nothing overwritten.
    assert environ["FEISHU_APP_SECRET"] == "dotenv-secret-value"
    assert environ["FEISHU_APP_ID"] == "from-environment"
    # Every .env value is a secret, even the one the environment overrode.
    assert {"from-dotenv", "from-environment", "dotenv-secret-value"} <= config.secrets


def _with_feishu(template: str) -> str:
    return template.replace(
        "  console:\n    enabled: true\n",
        "  console:\n    enabled: true\n" + FEISHU.removeprefix("transports:\n"),
        1,
    )


def test_missing_config_file_says_how_to_create_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"ROBOTA_HOME": str(tmp_path)})
    assert str(caught.value) == (
        f"{tmp_path / 'config.yaml'}: (file): found no such file, "
        "expected a config file (`robota init` creates one)"
    )


def test_bad_dotenv_line_is_a_config_error_naming_the_env_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _write_profile(home, template_text("config.yaml"), "GOOD=1\nthis is not an assignment\n")
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"ROBOTA_HOME": str(home)})
    assert str(caught.value).startswith(f"{home / '.env'}: line 2:")
