"""Images and files a person sends in a chat: checked, stored, and handed to the agent.

What every chat transport shares once it has downloaded a message's attachments (each in its
platform's way): where they go (``attachments_folder``: the profile's ``data/attachments/<chat>/``,
one file per attachment named after the message, ``write_attachment``), the limits (an image at
most ``IMAGE_BYTES`` and ``IMAGE_EDGE`` pixels on its long edge, in a format whose size robota
can read: PNG, JPEG, GIF, WEBP, BMP; a file at most ``FILE_BYTES``), and what the agent gets
(``prompt_with``): the images as images (``UserInput.images``) when its runtime declares it
takes them (``agent_capabilities``), else their paths in the text; a file is never handed over
by robota: the agent is told its name, size and path. An image-only message has a prompt of its
own (``image_prompt``). Anything refused refuses the whole message with a reply saying what was
wrong (``media_notes``), and no turn runs. Pure, but for ``write_attachment``.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from robota.core.config import Config

    from .._capabilities import AgentCapabilities

__all__ = [
    "FILE_BYTES",
    "IMAGE_BYTES",
    "IMAGE_EDGE",
    "Prepared",
    "Refused",
    "Saved",
    "agent_capabilities",
    "attachments_folder",
    "check_image",
    "image_extension",
    "image_size",
    "media_notes",
    "prompt_with",
    "safe_name",
    "stored",
    "too_big",
    "write_attachment",
]

IMAGE_BYTES = 20 * 1024 * 1024
IMAGE_EDGE = 2000
"""Pixels on the long edge of an image the agent is given."""
FILE_BYTES = 50 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Saved:
    kind: Literal["image", "file"]
    path: Path
    name: str
    size: int


@dataclass(frozen=True, slots=True)
class Prepared:
    text: str
    images: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class Refused:
    reason: str


def media_notes(locale: str) -> Mapping[str, str]:
    if locale.startswith("zh"):
        return {
            "image_prompt": "请查看这张图片",
            "image_at": "[图片已保存在 {path}]",
            "file_at": "[文件 {name}({size} 字节)已保存在 {path}]",
            "too_big": "{what}太大: {size}, 上限 {limit}",
            "too_wide": "图片太大: {width}x{height} 像素, 长边上限 {edge} 像素",
            "not_image": "无法识别的图片格式(支持 PNG、JPEG、GIF、WEBP、BMP)",
            "failed": "无法下载{what}: {error}",
            "unavailable": "robota 无法下载文件 {name}",
            "image": "图片",
            "file": "文件",
        }
    return {
        "image_prompt": "Please look at this image.",
        "image_at": "[image saved at {path}]",
        "file_at": "[file {name} ({size} bytes) saved at {path}]",
        "too_big": "The {what} is too large: {size}, the limit is {limit}",
        "too_wide": (
            "The image is too large: {width}x{height} pixels, at most {edge} on the long edge"
        ),
        "not_image": "Not an image format robota can read (PNG, JPEG, GIF, WEBP, BMP)",
        "failed": "The {what} could not be downloaded: {error}",
        "unavailable": "The file {name} cannot be downloaded by robota",
        "image": "image",
        "file": "file",
    }


def image_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from an image's header, or ``None`` for a format not read here."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return struct.unpack("<HH", data[6:10])
    if data.startswith(b"BM") and len(data) >= 26:
        width, height = struct.unpack("<ii", data[18:26])
        return abs(width), abs(height)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        chunk = data[12:16]
        if chunk == b"VP8X":
            return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(
                data[27:30], "little"
            )
        if chunk == b"VP8 ":
            width, height = struct.unpack("<HH", data[26:30])
            return width & 0x3FFF, height & 0x3FFF
        if chunk == b"VP8L":
            bits = int.from_bytes(data[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        return None
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    return None


_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
            at += 1 if marker == 0xFF else 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    return None


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def too_big(kind: Literal["image", "file"], size: int, notes: Mapping[str, str]) -> Refused:
    """The refusal of an attachment of ``size`` bytes over its kind's limit."""
    limit = IMAGE_BYTES if kind == "image" else FILE_BYTES
    what = notes[kind]
    return Refused(
        notes["too_big"].format(what=what, size=_megabytes(size), limit=_megabytes(limit))
    )


def stored(
    kind: Literal["image", "file"],
    data: bytes,
    stem: str,
    *,
    name: str | None,
    folder: Path,
    notes: Mapping[str, str],
) -> Saved | Refused:
    """A downloaded attachment checked (an image's format and size) and where it is to be
    written (``folder``/``stem``.ext, or ``stem``-``name`` for a file); ``write_attachment``
    writes it."""
    if kind == "image":
        refusal = check_image(data, notes)
        if refusal is not None:
            return Refused(refusal)
        file_name = f"{stem}.{image_extension(data)}"
    else:
        file_name = f"{stem}-{safe_name(name, 'file')}"
    return Saved(kind, folder / file_name, name or file_name, len(data))


def check_image(data: bytes, notes: Mapping[str, str]) -> str | None:
    """Why ``data`` cannot go to an agent as an image, or ``None``."""
    size = image_size(data)
    if size is None:
        return notes["not_image"]
    width, height = size
    if max(width, height) > IMAGE_EDGE:
        return notes["too_wide"].format(width=width, height=height, edge=IMAGE_EDGE)
    return None


_UNSAFE = re.compile(r"[^\w.\-]+")


def safe_name(name: str | None, fallback: str) -> str:
    """A file name that stays in its folder: path separators and odd characters replaced,
    at most 100 characters, never empty or a dot name."""
    cleaned = _UNSAFE.sub("_", (name or "").strip()).strip("._")[:100]
    return cleaned or fallback


def prompt_with(
    text: str, saved: Sequence[Saved], *, takes_images: bool, notes: Mapping[str, str]
) -> Prepared:
    """The agent's input: the person's text, the images as images (when the agent takes them)
    or as paths, and each file's name, size and path."""
    lines = [text.strip()] if text.strip() else []
    images: list[Path] = []
    for item in saved:
        if item.kind == "image" and takes_images:
            images.append(item.path)
        elif item.kind == "image":
            lines.append(notes["image_at"].format(path=item.path))
        else:
            lines.append(notes["file_at"].format(name=item.name, size=item.size, path=item.path))
    if not lines:
        lines.append(notes["image_prompt"])
    return Prepared("\n\n".join(lines), tuple(images))


def image_extension(data: bytes) -> str:
    for magic, extension in (
        (b"\x89PNG", "png"),
        (b"GIF8", "gif"),
        (b"BM", "bmp"),
        (b"RIFF", "webp"),
        (b"\xff\xd8", "jpg"),
    ):
        if data.startswith(magic):
            return extension
    return "bin"


def write_attachment(path: Path, data: bytes) -> None:
    """Written whole or not at all (a ``.part`` file renamed), its folder private."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = path.with_name(path.name + ".part")
    partial.write_bytes(data)
    partial.replace(path)


def attachments_folder(data_dir: Path, chat: str) -> Path:
    """Where one chat's attachments are kept: ``<data>/attachments/<chat>/``."""
    return data_dir / "attachments" / safe_name(chat, "chat")


def agent_capabilities(config: Config, agent: str | None) -> AgentCapabilities:
    """The capabilities ``agent``'s runtime declares (``None``: the profile's default agent);
    an unknown agent or runtime can do nothing. A session may refine them down (an ACP agent
    says whether it takes images); the engine then refuses with the reason."""
    from .._capabilities import AgentCapabilities  # noqa: PLC0415
    from .._plugins import PluginError, runtime_plugins  # noqa: PLC0415

    entry = config.agents.get(agent or config.defaults.agent)
    if entry is None:
        return AgentCapabilities()
    try:
        plugin = runtime_plugins().get(entry.kind)
    except PluginError:
        return AgentCapabilities()
    return plugin.capabilities if plugin is not None else AgentCapabilities()
