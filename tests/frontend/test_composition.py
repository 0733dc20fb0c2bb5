"""The chat service is composed, not inherited (issue 28 s.2): no class of
``robota.core.frontend`` extends another of its own, but for the exceptions and protocols
(``ChatService`` owns a ``ChatTurns`` and is its ``TurnHooks``)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from robota.core import frontend
from robota.core.frontend import ChatService, ChatTurns, TurnHooks

PACKAGE = frontend.__name__


def own_classes() -> list[type]:
    classes = []
    for info in pkgutil.iter_modules(frontend.__path__):
        module = importlib.import_module(f"{PACKAGE}.{info.name}")
        classes.extend(
            value
            for _, value in inspect.getmembers(module, inspect.isclass)
            if value.__module__ == module.__name__
        )
    return classes


def extends_its_own(cls: type) -> list[str]:
    """The bases of ``cls`` that are classes of the package and neither an exception nor a
    protocol."""
    return [
        base.__qualname__
        for base in cls.__bases__
        if base.__module__.startswith(f"{PACKAGE}.")
        and not issubclass(base, BaseException)
        and not getattr(base, "_is_protocol", False)
    ]


def test_no_class_of_the_frontend_extends_another_of_its_own() -> None:
    classes = own_classes()
    assert ChatService in classes and ChatTurns in classes  # the walk finds them
    extending = {cls.__qualname__: extends_its_own(cls) for cls in classes}
    assert {name: bases for name, bases in extending.items() if bases} == {}


def test_the_check_sees_a_class_that_extends_one_of_its_own() -> None:
    class Extended(ChatTurns):
        pass

    class Hooks(TurnHooks):  # a protocol is fine to name as a base
        pass

    assert extends_its_own(Extended) == ["ChatTurns"]
    assert extends_its_own(Hooks) == []
