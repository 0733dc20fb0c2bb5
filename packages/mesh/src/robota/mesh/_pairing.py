"""Pairing, sans-IO: the one-time code's PAKE, its confirmation bound to the channel, the window.

``robota mesh pair`` opens a ``PairingWindow`` on a device holding the signing key (one code, a
deadline); ``robota mesh join ADDRESS`` connects to it over TLS (each side with a self-signed
certificate for its device key, neither yet able to check the other's; the joiner's goes in its
first message, since a TLS server on Python's ``ssl`` cannot ask for a certificate it cannot
verify) and the two run SPAKE2 (the ``spake2`` package, Ed25519 group; the pairer is side A, the
joiner side B) on the code. What makes the TLS channel trustworthy is the key confirmation: each
side sends ``HMAC(k_side, side label | channel | both PAKE messages | joiner's name)`` where
``channel`` hashes both sides' link certificates *as that side sees them* (the joiner: its own
and the one the TLS handshake showed it; the pairer: its own and the one ``Start`` carries).
Both sides on one TLS connection compute the same channel; a relay that terminates TLS shows
each side its own certificate, so the two channels differ and the confirmation fails exactly as
for a wrong code. The side labels keep a reflected confirmation from passing.

The conversation (``Start``, ``Answer``, ``Confirm`` then ``Enrol`` or ``Fail``)::

    joiner                                   pairer (window open)
    Start(name, cert, pake_B)     ->         window.begin (spends the code), finish SPAKE2
                                  <-         Answer(pake_A, confirm_pairer)
    check confirm_pairer
    Confirm(confirm_joiner)       ->         check it; both terminals show the joiner's name
                                             and fingerprint; the operator says y or n
                                  <-         Enrol(bundle) | Fail("declined")

An attacker gets one guess per code: the window is spent as soon as the pairer has answered a
PAKE message, and a failed confirmation (or a malformed message, or a connection lost after
that) burns it; only the confirmed and accepted attempt uses it. SPAKE2 gives nothing to
guess offline, so the confirmation the pairer sends first leaks nothing about the code. An
expired, used, burned or busy window refuses before any PAKE.

The machines do the SPAKE2 arithmetic inline (about 15 ms): their shells call them off the
event loop. ``Enrol``'s bundle is opaque here (the shell packs the root public key, the
joiner's device certificate and the lists, and the joiner verifies them).
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass, field
from typing import Literal, get_args

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ._code import pake_password
from ._codec import pack
from ._errors import MeshError

__all__ = [
    "FAILURES",
    "Answer",
    "Confirm",
    "Enrol",
    "Fail",
    "Failure",
    "Joiner",
    "PairMessage",
    "Pairer",
    "PairingFailed",
    "PairingWindow",
    "Start",
    "channel_binding",
]

Failure = Literal["wrong-code", "expired", "used", "busy", "malformed", "declined", "aborted"]
"""Why a pairing ended without a device: a closed set the terminals and logs name."""

FAILURES: tuple[Failure, ...] = get_args(Failure)

_EXPLAIN: dict[Failure, str] = {
    "wrong-code": "the code did not match (a wrong code, or something relaying between the "
    "devices); this code is burned: run robota mesh pair for a new one",
    "expired": "the pairing window has expired: run robota mesh pair for a new one",
    "used": "this code was already used: run robota mesh pair for a new one",
    "busy": "another device is pairing with this window right now",
    "malformed": "the other side sent something that is not a pairing message",
    "declined": "the operator of the pairing device said no",
    "aborted": "the pairing ended before it was confirmed",
}

_PAIRER_ID = b"robota-mesh/1 pairer"
_JOINER_ID = b"robota-mesh/1 joiner"
_CHANNEL = b"robota-mesh/1 pair channel"
_CONFIRM_INFO = b"robota-mesh/1 pair confirm"
MAX_NAME = 64
"""A joiner's name, in UTF-8 bytes (the certificates' bound)."""


class PairingFailed(MeshError):
    """A pairing refused or ended, for one of ``FAILURES`` (``reason``)."""

    def __init__(self, reason: Failure) -> None:
        super().__init__(f"pairing failed: {_EXPLAIN[reason]}")
        self.reason: Failure = reason


@dataclass(frozen=True, slots=True)
class Start:
    """Joiner -> pairer: the joiner's name, its link certificate and its SPAKE2 message."""

    name: str
    cert: bytes
    pake: bytes


@dataclass(frozen=True, slots=True)
class Answer:
    """Pairer -> joiner: its SPAKE2 message and its confirmation."""

    pake: bytes
    confirm: bytes


@dataclass(frozen=True, slots=True)
class Confirm:
    """Joiner -> pairer: the joiner's confirmation."""

    confirm: bytes


@dataclass(frozen=True, slots=True)
class Enrol:
    """Pairer -> joiner, once its operator said yes: what the joiner needs (opaque here)."""

    bundle: bytes


@dataclass(frozen=True, slots=True)
class Fail:
    """Either way: the pairing ends, and why."""

    reason: Failure


PairMessage = Start | Answer | Confirm | Enrol | Fail


def channel_binding(pairer_cert: bytes, joiner_cert: bytes) -> bytes:
    """The channel both confirmations are bound to: both link certificates (DER) as one side
    saw them, the pairer's first."""
    return hashlib.sha256(pack(_CHANNEL, pairer_cert, joiner_cert)).digest()


def _confirm_keys(key: bytes) -> tuple[bytes, bytes]:
    """The pairer's and the joiner's confirmation keys (directional: no reflection)."""
    derived = HKDF(hashes.SHA256(), 64, salt=None, info=_CONFIRM_INFO).derive(key)
    return derived[:32], derived[32:]


def _mac(key: bytes, side: bytes, channel: bytes, start: Start, answer_pake: bytes) -> bytes:
    transcript = pack(side, channel, start.pake, answer_pake, start.name)
    return hmac.new(key, transcript, hashlib.sha256).digest()


def _valid_name(name: str) -> bool:
    return 0 < len(name.encode("utf-8", "surrogatepass")) <= MAX_NAME and name.isprintable()


WindowState = Literal["open", "pairing", "used", "burned", "expired"]


@dataclass
class PairingWindow:
    """One code on the pairing device, good until ``deadline`` (monotonic seconds), for one
    attempt: spent when a PAKE starts, used when it is confirmed and accepted, burned when it
    fails."""

    code: str = field(repr=False)
    deadline: float
    state: WindowState = "open"

    def begin(self, now: float) -> None:
        """An attempt starts (a joiner's ``Start`` arrived); ``PairingFailed`` when this window
        cannot take one. From here on the code is spent."""
        if self.state == "open" and now >= self.deadline:
            self.state = "expired"
        refusal: dict[WindowState, Failure] = {
            "pairing": "busy",
            "used": "used",
            "burned": "used",
            "expired": "expired",
        }
        if self.state in refusal:
            raise PairingFailed(refusal[self.state])
        self.state = "pairing"

    def end(self, *, confirmed: bool) -> None:
        """The attempt ended: the device paired (``used``) or not (``burned``)."""
        if self.state == "pairing":
            self.state = "used" if confirmed else "burned"

    def expire(self, now: float) -> bool:
        """Close an open window whose deadline passed; whether it is closed now."""
        if self.state == "open" and now >= self.deadline:
            self.state = "expired"
        return self.state not in {"open", "pairing"}


PairerState = Literal["waiting-start", "waiting-confirm", "confirmed", "enrolled", "failed"]


class Pairer:
    """The pairing device's side of one connection. ``receive`` takes the joiner's message
    and returns what to send back; after ``Confirm`` the state is ``confirmed`` and the shell
    asks its operator, then calls ``decide``."""

    def __init__(self, window: PairingWindow, *, own_cert: bytes) -> None:
        self.window = window
        self.state: PairerState = "waiting-start"
        self.failure: Failure | None = None
        self.joiner_name = ""
        self.joiner_cert = b""
        """The joiner's link certificate as its ``Start`` gave it (proven once confirmed)."""
        self._own_cert = own_cert
        self._holds_window = False
        self._expect = b""

    def receive(self, message: PairMessage, now: float) -> list[PairMessage]:
        """The joiner's ``message`` at ``now`` (monotonic seconds): what to send back."""
        if self.state == "waiting-start" and isinstance(message, Start):
            return self._start(message, now)
        if self.state == "waiting-confirm" and isinstance(message, Confirm):
            if not hmac.compare_digest(message.confirm, self._expect):
                return self._fail("wrong-code")
            self.state = "confirmed"
            return []
        if isinstance(message, Fail):
            return self._fail(message.reason if self.state != "waiting-start" else "aborted", [])
        return self._fail("malformed")

    def decide(self, accept: bool, bundle: bytes) -> list[PairMessage]:
        """The operator's answer, once ``confirmed``: the joiner's enrolment or a refusal."""
        if self.state != "confirmed":
            raise RuntimeError(f"decide() in state {self.state}")
        if not accept:
            return self._fail("declined")
        self.state = "enrolled"
        self.window.end(confirmed=True)
        return [Enrol(bundle)]

    def lost(self) -> None:
        """The connection ended: an attempt in progress burns the window."""
        if self.state not in ("enrolled", "failed"):
            self._fail("aborted")

    def _start(self, start: Start, now: float) -> list[PairMessage]:
        from spake2 import SPAKE2_A  # noqa: PLC0415 (loads only while pairing)
        from spake2.spake2 import SPAKEError  # noqa: PLC0415

        try:
            self.window.begin(now)
        except PairingFailed as refused:
            self.state, self.failure = "failed", refused.reason
            return [Fail(refused.reason)]
        self._holds_window = True
        if not _valid_name(start.name):
            return self._fail("malformed")
        self.joiner_name, self.joiner_cert = start.name, start.cert
        channel = channel_binding(self._own_cert, start.cert)
        spake = SPAKE2_A(pake_password(self.window.code), idA=_PAIRER_ID, idB=_JOINER_ID)
        answer_pake = spake.start()
        try:
            key = spake.finish(start.pake)
        except (SPAKEError, ValueError):
            return self._fail("malformed")
        pairer_key, joiner_key = _confirm_keys(key)
        self._expect = _mac(joiner_key, _JOINER_ID, channel, start, answer_pake)
        self.state = "waiting-confirm"
        confirm = _mac(pairer_key, _PAIRER_ID, channel, start, answer_pake)
        return [Answer(answer_pake, confirm)]

    def _fail(self, reason: Failure, reply: list[PairMessage] | None = None) -> list[PairMessage]:
        self.state, self.failure = "failed", reason
        if self._holds_window:  # never another attempt's window
            self.window.end(confirmed=False)
        return [Fail(reason)] if reply is None else reply


JoinerState = Literal["waiting-answer", "waiting-decision", "enrolled", "failed"]


class Joiner:
    """The new device's side: ``start`` gives the first message; ``receive`` the rest. Once
    ``waiting-decision`` the pairer is proven (it knew the code, on this very channel) and the
    shell shows the fingerprint; ``Enrol`` ends it with ``bundle``."""

    def __init__(self, code: str, name: str, *, own_cert: bytes, peer_cert: bytes) -> None:
        from spake2 import SPAKE2_B  # noqa: PLC0415 (loads only while pairing)

        if not _valid_name(name):
            raise ValueError(f"a device name is 1 to {MAX_NAME} printable bytes")
        self.state: JoinerState = "waiting-answer"
        self.failure: Failure | None = None
        self.bundle = b""
        self._spake = SPAKE2_B(pake_password(code), idA=_PAIRER_ID, idB=_JOINER_ID)
        self._start = Start(name, own_cert, self._spake.start())
        self._channel = channel_binding(peer_cert, own_cert)

    def start(self) -> Start:
        return self._start

    def receive(self, message: PairMessage) -> list[PairMessage]:
        from spake2.spake2 import SPAKEError  # noqa: PLC0415

        if isinstance(message, Fail):
            self.state, self.failure = "failed", message.reason
            return []
        if self.state == "waiting-answer" and isinstance(message, Answer):
            try:
                key = self._spake.finish(message.pake)
            except (SPAKEError, ValueError):
                return self._fail("malformed")
            pairer_key, joiner_key = _confirm_keys(key)
            expected = _mac(pairer_key, _PAIRER_ID, self._channel, self._start, message.pake)
            if not hmac.compare_digest(message.confirm, expected):
                return self._fail("wrong-code")
            self.state = "waiting-decision"
            mine = _mac(joiner_key, _JOINER_ID, self._channel, self._start, message.pake)
            return [Confirm(mine)]
        if self.state == "waiting-decision" and isinstance(message, Enrol):
            self.state, self.bundle = "enrolled", message.bundle
            return []
        return self._fail("malformed")

    def _fail(self, reason: Failure) -> list[PairMessage]:
        self.state, self.failure = "failed", reason
        return [Fail(reason)]
