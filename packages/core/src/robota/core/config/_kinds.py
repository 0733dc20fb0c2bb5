"""Runtime kinds in the order a user has met them: the packaged config.yaml's.

Core names no kind; the installed profile template, ``robota init``'s data (``template_text``:
the product's, registered by the package that composes it), does. Where robota lists the
installed kinds (a config error's expected values) or their agents (``robota init``'s report),
it lists them in the order the template first uses them, then any other in the order found.
"""

from __future__ import annotations

import re

from robota.core._errors import RobotaError

__all__ = ["as_the_template_orders"]

_TEMPLATE_KIND = re.compile(r"^\s*kind:\s*(\S+)\s*$", re.MULTILINE)


def as_the_template_orders(kinds: tuple[str, ...]) -> list[str]:
    """``kinds`` in the order the packaged config.yaml first uses them (the order a user has
    met them in: ``robota init``, the README), then the others in the order they were found."""
    from ._templates import template_text  # noqa: PLC0415 (an error's wording; several ms a start)

    try:
        text = template_text("config.yaml")
    except RobotaError:
        text = ""  # no template installed: the order found
    used = list(dict.fromkeys(_TEMPLATE_KIND.findall(text)))
    return sorted(kinds, key=lambda kind: used.index(kind) if kind in used else len(used))
