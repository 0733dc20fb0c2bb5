"""``ctrl_c_deferred``: a Ctrl-C during print mode's prestart is raised once it returned (so
the caller holds the agent it spawned and ends it), and the previous handler is back after."""

from __future__ import annotations

import os
import signal

import pytest

from robota.cli._prestart import ctrl_c_deferred


def test_a_ctrl_c_inside_is_raised_after_the_block_ran_to_its_end() -> None:
    ran: list[str] = []
    with pytest.raises(KeyboardInterrupt), ctrl_c_deferred():
        os.kill(os.getpid(), signal.SIGINT)
        ran.append("after the signal")
    assert ran == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_no_ctrl_c_no_interrupt_and_the_handler_restored() -> None:
    with ctrl_c_deferred():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_error_inside_still_restores_the_handler() -> None:
    with pytest.raises(ValueError, match="inside"), ctrl_c_deferred():
        raise ValueError("inside")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
