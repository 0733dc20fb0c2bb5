"""What a call straight to httpcore needs to behave as httpx would: the proxy rule and TLS.

The transports' host-side calls skip httpx (importing it loads its command-line client, and
with it click, pygments and rich when installed: about 8 MB and 150 ms of a host's start) and
go to an httpcore connection pool, httpx's own engine, with httpx's defaults. Two of those
defaults are decided here, standard library only:

* ``proxied``: whether httpx (``trust_env``, its default) would send a URL through a proxy.
  When it would, the caller keeps httpx for that client, so proxies, their authentication and
  their TLS stay httpx's. The variables are read as httpx reads them (``urllib.request``'s
  ``getproxies``: ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``, lower case
  first, and the system's settings on macOS and Windows), and ``NO_PROXY`` is matched by
  httpx's rules, not by ``urllib.request.proxy_bypass_environment``: the two differ where it
  matters (``NO_PROXY=.example.com`` lets httpx proxy ``example.com`` itself, which the
  standard library would send direct; ``*`` among other names turns httpx's proxies off).
  tests/transports/test_net.py compares this rule with httpx's own over a table.
* ``ssl_context``: httpx's ``create_ssl_context()`` (verify, ``trust_env``): certifi's bundle,
  or ``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, when set.
"""

from __future__ import annotations

import ipaddress
import os
import re
import ssl
import sys
from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = ["DEFAULT_PORTS", "proxied", "proxy_settings", "ssl_context", "uses_proxy"]

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}
"""httpx's: a URL on its scheme's port counts as having none (``URL.port`` is ``None``)."""

_Pattern = tuple[str, str, int | None]
"""A mount's scheme (``""``: any), host pattern (``""``: any) and port, as httpx splits it."""


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.split("/", maxsplit=1)[0])
    except ValueError:
        return False
    return True


def _mounts(proxies: Mapping[str, str]) -> dict[str, bool] | None:
    """httpx's ``get_environment_proxies``: mount key -> whether it proxies; ``None`` when
    ``NO_PROXY`` holds ``*`` (no proxy at all)."""
    mounts = {f"{scheme}://": True for scheme in ("http", "https", "all") if proxies.get(scheme)}
    for name in (part.strip() for part in proxies.get("no", "").split(",")):
        if name == "*":
            return None
        if not name:
            continue
        if "://" in name:
            mounts[name] = False
        elif _is_ip(name) and ":" in name.split("/", maxsplit=1)[0]:
            mounts[f"all://[{name}]"] = False
        elif _is_ip(name) or name.lower() == "localhost":
            mounts[f"all://{name}"] = False
        else:
            mounts[f"all://*{name}"] = False
    return mounts


def _pattern(key: str) -> _Pattern:
    """httpx's ``URLPattern`` of a mount key; ``ValueError`` for one httpx would refuse too."""
    parts = urlsplit(key)
    host = parts.hostname or ""
    return ("" if parts.scheme == "all" else parts.scheme, "" if host == "*" else host, parts.port)


def _matches(pattern: _Pattern, scheme: str, host: str, port: int | None) -> bool:
    want_scheme, want_host, want_port = pattern
    if want_scheme and want_scheme != scheme:
        return False
    if want_host.startswith("*."):
        if not re.fullmatch(r".+\." + re.escape(want_host[2:]), host):
            return False
    elif want_host.startswith("*"):
        if not re.fullmatch(r"(.+\.)?" + re.escape(want_host[1:]), host):
            return False
    elif want_host and want_host != host:
        return False
    return want_port is None or want_port == port


def proxied(url: str, proxies: Mapping[str, str]) -> bool:
    """Whether httpx, given ``proxies`` (``getproxies()``'s mapping: ``{"https": ..., "no":
    ...}``), would send a request for ``url`` through a proxy. A mount key or ``url`` it
    cannot parse counts as proxied: the caller then keeps httpx, which decides (or refuses)
    as it always did."""
    mounts = _mounts(proxies)
    if not mounts:
        return False
    try:
        target = urlsplit(url)
        scheme, host, port = target.scheme, target.hostname or "", target.port
        patterns = [(_pattern(key), proxy) for key, proxy in mounts.items()]
    except ValueError:
        return True
    if port is not None and DEFAULT_PORTS.get(scheme) == port:
        port = None
    # httpx tries the most specific mount first (a port, then the longer host, then the
    # longer scheme); ``sorted`` is stable, so equals keep their order, as in httpx.
    patterns.sort(key=lambda item: (item[0][2] is None, -len(item[0][1]), -len(item[0][0])))
    for pattern, proxy in patterns:
        if _matches(pattern, scheme, host, port):
            return proxy
    return False


def proxy_settings(
    environ: Mapping[str, str] = os.environ, platform: str = sys.platform
) -> Mapping[str, str]:
    """``urllib.request.getproxies()``, what httpx reads, without importing ``urllib.request``
    (its email and http.client, about 1.5 MB of a host) where it would find nothing: on Linux
    it reads only the variables named ``*_proxy`` in any case, so none means ``{}``. macOS and
    Windows also read the system's settings: there it is always asked."""
    if platform in ("darwin", "win32") or any(n.lower().endswith("_proxy") for n in environ):
        from urllib.request import getproxies  # noqa: PLC0415 (see above)

        return getproxies()
    return {}


def uses_proxy(url: str) -> bool:
    """``proxied`` with this process's settings (read now: one client, one decision)."""
    return proxied(url, proxy_settings())


def ssl_context(environ: Mapping[str, str] = os.environ) -> ssl.SSLContext:
    """httpx's default TLS context (``httpx.create_ssl_context()``): verified against
    ``SSL_CERT_FILE`` when set, else ``SSL_CERT_DIR`` when set, else certifi's bundle."""
    if environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=environ["SSL_CERT_FILE"])
    if environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=environ["SSL_CERT_DIR"])
    import certifi  # noqa: PLC0415 (httpx's dependency; read only when no variable says)

    return ssl.create_default_context(cafile=certifi.where())
