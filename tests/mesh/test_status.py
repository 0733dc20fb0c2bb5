"""What status and devices show (the Contract's names), lapsed lists, and what DEVICE names."""

from __future__ import annotations

import pytest

from robota.mesh import (
    DeviceNotFound,
    LinkReport,
    ListHead,
    device_id,
    devices_view,
    lapsed_problems,
    name_problem,
    pick_device,
    status_view,
)

# Ids of fixed keys (public bytes 1..3): their first four characters differ, so the unique-prefix
# row below always has one (a random key's id could share A's prefix).
A, B, C = (device_id(bytes([n]) * 32) for n in (1, 2, 3))


def test_status_json_has_the_contracts_names() -> None:
    view = status_view(
        enabled=True,
        device=A,
        name="laptop",
        store="file",
        signing=True,
        listen=["10.0.0.1:47390"],
        links=[LinkReport(B, "desk", "connected", since=0.0)],
        roster=ListHead(3, 86400),
        revocations=ListHead(2, 86400),
        problems=[],
    )
    assert view == {
        "enabled": True,
        "device": {"id": A, "name": "laptop"},
        "store": "file",
        "signing": True,
        "listen": ["10.0.0.1:47390"],
        "links": [
            {"device": B, "name": "desk", "state": "connected", "since": "1970-01-01T00:00:00Z"}
        ],
        "roster": {"seq": 3, "expiresAt": "1970-01-02T00:00:00Z"},
        "revocations": {"seq": 2, "expiresAt": "1970-01-02T00:00:00Z"},
        "problems": [],
    }


@pytest.mark.parametrize(
    ("roster_expires", "revocations_expires", "now", "lapsed"),
    [
        (100, 100, 99, []),
        (100, 200, 100, ["roster"]),
        (200, 100, 150, ["revocation list"]),
        (100, 100, 500, ["roster", "revocation list"]),
    ],
)
def test_lapsed_lists_are_problems_that_say_why(
    roster_expires: int, revocations_expires: int, now: int, lapsed: list[str]
) -> None:
    problems = lapsed_problems(ListHead(4, roster_expires), ListHead(5, revocations_expires), now)
    assert [p.split(" (")[0].removeprefix("the ") for p in problems] == lapsed
    assert all("handoffs and file offers are refused" in p for p in problems)


def test_devices_lists_active_then_revoked_with_link_state() -> None:
    rows = devices_view(
        {A: "laptop", B: "desk"},
        [C],
        {C: "old-phone"},
        [LinkReport(B, "desk", "connected", since=5.0, last_seen=10.0), LinkReport(A, "l", "down")],
    )
    assert rows == [
        {"id": A, "name": "laptop", "state": "active", "linked": False, "lastSeen": None},
        {
            "id": B,
            "name": "desk",
            "state": "active",
            "linked": True,
            "lastSeen": "1970-01-01T00:00:10Z",
        },
        {"id": C, "name": "old-phone", "state": "revoked", "linked": False, "lastSeen": None},
    ]


DEVICES = {A: "laptop", B: "desk", C: "desk"}


@pytest.mark.parametrize(
    ("typed", "picked", "problem"),
    [
        (A, A, None),
        (A.lower().replace("-", ""), A, None),
        ("laptop", A, None),
        ("desk", None, "2 devices are called 'desk'"),
        (A[:4], "unique-prefix", None),
        (A[:3], None, "no device"),
        ("nothing", None, "no device"),
        ("", None, "no device"),
    ],
)
def test_device_names_an_id_a_name_or_a_unique_prefix(
    typed: str, picked: str | None, problem: str | None
) -> None:
    if picked == "unique-prefix":
        assert not [d for d in DEVICES if d != A and d.startswith(A[:4])]
        picked = A
    if problem is None:
        assert pick_device(DEVICES, typed) == picked
        return
    with pytest.raises(DeviceNotFound, match=problem):
        pick_device(DEVICES, typed)


def test_an_ambiguous_prefix_names_the_candidates() -> None:
    first = "AAAA-" + A[5:]
    second = "AAAA-" + B[5:]
    with pytest.raises(DeviceNotFound, match="give more"):
        pick_device({first: "x", second: "y"}, "aaaa")  # type: ignore[dict-item]


@pytest.mark.parametrize(
    ("configured", "certified", "said"),
    [
        ("laptop", "laptop", None),
        ("laptop", "vm", "mesh.name is 'laptop', but the mesh knows this device as 'vm'"),
        ("desk", "Desk", "mesh.name is 'desk', but the mesh knows this device as 'Desk'"),
    ],
)
def test_a_mesh_name_set_after_init_is_a_problem_naming_the_name_the_mesh_knows(
    configured: str, certified: str, said: str | None
) -> None:
    problem = name_problem(configured, certified)
    if said is None:
        assert problem is None
    else:
        assert problem is not None and problem.startswith(said)
        assert "robota mesh init" in problem
