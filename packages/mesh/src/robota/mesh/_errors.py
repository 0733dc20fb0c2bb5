"""The mesh's exceptions (drawn in ``robota.core._errors``' tree under ``MeshError``).

Messages name a secret's key (``device-key``), never its value, and are raised ``from None``
where the cause could quote one.
"""

from __future__ import annotations

from typing import Literal, get_args

from robota.core import RobotaError

__all__ = [
    "REASONS",
    "CredentialStoreError",
    "Malformed",
    "MeshError",
    "NoTerminal",
    "Reason",
    "Refused",
]

Reason = Literal[
    "malformed",
    "signature-invalid",
    "expired",
    "rolled-back",
    "revoked",
    "not-in-roster",
    "signing-key-revoked",
]
"""Why a signed object or a device is refused: a closed set that logs and ``--json`` name."""

REASONS: tuple[Reason, ...] = get_args(Reason)


class MeshError(RobotaError):
    """The device mesh (robota.mesh)."""


class Refused(MeshError):
    """A certificate, list or device refused, for one of the closed set of ``reason``s.

    ``detail`` says more for a person (never a key's private part or a secret)."""

    def __init__(self, reason: Reason, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason: Reason = reason
        self.detail = detail


class Malformed(Refused, ValueError):
    """Bytes that are not the signed object they claim to be (reason ``malformed``)."""

    def __init__(self, detail: str) -> None:
        super().__init__("malformed", detail)


class CredentialStoreError(MeshError):
    """The credential store cannot be used, or a stored key is damaged: the mesh fails closed.

    ``key`` names the secret (never its value)."""

    def __init__(self, key: str, why: str) -> None:
        super().__init__(f"the credential store cannot give {key!r}: {why}")
        self.key = key
        self.why = why


class NoTerminal(MeshError):
    """No controlling terminal: a phrase or code is shown and read only there, so refuse."""
