"""A REST call's request as bytes: method, URL, headers and body, built once; pure.

``_rest`` hands it to an httpcore connection pool (keep-alive) for the JSON calls, skipping
httpx's request and response models (about a quarter of a call's time on loopback). It is what
httpx's ``build_request`` makes of the same call (tests/transports/feishu/test_wire.py compares
them over a table of calls), in httpx's header order, but for two headers: ``Accept-Encoding``
is ``identity`` (nothing on this path decodes gzip; the answers are small JSON) and
``User-Agent`` names robota.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

__all__ = ["USER_AGENT", "WireRequest", "wire_request"]

USER_AGENT = b"robota"
_BODIED = ("POST", "PUT", "PATCH")
"""Methods httpx sends ``Content-Length: 0`` for when there is no body."""


@dataclass(frozen=True, slots=True)
class WireRequest:
    """One call as httpcore takes it (``pool.request(method, url, headers=, content=)``)."""

    method: bytes
    url: bytes
    target: bytes
    """The path and query alone: ``_rest`` names the origin apart (``httpcore.URL``), so no
    call's URL is parsed again (``urllib.parse`` keeps the last 128 it split, a burst's
    message ids among them, for the process's life)."""
    headers: list[tuple[bytes, bytes]]
    body: bytes


def wire_request(
    method: str,
    domain: str,
    path: str,
    *,
    json_body: object = None,
    params: Mapping[str, str] | None = None,
    token: str | None = None,
) -> WireRequest:
    """``method path`` on ``domain`` (``scheme://host[:port]``, no trailing slash), the body
    as httpx encodes ``json=`` (compact, UTF-8, no NaN), ``token`` as a bearer."""
    target = path
    if params:
        target += "?" + urlencode(list(params.items()))
    url = domain + target
    netloc = domain.partition("://")[2]
    headers = [
        (b"Host", netloc.encode("ascii")),
        (b"Accept", b"*/*"),
        (b"Accept-Encoding", b"identity"),
        (b"Connection", b"keep-alive"),
        (b"User-Agent", USER_AGENT),
    ]
    if token is not None:
        headers.append((b"Authorization", f"Bearer {token}".encode("ascii")))
    body = b""
    if json_body is not None:
        body = json.dumps(
            json_body, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        ).encode("utf-8")
        headers += [
            (b"Content-Length", str(len(body)).encode("ascii")),
            (b"Content-Type", b"application/json"),
        ]
    elif method in _BODIED:
        headers.insert(1, (b"Content-Length", b"0"))
    return WireRequest(
        method.encode("ascii"), url.encode("ascii"), target.encode("ascii"), headers, body
    )
