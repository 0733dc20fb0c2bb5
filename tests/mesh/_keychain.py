"""A keychain in memory behind keyring's backend interface, and the secret the tests store."""

from __future__ import annotations

import threading

from keyring.backend import KeyringBackend

SECRET = b"\x01secret-bytes-never-shown\x02" + bytes(8)


class MemoryKeychain(KeyringBackend):
    """A keychain in memory that can break or hang on demand (the injected backend)."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}
        self.broken = False
        self.release = threading.Event()
        self.hang = False

    def _check(self) -> None:
        if self.hang:
            self.release.wait(10)
        if self.broken:
            raise RuntimeError(f"backend failure quoting {SECRET!r}")

    def get_password(self, service: str, username: str) -> str | None:
        self._check()
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._check()
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self._check()
        self.items.pop((service, username), None)
