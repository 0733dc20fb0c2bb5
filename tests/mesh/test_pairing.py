"""Pairing, sans-IO: the PAKE between the two machines, its confirmation bound to the link
certificates each side saw, and the window's one guess per code; each case a table row."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from robota.mesh._code import new_code
from robota.mesh._pairing import (
    FAILURES,
    Answer,
    Confirm,
    Enrol,
    Fail,
    Joiner,
    Pairer,
    PairingFailed,
    PairingWindow,
    PairMessage,
    Start,
    channel_binding,
)

PAIRER_CERT = b"pairer's link certificate"
JOINER_CERT = b"joiner's link certificate"
RELAY_TO_PAIRER = b"the relay's certificate toward the pairer"
RELAY_TO_JOINER = b"the relay's certificate toward the joiner"
CODE = new_code()
TTL = 300.0


@dataclass(frozen=True)
class Case:
    right_code: bool = True
    relay: bool = False
    swap_cert: bool = False
    """A relay that puts its own certificate in the joiner's ``Start``."""
    accept: bool = True
    at: float = 1.0


@dataclass
class Outcome:
    pairer: str
    joiner: str
    window: str
    bundle: bytes
    joiner_cert: bytes


def run(case: Case, window: PairingWindow) -> Outcome:
    """One attempt, messages carried verbatim (by a relay that terminates TLS, if any)."""
    joiner_peer = RELAY_TO_JOINER if case.relay else PAIRER_CERT
    pairer = Pairer(window, own_cert=PAIRER_CERT)
    code = CODE if case.right_code else new_code()
    joiner = Joiner(code, "laptop", own_cert=JOINER_CERT, peer_cert=joiner_peer)
    start = joiner.start()
    if case.swap_cert:
        start = Start(start.name, RELAY_TO_PAIRER, start.pake)
    to_pairer: list[PairMessage] = [start]
    while to_pairer:
        to_joiner: list[PairMessage] = []
        for message in to_pairer:
            to_joiner += pairer.receive(message, case.at)
        if pairer.state == "confirmed":
            assert pairer.joiner_name == "laptop"
            to_joiner += pairer.decide(case.accept, b"the enrolment")
        to_pairer = [reply for m in to_joiner for reply in joiner.receive(m)]
    return Outcome(
        pairer.failure or pairer.state,
        joiner.failure or joiner.state,
        window.state,
        joiner.bundle,
        pairer.joiner_cert,
    )


@pytest.mark.parametrize(
    ("case", "pairer", "joiner", "window"),
    [
        (Case(), "enrolled", "enrolled", "used"),
        (Case(right_code=False), "wrong-code", "wrong-code", "burned"),
        # A relay that terminates TLS shows each side its own certificate: the channels differ.
        (Case(relay=True), "wrong-code", "wrong-code", "burned"),
        (Case(swap_cert=True), "wrong-code", "wrong-code", "burned"),
        (Case(accept=False), "declined", "declined", "burned"),
        (Case(at=TTL), "expired", "expired", "expired"),
        (Case(at=TTL - 0.001), "enrolled", "enrolled", "used"),
    ],
    ids=[
        "paired",
        "wrong-code",
        "terminating-relay",
        "substituted-certificate",
        "declined",
        "expired",
        "just-in-time",
    ],
)
def test_an_attempt(case: Case, pairer: str, joiner: str, window: str) -> None:
    opened = PairingWindow(CODE, deadline=TTL)
    outcome = run(case, opened)
    assert (outcome.pairer, outcome.joiner, outcome.window) == (pairer, joiner, window)
    assert outcome.bundle == (b"the enrolment" if joiner == "enrolled" else b"")
    if pairer == "enrolled":
        assert outcome.joiner_cert == JOINER_CERT


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (Case(right_code=False), "used"),  # a wrong guess burns the code: one guess per code
        (Case(relay=True), "used"),
        (Case(accept=False), "used"),
        (Case(), "used"),  # a used code does not pair a second device
        (Case(at=TTL + 1), "expired"),
    ],
)
def test_then_the_right_code_on_the_same_window(first: Case, second: str) -> None:
    window = PairingWindow(CODE, deadline=TTL)
    run(first, window)
    assert run(Case(), window).pairer == second


def test_a_second_joiner_while_one_pairs_is_busy_and_burns_nothing() -> None:
    window = PairingWindow(CODE, deadline=TTL)
    first = Pairer(window, own_cert=PAIRER_CERT)
    joiner = Joiner(CODE, "laptop", own_cert=JOINER_CERT, peer_cert=PAIRER_CERT)
    (answer,) = first.receive(joiner.start(), 1.0)
    other = Pairer(window, own_cert=PAIRER_CERT)
    intruder = Joiner(CODE, "x", own_cert=b"another", peer_cert=PAIRER_CERT)
    assert other.receive(intruder.start(), 1.0) == [Fail("busy")]
    other.lost()
    assert window.state == "pairing"
    (confirm,) = joiner.receive(answer)
    assert first.receive(confirm, 1.0) == [] and first.state == "confirmed"


def test_a_connection_lost_mid_attempt_burns_the_window() -> None:
    window = PairingWindow(CODE, deadline=TTL)
    pairer = Pairer(window, own_cert=PAIRER_CERT)
    joiner = Joiner(CODE, "laptop", own_cert=JOINER_CERT, peer_cert=PAIRER_CERT)
    pairer.receive(joiner.start(), 1.0)
    pairer.lost()
    assert (pairer.failure, window.state) == ("aborted", "burned")
    idle = PairingWindow(CODE, deadline=TTL)
    Pairer(idle, own_cert=PAIRER_CERT).lost()
    assert idle.state == "open"  # nothing started: nothing spent


def test_a_reflected_confirmation_fails() -> None:
    window = PairingWindow(CODE, deadline=TTL)
    pairer = Pairer(window, own_cert=PAIRER_CERT)
    joiner = Joiner(CODE, "laptop", own_cert=JOINER_CERT, peer_cert=PAIRER_CERT)
    (answer,) = pairer.receive(joiner.start(), 1.0)
    assert isinstance(answer, Answer)
    assert pairer.receive(Confirm(answer.confirm), 1.0) == [Fail("wrong-code")]
    assert window.state == "burned"


@pytest.mark.parametrize(
    ("messages", "failure", "window"),
    [
        ([Confirm(b"x")], "malformed", "open"),
        ([Enrol(b"x")], "malformed", "open"),
        ([Start("", b"c", b"x")], "malformed", "burned"),
        ([Start("a\nb", b"c", b"x")], "malformed", "burned"),
        ([Start("n" * 65, b"c", b"x")], "malformed", "burned"),
        ([Start("laptop", b"c", b"not a point")], "malformed", "burned"),
        ([Fail("declined")], "aborted", "open"),
    ],
)
def test_out_of_place_messages_to_the_pairer(
    messages: list[PairMessage], failure: str, window: str
) -> None:
    opened = PairingWindow(CODE, deadline=TTL)
    pairer = Pairer(opened, own_cert=PAIRER_CERT)
    for message in messages:
        pairer.receive(message, 1.0)
    assert (pairer.failure, opened.state) == (failure, window)


@pytest.mark.parametrize(
    "message",
    [Confirm(b"x"), Enrol(b"x"), Start("x", b"c", b"y"), Answer(b"not a point", b"")],
)
def test_out_of_place_messages_to_the_joiner(message: PairMessage) -> None:
    joiner = Joiner(CODE, "laptop", own_cert=JOINER_CERT, peer_cert=PAIRER_CERT)
    assert joiner.receive(message) == [Fail("malformed")]
    assert joiner.state == "failed"


def test_the_channel_is_both_certificates_in_order() -> None:
    assert channel_binding(b"a", b"b") != channel_binding(b"b", b"a")
    assert channel_binding(b"ab", b"") != channel_binding(b"a", b"b")


def test_window_expiry_and_every_failure_explained() -> None:
    window = PairingWindow(CODE, deadline=10.0)
    assert window.expire(5.0) is False
    assert window.expire(10.0) is True and window.state == "expired"
    for reason in FAILURES:
        assert "pairing failed: " in str(PairingFailed(reason))
    assert CODE not in repr(window)  # the code never shows in a repr (logs)
