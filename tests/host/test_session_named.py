"""Which session a command's SESSION names (``session_named``): a table, no processes."""

from __future__ import annotations

import pytest

from robota.host import SessionUnverified, session_named

KNOWN = [
    ("0123456789ab", "alpha"),
    ("0123ffffffff", "beta"),
    ("abcdef012345", "beta"),
    ("fedcba987654", None),  # a damaged registration: no name to match
    ("beefbeef0000", "dead"),
    ("deadbeef0000", "other"),
]


@pytest.mark.parametrize(
    ("wanted", "named"),
    [
        ("0123456789ab", "0123456789ab"),  # a whole id, as it is
        ("999999999999", "999999999999"),  # a whole id, even unregistered: the caller says so
        ("alpha", "0123456789ab"),  # the one session of that name
        ("abcd", "abcdef012345"),  # a unique prefix of four digits or more
        ("fedcba98", "fedcba987654"),  # a damaged one too: its control says why not
        ("dead", "beefbeef0000"),  # a name before an id prefix it also is
    ],
)
def test_what_a_session_argument_names(wanted: str, named: str) -> None:
    assert session_named(KNOWN, wanted) == named


@pytest.mark.parametrize(
    ("wanted", "said"),
    [
        ("beta", "2 sessions are named 'beta' (0123ffffffff, abcdef012345): name one by its id"),
        ("0123", "2 sessions have ids starting '0123' (0123456789ab, 0123ffffffff)"),
        ("abc", "no session is named 'abc'"),  # three digits name nothing
        ("gamma", "no session is named 'gamma' or has an id starting with it"),
        ("", "no session is named ''"),
        ("ALPHA", "no session is named 'ALPHA'"),  # names match exactly
    ],
)
def test_what_names_no_one_session(wanted: str, said: str) -> None:
    with pytest.raises(SessionUnverified) as refused:
        session_named(KNOWN, wanted)
    assert said in str(refused.value)
