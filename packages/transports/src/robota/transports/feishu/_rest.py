"""The Open Platform's REST API under trio, on an httpcore pool; on httpx behind a proxy.

The calls (reactions, cards sent and PATCHed, messages, the token, the downloads) go straight
to an httpcore keep-alive connection pool, their bytes built by ``_wire`` (httpx's request and
response models cost about a quarter of a call on loopback, where an ``OnIt`` is waited for,
and importing httpx costs the host about 8 MB: ``robota.transports._direct``). When httpx's own
rules (``trust_env``: ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``...) would send ``domain``
through a proxy (``robota.transports._net.uses_proxy``), every call goes on httpx instead, as
it always did: the pool is made only when httpx would reach ``domain`` directly.

A thin shell over ``_policy``: every call has a timeout; the tenant token is fetched on first
use, cached, refreshed before it expires and once when the platform calls it invalid; rate
limits wait what ``x-ogw-ratelimit-reset`` says; 230020, 5xx and network errors back off; the
PATCH of one message waits for its slot (5 per second). ``domain`` is the one base URL
(``https://open.feishu.cn``, Lark's, or a local test server).

The app secret travels only in the token request's body: it is never logged (nothing here logs
a body) and never in an exception's text (the platform's messages are scrubbed of it too).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import trio

from .._tls import OneTlsContext
from ._errors import ApiError, TooLarge
from ._policy import BACKOFF, Done, PatchLimiter, RefreshToken, Retry, TokenCache, decide
from ._wire import wire_request

if TYPE_CHECKING:
    import ssl

    import httpcore
    import httpx

    from .._direct import Streamed

__all__ = ["DEFAULT_TIMEOUT", "TOKEN_PATH", "RestClient", "scrub"]

DEFAULT_TIMEOUT = 10.0
TOKEN_PATH = "/open-apis/auth/v3/tenant_access_token/internal"
_RATE_RESET = "x-ogw-ratelimit-reset"

log = logging.getLogger("robota.transports.feishu")


def scrub(text: str, secret: str) -> str:
    """``text`` with every occurrence of ``secret`` masked."""
    return text.replace(secret, "***") if secret else text


def _code_and_msg(body: bytes) -> tuple[Mapping[str, Any] | None, int | None, str]:
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        return None, None, "the answer is not JSON"
    if not isinstance(parsed, Mapping):
        return None, None, "the answer is not a JSON object"
    code = parsed.get("code")
    msg = parsed.get("msg")
    return (
        parsed,
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        msg if isinstance(msg, str) else "",
    )


class RestClient:
    """One app's REST client; use as ``async with RestClient(...) as rest:``."""

    def __init__(
        self,
        *,
        domain: str,
        app_id: str,
        app_secret: str,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 4,
        backoff: tuple[float, ...] = BACKOFF,
        token_margin: float = 600.0,
        patch_limiter: PatchLimiter | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """``tls``: the TLS context to use (one per transport: each holds its certificates,
        about 1 MB), else one is made here (``robota.transports._net.ssl_context``)."""
        self.domain = domain.rstrip("/")
        self.app_id = app_id
        self._secret = app_secret
        self.timeout = timeout
        self._timeouts = dict.fromkeys(("connect", "read", "write", "pool"), timeout)
        self.retries = retries
        self.backoff = backoff
        self._tokens = TokenCache(token_margin)
        self._token_lock = trio.Lock()
        self.patch_limiter = patch_limiter or PatchLimiter()
        self._http: httpx.AsyncClient | None = None
        self._pool: httpcore.AsyncConnectionPool | None = None
        """The JSON calls' connections; ``None`` when a proxy applies (see the docstring)."""
        self._tls = OneTlsContext(tls)
        self._origin: tuple[bytes, bytes, int | None] = (b"", b"", None)
        """``domain`` as ``httpcore.URL``'s scheme, host and port, split once."""

    async def __aenter__(self) -> RestClient:
        from .._net import uses_proxy  # noqa: PLC0415 (lazy, see the facade)

        if uses_proxy(self.domain):
            import httpx  # noqa: PLC0415 (only behind a proxy)

            self._http = httpx.AsyncClient(base_url=self.domain, timeout=self.timeout)
            return self
        import httpcore  # noqa: PLC0415

        url = httpcore.URL(self.domain)
        self._origin = (url.scheme, url.host, url.port)
        self._pool = self._new_pool()
        return self

    def _new_pool(self) -> httpcore.AsyncConnectionPool:
        from .._direct import async_pool  # noqa: PLC0415 (lazy, see the facade)

        return async_pool(self._tls.get())  # httpx's TLS defaults, one for every pool

    def _entered(self) -> None:
        if self._pool is None and self._http is None:
            raise RuntimeError("RestClient used outside `async with`")

    @property
    def pooled(self) -> int:
        """The JSON calls' connections the pool holds now (open, idle or busy)."""
        return len(self._pool.connections) if self._pool is not None else 0

    async def went_quiet(self) -> None:
        """The chats went quiet: what only a busy client needs goes. The PATCH windows that
        closed are forgotten, and a pool whose connections all sit idle is swapped for an
        empty one: each would be dropped at its next use anyway (idle for longer than
        ``KEEPALIVE_EXPIRY``), and until then a burst's 20 connections and their buffers
        would hold on to the memory the burst spread over."""
        self.patch_limiter.forget_past(trio.current_time())
        pool = self._pool
        if pool is None or not all(c.is_idle() or c.is_closed() for c in pool.connections):
            return  # a call is on its way (or waits for a connection): another time
        self._pool = self._new_pool()
        await pool.aclose()

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._pool is not None:
            await self._pool.aclose()
            self._pool = None
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    # -- the token -------------------------------------------------------------------------

    async def tenant_token(self) -> str:
        """A valid tenant access token, fetched when the cached one is due for a refresh."""
        token = self._tokens.valid(trio.current_time())
        if token is not None:
            return token
        async with self._token_lock:  # one fetch for all the callers waiting on it
            token = self._tokens.valid(trio.current_time())
            if token is not None:
                return token
            answer = await self.call(
                "POST",
                TOKEN_PATH,
                json_body={"app_id": self.app_id, "app_secret": self._secret},
                authorized=False,
            )
            token, expire = answer.get("tenant_access_token"), answer.get("expire")
            if not isinstance(token, str) or not token or not isinstance(expire, int | float):
                raise ApiError(
                    f"POST {TOKEN_PATH}", status=200, code=0, msg="no tenant_access_token"
                )
            self._tokens.store(token, float(expire), trio.current_time())
            log.info("feishu tenant token refreshed", extra={"expire": expire})
            return token

    # -- calls -----------------------------------------------------------------------------

    async def patch_message(self, message_id: str, content: str) -> None:
        """Replace an interactive message's card (``content``: the card JSON as a string),
        no sooner than this message's PATCH slot (5 per second)."""
        await self.tenant_token()  # a token fetch must not eat into the booked slot
        at = self.patch_limiter.reserve(message_id, trio.current_time())
        await trio.sleep_until(at)
        await self.call(
            "PATCH", f"/open-apis/im/v1/messages/{message_id}", json_body={"content": content}
        )

    async def bot_info(self) -> Mapping[str, Any]:
        """``GET /open-apis/bot/v3/info``'s ``bot`` object (its ``open_id`` above all)."""
        answer = await self.call("GET", "/open-apis/bot/v3/info")
        bot = answer.get("bot")
        if not isinstance(bot, Mapping):
            raise ApiError("GET /open-apis/bot/v3/info", status=200, code=0, msg="no bot object")
        return bot

    async def download(
        self, path: str, *, params: Mapping[str, str], limit: int
    ) -> tuple[bytes, str]:
        """A binary resource (a message's image or file) and its content type, read as it
        streams in: ``TooLarge`` as soon as it passes ``limit`` bytes (declared or read), the
        platform's JSON error as ``ApiError``. A refused token is refreshed once; nothing else
        is retried (a person can send it again)."""
        token = await self.tenant_token()
        try:
            return await self._download(path, params, limit, token)
        except ApiError as error:
            refresh = decide(error.status, error.code, retries=0)
            if not isinstance(refresh, RefreshToken):
                raise
            self._tokens.invalidate(token)
            return await self._download(path, params, limit, await self.tenant_token())

    async def _download(
        self, path: str, params: Mapping[str, str], limit: int, token: str
    ) -> tuple[bytes, str]:
        from .._direct import Unanswered  # noqa: PLC0415 (lazy, see the facade)

        self._entered()
        name = f"GET {path}"
        try:
            async with self._stream(path, params, token) as response:
                kind = response.headers.get("content-type", "")
                if response.status != 200 or kind.startswith("application/json"):
                    body = b"".join([chunk async for chunk in response.chunks])
                    _, code, msg = _code_and_msg(body[:65536])
                    status = response.status
                    raise ApiError(name, status=status, code=code, msg=scrub(msg, self._secret))
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise TooLarge(int(declared), limit)
                chunks, size = [], 0
                async for chunk in response.chunks:
                    size += len(chunk)
                    if size > limit:
                        raise TooLarge(size, limit)
                    chunks.append(chunk)
        except Unanswered as error:
            raise ApiError(name, status=0, code=None, msg=error.name) from None
        return b"".join(chunks), kind

    @asynccontextmanager
    async def _stream(
        self, path: str, params: Mapping[str, str], token: str
    ) -> AsyncIterator[Streamed]:
        """A GET's answer as it streams in, from the pool or (behind a proxy) httpx."""
        import httpcore  # noqa: PLC0415 (lazy, see the facade)

        from .._direct import (  # noqa: PLC0415
            NETWORK_ERRORS,
            Streamed,
            Unanswered,
            httpx_streamed,
            named_headers,
            timeouts,
        )

        if self._pool is None:
            assert self._http is not None
            headers = {"Authorization": f"Bearer {token}"}
            request = {"params": params, "headers": headers, "timeout": self.timeout}
            async with httpx_streamed(self._http, "GET", path, **request) as streamed:
                yield streamed
            return
        wire = wire_request("GET", self.domain, path, params=params, token=token)
        scheme, host, port = self._origin
        try:
            async with self._pool.stream(
                wire.method,
                httpcore.URL(scheme=scheme, host=host, port=port, target=wire.target),
                headers=wire.headers,
                extensions={"timeout": timeouts(self.timeout)},
            ) as answer:
                named = named_headers(answer.headers)
                url = wire.url.decode("ascii")
                yield Streamed(answer.status, named, answer.aiter_stream(), url)
        except NETWORK_ERRORS as error:
            raise Unanswered(type(error).__name__) from None

    async def call(
        self,
        method: str,
        path: str,
        *,
        json_body: object = None,
        params: Mapping[str, str] | None = None,
        retries: int | None = None,
        authorized: bool = True,
    ) -> Mapping[str, Any]:
        """The whole answer object of a call (``code`` 0), or ``ApiError``; ``authorized``
        sends the tenant token (refreshed once if refused)."""
        self._entered()
        name = f"{method} {path}"
        retried, refreshed = 0, False
        limit = self.retries if retries is None else retries
        while True:
            token = await self.tenant_token() if authorized else ""
            status: int | None
            sent = await self._send(method, path, json_body, params, token if authorized else None)
            if isinstance(sent, str):
                status, parsed, code, msg = None, None, None, sent
                rate_reset = None
            else:
                status, content, rate_reset = sent
                parsed, code, msg = _code_and_msg(content)
            outcome = decide(
                status,
                code,
                rate_reset=rate_reset,
                retried=retried,
                retries=limit,
                refreshed=refreshed or not authorized,
                backoff=self.backoff,
            )
            if isinstance(outcome, Done):
                assert parsed is not None
                return parsed
            if isinstance(outcome, RefreshToken):
                refreshed = True
                self._tokens.invalidate(token)
                log.info(
                    "feishu token refused, refreshing once", extra={"call": name, "code": code}
                )
                continue
            if isinstance(outcome, Retry):
                retried += 1
                log.info(
                    "feishu call retried",
                    extra={"call": name, "status": status, "code": code, "after": outcome.after},
                )
                await trio.sleep(outcome.after)
                continue
            raise ApiError(name, status=status or 0, code=code, msg=scrub(msg, self._secret))

    async def _send(
        self,
        method: str,
        path: str,
        json_body: object,
        params: Mapping[str, str] | None,
        token: str | None,
    ) -> tuple[int, bytes, str | None] | str:
        """One attempt: the status, the body and ``x-ogw-ratelimit-reset``, or the name of
        the network error (httpcore's and httpx's share their names)."""
        import httpcore  # noqa: PLC0415 (lazy, see the facade)

        from .._direct import NETWORK_ERRORS  # noqa: PLC0415

        if self._pool is None:
            import httpx  # noqa: PLC0415 (only behind a proxy)

            assert self._http is not None
            headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
            try:
                response = await self._http.request(
                    method, path, json=json_body, params=params, headers=headers
                )
            except httpx.HTTPError as error:
                return type(error).__name__
            return response.status_code, response.content, response.headers.get(_RATE_RESET)
        wire = wire_request(
            method, self.domain, path, json_body=json_body, params=params, token=token
        )
        try:
            scheme, host, port = self._origin
            answer = await self._pool.request(
                wire.method,
                httpcore.URL(scheme=scheme, host=host, port=port, target=wire.target),
                headers=wire.headers,
                content=wire.body,
                extensions={"timeout": self._timeouts},
            )
        except NETWORK_ERRORS as error:  # what httpx maps to its HTTPError
            return type(error).__name__
        name = _RATE_RESET.encode()
        reset = next((v.decode("latin-1") for k, v in answer.headers if k.lower() == name), None)
        return answer.status, answer.content, reset
