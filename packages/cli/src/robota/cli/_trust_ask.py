"""Workspace trust at a terminal: the TUI's question, and a refused start's exit.

The gate itself (``headless_workspace``, ``WorkspaceRefused``) is the host's
(``robota.host``): a background session and the daemon pass it in their own processes.
Here is only what a command line does with it: ask on the controlling terminal
(``/dev/tty``, never standard input) or say why it refused and exit 2.

A terminal is not proof of a person: an agent can open a pty of its own. So no question is
asked, and the answer is "no", when this process descends from an agent robota started
(``robota.core.control.caller_refusal``); the host holds the requests these questions lead
to (``session.attach``) to the same rule.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Literal

import click

if TYPE_CHECKING:
    from robota.core.trust import TrustDecision
    from robota.host import WorkspaceRefused

__all__ = ["ask_on_terminal", "ask_terminal", "refused_exit"]


def refused_exit(error: WorkspaceRefused) -> None:
    """Say why on stderr and exit 2."""
    click.echo(f"robota: {error}", err=True)
    sys.exit(2)


def ask_terminal(question: str) -> str:
    """Ask on the controlling terminal (``/dev/tty``, never standard input); the answer's line,
    stripped and lower-cased, ``""`` without a terminal or an answer, or when this process
    descends from an agent's (said on stderr)."""
    from robota.core.control import caller_refusal  # noqa: PLC0415

    why = caller_refusal(os.getpid())
    if why is not None:
        click.echo(f"robota: only the operator answers this question: {why}", err=True)
        return ""
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return ""
    try:
        os.write(fd, question.encode())
        answer = b""
        while not answer.endswith(b"\n") and len(answer) < 256:
            chunk = os.read(fd, 256)
            if not chunk:
                break
            answer += chunk
    except OSError:
        return ""
    finally:
        os.close(fd)
    return answer.decode("utf-8", "replace").strip().lower()


def ask_on_terminal(decision: TrustDecision) -> Literal["trust", "restricted", "quit"]:
    """The TUI's question before it composes a session in an untrusted workspace, asked on
    the controlling terminal (``/dev/tty``); no terminal, or no answer, is "quit"."""
    why = "cannot be established as trusted" if decision.state == "unreadable" else "is not trusted"
    question = (
        f"The workspace {decision.workspace} {why} ({decision.state}).\n"
        "Trusting it applies its .robota/config.yaml and the profile's permission mode;\n"
        "Restricted ignores the project's settings and runs the agent in plan mode.\n"
        "[t] trust it   [r] continue Restricted   [q] quit: "
    )
    choice = ask_terminal(question)
    if choice in ("t", "trust"):
        return "trust"
    if choice in ("r", "restricted"):
        return "restricted"
    return "quit"
