"""A team's default locale and time zone are its transport plugin's (``SetsTeamDefaults``).

Configuration names no platform: validation asks the team's transport plugin what a team on it
gets when its section leaves ``locale`` or ``timeZone`` out, and the team carries the answer
(``TeamConfig.defaults``), which ``robota.core.policy`` reads.
"""

from __future__ import annotations

import pytest

from robota.core.config import SetsTeamDefaults, TeamDefaults, team_defaults
from robota.core.policy import team_locale, team_time_zone
from robota.transports import feishu, slack

from ._plugins import MATRIX_PLUGIN, Site, site  # noqa: F401  (the fixture)
from ._teams import _parse, _team

SHANGHAI = TeamDefaults(locale="zh-CN", time_zone="Asia/Shanghai")


def test_the_feishu_plugin_declares_its_teams_defaults_and_slack_none() -> None:
    assert isinstance(feishu.plugin, SetsTeamDefaults)
    assert feishu.plugin.team_defaults == SHANGHAI
    assert not isinstance(slack.plugin, SetsTeamDefaults)


@pytest.mark.parametrize(
    ("transport", "defaults"),
    [("feishu", SHANGHAI), ("slack", TeamDefaults()), ("nope", TeamDefaults())],
)
def test_team_defaults_are_the_installed_plugins(transport: str, defaults: TeamDefaults) -> None:
    assert team_defaults(transport) == defaults
    assert TeamDefaults() == TeamDefaults(locale="en-US", time_zone="UTC")


@pytest.mark.parametrize(
    ("transport", "extra", "locale", "zone"),
    [
        ("feishu", "", "zh-CN", "Asia/Shanghai"),
        ("slack", "", "en-US", "UTC"),
        ("feishu", "    locale: en-US\n", "en-US", "Asia/Shanghai"),
        ("slack", "    timeZone: Europe/Paris\n", "en-US", "Europe/Paris"),
    ],
)
def test_a_loaded_team_carries_its_transports_defaults(
    transport: str, extra: str, locale: str, zone: str
) -> None:
    team = _parse(_team(extra, transport)).teams["web"]
    assert team.defaults == team_defaults(transport)
    assert (team_locale(team), team_time_zone(team)) == (locale, zone)


def test_a_third_party_transport_declares_its_own(site: Site) -> None:  # noqa: F811
    declared = MATRIX_PLUGIN.replace(
        '    name = "matrix"\n',
        '    name = "matrix"\n'
        "    from robota.core.config import TeamDefaults\n"
        '    team_defaults = TeamDefaults(locale="zh-CN", time_zone="Asia/Tokyo")\n',
    )
    site.module("robota_test_matrix", declared)
    site.install("robota-matrix", "robota.transports", {"matrix": "robota_test_matrix:plugin"})
    assert team_defaults("matrix") == TeamDefaults(locale="zh-CN", time_zone="Asia/Tokyo")
