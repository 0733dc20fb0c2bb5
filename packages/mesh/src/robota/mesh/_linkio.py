"""The links' trio shell: TLS 1.3 and trio-websocket around the sans-IO parts.

``Links`` holds this device's links, one per peer (``_link.settle``), accepting (``accept``,
``serve``: pending handshakes bounded) and dialling (``dial``, ``keep_dialling``: redials with
``_link.redial_delay``). A connection first completes TLS with contexts that trust only the
link certificates of devices the current lists admit (``_linkcert``); the peer is checked once
more (and, for a dial, that it is the device dialled) before the WebSocket opens, so a
stranger, a revoked device or a relay never reaches a frame. Each link then runs its
``LinkGossip``: newer lists are verified by ``LinkTrust`` and passed on to the other links; a
revocation closes the revoked device's link at once. A link silent for three ping intervals
(WebSocket pings every ``ping_every``, ``PING_EVERY`` unless a test asks for less) is closed and
redialled. Every refused connection is logged with its reason from the closed set
(``handshake_refusal``) and, when accepted, the address it came from.

``serve_pairing`` and ``join`` run one pairing (``_pairing``) over a WebSocket on a TLS channel
neither side can check yet; the SPAKE2 arithmetic runs in a worker thread. A listener serves
pairing on its own port while a window is open (``Links.open_pairing``). Every connection
starts with an 8-byte preamble before TLS (``LINK_PREAMBLE`` or ``PAIR_PREAMBLE``: no secret,
only which TLS context to answer with, since a server context's certificate demand cannot be
changed once its handshake began): a pairing connection meets the pairing context (which asks
for no certificate) only while a window is open; every other one meets the links'.
"""

from __future__ import annotations

import contextlib
import logging
import random
import secrets
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from trio_websocket import (
    ConnectionClosed,
    WebSocketConnection,
    wrap_client_stream,
    wrap_server_stream,
)

from ._errors import Refused
from ._frames import CHANNEL_NONCE, MAX_FRAME, BadFrame, Channel, Frame, decode, encode
from ._grant import channel_fingerprint
from ._handoff_frames import HandoffFrame
from ._identity import DeviceId
from ._link import (
    PING_EVERY,
    SILENT_AFTER,
    Adopt,
    Bind,
    Close,
    Deliver,
    DeliverHandoff,
    Effect,
    Learn,
    LinkGossip,
    Send,
    Seqs,
    redial_delay,
    settle,
)
from ._linkcert import (
    admit_peer,
    certificate_device,
    client_context,
    handshake_refusal,
    link_certificate,
    pairing_context,
)
from ._linkcert import server_context as _server_context
from ._offers import OfferFrame
from ._pairing import Fail, Joiner, Pairer, PairingFailed, PairingWindow, PairMessage
from ._talk import TalkFrame
from ._trust import LinkTrust

__all__ = ["HANDSHAKE_TIMEOUT", "MAX_PENDING", "LinkInfo", "Links", "join", "serve_pairing"]

logger = logging.getLogger("robota.mesh")

HANDSHAKE_TIMEOUT = 10.0
MAX_PENDING = 16
"""Handshakes a listener runs at once; more connections wait in the kernel's backlog."""
LINK_PATH = "/robota-mesh/1/link"
PAIR_PATH = "/robota-mesh/1/pair"
LINK_PREAMBLE = b"RMESH1L\n"
PAIR_PREAMBLE = b"RMESH1P\n"

Decide = Callable[[str, DeviceId], Awaitable[bool]]
Bundle = Callable[[str, bytes], bytes]


@dataclass
class LinkInfo:
    """One peer's link as ``mesh status`` lists it."""

    device: DeviceId
    name: str
    state: Literal["connected", "connecting", "down"]
    since: float
    dialled_by_me: bool = False
    channel: bytes | None = field(default=None, repr=False)
    """This connection's channel fingerprint, once both sides' ``Channel`` nonces are known
    (``_grant.channel_fingerprint``): what a handoff's grant sent on it is bound to."""
    _nonce: bytes = field(default=b"", repr=False)
    _certs: tuple[bytes, bytes] = field(default=(b"", b""), repr=False)
    """Both link certificates, the dialler's first."""
    _cancel: trio.CancelScope | None = field(default=None, repr=False)
    _gossip: LinkGossip | None = field(default=None, repr=False)
    _ws: WebSocketConnection | None = field(default=None, repr=False)


class Links:
    """This device's links (on one trio loop)."""

    def __init__(
        self,
        trust: LinkTrust,
        *,
        clock: Callable[[], float] = time.time,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        ping_every: float = PING_EVERY,
    ) -> None:
        self.trust = trust
        self.clock = clock
        self.handshake_timeout = handshake_timeout
        self.ping_every = ping_every
        self.silent_after = ping_every * (SILENT_AFTER / PING_EVERY)
        """A link that answered no ping for this long is dead (three ping intervals)."""
        self.links: dict[DeviceId, LinkInfo] = {}
        self._pending = trio.Semaphore(MAX_PENDING)
        self._pairing: tuple[PairingWindow, Decide, Bundle, ssl.SSLContext] | None = None
        self.paired: list[tuple[str, bytes]] = []
        """The devices paired through this listener: name and link certificate."""
        self.on_talk: Callable[[str, TalkFrame | OfferFrame], Awaitable[None]] = _ignore
        """Given each conversation's or offer's frame a link delivers, with the device its
        handshake proved (the host's conversations and offers); the link reads its next frame
        once it returned, so a file's chunks come no faster than they are written."""
        self.on_handoff: Callable[[str, bytes, HandoffFrame], Awaitable[None]] = _ignore_handoff
        """Given each session handoff's frame a link delivers, with the device its handshake
        proved and the channel fingerprint of the connection it came on (a grant must be
        bound to it); awaited like ``on_talk``."""
        self.on_bound: Callable[[str], Awaitable[None]] = _ignore_bound
        """Told each time a link to a device has its channel (a new connection, so the host's
        handoffs send again what that device may have missed)."""

    def open_pairing(self, window: PairingWindow, decide: Decide, bundle: Bundle) -> None:
        """Serve one pairing window on this listener until ``close_pairing``."""
        context = pairing_context(self.trust.key, server_side=True)
        self._pairing = (window, decide, bundle, context)

    def close_pairing(self) -> None:
        self._pairing = None

    # -- accepting and dialling -------------------------------------------------------------

    async def serve(
        self, host: str, port: int, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Accept links on ``host:port``; reports the bound port."""
        listeners = await trio.open_tcp_listeners(port, host=host)
        task_status.started(listeners[0].socket.getsockname()[1])
        async with trio.open_nursery() as nursery:
            for listener in listeners:
                nursery.start_soon(self._accept_loop, listener, nursery)

    async def _accept_loop(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        async with listener:
            while True:
                await self._pending.acquire()  # a flood waits here, not in the host's memory
                stream = await listener.accept()
                nursery.start_soon(self.accept, stream)

    async def accept(self, stream: trio.SocketStream) -> None:
        """One inbound connection, to its end."""
        released = False
        try:
            preamble = b""
            with trio.move_on_after(self.handshake_timeout):
                preamble = await _read_exactly(stream, len(LINK_PREAMBLE))
            pairing = self._pairing
            if preamble == PAIR_PREAMBLE and pairing is not None:
                window, decide, bundle, context = pairing
                tls = trio.SSLStream(stream, context, server_side=True)
                try:
                    with trio.fail_after(self.handshake_timeout):
                        await tls.do_handshake()
                except (trio.TooSlowError, trio.BrokenResourceError):
                    return
                self._pending.release()
                released = True
                with contextlib.suppress(PairingFailed):
                    self.paired.append(
                        await _pair_over(tls, window, self.trust.key, decide, bundle)
                    )
                return
            if preamble != LINK_PREAMBLE:
                return
            context = _server_context(self.trust.key, self.trust.trusted())
            tls = trio.SSLStream(stream, context, server_side=True)
            proven = await self._handshake(tls, expected=None)
            self._pending.release()
            released = True
            if isinstance(proven, Refused):
                logger.info("mesh: refused a connection from %s: %s", _source(stream), proven)
            else:
                peer, der = proven
                async with trio.open_nursery() as nursery:
                    request = await wrap_server_stream(nursery, tls, max_message_size=MAX_FRAME)
                    if request.path != LINK_PATH:
                        await request.reject(404)
                        return
                    ws = await request.accept()
                    certs = (der, self.trust.certificate)
                    await self._run(ws, peer, certs, dialled_by_me=False)
                    nursery.cancel_scope.cancel()
        finally:
            if not released:
                self._pending.release()
            await trio.aclose_forcefully(stream)

    async def dial(self, host: str, port: int, device: DeviceId) -> None:
        """One dial to ``device`` at ``host:port``, to the link's end; raises ``OSError`` (or
        ``Refused``) when it does not get through."""
        stream = await trio.open_tcp_stream(host, port)
        try:
            await stream.send_all(LINK_PREAMBLE)
            tls = trio.SSLStream(stream, client_context(self.trust.key, self.trust.trusted()))
            proven = await self._handshake(tls, expected=device)
            if isinstance(proven, Refused):
                raise proven
            peer, der = proven
            opened = False
            async with trio.open_nursery() as nursery:
                # TLS 1.3: the listener judges this side's certificate after this side's
                # handshake ended; a refusal shows as a WebSocket that never opens.
                with trio.move_on_after(self.handshake_timeout):
                    ws = await wrap_client_stream(
                        nursery, tls, host, LINK_PATH, max_message_size=MAX_FRAME
                    )
                    opened = True
                if opened:
                    await self._run(ws, peer, (self.trust.certificate, der), dialled_by_me=True)
                nursery.cancel_scope.cancel()
            if not opened:
                raise Refused("not-in-roster", f"device {device} did not accept this device")
        finally:
            await trio.aclose_forcefully(stream)

    async def keep_dialling(self, host: str, port: int, device: DeviceId) -> None:
        """Dial ``device`` whenever it has no link, backing off between failures."""
        attempt = 0
        while self.trust.admits(device):
            if device in self.links and self.links[device].state == "connected":
                await trio.sleep(self.ping_every)
                continue
            started = self.clock()
            try:
                await self.dial(host, port, device)
            except (OSError, Refused, trio.BrokenResourceError, ConnectionClosed) as error:
                logger.info("mesh: dialling %s at %s:%d failed: %s", device, host, port, error)
            attempt = 0 if self.clock() - started > self.silent_after else attempt + 1
            await trio.sleep(redial_delay(attempt, random.random()))

    async def _handshake(
        self, tls: trio.SSLStream[trio.SocketStream], *, expected: DeviceId | None
    ) -> tuple[DeviceId, bytes] | Refused:
        """TLS, then the peer checked against the lists; the proven device and its link
        certificate, or why not."""
        try:
            with trio.fail_after(self.handshake_timeout):
                await tls.do_handshake()
            der = tls.getpeercert(binary_form=True)
            cert = admit_peer(
                der,
                self.trust.roster,
                self.trust.revocations,
                expected=expected,
            )
        except trio.TooSlowError:
            return Refused("malformed", f"no TLS handshake within {self.handshake_timeout:g} s")
        except (trio.BrokenResourceError, Refused) as error:
            return handshake_refusal(error)
        return cert.device, bytes(der or b"")

    # -- one link ----------------------------------------------------------------------------

    async def _run(
        self,
        ws: WebSocketConnection,
        peer: DeviceId,
        certs: tuple[bytes, bytes],
        *,
        dialled_by_me: bool,
    ) -> None:
        existing = self.links.get(peer)
        if existing is not None and existing.state != "down":
            kept = settle(
                self.trust.device,
                peer,
                existing_dialled_by_me=existing.dialled_by_me,
                new_dialled_by_me=dialled_by_me,
            )
            if kept == "keep-existing":
                await ws.aclose(1000, "one link per pair: the other one stays")
                return
            if existing._cancel is not None:
                existing._cancel.cancel()
        gossip = LinkGossip(self.trust.device, self.trust.name, peer, *self._current())
        # Connected once the peer's hello (its name, checked against the device its handshake
        # proved) has arrived, not at the handshake: a status never shows a nameless link.
        info = LinkInfo(peer, "", "connecting", self.clock(), dialled_by_me)
        info._gossip, info._ws = gossip, ws
        info._nonce, info._certs = secrets.token_bytes(CHANNEL_NONCE), certs
        self.links[peer] = info
        with trio.CancelScope() as info._cancel:
            try:
                await ws.send_message(encode(gossip.hello()))
                await ws.send_message(encode(Channel(info._nonce)))
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._keepalive, ws, nursery.cancel_scope)
                    await self._receive(ws, gossip, info)
                    nursery.cancel_scope.cancel()
            except ConnectionClosed:
                pass
            finally:
                if self.links.get(peer) is info:
                    info.state, info.since = "down", self.clock()
                with trio.CancelScope(shield=True), trio.move_on_after(1):
                    await ws.aclose()

    def _current(self) -> tuple[Seqs, dict[str, bytes], dict[str, bytes]]:
        trust = self.trust
        seqs = Seqs(trust.roster.seq, trust.revocations.seq)
        blobs = {"roster": trust.roster.blob, "revocations": trust.revocations.blob}
        certs: dict[str, bytes] = {
            d: der for d in trust.known.devices() if (der := trust.known.get(d))
        }
        return seqs, blobs, certs

    async def _receive(self, ws: WebSocketConnection, gossip: LinkGossip, info: LinkInfo) -> None:
        while gossip.state != "closed":
            try:
                message = await ws.get_message()
            except ConnectionClosed:
                return
            frame: Frame | BadFrame
            try:
                frame = decode(message)
            except BadFrame as bad:
                frame = bad
            effects: list[Effect] = gossip.receive(frame)
            info.name = gossip.peer_name or info.name
            if gossip.state == "open" and info.state == "connecting":
                info.state, info.since = "connected", self.clock()
            await self._perform(ws, gossip, effects, info)

    async def _perform(
        self,
        ws: WebSocketConnection,
        gossip: LinkGossip,
        effects: list[Effect],
        info: LinkInfo | None = None,
    ) -> None:
        for effect in effects:
            if isinstance(effect, Send):
                await ws.send_message(encode(effect.frame))
            elif isinstance(effect, Close):
                logger.info("mesh: link to %s closed: %s", gossip.peer, effect.reason)
                await ws.aclose(1008, effect.reason[:120])
                return
            elif isinstance(effect, Adopt):
                await self._adopt(gossip, effect)
            elif isinstance(effect, Learn) and self.trust.learn(effect.certs):
                await self._spread()
            elif isinstance(effect, Bind) and info is not None:
                info.channel = _channel(info, effect.peer_nonce)
                await self.on_bound(gossip.peer)
            elif isinstance(effect, DeliverHandoff):
                # The sans-IO link delivers a handoff's frame only once the channel is bound.
                if info is not None and info.channel is not None:
                    await self.on_handoff(gossip.peer, info.channel, effect.frame)
            elif isinstance(effect, Deliver):
                await self.on_talk(gossip.peer, effect.frame)

    def channel(self, device: str) -> bytes | None:
        """The channel fingerprint of ``device``'s open link (``None``: none, or not bound yet):
        what a grant sent to it now must be bound to."""
        info = self.links.get(DeviceId(device))
        return info.channel if info is not None and info.state == "connected" else None

    async def send_handoff(self, device: str, frame: HandoffFrame, *, channel: bytes) -> bool:
        """Send a handoff's frame to ``device`` on the link whose fingerprint is ``channel``;
        ``False`` when that link is gone (a new one has another channel: issue again)."""
        if self.channel(device) != channel:
            return False
        return await self.send_talk(device, frame)

    async def send_talk(self, device: str, frame: TalkFrame | OfferFrame | HandoffFrame) -> bool:
        """Send a conversation's or an offer's frame to ``device``; ``False`` when it has no
        open link."""
        info = self.links.get(DeviceId(device))
        if info is None or info.state != "connected" or info._ws is None:
            return False
        try:
            await info._ws.send_message(encode(frame))
        except ConnectionClosed:
            return False
        return True

    async def _adopt(self, gossip: LinkGossip, effect: Adopt) -> None:
        try:
            adopted = self.trust.adopt(effect.kind, effect.blob, int(self.clock()))
        except Refused as refused:
            logger.warning("mesh: %s from %s refused: %s", effect.kind, gossip.peer, refused.reason)
            return
        seq = self.trust.roster.seq if effect.kind == "roster" else self.trust.revocations.seq
        gossip.peer_adopted(effect.kind, seq)
        if adopted == "adopted":
            await self._spread()
            if effect.kind == "revocations":
                await self.close_revoked()

    async def _spread(self) -> None:
        """Pass what this device now holds on to every open link."""
        current = self._current()
        for info in list(self.links.values()):
            if info._gossip is not None and info._ws is not None and info.state == "connected":
                try:
                    await self._perform(info._ws, info._gossip, info._gossip.changed(*current))
                except ConnectionClosed:
                    continue

    async def refresh(self) -> None:
        """The lists changed under the links (a reissue, a revocation on this device): pass
        them on to every link and close the links the lists no longer admit."""
        await self._spread()
        await self.close_revoked()

    async def close_revoked(self) -> None:
        """Close at once every link to a device the lists no longer admit."""
        for device, info in list(self.links.items()):
            if not self.trust.admits(device) and info._gossip is not None and info._ws is not None:
                with trio.move_on_after(1):
                    try:
                        await self._perform(info._ws, info._gossip, info._gossip.revoked())
                    except ConnectionClosed:
                        pass
                if info._cancel is not None:
                    info._cancel.cancel()

    async def _keepalive(self, ws: WebSocketConnection, scope: trio.CancelScope) -> None:
        while True:
            await trio.sleep(self.ping_every)
            with trio.move_on_after(self.silent_after - self.ping_every) as silent:
                try:
                    await ws.ping()
                except ConnectionClosed:
                    scope.cancel()
                    return
            if silent.cancelled_caught:
                logger.info("mesh: a link went silent; closing it")
                scope.cancel()
                return

    def status(self) -> list[dict[str, object]]:
        return [
            {"device": i.device, "name": i.name, "state": i.state, "since": i.since}
            for i in sorted(self.links.values(), key=lambda i: i.device)
        ]


def _source(stream: trio.SocketStream) -> str:
    """Where an accepted connection came from, for the log."""
    try:
        host, port, *_ = stream.socket.getpeername()
    except (OSError, ValueError):
        return "an unknown address"
    return f"{host}:{port}"


async def _ignore(_device: str, _frame: TalkFrame | OfferFrame) -> None:
    """What a link does with a peer's frame when nobody takes them."""


async def _ignore_bound(_device: str) -> None:
    """What a link does when its channel is bound and nobody asks."""


async def _ignore_handoff(_device: str, _channel: bytes, _frame: HandoffFrame) -> None:
    """What a link does with a handoff's frame when nobody takes them."""


def _channel(info: LinkInfo, peer_nonce: bytes) -> bytes:
    """The link's channel fingerprint: both certificates and both nonces, the dialler's first,
    so both sides compute the same."""
    mine, theirs = info._nonce, peer_nonce
    nonces = mine + theirs if info.dialled_by_me else theirs + mine
    return channel_fingerprint(*info._certs, nonces)


async def _read_exactly(stream: trio.SocketStream, size: int) -> bytes:
    """``size`` bytes, or fewer when the peer ended first (never more: TLS follows)."""
    data = b""
    while len(data) < size:
        chunk = await stream.receive_some(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


# -- pairing -------------------------------------------------------------------------------


async def _exchange(ws: WebSocketConnection, messages: list[PairMessage]) -> None:
    for message in messages:
        await ws.send_message(encode(message))


async def _next(ws: WebSocketConnection) -> PairMessage:
    try:
        frame = decode(await ws.get_message())
    except BadFrame:
        return Fail("malformed")
    if not isinstance(frame, PairMessage):
        return Fail("malformed")
    return frame


async def serve_pairing(
    stream: trio.SocketStream,
    window: PairingWindow,
    key: Ed25519PrivateKey,
    *,
    decide: Callable[[str, DeviceId], Awaitable[bool]],
    bundle: Callable[[str, bytes], bytes],
) -> tuple[str, bytes]:
    """The pairing device's side of one connection: the joiner's name and link certificate
    once its operator said yes; ``PairingFailed`` otherwise."""
    tls = trio.SSLStream(stream, pairing_context(key, server_side=True), server_side=True)
    try:
        with trio.fail_after(HANDSHAKE_TIMEOUT):
            preamble = await _read_exactly(stream, len(PAIR_PREAMBLE))
            if preamble == PAIR_PREAMBLE:
                await tls.do_handshake()
    except (trio.TooSlowError, trio.BrokenResourceError):
        preamble = b""
    if preamble != PAIR_PREAMBLE:
        await trio.aclose_forcefully(stream)
        raise PairingFailed("aborted") from None
    return await _pair_over(tls, window, key, decide, bundle)


async def _pair_over(
    tls: trio.SSLStream[trio.SocketStream],
    window: PairingWindow,
    key: Ed25519PrivateKey,
    decide: Decide,
    bundle: Bundle,
) -> tuple[str, bytes]:
    """``serve_pairing`` once TLS is up (the listener's pairing connections come here too)."""
    pairer = Pairer(window, own_cert=link_certificate(key))
    try:
        async with trio.open_nursery() as nursery:
            request = await wrap_server_stream(nursery, tls, max_message_size=MAX_FRAME)
            ws = await request.accept()
            while pairer.state in ("waiting-start", "waiting-confirm"):
                message = await _next(ws)
                replies = await trio.to_thread.run_sync(
                    pairer.receive, message, trio.current_time()
                )
                await _exchange(ws, replies)
            if pairer.state == "confirmed":
                joiner = certificate_device(pairer.joiner_cert)
                accept = await decide(pairer.joiner_name, joiner)
                replies = pairer.decide(
                    accept, bundle(pairer.joiner_name, pairer.joiner_cert) if accept else b""
                )
                await _exchange(ws, replies)
            with trio.move_on_after(1):
                await ws.aclose()
            nursery.cancel_scope.cancel()
    except (ConnectionClosed, trio.BrokenResourceError, trio.TooSlowError):
        pairer.lost()
    finally:
        pairer.lost()
        await trio.aclose_forcefully(tls)
    if pairer.state != "enrolled":
        raise PairingFailed(pairer.failure or "aborted")
    return pairer.joiner_name, pairer.joiner_cert


async def _converse(
    ws: WebSocketConnection,
    joiner: Joiner,
    peer_cert: bytes,
    confirmed: Callable[[DeviceId], Awaitable[None]],
) -> None:
    """The joiner's side once the WebSocket is open."""
    await _exchange(ws, [joiner.start()])
    while joiner.state in ("waiting-answer", "waiting-decision"):
        message = await _next(ws)
        replies = await trio.to_thread.run_sync(joiner.receive, message)
        await _exchange(ws, replies)
        if joiner.state == "waiting-decision" and replies:
            await confirmed(certificate_device(peer_cert))
    with trio.move_on_after(1):
        await ws.aclose()


async def join(
    host: str,
    port: int,
    code: str,
    key: Ed25519PrivateKey,
    name: str,
    *,
    confirmed: Callable[[DeviceId], Awaitable[None]],
    handshake_timeout: float = HANDSHAKE_TIMEOUT,
) -> bytes:
    """The new device's side: the enrolment bundle; ``PairingFailed`` otherwise (``aborted``
    when no pairing window answers within ``handshake_timeout``).
    ``confirmed`` is told the pairer's device once the code's confirmation held."""
    stream = await trio.open_tcp_stream(host, port)
    await stream.send_all(PAIR_PREAMBLE)
    tls = trio.SSLStream(stream, pairing_context(key, server_side=False))
    try:
        with trio.fail_after(HANDSHAKE_TIMEOUT):
            await tls.do_handshake()
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise
    peer_cert = tls.getpeercert(binary_form=True) or b""
    joiner = await trio.to_thread.run_sync(
        lambda: Joiner(code, name, own_cert=link_certificate(key), peer_cert=peer_cert)
    )
    try:
        async with trio.open_nursery() as nursery:
            # Without a window the listener refuses this side's certificate after TLS 1.3's
            # handshake ended here: the WebSocket never opens.
            with trio.move_on_after(handshake_timeout):
                ws = await wrap_client_stream(
                    nursery, tls, host, PAIR_PATH, max_message_size=MAX_FRAME
                )
                await _converse(ws, joiner, peer_cert, confirmed)
            nursery.cancel_scope.cancel()
    except (ConnectionClosed, trio.BrokenResourceError):
        if joiner.state != "enrolled" and joiner.failure is None:
            joiner.failure = "aborted"
    finally:
        await trio.aclose_forcefully(stream)
    if joiner.state != "enrolled":
        raise PairingFailed(joiner.failure or "aborted")
    return joiner.bundle
