"""The installed profile templates (``config.yaml`` and ``env``): what ``robota init`` writes.

Core ships none: they name the agents and chat platforms of the product, so the package that
composes it holds them and registers that package under the ``robota.profile_templates`` entry
point; core reads them through it.
"""

from __future__ import annotations

from importlib import resources
from typing import Literal

from robota.core._errors import RobotaError

__all__ = ["TEMPLATES_GROUP", "TemplateName", "template_text"]

TemplateName = Literal["config.yaml", "env"]

TEMPLATES_GROUP = "robota.profile_templates"
"""The entry point naming the package that holds the templates: core ships none, since they
name agents and platforms; the distribution that composes robota registers its own."""


def template_text(name: TemplateName) -> str:
    """An installed profile template: ``config.yaml`` or ``env`` (the .env file), from the
    package the ``robota.profile_templates`` entry point names (the first, by name)."""
    from .._dists import entry_points  # noqa: PLC0415 (init and error wording only)

    found = sorted(entry_points(TEMPLATES_GROUP), key=lambda entry: entry.name)
    if not found:
        raise RobotaError(
            f"no profile templates are installed (no {TEMPLATES_GROUP!r} entry point): "
            "install robota's command-line package"
        )
    return resources.files(found[0].value).joinpath(name).read_text(encoding="utf-8")
