"""Helpers for testing code built on the robota kernel. Public API: use them in your own tests.

* ``supervised(...)``: run a supervision tree inside a trio test and stop it afterwards;
* ``Probe`` and ``Recording``: an actor that records what it receives, across incarnations;
* ``crash(address)``: make the actor behind an address crash on purpose, as a real bug would;
* ``wait_until(predicate)``: poll a condition from trio with a deadline;
* ``FAST_BACKOFF``: restart delays of milliseconds instead of seconds.
"""

from ._helpers import FAST_BACKOFF, Probe, Recording, crash, supervised, wait_until

__all__ = [
    "FAST_BACKOFF",
    "Probe",
    "Recording",
    "crash",
    "supervised",
    "wait_until",
]
