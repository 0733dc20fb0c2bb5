"""The attachment decisions, by tables (``robota.transports.feishu._media``): an image's size
from its header, what is refused, safe file names, and what the agent is given."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from robota.core.frontend import (
    IMAGE_EDGE,
    Saved,
    check_image,
    image_size,
    media_notes,
    prompt_with,
    safe_name,
)

from ...support.media import png

EN = media_notes("en")


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def webp_vp8x(width: int, height: int) -> bytes:
    body = b"VP8X" + struct.pack("<I", 10) + b"\x00" * 4
    body += (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", len(body) + 4) + b"WEBP" + body


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (png(4, 3), (4, 3)),
        (b"GIF89a" + struct.pack("<HH", 640, 480) + b"\x00" * 8, (640, 480)),
        (b"BM" + b"\x00" * 16 + struct.pack("<ii", 300, -200) + b"\x00" * 8, (300, 200)),
        (jpeg(1920, 1080), (1920, 1080)),
        (webp_vp8x(2500, 100), (2500, 100)),
        (b"not an image at all, however long it is", None),
        (b"\xff\xd8\x00", None),
        (b"", None),
    ],
)
def test_an_images_size_is_read_from_its_header(data: bytes, size: tuple[int, int] | None) -> None:
    assert image_size(data) == size


@pytest.mark.parametrize(
    ("data", "refusal"),
    [
        (png(IMAGE_EDGE, 10), None),
        (png(IMAGE_EDGE + 1, 10), f"{IMAGE_EDGE + 1}x10 pixels"),
        (jpeg(100, 2600), "100x2600"),
        (b"garbage", "Not an image format"),
    ],
)
def test_what_image_is_refused(data: bytes, refusal: str | None) -> None:
    got = check_image(data, EN)
    assert got == refusal if refusal is None else (got is not None and refusal in got)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("report.xlsx", "report.xlsx"),
        ("../../etc/passwd", "etc_passwd"),
        ("a b/c.csv", "a_b_c.csv"),
        ("..", "fallback"),
        (None, "fallback"),
        ("x" * 300, "x" * 100),
    ],
)
def test_file_names_stay_in_their_folder(name: str | None, expected: str) -> None:
    assert safe_name(name, "fallback") == expected


def test_what_the_agent_is_given() -> None:
    image = Saved("image", Path("/a/om-1.png"), "om-1.png", 10)
    table = Saved("file", Path("/a/om-2-t.csv"), "t.csv", 8)
    taking = prompt_with("look", [image, table], takes_images=True, notes=EN)
    assert taking.images == (Path("/a/om-1.png"),)
    assert taking.text == "look\n\n[file t.csv (8 bytes) saved at /a/om-2-t.csv]"
    blind = prompt_with("look", [image], takes_images=False, notes=EN)
    assert blind.images == () and blind.text == "look\n\n[image saved at /a/om-1.png]"
    only = prompt_with("", [image], takes_images=True, notes=media_notes("zh_CN"))
    assert only.text == "请查看这张图片" and only.images == (Path("/a/om-1.png"),)
