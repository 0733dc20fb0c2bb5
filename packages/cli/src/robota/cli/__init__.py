"""robota.cli: the ``robota`` command, the composition root of the product.

It reads configuration, builds the supervision tree and starts the configured transports and
runtimes. Everything heavy (trio, the store, cryptography, a TUI) is imported inside the command
that needs it, so ``robota --help`` stays fast; a test measures that import set.
"""

from ._app import cli, main

__all__ = ["cli", "main"]
