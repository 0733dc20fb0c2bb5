"""robota.mesh: the device mesh: a user's machines linked with signed identities.

This package holds the mesh's identity and trust (issue 29, part 1): where its secrets live
(``_credentials``: the OS keychain when real, else the owner-only ``_keyfile``), device keys
and ids (``_identity``), the recovery phrase and the root key it stands for (``_phrase``), the
certificate chain root -> signing key -> device key (``_certs``), the signed roster and
revocation list and their verification with a closed set of refusal reasons (``_lists``),
all sans-IO over the bytes of ``_codec``; what a device keeps on disk (``_state``), what the
commands do to it (``_actions``) and what status and the device listing show
(``_status``). The pairing and the links between hosts live beside them in modules of their
own: the one-time code (``_code``), the PAKE and its confirmation bound to the link's
certificates (``_pairing``), the links' certificates (``_linkcert``), frames (``_frames``),
sans-IO parts (``_link``), what they trust (``_trust``) and their trio shell (``_linkio``);
the lists' high-water marks in the profile's store (``_marks``).

It imports ``robota.core`` facades only; the host and the CLI compose it (core never imports
it). The facade is lazy (PEP 562): ``robota --help`` loads none of it, and a command loads
``cryptography`` only when it touches a key.
"""

import typing

from robota.core import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from ._actions import (
        Adopted,
        AlreadyInitialized,
        Lists,
        adopt_list,
        adopt_pairing,
        current_lists,
        device_key,
        enrol,
        init_first,
        init_join,
        open_secrets,
        recover,
        reissue,
        revoke,
        signing_key,
    )
    from ._certs import (
        MAX_NAME_BYTES,
        Certificate,
        Role,
        SigningRevocation,
        issue_certificate,
        revoke_signing_key,
        sign,
        verify_certificate,
        verify_signed,
        verify_signing_revocation,
    )
    from ._code import CODE_BITS, BadCode, new_code, parse_code
    from ._codec import pack, unpack
    from ._credentials import (
        SECRET_NAMES,
        OpenedStore,
        SecretStore,
        StoreKind,
        check_store,
        open_store,
        read_store_record,
    )
    from ._enrolment import Enrolment, enrolment_bundle, join_device, pair_device
    from ._errors import (
        REASONS,
        CredentialStoreError,
        Malformed,
        MeshError,
        NoTerminal,
        Reason,
        Refused,
    )
    from ._identity import (
        DEVICE_ID_LENGTH,
        DeviceId,
        device_id,
        id_matches_prefix,
        key_bytes,
        key_from_bytes,
        new_key,
        parse_device_id,
        public_bytes,
        public_from_bytes,
    )
    from ._link import PING_EVERY
    from ._linkcert import (
        KnownCertificates,
        admit_peer,
        certificate_device,
        client_context,
        link_certificate,
        pairing_context,
        server_context,
    )
    from ._linkio import LinkInfo, Links, join, serve_pairing
    from ._lists import (
        MAX_DEVICES,
        MIN_LIFETIME,
        ListKind,
        Marks,
        Revocations,
        Roster,
        admit,
        issue_revocations,
        issue_roster,
        lapsed,
        reissue_due,
        verify_revocations,
        verify_roster,
    )
    from ._marks import marks_op, raise_marks, stored_marks
    from ._pairing import (
        FAILURES,
        Answer,
        Confirm,
        Enrol,
        Fail,
        Failure,
        Joiner,
        Pairer,
        PairingFailed,
        PairingWindow,
        PairMessage,
        Start,
    )
    from ._phrase import PHRASE_WORDS, canonical_phrase, new_phrase, root_key
    from ._state import Identity, MeshFiles
    from ._status import (
        LINK_STATES,
        DeviceNotFound,
        LinkReport,
        LinkState,
        ListHead,
        devices_view,
        iso_time,
        lapsed_problems,
        pick_device,
        status_view,
    )
    from ._trust import LinkTrust

__all__ = [
    # errors and the closed set of refusal reasons
    "MeshError",
    "Refused",
    "Malformed",
    "CredentialStoreError",
    "NoTerminal",
    "Reason",
    "REASONS",
    # the credential store
    "StoreKind",
    "SecretStore",
    "OpenedStore",
    "SECRET_NAMES",
    "open_store",
    "check_store",
    "read_store_record",
    # device keys and ids
    "DeviceId",
    "DEVICE_ID_LENGTH",
    "device_id",
    "parse_device_id",
    "id_matches_prefix",
    "new_key",
    "key_bytes",
    "key_from_bytes",
    "public_bytes",
    "public_from_bytes",
    # the recovery phrase and the root key
    "PHRASE_WORDS",
    "new_phrase",
    "canonical_phrase",
    "root_key",
    # signed bytes and certificates
    "pack",
    "unpack",
    "sign",
    "verify_signed",
    "Role",
    "Certificate",
    "MAX_NAME_BYTES",
    "issue_certificate",
    "verify_certificate",
    "SigningRevocation",
    "revoke_signing_key",
    "verify_signing_revocation",
    # the roster and the revocation list
    "ListKind",
    "MAX_DEVICES",
    "MIN_LIFETIME",
    "Roster",
    "Revocations",
    "Marks",
    "issue_roster",
    "issue_revocations",
    "verify_roster",
    "verify_revocations",
    "admit",
    "reissue_due",
    "lapsed",
    "stored_marks",
    "raise_marks",
    "marks_op",
    # pairing: the one-time code and the PAKE's two machines
    "CODE_BITS",
    "BadCode",
    "new_code",
    "parse_code",
    "PairingWindow",
    "Pairer",
    "Joiner",
    "PairMessage",
    "Start",
    "Answer",
    "Confirm",
    "Enrol",
    "Fail",
    "Failure",
    "FAILURES",
    "PairingFailed",
    # links: self-signed link certificates and TLS 1.3 contexts
    "link_certificate",
    "certificate_device",
    "KnownCertificates",
    "admit_peer",
    "server_context",
    "client_context",
    "pairing_context",
    # the links' trio shell and what they trust
    "LinkTrust",
    "Links",
    "PING_EVERY",
    "LinkInfo",
    "join",
    "serve_pairing",
    "Enrolment",
    "enrolment_bundle",
    "pair_device",
    "join_device",
    # what a device keeps on disk, and what the commands do to it
    "Identity",
    "MeshFiles",
    "Lists",
    "AlreadyInitialized",
    "init_first",
    "init_join",
    "open_secrets",
    "enrol",
    "adopt_pairing",
    "adopt_list",
    "Adopted",
    "current_lists",
    "recover",
    "revoke",
    "reissue",
    "device_key",
    "signing_key",
    # status, devices and what DEVICE names
    "LinkState",
    "LINK_STATES",
    "LinkReport",
    "ListHead",
    "status_view",
    "devices_view",
    "lapsed_problems",
    "iso_time",
    "pick_device",
    "DeviceNotFound",
]

_HOMES = {
    **dict.fromkeys(["stored_marks", "raise_marks", "marks_op"], "._marks"),
    **dict.fromkeys(
        [
            "Adopted",
            "AlreadyInitialized",
            "Lists",
            "adopt_list",
            "adopt_pairing",
            "current_lists",
            "device_key",
            "enrol",
            "init_first",
            "init_join",
            "open_secrets",
            "recover",
            "reissue",
            "revoke",
            "signing_key",
        ],
        "._actions",
    ),
    **dict.fromkeys(
        [
            "MAX_NAME_BYTES",
            "Certificate",
            "Role",
            "SigningRevocation",
            "issue_certificate",
            "revoke_signing_key",
            "sign",
            "verify_certificate",
            "verify_signed",
            "verify_signing_revocation",
        ],
        "._certs",
    ),
    **dict.fromkeys(["pack", "unpack"], "._codec"),
    **dict.fromkeys(["CODE_BITS", "BadCode", "new_code", "parse_code"], "._code"),
    **dict.fromkeys(
        [
            "KnownCertificates",
            "admit_peer",
            "certificate_device",
            "client_context",
            "link_certificate",
            "pairing_context",
            "server_context",
        ],
        "._linkcert",
    ),
    **dict.fromkeys(["LinkInfo", "Links", "join", "serve_pairing"], "._linkio"),
    "PING_EVERY": "._link",
    **dict.fromkeys(["Enrolment", "enrolment_bundle", "join_device", "pair_device"], "._enrolment"),
    "LinkTrust": "._trust",
    **dict.fromkeys(
        [
            "FAILURES",
            "Answer",
            "Confirm",
            "Enrol",
            "Fail",
            "Failure",
            "Joiner",
            "Pairer",
            "PairingFailed",
            "PairingWindow",
            "PairMessage",
            "Start",
        ],
        "._pairing",
    ),
    **dict.fromkeys(
        [
            "SECRET_NAMES",
            "OpenedStore",
            "SecretStore",
            "StoreKind",
            "check_store",
            "open_store",
            "read_store_record",
        ],
        "._credentials",
    ),
    **dict.fromkeys(
        [
            "REASONS",
            "CredentialStoreError",
            "Malformed",
            "MeshError",
            "NoTerminal",
            "Reason",
            "Refused",
        ],
        "._errors",
    ),
    **dict.fromkeys(
        [
            "DEVICE_ID_LENGTH",
            "DeviceId",
            "device_id",
            "id_matches_prefix",
            "key_bytes",
            "key_from_bytes",
            "new_key",
            "parse_device_id",
            "public_bytes",
            "public_from_bytes",
        ],
        "._identity",
    ),
    **dict.fromkeys(
        [
            "MAX_DEVICES",
            "MIN_LIFETIME",
            "ListKind",
            "Marks",
            "Revocations",
            "Roster",
            "admit",
            "issue_revocations",
            "issue_roster",
            "lapsed",
            "reissue_due",
            "verify_revocations",
            "verify_roster",
        ],
        "._lists",
    ),
    **dict.fromkeys(["PHRASE_WORDS", "canonical_phrase", "new_phrase", "root_key"], "._phrase"),
    **dict.fromkeys(["Identity", "MeshFiles"], "._state"),
    **dict.fromkeys(
        [
            "LINK_STATES",
            "DeviceNotFound",
            "LinkReport",
            "LinkState",
            "ListHead",
            "devices_view",
            "iso_time",
            "lapsed_problems",
            "pick_device",
            "status_view",
        ],
        "._status",
    ),
}
"""Where each lazily loaded name lives (the same as the imports for type checkers above)."""


__getattr__, __dir__ = _lazy_attributes(__name__, _HOMES)
