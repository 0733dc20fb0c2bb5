"""Reading a profile from disk: .env first, then config.yaml, then validation.

This is the thin I/O shell around ``_dotenv`` and ``_validate``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from robota.core._errors import ConfigError

from ._dotenv import apply_dotenv, dotenv_values
from ._model import Config
from ._parsed import parse_cache
from ._paths import Profile, resolve_profile
from ._secrets import secrets_from_dotenv
from ._validate import validate_config

__all__ = ["load_config", "load_dotenv", "parse_config", "parse_yaml", "read_text"]


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path``, line endings untouched; a ``ConfigError`` if unreadable."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(
            str(path), "(file)", "no such file", "a config file (`robota init` creates one)"
        ) from None
    except OSError as error:
        raise ConfigError(
            str(path), "(file)", error.strerror or type(error).__name__, "a readable file"
        ) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigError(
            str(path), f"byte {error.start}", "bytes that are not UTF-8", "UTF-8 text"
        ) from None


def yaml_problem(file: str, error: Exception) -> ConfigError:
    """Describe a YAML syntax error by position and cause, never by the offending text."""
    from ruamel.yaml.constructor import DuplicateKeyError  # noqa: PLC0415 (see parse_yaml)
    from ruamel.yaml.error import MarkedYAMLError  # noqa: PLC0415

    where = "(document)"
    problem = "invalid YAML"
    if isinstance(error, MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        if mark is not None:
            where = f"line {mark.line + 1}, column {mark.column + 1}"
        if isinstance(error, DuplicateKeyError):
            # Its message quotes both values, which may be credentials.
            problem = "a key that appears twice in the same mapping"
        elif error.problem:
            problem = f"invalid YAML ({error.problem})"
    return ConfigError(file, where, problem, "valid YAML")


def parse_yaml(text: str, *, file: str) -> object:
    """Plain Python data (dicts, lists, scalars) from YAML text; through the parse cache when
    one is installed (``_parsed``: the ``robota`` script's), so ruamel.yaml (about 20 ms to
    import) loads only for a text not parsed before."""

    def parse(text: str) -> object:
        from ruamel.yaml import YAML  # noqa: PLC0415
        from ruamel.yaml.error import YAMLError  # noqa: PLC0415

        try:
            return YAML(typ="safe", pure=True).load(text)
        except YAMLError as error:
            raise yaml_problem(file, error) from None

    cache = parse_cache()
    return parse(text) if cache is None else cache.parse(text, parse)


def parse_config(
    text: str,
    *,
    file: Path,
    environ: Mapping[str, str],
    profile: Profile,
    start_dir: Path,
    extra_secrets: frozenset[str] = frozenset(),
) -> Config:
    """Validate config.yaml ``text``; ``environ`` must already include the profile's .env."""
    data = parse_yaml(text, file=str(file))
    return validate_config(
        data,
        file=file,
        environ=environ,
        profile=profile,
        start_dir=start_dir,
        extra_secrets=extra_secrets,
    )


def load_dotenv(profile: Profile, environ: MutableMapping[str, str]) -> dict[str, str]:
    """Load the profile's .env into ``environ`` (which wins); return everything the file holds."""
    path = profile.env_file
    if not path.exists():
        return {}
    values = dotenv_values(read_text(path), file=str(path))
    apply_dotenv(environ, values)
    return values


def load_config(
    profile: Profile | None = None,
    *,
    environ: MutableMapping[str, str] | None = None,
    start_dir: Path | None = None,
) -> Config:
    """Load the profile's .env into ``environ`` (default: ``os.environ``), then its config.

    Loading into the process environment is the default on purpose: the agents and helpers robota
    starts need the same credentials, and inherit them from there.
    """
    env = os.environ if environ is None else environ
    resolved = resolve_profile(env) if profile is None else profile
    values = load_dotenv(resolved, env)
    # A variable the environment overrides is still a secret, and so is the override.
    secrets = secrets_from_dotenv(values) | secrets_from_dotenv(
        {key: env[key] for key in values if key in env}
    )
    return parse_config(
        read_text(resolved.config_file),
        file=resolved.config_file,
        environ=env,
        profile=resolved,
        start_dir=Path.cwd() if start_dir is None else start_dir,
        extra_secrets=secrets,
    )
