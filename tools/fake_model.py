"""Run the fake model server (tests/support/model_server.py) as a process, on 127.0.0.1.

    .venv/bin/python tools/fake_model.py [--port N] [--log FILE]
                                         [--slow-deltas 60] [--slow-delay 0.05]

Prints ``http://127.0.0.1:<port>`` on its first stdout line, then serves until SIGINT or SIGTERM.
With ``--log``, every request is appended to FILE as one JSON line (credentials removed). The
scenario keywords are documented in the server module's docstring (``--help`` prints it).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support import model_server  # noqa: E402 (needs the path set above)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=model_server.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument("--log", type=Path, help="append every request to this JSON-lines file")
    parser.add_argument("--slow-deltas", type=int, default=60)
    parser.add_argument("--slow-delay", type=float, default=0.05)
    args = parser.parse_args(argv)

    log: IO[str] | None = args.log.open("a", encoding="utf-8") if args.log else None
    lock = threading.Lock()

    def record(request: model_server.RecordedRequest) -> None:
        if log is not None:
            with lock:
                log.write(json.dumps(request.as_json()) + "\n")
                log.flush()

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        with model_server.FakeModel(
            args.port,
            slow_deltas=args.slow_deltas,
            slow_delay=args.slow_delay,
            on_request=record,
        ) as model:
            print(model.url, flush=True)
            stop.wait()
    finally:
        if log is not None:
            log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
