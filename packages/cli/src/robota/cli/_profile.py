"""The profile's configuration as the ``robota`` script loads it: through its parse cache.

``robota.host.load_profile`` reads the configuration as any library caller does (exit 2 with
the reason when it is missing or invalid); the script's commands first turn on its cache of
what config.yaml parsed to (``_parsed_text``), which only the CLI owns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robota.core.config import Config, Profile

__all__ = ["load_profile"]


def load_profile() -> tuple[Config, Profile]:
    """The profile's configuration (see the module docstring)."""
    from robota.host import load_profile as load  # noqa: PLC0415 (keeps --help fast)

    from ._parsed_text import parsed_cache_on  # noqa: PLC0415

    parsed_cache_on()
    return load()
