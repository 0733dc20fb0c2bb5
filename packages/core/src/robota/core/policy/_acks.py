"""Short acknowledgements ("ok", "好", "继续", "thanks") in a request's thread.

An acknowledgement is a green light, not a message to ignore: in cc-bot's retrospective a
"OK, continue" read as "no action needed" left a teammate waiting 18 minutes. So an
acknowledgement gets an immediate short reply (none for thanks, to avoid reply storms between
people thanking each other) and still goes on to the task as a prompt.

A message is an acknowledgement when it is short (at most ``MAX_LENGTH`` characters) and made
only of acknowledgement words, in any order, with punctuation and emoji between them. Its kind:
``continue`` when it has a continue word; else ``thanks`` when it has a thanks word ("ok
thanks" is thanks: no reply); else ``yes`` or ``ok``, whichever word comes first.

Never an acknowledgement, however short: anything with a stop word ("no", "cancel", "wait",
"stop", "don't", 不, 别, 取消, 等, 停); a "no" read as "ok" would run what was refused.

Pure: text in, a kind or ``None`` out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from ._text import fold

__all__ = ["MAX_LENGTH", "AckKind", "detect_ack"]

AckKind = Literal["yes", "continue", "ok", "thanks"]
MAX_LENGTH = 24

_WORDS: Mapping[str, AckKind] = {
    # yes
    "y": "yes",
    "yes": "yes",
    "yep": "yes",
    "yeah": "yes",
    "yup": "yes",
    "sure": "yes",
    "是": "yes",
    "是的": "yes",
    "对": "yes",
    "对的": "yes",
    "嗯": "yes",
    "嗯嗯": "yes",
    "可以": "yes",
    "行": "yes",
    "没问题": "yes",
    # continue
    "continue": "continue",
    "go on": "continue",
    "go ahead": "continue",
    "carry on": "continue",
    "keep going": "continue",
    "proceed": "continue",
    "next": "continue",
    "继续": "continue",
    "接着": "continue",
    "接着做": "continue",
    "下一步": "continue",
    "开始": "continue",
    "冲": "continue",
    # ok
    "ok": "ok",
    "okay": "ok",
    "k": "ok",
    "kk": "ok",
    "got it": "ok",
    "roger": "ok",
    "好": "ok",
    "好的": "ok",
    "好滴": "ok",
    "好嘞": "ok",
    "收到": "ok",
    "了解": "ok",
    "明白": "ok",
    "知道了": "ok",
    "👌": "ok",
    "👍": "ok",
    "🆗": "ok",
    # thanks
    "thanks": "thanks",
    "thank you": "thanks",
    "thx": "thanks",
    "ty": "thanks",
    "cheers": "thanks",
    "谢谢": "thanks",
    "多谢": "thanks",
    "感谢": "thanks",
    "谢了": "thanks",
    "辛苦了": "thanks",
    "辛苦": "thanks",
    "🙏": "thanks",
}
_FILLERS = ("吧", "啊", "呀", "哈", "了", "呢", "哦", "噢")
_STOP_LATIN = re.compile(r"\b(?:no|nope|not|cancel|wait|stop|hold|don'?t|dont)\b")
_STOP_CJK = ("不", "别", "取消", "等", "停", "先别")
_BY_LENGTH = sorted(_WORDS, key=len, reverse=True)


def _is_word_end(text: str, end: int, word: str) -> bool:
    # A Latin word must end at a word boundary ("ok" is not the start of "okra").
    return (
        not word[-1].isascii()
        or end == len(text)
        or not text[end].isascii()
        or not text[end].isalnum()
    )


def _words(text: str) -> list[AckKind] | None:
    """The kinds of the words ``text`` is made of, or ``None`` when something else is in it."""
    found: list[AckKind] = []
    index = 0
    while index < len(text):
        word = next(
            (
                word
                for word in _BY_LENGTH
                if text.startswith(word, index) and _is_word_end(text, index + len(word), word)
            ),
            None,
        )
        if word is not None:
            found.append(_WORDS[word])
            index += len(word)
        elif text[index] == " " or (found and text[index] in _FILLERS):
            index += 1
        else:
            return None
    return found


def detect_ack(text: str) -> AckKind | None:
    """The kind of acknowledgement ``text`` is, or ``None`` when it is not one."""
    folded = text.strip().casefold()
    if not folded or len(folded) > MAX_LENGTH:
        return None
    if _STOP_LATIN.search(folded) or any(stop in folded for stop in _STOP_CJK):
        return None
    kinds = _words(fold(folded))
    if not kinds:
        return None
    if "continue" in kinds:
        return "continue"
    if "thanks" in kinds:
        return "thanks"
    return kinds[0]
