"""Pairing through a relay that ends TLS, across network namespaces the test creates (one bridge,
``_netns.bridged``): the laptop (signing, listening) in the first, the desk in the second, and in
the third the relay (``_impostor.py terminate``), which passes the pairing preamble on and then
ends TLS on both sides with a key of its own, so that both handshakes complete and the PAKE's
messages pass through it. ``mesh pair`` and ``mesh join RELAY`` run on terminals in the
laptop's and the desk's namespaces (tmux), the right code typed.

The pairing fails as the design says (``robota.mesh._pairing``): each side's confirmation is
bound to both link certificates as that side saw them, and the relay showed each side its own,
so the joiner finds the pairer's confirmation wrong (``wrong-code``, said on its terminal as a
code that did not match, or something relaying), the pairer's host logs the pairing from the
relay's address as ``wrong-code`` and its window as burned, the operator is never asked, and
nothing is paired or written. The code is spent: typed again, straight to the laptop, no
window answers it.

Everything the test starts or creates is ended and removed in a ``finally``; the test is
skipped, saying why, where namespaces cannot be created.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

from ._hosts import _log, _status, signing_laptop_and_new_desk
from ._netns import SUBNET, bridged, end, join_in, pair_and_join_in, spawn_in, start_in
from ._profiles import _robota

PORT = 47394
LAPTOP, DESK, RELAY = f"{SUBNET}.1", f"{SUBNET}.2", f"{SUBNET}.3"
IMPOSTOR = Path(__file__).with_name("_impostor.py")


def _relay_ready(relay: subprocess.Popen[str]) -> None:
    assert relay.stdout is not None
    readable, _, _ = select.select([relay.stdout], [], [], 60)
    line = relay.stdout.readline() if readable else ""
    assert line.strip() == "ready", f"the relay did not start: {line!r}"


def test_pairing_through_a_relay_that_ends_tls_fails_and_spends_the_code(tmp_path: Path) -> None:
    laptop, desk = signing_laptop_and_new_desk(tmp_path, f"{LAPTOP}:{PORT}")
    report = tmp_path / "relay.txt"
    with bridged(f"rp{os.getpid() % 100000}", 3) as namespaces:
        started: list[Path] = []
        relay: subprocess.Popen[str] | None = None
        try:
            for home, namespace in ((laptop, namespaces[0]), (desk, namespaces[1])):
                start_in(namespace, home)
                started.append(home)
            argv = ["terminate", str(PORT), LAPTOP, str(PORT), str(report)]
            relay = spawn_in(namespaces[2], [sys.executable, str(IMPOSTOR), *argv])
            _relay_ready(relay)

            paired, joined, code = pair_and_join_in(
                (laptop, namespaces[0]), (desk, namespaces[1]), f"{RELAY}:{PORT}"
            )
            assert code in paired.screen
            assert paired.code == 1 and "not paired" in paired.stderr, paired
            assert joined.code == 1, joined
            assert "the code did not match" in joined.stderr, joined.stderr
            assert "something relaying between the devices" in joined.stderr, joined.stderr
            assert "[y/N]" not in paired.screen  # nobody was asked to accept anything
            # Both TLS handshakes completed through the relay: the PAKE's binding refused it.
            seen = report.read_text()
            assert "dialler: handshake done" in seen and "target: handshake done" in seen, seen
            log = _log(laptop)
            assert f"a pairing from {RELAY}:" in log and ": wrong-code" in log, log
            assert "pairing ended without a device: burned" in log, log

            # The code is spent: typed again, straight to the laptop, no window answers it.
            rejoined = join_in((desk, namespaces[1]), f"{LAPTOP}:{PORT}", code)
            assert rejoined.code == 1, rejoined
            assert "no pairing window answered" in rejoined.stderr, rejoined.stderr

            # Nothing was paired or written on either side.
            listed = json.loads(_robota(laptop, "mesh", "devices", "--json").stdout)
            assert len(listed) == 1
            for home in (laptop, desk):
                assert "peers" not in home.joinpath("config.yaml").read_text()
            assert _status(desk)["links"] == []
        finally:
            if relay is not None:
                end(relay)
            for home in started:
                _robota(home, "server", "stop")
