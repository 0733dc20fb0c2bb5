"""Reading typed values out of loaded YAML, with ``${NAME}`` expansion and careful errors.

A ``Reader`` is the only place that builds "found ..." descriptions, so the rule that a
credential is described and never quoted lives in one place: values of secret-named keys, and
values that came from a ``${NAME}`` reference, are shown by shape, not content.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from robota.core._errors import ConfigError

from ._expand import Expansion, expand
from ._secrets import MIN_SECRET_LENGTH

__all__ = ["Reader", "credential_url", "describe", "one_of"]

_T = TypeVar("_T", bound=str)
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def describe(value: object) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, int | float):
        return f"{value} (a number)"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return repr(shown)
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a {type(value).__name__}"


def one_of(choices: Collection[str]) -> str:
    return "one of " + ", ".join(choices)


class Reader:
    """Reads typed values out of the loaded YAML; remembers the secrets it sees on the way."""

    def __init__(self, file: str, environ: Mapping[str, str], env_file: Path) -> None:
        self.file = file
        self.environ = environ
        self.env_file = env_file
        self.secrets: set[str] = set()

    def error(self, path: str, found: str, expected: str) -> ConfigError:
        return ConfigError(self.file, path, found, expected)

    def section(
        self, value: object, path: str, allowed: Collection[str], *, nullable: bool = True
    ) -> Mapping[str, Any]:
        if value is None and nullable:
            return {}
        if not isinstance(value, Mapping):
            raise self.error(path, describe(value), "a mapping")
        for key in value:
            if not isinstance(key, str):
                raise self.error(path, f"the key {describe(key)}", "text keys")
        unknown = [key for key in value if key not in allowed]
        if unknown:
            found = ", ".join(repr(key) for key in unknown)
            noun = "unknown key" if len(unknown) == 1 else "unknown keys"
            raise self.error(path, f"{noun} {found}", one_of(allowed))
        return value

    def text(
        self,
        raw: object,
        path: str,
        *,
        required: bool,
        secret: bool = False,
        expected: str = "text",
    ) -> str | None:
        """Expand one string value; ``None`` when it is absent, empty or an unset reference."""
        if raw is None:
            if required:
                raise self.error(path, "nothing", expected)
            return None
        expansion = self._expand(raw, path, secret=secret, expected=expected)
        if expansion.missing:
            if not required:
                return None
            name = expansion.missing[0]
            raise self.error(
                path,
                f"${{{name}}} but {name} is not set",
                f"{name} set in the environment or in {self.env_file}",
            )
        value = expansion.value
        if not value:
            if required:
                origin = f" (from {', '.join(expansion.names)})" if expansion.referenced else ""
                raise self.error(path, f"an empty value{origin}", f"non-empty {expected}")
            return None
        if secret and len(value) >= MIN_SECRET_LENGTH:
            self.secrets.add(value)
        return value

    def _expand(self, raw: object, path: str, *, secret: bool, expected: str) -> Expansion:
        if not isinstance(raw, str):
            found = "a value that is not text" if secret else describe(raw)
            if isinstance(raw, int | float) and not isinstance(raw, bool) and expected == "text":
                expected += " (quote it to make it text)"
            raise self.error(path, found, expected)
        expansion = expand(raw, self.environ)
        if expansion.malformed:
            raise self.error(
                path, "a '${' that does not start a ${NAME} reference", "${NAME} or $${ for '${'"
            )
        return expansion

    def env_value(self, raw: object, path: str, *, secret: bool) -> str | None:
        """A value for an agent's environment; ``None`` drops the variable.

        An unset reference drops it rather than failing: ``OPENAI_API_KEY: ${OPENAI_API_KEY}``
        means "pass it on when I have one", and the agent then sees it unset, as it would anyway.
        An explicit empty string is kept: setting a variable to empty is meaningful.
        """
        if raw is None:
            raise self.error(path, "nothing", "text (write '' for an empty value)")
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            raw = str(raw)
        expansion = self._expand(raw, path, secret=secret, expected="text")
        if expansion.missing:
            return None
        if secret and len(expansion.value) >= MIN_SECRET_LENGTH:
            self.secrets.add(expansion.value)
        return expansion.value

    def describe_value(self, raw: object, value: str, secret: bool) -> str:
        if secret:
            return f"a {len(value)}-character secret"
        if isinstance(raw, str) and "${" in raw:
            return f"{raw!r} (expanded)"
        return describe(value)

    def choice(
        self,
        raw: object,
        path: str,
        choices: tuple[_T, ...],
        default: _T,
        *,
        fold_case: bool = False,
        hint: str = "",
    ) -> _T:
        value = self.text(raw, path, required=False, expected=one_of(choices))
        if value is None:
            return default
        wanted = value.lower() if fold_case else value
        for choice in choices:
            if choice == wanted:
                return choice
        raise self.error(path, self.describe_value(raw, value, False), one_of(choices) + hint)

    def boolean(self, raw: object, path: str, default: bool) -> bool:
        if raw is None:
            return default
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and "${" in raw:
            value = self.text(raw, path, required=False, expected="true or false")
            if value is None:
                return default
            if value.lower() in ("true", "false"):
                return value.lower() == "true"
            raise self.error(path, self.describe_value(raw, value, False), "true or false")
        raise self.error(path, describe(raw), "true or false")

    def integer(self, raw: object, path: str, low: int, high: int) -> int:
        expected = f"a whole number from {low} to {high}"
        number: int | None = None
        if isinstance(raw, int) and not isinstance(raw, bool):
            number = raw
        elif isinstance(raw, str) and "${" in raw:
            value = self.text(raw, path, required=True, expected=expected)
            assert value is not None
            if not value.isdigit():
                raise self.error(path, self.describe_value(raw, value, False), expected)
            number = int(value)
        if number is None:
            raise self.error(path, describe(raw), expected)
        if not low <= number <= high:
            raise self.error(path, str(number), expected)
        return number

    def path(self, raw: object, path: str, base: Path, default: Path) -> Path:
        value = self.text(raw, path, required=False, expected="a path")
        if value is None:
            return default
        resolved = Path(value).expanduser()
        return resolved if resolved.is_absolute() else base / resolved

    def secret(
        self, section: Mapping[str, Any], key: str, path: str, *, required: bool
    ) -> str | None:
        return self.text(section.get(key), f"{path}.{key}", required=required, secret=True)

    def base_url(self, raw: object, path: str, expected: str, *, with_path: bool) -> str | None:
        """A base URL credentials may travel to (a transport's ``domain`` or ``apiUrl``):
        https, or plain http to this machine only (a loopback test server); no query, no
        fragment, and no path unless ``with_path``. ``None`` when absent."""
        value = self.text(raw, path, required=False, expected=expected)
        if value is None:
            return None
        if credential_url(value, with_path=with_path) is None:
            raise self.error(path, repr(value), expected)
        return value


def credential_url(value: str, *, with_path: bool) -> str | None:
    """``value`` without a trailing slash if it is a base URL credentials may travel to
    (https, or plain http to this machine only; no query, no fragment, no path unless
    ``with_path``), else ``None``. ``Reader.base_url`` and ``robota init`` share it."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        return None
    plain_ok = parts.scheme == "http" and parts.hostname in _LOOPBACK
    if (
        (parts.scheme != "https" and not plain_ok)
        or not parts.hostname
        or (parts.path.strip("/") and not with_path)
        or parts.query
        or parts.fragment
    ):
        return None
    return value.rstrip("/")
