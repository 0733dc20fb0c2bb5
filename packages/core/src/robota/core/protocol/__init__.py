"""robota.core.protocol: the one vocabulary for everything that leaves a process, sans-IO.

Three carriers speak it: the host's and a background session's control socket (requests and
replies), the attach carrier (a terminal attached to a background session: the request that
opens it, then notices and a terminal's requests) and the WebSocket host of ``--serve`` (its
documented dialect of host messages, made from the same notices and numbered the same way);
the mesh links between devices will. Nothing here does I/O: a carrier feeds bytes or text in
and gets typed messages, or one ``ProtocolError`` naming the field's path, what was expected
and what was found; a bad message never costs a connection whose framing is intact.

Its parts, each apart so that a carrier loads only what it speaks:

* ``_json``: strict JSON, the one decoding error, the checks every decoder shares;
* ``_framing``: newline-delimited messages with a bound on a line (``LineSplitter``), apart
  from the vocabulary so that a TLS stream can carry the same messages, and the attach
  carrier's frames as such lines (``encode_frame``, ``decode_frame``: stdlib only);
* ``_envelope``: the request/reply envelope, both sides' reading and writing of it, and
  ``PROTOCOL_VERSION`` (stdlib only: ``robota task send`` loads this, the framing and the
  control client, nothing more);
* ``_seq``: ``seq`` and resume, a stream's numbered messages and the bounded tail a peer that
  comes back is replayed from (``SeqLog``, ``resume_gap``);
* ``_notices``: the engine's notices as JSON and the attach carrier's frames (it imports the
  engine and the events, so it loads only with a carrier that sends notices).

Versions: ``PROTOCOL_VERSION`` (2) is said where a conversation opens (``session.attach``'s
``protocol``, the ``hello``'s); each side speaks the lower of the two, and a peer that says
none is a version 1 peer and gets what version 1 gave it. The WebSocket's dialect keeps its own
number (``SURFACE_PROTOCOL``, 1) and its wire.

It sits in core's layer 5 beside the engine, whose notices it encodes: the facade is lazy
(PEP 562), so a name loads its module alone and a control client never loads the engine.
"""

import typing

from ..kernel import lazy_attributes as _lazy_attributes

if typing.TYPE_CHECKING:
    from ._envelope import (
        BAD_JSON,
        BAD_REQUEST,
        PROTOCOL_VERSION,
        TOO_LARGE,
        Failure,
        MalformedReply,
        Ok,
        Reply,
        Request,
        RequestId,
        decode_reply,
        decode_request,
        encode_reply,
        encode_request,
        valid_id,
    )
    from ._framing import (
        MAX_FRAME,
        MAX_LINE,
        LineSplitter,
        Overlong,
        WireError,
        decode_frame,
        encode_frame,
        encode_line,
    )
    from ._json import (
        MAX_SEQ,
        ProtocolError,
        check_seq,
        describe_json,
        dumps,
        expected,
        loads_strict,
        shown,
    )
    from ._notices import (
        WIRE_PROTOCOL,
        frame_to_request,
        notice_from_json,
        notice_to_json,
        request_to_frame,
    )
    from ._record import Record
    from ._seq import SeqLog, resume_gap

__all__ = [
    # JSON and its one error
    "MAX_SEQ",
    "ProtocolError",
    "check_seq",
    "describe_json",
    "dumps",
    "expected",
    "loads_strict",
    "shown",
    "Record",
    # framing
    "MAX_LINE",
    "LineSplitter",
    "Overlong",
    "encode_line",
    # the envelope and the version
    "BAD_JSON",
    "BAD_REQUEST",
    "PROTOCOL_VERSION",
    "Failure",
    "MalformedReply",
    "Ok",
    "Reply",
    "Request",
    "RequestId",
    "TOO_LARGE",
    "decode_reply",
    "decode_request",
    "encode_reply",
    "encode_request",
    "valid_id",
    # seq and resume
    "SeqLog",
    "resume_gap",
    # the engine's notices and the attach carrier's frames
    "MAX_FRAME",
    "WIRE_PROTOCOL",
    "WireError",
    "decode_frame",
    "encode_frame",
    "frame_to_request",
    "notice_from_json",
    "notice_to_json",
    "request_to_frame",
]

_HOMES = {
    **dict.fromkeys(
        (
            "MAX_SEQ",
            "ProtocolError",
            "check_seq",
            "describe_json",
            "dumps",
            "expected",
            "loads_strict",
            "shown",
        ),
        "._json",
    ),
    "Record": "._record",
    **dict.fromkeys(
        (
            "MAX_FRAME",
            "MAX_LINE",
            "LineSplitter",
            "Overlong",
            "WireError",
            "decode_frame",
            "encode_frame",
            "encode_line",
        ),
        "._framing",
    ),
    **dict.fromkeys(
        (
            "BAD_JSON",
            "BAD_REQUEST",
            "PROTOCOL_VERSION",
            "Failure",
            "MalformedReply",
            "Ok",
            "Reply",
            "Request",
            "RequestId",
            "TOO_LARGE",
            "decode_reply",
            "decode_request",
            "encode_reply",
            "encode_request",
            "valid_id",
        ),
        "._envelope",
    ),
    "SeqLog": "._seq",
    "resume_gap": "._seq",
    **dict.fromkeys(
        (
            "WIRE_PROTOCOL",
            "frame_to_request",
            "notice_from_json",
            "notice_to_json",
            "request_to_frame",
        ),
        "._notices",
    ),
}
"""Where each lazily loaded name lives (the same as the imports for type checkers above)."""

__getattr__, __dir__ = _lazy_attributes(__name__, _HOMES)
