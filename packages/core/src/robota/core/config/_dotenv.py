"""The .env format: parsing, loading into an environment, appending a newer template, and
setting values (``robota init`` storing newly registered credentials).

The dialect is the common subset every dotenv tool agrees on: ``KEY=value`` one per line, an
optional ``export`` prefix, ``#`` comments, single quotes (literal) and double quotes (with
``\\n \\r \\t \\" \\\\`` escapes). Multi-line values and ``$VAR`` interpolation are not supported:
they are where dotenv dialects disagree, and a secret that means different things to different
tools is worse than one that has to be quoted.

Everything here is a pure function of text; reading the file is ``_load``'s job.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Literal

from robota.core._errors import ConfigError

__all__ = [
    "DotenvLine",
    "apply_dotenv",
    "dotenv_values",
    "format_assignment",
    "merge_dotenv",
    "parse_dotenv",
    "set_dotenv",
]

LineKind = Literal["blank", "comment", "assignment", "invalid"]

_KEY = r"[A-Za-z_][A-Za-z0-9_]*"
_ASSIGNMENT = re.compile(rf"\s*(?:export\s+)?(?P<key>{_KEY})\s*=\s*(?P<rest>.*)\Z", re.DOTALL)
_COMMENTED = re.compile(rf"\s*#\s*(?:export\s+)?(?P<key>{_KEY})\s*=")
_SAFE_UNQUOTED = re.compile(r"[A-Za-z0-9_./:@,+%^~=-]*\Z")
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


@dataclass(frozen=True, slots=True)
class DotenvLine:
    """One physical line, kept verbatim so a merge can write it back untouched."""

    text: str
    """The line without its line ending."""
    ending: str
    """``"\\n"``, ``"\\r\\n"`` or ``""`` for a last line without one."""
    kind: LineKind
    key: str | None = None
    """Set for assignments, and for comments that are a commented-out assignment."""
    value: str | None = None
    """The parsed value of an assignment."""
    problem: str | None = None
    """Why an invalid line is invalid, without quoting it (it may hold a secret)."""


def _split_lines(text: str) -> Iterator[tuple[str, str]]:
    # Only "\n" ends a line: str.splitlines would also split on \x0b, \x1c, \u2028, ..., which
    # are legal inside a value.
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end == -1:
            yield text[start:], ""
            return
        line = text[start:end]
        if line.endswith("\r"):
            yield line[:-1], "\r\n"
        else:
            yield line, "\n"
        start = end + 1


def _after_value(rest: str) -> bool:
    """Whether what follows a closing quote is only blanks or a comment."""
    stripped = rest.lstrip(" \t")
    return not stripped or stripped.startswith("#")


def _parse_value(raw: str) -> tuple[str | None, str | None]:
    """Return ``(value, problem)`` for the text after ``=``."""
    if raw.startswith("'"):
        end = raw.find("'", 1)
        if end == -1:
            return None, "an unterminated single-quoted value"
        if not _after_value(raw[end + 1 :]):
            return None, "text after the closing quote"
        return raw[1:end], None
    if raw.startswith('"'):
        chars: list[str] = []
        i = 1
        while i < len(raw):
            char = raw[i]
            if char == "\\" and i + 1 < len(raw):
                nxt = raw[i + 1]
                if nxt in _ESCAPES:
                    chars.append(_ESCAPES[nxt])
                else:
                    chars.append(char + nxt)
                i += 2
                continue
            if char == '"':
                if not _after_value(raw[i + 1 :]):
                    return None, "text after the closing quote"
                return "".join(chars), None
            chars.append(char)
            i += 1
        return None, "an unterminated double-quoted value"
    comment = re.search(r"[ \t]#", raw)
    value = raw[: comment.start()] if comment else raw
    return value.strip(" \t"), None


def _parse_line(text: str, ending: str) -> DotenvLine:
    stripped = text.strip(" \t")
    if not stripped:
        return DotenvLine(text, ending, "blank")
    if stripped.startswith("#"):
        commented = _COMMENTED.match(text)
        return DotenvLine(text, ending, "comment", key=commented["key"] if commented else None)
    match = _ASSIGNMENT.match(text)
    if match is None:
        return DotenvLine(text, ending, "invalid", problem="a line that is not KEY=value")
    value, problem = _parse_value(match["rest"])
    if problem is not None:
        return DotenvLine(text, ending, "invalid", key=match["key"], problem=problem)
    return DotenvLine(text, ending, "assignment", key=match["key"], value=value)


def parse_dotenv(text: str) -> tuple[DotenvLine, ...]:
    """Split ``text`` into classified lines; joining ``text + ending`` gives ``text`` back."""
    return tuple(_parse_line(line, ending) for line, ending in _split_lines(text))


def dotenv_values(text: str, *, file: str | None = None) -> dict[str, str]:
    """The assignments of a .env file, the last one winning; raise ``ConfigError`` on a bad line.

    A bad line is fatal rather than skipped: a silently ignored ``BOT_TOKEN`` line shows up
    much later as a confusing "variable not set" error in config.yaml.
    """
    values: dict[str, str] = {}
    for number, line in enumerate(parse_dotenv(text), start=1):
        if line.kind == "invalid":
            where = f"line {number}" + (f" ({line.key})" if line.key else "")
            raise ConfigError(
                file, where, line.problem or "an invalid line", "KEY=value or a # comment"
            )
        if line.kind == "assignment":
            assert line.key is not None and line.value is not None
            values[line.key] = line.value
    return values


def apply_dotenv(environ: MutableMapping[str, str], values: Mapping[str, str]) -> dict[str, str]:
    """Set each of ``values`` that ``environ`` lacks; return the ones that took effect.

    The environment wins so that a one-off ``FOO=x robota ...`` overrides the profile.
    """
    applied: dict[str, str] = {}
    for key, value in values.items():
        if key not in environ:
            environ[key] = value
            applied[key] = value
    return applied


def format_assignment(key: str, value: str) -> str:
    """A ``KEY=value`` line (without line ending) that ``parse_dotenv`` reads back as ``value``."""
    if re.fullmatch(_KEY, key) is None:
        raise ValueError(f"not a valid variable name: {key!r}")
    if _SAFE_UNQUOTED.match(value):
        return f"{key}={value}"
    escaped = (
        value.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'{key}="{escaped}"'


def _line_ending(lines: tuple[DotenvLine, ...]) -> str:
    endings = [line.ending for line in lines if line.ending]
    if endings and endings.count("\r\n") > len(endings) // 2:
        return "\r\n"
    return "\n"


def merge_dotenv(existing: str, template: str) -> str:
    """Append the template's active assignments that ``existing`` does not mention.

    A key counts as mentioned when it is assigned *or commented out*: commenting a variable out
    is how a user turns it off, and a merge must never turn it back on. For the same reason the
    template's commented examples are never copied. Everything already in ``existing`` is kept
    byte for byte; the result of a second merge is identical to the first.
    """
    ours = parse_dotenv(existing)
    mentioned = {line.key for line in ours if line.key is not None}
    missing: list[str] = []
    for line in parse_dotenv(template):
        if line.kind == "assignment" and line.key not in mentioned:
            assert line.key is not None
            mentioned.add(line.key)
            missing.append(line.text)
    if not missing:
        return existing
    eol = _line_ending(ours)
    prefix = existing if not existing or existing.endswith("\n") else existing + eol
    return prefix + eol.join(missing) + eol


def set_dotenv(existing: str, values: Mapping[str, str]) -> str:
    """``existing`` with every key of ``values`` assigned its value.

    The key's first assignment is replaced where it stands (later ones are dropped: they would
    win), or else its commented-out example (``# KEY=``) becomes the assignment, or else the
    line is appended. Every other line is kept byte for byte.
    """
    lines = parse_dotenv(existing)
    eol = _line_ending(lines)
    placed: set[str] = set()
    out: list[str] = []
    for line in lines:
        key = line.key
        if key is not None and key in values and line.kind in ("assignment", "invalid"):
            first = key not in placed
            placed.add(key)
            # A later assignment becomes "": ``out`` stays aligned with ``lines``.
            out.append(format_assignment(key, values[key]) + (line.ending or eol) if first else "")
            continue
        out.append(line.text + line.ending)
    for index, line in enumerate(lines):  # commented examples, for keys still missing
        key = line.key
        if line.kind == "comment" and key is not None and key in values and key not in placed:
            placed.add(key)
            out[index] = format_assignment(key, values[key]) + (line.ending or eol)
    missing = [key for key in values if key not in placed]
    text = "".join(out)
    if missing:
        if text and not text.endswith("\n"):
            text += eol
        text += "".join(format_assignment(key, values[key]) + eol for key in missing)
    return text
