"""Does a chat message ask to switch the bot on or off? (It is never done from chat.)

A teammate, an admin mistyping included, must not be able to take the bot offline from the
group: the operator would lose the group and could not bring it back from there. So every
message that reads as a switch request gets the fixed reply that switching is done from the
operator's terminal, whoever sends it.

What counts, on the whole message (so "the deploy bot stopped working" is a request, not a
switch):

* the switch commands ``/pause``, ``/resume``, ``/stop-bot`` and the built-in intent's own
  ``/switch``, with ``/`` or Slack's ``!``, with or without arguments;
* zh: 关闭 / 开启 / 上线 / 下线 alone (cc-bot's worked example is a bare "关闭"), or a switching
  verb with the bot as its object (关掉机器人, 把bot下线吧, 请暂停一下机器人);
* en: turn/switch/shut/power on/off/down the bot, open/close/start/stop/launch/pause/resume/
  enable/disable/restart/kill the bot, go online/offline, take/bring/put the bot on/offline,
  bot on/off/online/offline; "please" and "now" around them do not matter.

Pure: text in, a boolean out.
"""

from __future__ import annotations

import re

from ..config import SWITCH_COMMANDS
from ._text import fold

__all__ = ["COMMAND_PREFIXES", "is_switch_request"]

COMMAND_PREFIXES = ("/", "!")

_COMMANDS = frozenset((*SWITCH_COMMANDS, "switch"))
_BOT_ZH = "(?:bot|机器人)"
_BARE_ZH = ("关闭", "开启", "上线", "下线")
_VERB_ZH = "(?:关闭|关掉|关了|开启|打开|启动|停止|停掉|暂停|恢复|上线|下线|停用|启用|重启)"
_ZH = re.compile(
    rf"(?:请|麻烦)?(?:帮我|你)?把?(?P<before>{_BOT_ZH})?(?:给我)?(?P<verb>{_VERB_ZH})"
    rf"(?:一下)?(?P<after>{_BOT_ZH})?(?:吧|一下|了|呗)?"
)
_BOT_EN = r"(?:the )?(?:bot|robot|robota)"
_EN = re.compile(
    "|".join(
        (
            rf"(?:turn|switch|shut|power) (?:on|off|down) {_BOT_EN}",
            rf"(?:turn|switch|shut|power) {_BOT_EN} (?:on|off|down)",
            rf"(?:open|close|start|stop|launch|pause|unpause|resume|enable|disable|restart|kill"
            rf"|shutdown|wake up|wake) {_BOT_EN}",
            r"go (?:online|offline)",
            rf"(?:take|bring|put|get) {_BOT_EN} (?:online|offline|back online|down|up)",
            rf"{_BOT_EN} (?:on|off|online|offline)",
        )
    )
)
_POLITE_EN = re.compile(r"^(?:please |pls |can you |could you )+|(?: please| now| pls)+$")


def _is_switch_command(stripped: str) -> bool:
    for prefix in COMMAND_PREFIXES:
        if stripped.startswith(prefix) and not stripped.startswith(prefix * 2):
            word = stripped[len(prefix) :].split(maxsplit=1)
            return bool(word) and word[0].lower() in _COMMANDS
    return False


def is_switch_request(text: str) -> bool:
    """Whether ``text``, as a whole, asks to turn the bot on or off."""
    stripped = text.strip()
    if _is_switch_command(stripped):
        return True
    folded = fold(stripped)
    compact = folded.replace(" ", "")
    match = _ZH.fullmatch(compact)
    if match is not None and (
        match.group("before") or match.group("after") or match.group("verb") in _BARE_ZH
    ):
        return True
    english = _POLITE_EN.sub("", folded)
    return _EN.fullmatch(english) is not None
