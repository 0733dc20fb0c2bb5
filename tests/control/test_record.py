"""The control client's records (``Ok``, ``Failure``, ``Overlong``) behave as the frozen,
slotted dataclasses they replaced: compared, hashed and shown by their fields, never changed."""

from __future__ import annotations

import pytest

from robota.core.control import Failure, Ok, Overlong


@pytest.mark.parametrize(
    ("one", "other", "equal"),
    [
        (Ok(1, ("a", 1)), Ok(1, ("a", 1)), True),
        (Ok(1, None), Ok(2, None), False),
        (Ok(1, None), Ok("1", None), False),
        (Failure(None, "busy", "m"), Failure(None, "busy", "m", None), True),
        (Failure(1, "c", "m", "f"), Failure(1, "c", "m", "g"), False),
        (Failure(1, "c", "m"), Ok(1, "c"), False),  # another type is never equal
        (Overlong(b"ab", 3), Overlong(b"ab", 3), True),
        (Overlong(b"ab", 3), Overlong(b"ab", 4), False),
    ],
)
def test_equality_and_hash(one: object, other: object, equal: bool) -> None:
    assert (one == other) is equal
    assert (one != other) is not equal
    if equal:
        assert hash(one) == hash(other)


@pytest.mark.parametrize(
    ("record", "shown"),
    [
        (Ok(1, {"a": 1}), "Ok(id=1, result={'a': 1})"),
        (Failure(None, "busy", "m"), "Failure(id=None, code='busy', message='m', field=None)"),
        (Overlong(b"ab", 3), "Overlong(head=b'ab', limit=3)"),
    ],
)
def test_repr_names_the_fields_in_order(record: object, shown: str) -> None:
    assert repr(record) == shown


@pytest.mark.parametrize("record", [Ok(1, None), Failure(1, "c", "m"), Overlong(b"", 1)])
def test_frozen_and_slotted(record: object) -> None:
    with pytest.raises(AttributeError, match="frozen"):
        record.id = 2  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="frozen"):
        del record.id  # type: ignore[attr-defined]
    assert not hasattr(record, "__dict__")


def test_positional_patterns() -> None:
    match Failure(7, "not_found", "no task", "task"):
        case Failure(request_id, code, message, field):
            assert (request_id, code, message, field) == (7, "not_found", "no task", "task")
        case _:
            pytest.fail("Failure did not match its positional pattern")
    match Ok(3, [1]):
        case Ok(request_id, result):
            assert (request_id, result) == (3, [1])
        case _:
            pytest.fail("Ok did not match its positional pattern")
