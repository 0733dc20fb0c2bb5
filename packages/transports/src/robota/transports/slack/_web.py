"""Slack's Web API under trio, on an httpcore pool; on httpx behind a proxy.

The calls take ``robota.transports._direct``'s ``AsyncHttp``: httpx's engine (httpcore) with
httpx's defaults, without importing httpx (about 8 MB of the host's start); httpx itself only
when its rules would send ``api_url`` through a proxy (``robota.transports._net``).

A thin shell over ``_policy``: ``POST {api_url}{method}`` with a JSON body and the token in the
``Authorization`` header; every call is bounded by ``timeout`` as a whole; HTTP 200 with
``ok: false`` raises ``ApiError`` naming Slack's ``error``; 429 holds every call of that method
back for ``Retry-After`` seconds (``RateGate``); 5xx and network errors back off. Progress
updates (``update_message``) are latest-state-wins: while one message's update waits on a
rate limit, a newer state replaces the waiting one instead of queueing behind it.

The token travels only in the header: nothing here logs a request, and Slack's ``error`` codes
are scrubbed of it before they reach an exception.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urljoin

import trio

from .._tls import OneTlsContext
from ._errors import ApiError, RateLimited, TooLarge
from ._policy import BACKOFF, Done, LatestWins, RateGate, Retry, decide

if TYPE_CHECKING:
    import ssl

    from .._direct import AsyncHttp, Reply

__all__ = ["DEFAULT_TIMEOUT", "BotIdentity", "WebApi"]

DEFAULT_TIMEOUT = 10.0
DOWNLOAD_TIMEOUT = 120.0
"""Seconds one shared file's download may take as a whole (50 MB on a slow link)."""
RATE_RETRIES = 10
"""Rate-limited attempts in a row one progress message's updates may make before failing."""

log = logging.getLogger("robota.transports.slack")


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """What ``auth.test`` says about the bot token."""

    user_id: str
    team_id: str
    bot_id: str


def _scrub(text: str, token: str) -> str:
    return text.replace(token, "***") if token else text


def _form_value(value: object) -> str:
    """A form field: JSON for what is not a string (``true``, a number, an object)."""
    return value if isinstance(value, str) else json.dumps(value)


def _parse(body: bytes) -> tuple[Mapping[str, Any] | None, bool, str | None]:
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        return None, False, "invalid_response (not JSON)"
    if not isinstance(parsed, Mapping):
        return None, False, "invalid_response (not a JSON object)"
    error = parsed.get("error")
    return parsed, parsed.get("ok") is True, error[:200] if isinstance(error, str) else None


class WebApi:
    """One token's Web API client; use as ``async with WebApi(...) as api:``."""

    def __init__(
        self,
        *,
        api_url: str,
        token: str,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = 4,
        backoff: tuple[float, ...] = BACKOFF,
        rate_retries: int = RATE_RETRIES,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        """``tls``: the TLS context to use (one per transport: each holds its certificates,
        about 1 MB), else one is made here (``robota.transports._net.ssl_context``)."""
        self.api_url = api_url if api_url.endswith("/") else api_url + "/"
        self._token = token
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.rate_retries = rate_retries
        self.gate = RateGate()
        self.updates: LatestWins[tuple[str, str], dict[str, Any]] = LatestWins()
        self._http: AsyncHttp | None = None
        self._tls = OneTlsContext(tls)
        self._proxied = False
        self._using = 0
        """Calls and downloads on their way (``went_quiet`` leaves a busy client alone)."""

    async def __aenter__(self) -> WebApi:
        from .._net import uses_proxy  # noqa: PLC0415 (lazy, see the facade)

        # Downloads stay on api_url's host (``_files.allowed_url``): one decision for all.
        self._proxied = uses_proxy(self.api_url)
        self._http = self._client()
        return self

    def _client(self) -> AsyncHttp:
        from .._direct import AsyncHttp  # noqa: PLC0415 (lazy, see the facade)

        return AsyncHttp(timeout=self.timeout, proxied=self._proxied, context=self._tls.get())

    async def went_quiet(self) -> None:
        """The chats went quiet: a client with nothing on its way is swapped for a fresh one.
        Its pooled connections would be dropped at their next use anyway (an idle one is
        kept 5 s, as httpx keeps it), and until then a burst's connections and their buffers
        would hold on to the memory the burst spread over."""
        if self._http is None or self._using:
            return
        old, self._http = self._http, self._client()
        await old.aclose()

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    # -- the methods a bridge needs ----------------------------------------------------------

    async def auth_test(self) -> BotIdentity:
        """Who the token is: the bot's user id above all (mentions are ``<@USER_ID>``)."""
        answer = await self.call("auth.test")
        ids = [answer.get(k) for k in ("user_id", "team_id", "bot_id")]
        if not isinstance(ids[0], str) or not ids[0]:
            raise ApiError("auth.test", status=200, error="no user_id in the answer")
        return BotIdentity(*(i if isinstance(i, str) else "" for i in ids))

    async def post_message(
        self,
        channel: str,
        *,
        text: str,
        blocks: Sequence[Mapping[str, Any]] | None = None,
        thread_ts: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        retries: int | None = None,
    ) -> str:
        """Post a message (in the thread of ``thread_ts``, with Slack's message ``metadata``:
        an ``event_type`` and its ``event_payload``); its ``ts``, the message's id.
        ``retries``: how often a call with no answer is made again (``0``: a caller that must
        not post twice asks first whether the message is there, ``messages``)."""
        body: dict[str, Any] = {"channel": channel, "text": text}
        if blocks is not None:
            body["blocks"] = list(blocks)
        if thread_ts is not None:
            body["thread_ts"] = thread_ts
        if metadata is not None:
            body["metadata"] = dict(metadata)
        answer = await self.call("chat.postMessage", body, retries=retries)
        ts = answer.get("ts")
        if not isinstance(ts, str) or not ts:
            raise ApiError("chat.postMessage", status=200, error="no ts in the answer")
        return ts

    async def messages(
        self,
        channel: str,
        thread_ts: str | None,
        *,
        oldest: float | None = None,
        limit: int = 200,
        pages: int = 5,
    ) -> list[Mapping[str, Any]]:
        """The messages of ``thread_ts``'s thread (``conversations.replies``, oldest first), or
        the channel's latest (``conversations.history``, newest first), with their metadata;
        only those after ``oldest`` (epoch seconds; Slack still gives a thread's parent) and
        at most ``pages`` pages of ``limit``."""
        method = "conversations.replies" if thread_ts is not None else "conversations.history"
        body: dict[str, Any] = {"channel": channel, "limit": limit, "include_all_metadata": True}
        if thread_ts is not None:
            body["ts"] = thread_ts
        if oldest is not None:
            body["oldest"] = f"{max(oldest, 0.0):.6f}"
        found: list[Mapping[str, Any]] = []
        for _ in range(pages):
            answer = await self.call(method, body, form=True)
            page = answer.get("messages")
            if isinstance(page, list):
                found.extend(m for m in page if isinstance(m, Mapping))
            meta = answer.get("response_metadata")
            cursor = meta.get("next_cursor") if isinstance(meta, Mapping) else None
            if not answer.get("has_more") or not isinstance(cursor, str) or not cursor:
                break
            body["cursor"] = cursor
        return found

    async def update_message(
        self,
        channel: str,
        ts: str,
        *,
        text: str,
        blocks: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        """Replace message ``ts``'s content, latest state wins: while an earlier update of
        this message waits on a rate limit, this state replaces the waiting one and this call
        returns at once (the earlier caller sends it)."""
        key = (channel, ts)
        body: dict[str, Any] = {"channel": channel, "ts": ts, "text": text}
        if blocks is not None:
            body["blocks"] = list(blocks)
        if not self.updates.offer(key, body):
            return
        limited = 0
        try:
            while (state := self.updates.take(key)) is not None:
                try:
                    await self.call("chat.update", state, wait_rate_limits=False)
                except RateLimited:
                    limited += 1
                    self.updates.put_back(key, state)
                    if limited > self.rate_retries:
                        raise
                else:
                    limited = 0
        finally:
            self.updates.release(key)

    async def add_reaction(self, channel: str, timestamp: str, name: str) -> None:
        """React with ``name`` (``eyes``); already having reacted is success."""
        await self._reaction("reactions.add", channel, timestamp, name, "already_reacted")

    async def remove_reaction(self, channel: str, timestamp: str, name: str) -> None:
        """Take reaction ``name`` back; not having it is success."""
        await self._reaction("reactions.remove", channel, timestamp, name, "no_reaction")

    async def _reaction(
        self, method: str, channel: str, timestamp: str, name: str, harmless: str
    ) -> None:
        try:
            await self.call(method, {"channel": channel, "timestamp": timestamp, "name": name})
        except ApiError as error:
            if error.error != harmless:
                raise

    async def download(self, url: str, *, limit: int) -> bytes:
        """A shared file's bytes (its ``url_private_download``), the token in the header, read
        as they stream in: ``TooLarge`` past ``limit``. A redirect is followed only on the
        configured Slack host (``_files.allowed_url``), at most ``MAX_REDIRECTS`` times; a
        sign-in page (what Slack answers a download without a valid token) is an
        ``ApiError``. Not retried: a person can send it again."""
        from .._direct import Unanswered  # noqa: PLC0415 (lazy, see the facade)
        from ._files import MAX_REDIRECTS, allowed_url  # noqa: PLC0415 (no cycle at import)

        if self._http is None:
            raise RuntimeError("WebApi used outside `async with`")
        name = "files.download"
        headers = {"Authorization": f"Bearer {self._token}"}
        with trio.move_on_after(DOWNLOAD_TIMEOUT) as bounded:
            for _ in range(MAX_REDIRECTS + 1):
                if not allowed_url(url, self.api_url):
                    raise ApiError(name, status=0, error="the file is not on the Slack host")
                self._using += 1
                try:
                    async with self._http.stream("GET", url, headers=headers) as response:
                        status = response.status
                        if status in (301, 302, 303, 307, 308):
                            url = urljoin(response.url, response.headers.get("location", ""))
                            continue
                        kind = response.headers.get("content-type", "")
                        if status != 200:
                            raise ApiError(name, status=status, error=f"HTTP {status}")
                        if kind.startswith("text/html"):
                            raise ApiError(
                                name, status=status, error="Slack answered with its sign-in page"
                            )
                        declared = response.headers.get("content-length", "")
                        if declared.isdigit() and int(declared) > limit:
                            raise TooLarge(int(declared), limit)
                        chunks, size = [], 0
                        async for chunk in response.chunks:
                            size += len(chunk)
                            if size > limit:
                                raise TooLarge(size, limit)
                            chunks.append(chunk)
                        return b"".join(chunks)
                except Unanswered as failure:
                    raise ApiError(name, status=0, error=failure.name) from None
                finally:
                    self._using -= 1
            raise ApiError(name, status=0, error=f"more than {MAX_REDIRECTS} redirects")
        assert bounded.cancelled_caught
        raise ApiError(name, status=0, error=f"no answer within {DOWNLOAD_TIMEOUT:g} s")

    async def _post(
        self, url: str, headers: dict[str, str], body: Mapping[str, Any] | None, *, form: bool
    ) -> Reply:
        from .._direct import json_bytes  # noqa: PLC0415 (lazy, see the facade)

        assert self._http is not None
        self._using += 1
        try:
            if form:
                fields = urlencode({k: _form_value(v) for k, v in (body or {}).items()})
                content = fields.encode()
            else:  # as httpx sends ``json=``
                headers = {**headers, "Content-Type": "application/json"}
                content = json_bytes(body or {})
            return await self._http.request("POST", url, headers=headers, content=content)
        finally:
            self._using -= 1

    # -- calls -----------------------------------------------------------------------------

    async def call(
        self,
        method: str,
        body: Mapping[str, Any] | None = None,
        *,
        form: bool = False,
        retries: int | None = None,
        wait_rate_limits: bool = True,
    ) -> Mapping[str, Any]:
        """The whole answer object of ``method`` (``ok: true``), or ``ApiError``.

        ``body`` goes as JSON; ``form`` sends it form-encoded instead (what
        ``apps.connections.open`` and the read methods take). ``wait_rate_limits`` off raises
        ``RateLimited`` on a 429 instead of waiting (the gate still holds the method back for
        later calls)."""
        from .._direct import Unanswered  # noqa: PLC0415 (lazy, see the facade)

        if self._http is None:
            raise RuntimeError("WebApi used outside `async with`")
        url = self.api_url + method
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else {}
        if form:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        limit = self.retries if retries is None else retries
        retried = 0
        while True:
            await trio.sleep_until(self.gate.ready_at(method, trio.current_time()))
            status: int | None = None
            parsed: Mapping[str, Any] | None = None
            ok, retry_after = False, None
            error: str | None = "no answer"
            # One bound for the whole call: the client's timeout is per phase (connect, read ...).
            with trio.move_on_after(self.timeout) as bounded:
                try:
                    response = await self._post(url, headers, body, form=form)
                except Unanswered as failure:
                    error = f"no answer ({failure.name})"
                else:
                    status = response.status
                    parsed, ok, error = _parse(response.content)
                    retry_after = response.headers.get("retry-after")
            if bounded.cancelled_caught:
                error = f"no answer within {self.timeout:g} s"
            outcome = decide(
                status,
                ok,
                error,
                retry_after=retry_after,
                retried=retried,
                retries=limit,
                backoff=self.backoff,
            )
            if isinstance(outcome, Done):
                assert parsed is not None
                return parsed
            named = _scrub(error or f"HTTP {status}", self._token)
            if isinstance(outcome, Retry):
                if outcome.rate_limited:
                    self.gate.hold(method, trio.current_time() + outcome.after)
                    if not wait_rate_limits:
                        raise RateLimited(
                            method, status=status or 0, error=named, after=outcome.after
                        )
                    log.info(
                        "slack call rate limited",
                        extra={"method": method, "after": outcome.after},
                    )
                else:
                    log.info(
                        "slack call retried",
                        extra={"method": method, "status": status, "after": outcome.after},
                    )
                    await trio.sleep(outcome.after)
                retried += 1
                continue
            raise ApiError(method, status=status or 0, error=named)
