"""Images and files a person sends on Feishu: downloaded, then checked and stored by core.

A message's resources (``_inbound.Resource``: an ``image`` message, a ``file`` message, the
images of a ``post``) are downloaded by ``GET /open-apis/im/v1/messages/{message_id}/resources/
{key}?type=image|file`` into the profile's attachments folder (``data/attachments/<chat>/``).
The limits, the file names and what the agent is given are every chat transport's:
``robota.core.frontend``'s ``_media`` .
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

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
from ._inbound import Resource
from ._rest import RestClient

__all__ = ["fetch"]


async def fetch(
    rest: RestClient,
    message_id: str,
    resources: Sequence[Resource],
    folder: Path,
    notes: Mapping[str, str],
) -> list[Saved] | Refused:
    """Each resource downloaded, checked and written under ``folder``, or why not."""
    saved: list[Saved] = []
    for index, resource in enumerate(resources):
        limit = IMAGE_BYTES if resource.kind == "image" else FILE_BYTES
        what = notes[resource.kind]
        path = f"/open-apis/im/v1/messages/{message_id}/resources/{resource.key}"
        try:
            data, _ = await rest.download(path, params={"type": resource.kind}, limit=limit)
        except TooLarge as error:
            return too_big(resource.kind, error.size, notes)
        except ApiError as error:
            return Refused(notes["failed"].format(what=what, error=error.msg or error))
        stem = f"{safe_name(message_id, 'message')}-{index + 1}"
        item = stored(resource.kind, data, stem, name=resource.name, folder=folder, notes=notes)
        if isinstance(item, Refused):
            return item
        await trio.to_thread.run_sync(write_attachment, item.path, data)
        saved.append(item)
    return saved
