"""The proxy rule and the TLS context a call straight to httpcore takes, against httpx's own:
the rule over a table of proxy settings and URLs, the context under each of its variables."""

from __future__ import annotations

import ssl
from pathlib import Path

import certifi
import pytest

from robota.transports._net import proxied, proxy_settings, ssl_context, uses_proxy

from ..support.http_proxy import clear_proxy_variables

P = "http://proxy.test:3128"

TABLE: list[tuple[dict[str, str], str, bool]] = [
    # nothing set: direct
    ({}, "https://open.feishu.cn", False),
    ({}, "http://127.0.0.1:8080/api/", False),
    # a scheme's proxy, or all's
    ({"https": P}, "https://open.feishu.cn", True),
    ({"https": P}, "http://127.0.0.1:8080", False),
    ({"http": P}, "http://127.0.0.1:8080", True),
    ({"http": P}, "https://slack.com/api/", False),
    ({"all": P}, "https://slack.com/api/", True),
    ({"all": P}, "http://localhost:9", True),
    ({"https": ""}, "https://slack.com/api/", False),  # empty is unset
    ({"https": "proxy.test:3128"}, "https://slack.com", True),  # no scheme: http:// is meant
    ({"ftp": P}, "https://slack.com", False),
    # NO_PROXY: names, dots, IPs, localhost, ports, *
    ({"https": P, "no": "open.feishu.cn"}, "https://open.feishu.cn", False),
    ({"https": P, "no": "feishu.cn"}, "https://open.feishu.cn", False),
    ({"https": P, "no": "feishu.cn"}, "https://openfeishu.cn", True),
    ({"https": P, "no": ".feishu.cn"}, "https://open.feishu.cn", False),
    ({"https": P, "no": ".feishu.cn"}, "https://feishu.cn", True),  # urllib's would bypass
    ({"https": P, "no": "FEISHU.CN"}, "https://open.feishu.cn", False),
    ({"https": P, "no": "other.com, feishu.cn "}, "https://open.feishu.cn", False),
    ({"https": P, "no": "other.com"}, "https://open.feishu.cn", True),
    ({"all": P, "no": "127.0.0.1"}, "http://127.0.0.1:8080", False),
    ({"all": P, "no": "127.0.0.2"}, "http://127.0.0.1:8080", True),
    ({"all": P, "no": "127.0.0.0/8"}, "http://127.0.0.1:8080", True),  # no CIDR in httpx
    ({"all": P, "no": "::1"}, "http://[::1]:8080", False),
    ({"all": P, "no": "localhost"}, "http://localhost:8080", False),
    ({"all": P, "no": "LocalHost"}, "http://localhost:8080", False),
    ({"all": P, "no": "localhost"}, "http://127.0.0.1:8080", True),
    ({"all": P, "no": "slack.com:8443"}, "https://slack.com:8443/api/", False),
    ({"all": P, "no": "slack.com:8443"}, "https://slack.com/api/", True),
    ({"all": P, "no": "slack.com:443"}, "https://slack.com/api/", True),  # as httpx: no port
    ({"all": P, "no": "*"}, "https://slack.com", False),
    ({"all": P, "no": "other.com,*"}, "https://slack.com", False),  # urllib's would proxy
    ({"all": P, "no": "*.slack.com"}, "https://a.slack.com", True),  # httpx's "**.slack.com"
    ({"all": P, "no": ","}, "https://slack.com", True),
    # NO_PROXY entries written as mount keys
    ({"all": P, "no": "https://slack.com"}, "https://slack.com", False),
    ({"all": P, "no": "https://slack.com"}, "http://slack.com", True),
    ({"http": P, "no": "http://"}, "http://slack.com", False),  # replaces http's mount
    ({"https": P, "http": P, "no": "all://*slack.com"}, "https://a.slack.com", False),
]


@pytest.mark.parametrize(("proxies", "url", "expected"), TABLE)
def test_the_proxy_rule(proxies: dict[str, str], url: str, expected: bool) -> None:
    assert proxied(url, proxies) is expected


def only_proxy_variables(monkeypatch: pytest.MonkeyPatch, proxies: dict[str, str]) -> None:
    clear_proxy_variables(monkeypatch)
    monkeypatch.delenv("REQUEST_METHOD", raising=False)
    for scheme, value in proxies.items():
        monkeypatch.setenv(f"{scheme.upper()}_PROXY", value)


@pytest.mark.parametrize(("proxies", "url", "expected"), TABLE)
def test_the_proxy_rule_is_httpxs(
    monkeypatch: pytest.MonkeyPatch, proxies: dict[str, str], url: str, expected: bool
) -> None:
    """The oracle: the transport httpx's client picks for ``url`` (its private
    ``_transport_for_url``, read here only) under the same variables."""
    import httpx  # here, not at collection: the oracle of these tests alone

    only_proxy_variables(monkeypatch, proxies)
    with httpx.Client() as client:
        through = client._transport_for_url(httpx.URL(url)) is not client._transport
    assert through is expected
    assert uses_proxy(url) is expected


@pytest.mark.parametrize(
    "variables",
    [{}, {"HTTPS_PROXY": P}, {"https_proxy": P, "NO_PROXY": "x"}, {"ALL_PROXY": ""}, {"X": "1"}],
)
def test_the_settings_are_getproxies(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    from urllib.request import getproxies

    clear_proxy_variables(monkeypatch)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert proxy_settings() == getproxies()


def test_the_settings_on_macos_and_windows_are_always_asked() -> None:
    # No variable at all: Linux knows the answer, the others ask urllib (the system's).
    assert proxy_settings({}, "linux") == {}
    from urllib.request import getproxies

    assert proxy_settings({}, "darwin") == getproxies()


@pytest.mark.parametrize("url", ["http://[::1", "http://host:port/"])
def test_a_url_the_rule_cannot_read_is_left_to_httpx(url: str) -> None:
    assert proxied(url, {"all": P})
    assert not proxied(url, {})


def same_context(ours: ssl.SSLContext, theirs: ssl.SSLContext) -> None:
    assert ours.verify_mode == theirs.verify_mode == ssl.CERT_REQUIRED
    assert ours.check_hostname and theirs.check_hostname
    assert ours.options == theirs.options
    assert ours.minimum_version == theirs.minimum_version
    assert ours.cert_store_stats() == theirs.cert_store_stats()
    assert ours.get_ca_certs() == theirs.get_ca_certs()


def one_certificate(tmp_path: Path) -> Path:
    """A bundle of certifi's first certificate alone, so it cannot pass for the whole."""
    text = Path(certifi.where()).read_text(encoding="ascii")
    end = "-----END CERTIFICATE-----"
    first = text[text.index("-----BEGIN CERTIFICATE-----") : text.index(end) + len(end)]
    path = tmp_path / "one.pem"
    path.write_text(first + "\n", encoding="ascii")
    return path


@pytest.mark.parametrize("variable", [None, "SSL_CERT_FILE", "SSL_CERT_DIR", "both"])
def test_the_tls_context_is_httpxs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, variable: str | None
) -> None:
    import httpx

    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    bundle = one_certificate(tmp_path)
    if variable in ("SSL_CERT_FILE", "both"):
        monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    if variable in ("SSL_CERT_DIR", "both"):
        monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    ours = ssl_context()
    same_context(ours, httpx.create_ssl_context())
    loaded = ours.cert_store_stats()["x509_ca"]
    if variable in ("SSL_CERT_FILE", "both"):
        assert loaded == 1
    elif variable is None:
        assert loaded > 50  # certifi's bundle
    else:
        assert loaded == 0  # a directory is read at the handshake


def test_the_tls_context_reads_the_mapping_it_is_given(tmp_path: Path) -> None:
    bundle = one_certificate(tmp_path)
    assert ssl_context({"SSL_CERT_FILE": str(bundle)}).cert_store_stats()["x509_ca"] == 1


def test_a_transport_makes_one_tls_context_and_keeps_a_given_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from robota.transports._tls import OneTlsContext

    monkeypatch.setenv("SSL_CERT_FILE", str(one_certificate(tmp_path)))
    made = OneTlsContext()
    first = made.get()
    assert made.get() is first, "made once, then shared"
    assert first.cert_store_stats()["x509_ca"] == 1, "httpx's rule: SSL_CERT_FILE"
    given = ssl_context({})
    assert OneTlsContext(given).get() is given
