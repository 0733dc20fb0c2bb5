"""Files and images shared in a Slack message: parsed, checked, downloaded with the bot token.

A ``message`` (subtype ``file_share``) or ``app_mention`` event carries a ``files`` array; each
file a person shared there has ``url_private_download``, ``mimetype``, ``filetype``, ``size``
and ``name``. Slack serves that URL only with the bot token in the ``Authorization`` header
(scope ``files:read``); without it, it redirects to its sign-in page. So the download sends the
token, follows a redirect only to the configured Slack host (the Web API's host or a host
under it: ``files.slack.com`` for ``slack.com``, the same scheme and port), never more than
``MAX_REDIRECTS``, and refuses a sign-in page instead of saving it as the file.

A PNG, JPEG, GIF, WEBP or BMP is an image (at most ``IMAGE_BYTES`` and ``IMAGE_EDGE`` pixels on
its long edge), any other file a file (at most ``FILE_BYTES``); a file Slack gives no download
URL for (an external file, one hidden by the workspace's plan, a tombstone) is refused, and so
is one larger than its limit, before anything is downloaded. One refusal refuses the whole
message with a reply saying what was wrong, and no turn runs. The limits, the attachments
folder and what the agent is given are every chat transport's (``robota.core.frontend``); the
decisions here are pure (``parse_files``, ``plan_files``, ``allowed_url``), ``fetch`` is the
thin I/O shell over ``WebApi.download``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol
from urllib.parse import urlsplit

import trio

from robota.core.frontend import (
    FILE_BYTES,
    IMAGE_BYTES,
    Refused,
    Saved,
    safe_name,
    stored,
    too_big,
    write_attachment,
)

from ._errors import ApiError, TooLarge

__all__ = [
    "IMAGE_TYPES",
    "MAX_FILES",
    "MAX_REDIRECTS",
    "Planned",
    "SlackFile",
    "allowed_url",
    "fetch",
    "parse_files",
    "plan_files",
]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"})
"""Mime types the agent may get as an image (the formats whose size robota reads)."""
MAX_FILES = 20
"""Files one message may bring (Slack's own limit for one upload is 10)."""
MAX_REDIRECTS = 3


@dataclass(frozen=True, slots=True)
class SlackFile:
    """One entry of an event's ``files`` array, as far as robota uses it."""

    id: str
    name: str
    mimetype: str
    filetype: str
    size: int
    url: str | None
    """``url_private_download``; ``None``: Slack gives the bot none to download."""


@dataclass(frozen=True, slots=True)
class Planned:
    file: SlackFile
    kind: Literal["image", "file"]
    limit: int


def parse_files(value: object) -> tuple[SlackFile, ...] | str:
    """The event's ``files`` (absent: none), or what is wrong with them."""
    if value is None:
        return ()
    if not isinstance(value, list):
        return "the message's files is not a list"
    if len(value) > MAX_FILES:
        return f"the message has {len(value)} files, more than {MAX_FILES}"
    files: list[SlackFile] = []
    for entry in value:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
            return "a file of the message is not an object with an id"
        size = entry.get("size", 0)
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            return "a file's size is not a non-negative integer"
        url = entry.get("url_private_download")
        files.append(
            SlackFile(
                id=entry["id"][:40],
                name=_string(entry.get("name")) or _string(entry.get("title")) or entry["id"],
                mimetype=_string(entry.get("mimetype")).lower(),
                filetype=_string(entry.get("filetype")),
                size=size,
                url=url if isinstance(url, str) and url else None,
            )
        )
    return tuple(files)


def _string(value: object) -> str:
    return value[:200] if isinstance(value, str) else ""


def plan_files(files: Sequence[SlackFile], notes: Mapping[str, str]) -> list[Planned] | Refused:
    """What each file is and its limit, or why the message is refused before any download."""
    planned: list[Planned] = []
    for file in files:
        kind: Literal["image", "file"] = "image" if file.mimetype in IMAGE_TYPES else "file"
        limit = IMAGE_BYTES if kind == "image" else FILE_BYTES
        if file.url is None:
            return Refused(notes["unavailable"].format(name=file.name))
        if file.size > limit:
            return too_big(kind, file.size, notes)
        planned.append(Planned(file, kind, limit))
    return planned


def allowed_url(url: str, api_url: str) -> bool:
    """Whether ``url`` is on the configured Slack host: the Web API's scheme, host (or a host
    under it) and port. The bot token goes nowhere else."""
    try:
        target, api = urlsplit(url), urlsplit(api_url)
        target_port, api_port = target.port, api.port
    except ValueError:
        return False
    host, api_host = (target.hostname or "").lower(), (api.hostname or "").lower()
    defaults = {"https": 443, "http": 80}
    return (
        bool(host)
        and target.scheme == api.scheme
        and (host == api_host or host.endswith("." + api_host))
        and (target_port or defaults.get(target.scheme)) == (api_port or defaults.get(api.scheme))
        and not target.username
        and not target.password
    )


class _Downloader(Protocol):
    """What ``fetch`` needs of ``WebApi``."""

    async def download(self, url: str, *, limit: int) -> bytes: ...


async def fetch(
    web: _Downloader,
    message_ts: str,
    files: Sequence[SlackFile],
    folder: Path,
    notes: Mapping[str, str],
) -> list[Saved] | Refused:
    """Each file downloaded, checked and written under ``folder``, or why not."""
    planned = plan_files(files, notes)
    if isinstance(planned, Refused):
        return planned
    saved: list[Saved] = []
    for index, item in enumerate(planned):
        assert item.file.url is not None
        try:
            data = await web.download(item.file.url, limit=item.limit)
        except TooLarge as error:
            return too_big(item.kind, error.size, notes)
        except ApiError as error:
            return Refused(notes["failed"].format(what=notes[item.kind], error=error.error))
        stem = f"{safe_name(message_ts, 'message')}-{index + 1}"
        checked = stored(item.kind, data, stem, name=item.file.name, folder=folder, notes=notes)
        if isinstance(checked, Refused):
            return checked
        await trio.to_thread.run_sync(write_attachment, checked.path, data)
        saved.append(checked)
    return saved
