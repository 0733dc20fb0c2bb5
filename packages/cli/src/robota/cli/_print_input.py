"""Print mode's input, read the same way whether its turns run in this process (``_print``) or
on a warm host (``_print_relay``): the prompt of ``-p`` and the lines of ``--input-format
stream-json``. Standard library only, so the host's client loads no engine to read them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TextIO

__all__ = ["INTERRUPT_GRACE", "input_text", "parse_input_line", "prompt_text"]

INTERRUPT_GRACE = 10.0
"""Seconds Ctrl-C waits for the interrupted turn to end before robota exits anyway."""


def parse_input_line(line: str, number: int) -> str:
    """The text of one ``--input-format stream-json`` line; ``ValueError`` says what is wrong.

    Accepted: ``{"type": "user", "text": "..."}`` and the common envelope
    ``{"type": "user", "message": {"role": "user", "content": "..." | [{"type": "text",
    "text": "..."}]}}``.
    """
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"input line {number}: not JSON ({error.msg})") from None
    if not isinstance(obj, dict) or obj.get("type") != "user":
        raise ValueError(f'input line {number}: expected an object with "type": "user"')
    text = obj.get("text")
    if text is None and isinstance(obj.get("message"), dict):
        content = obj["message"].get("content")
        if isinstance(content, list):
            parts = [p.get("text") for p in content if isinstance(p, dict)]
            text = "".join(p for p in parts if isinstance(p, str)) or None
        else:
            text = content
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f'input line {number}: "text" must be a non-empty string')
    return text


def input_text(line: str, number: int, refuse: Callable[[str], None]) -> str | None:
    """The text of stdin's line ``number``; ``None`` for a blank line and for one that is
    wrong, which ``refuse`` is told of (the run goes on with the next line)."""
    if not line.strip():
        return None
    try:
        return parse_input_line(line, number)
    except ValueError as error:
        refuse(str(error))
        return None


def prompt_text(prompt: str | None, stdin: TextIO) -> str:
    """The prompt of ``-p``: its text, else all of stdin when stdin is not a terminal;
    ``ValueError`` says what is missing (print mode's usage error)."""
    if prompt:
        return prompt
    if stdin.isatty():
        raise ValueError("-p needs a prompt: robota -p 'TEXT', or pipe one into stdin")
    text = stdin.read()
    if not text.strip():
        raise ValueError("-p: stdin was empty; nothing to send")
    return text
