"""The impostors of the namespace tests, run as a program in the third namespace
(``python _impostor.py MODE ...``; it imports nothing from the tests):

``forward PORT HOST TARGET_PORT DIR``
    A relay that only passes bytes on, both ways, for every connection to ``PORT``; what each
    connection's dialler sent is recorded in ``DIR/N.bin`` (a real link's bytes, for replay).
``terminate PORT HOST TARGET_PORT REPORT``
    A relay that ends TLS on both sides with its own key: it passes the preamble on, then
    answers the dialler with its own certificate and dials the target with it; what each side
    did is appended to ``REPORT`` (application bytes passed, if ever, are counted there).
``replay HOST PORT RECORDING REPORT``
    Sends a recorded connection's bytes to ``HOST:PORT`` as they were, and reports what came
    back before the connection ended.
``stranger HOST PORT CERT REPORT``
    A device nobody paired, with keys of its own, that knows the target's link certificate
    (``CERT``, DER) and dials it as a link would.

Each mode prints ``ready`` once it listens or has done its work, and runs until it is killed
(the relays) or it is done.
"""

from __future__ import annotations

import ssl
import sys
from pathlib import Path

import trio

from robota.mesh import new_key
from robota.mesh._linkcert import client_context, pairing_context
from robota.mesh._linkio import LINK_PREAMBLE

PREAMBLE = len(LINK_PREAMBLE)


def report(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(line + "\n")


async def pump(source: trio.abc.Stream, sink: trio.abc.Stream, seen: list[int]) -> None:
    try:
        while data := await source.receive_some(65536):
            seen[0] += len(data)
            await sink.send_all(data)
    except (trio.BrokenResourceError, trio.ClosedResourceError, ssl.SSLError):
        pass
    finally:
        await trio.aclose_forcefully(sink)


async def both_ways(inbound: trio.abc.Stream, outbound: trio.abc.Stream) -> tuple[int, int]:
    up, down = [0], [0]
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pump, inbound, outbound, up)
            nursery.start_soon(pump, outbound, inbound, down)
    finally:
        await trio.aclose_forcefully(inbound)
        await trio.aclose_forcefully(outbound)
    return up[0], down[0]


class Recorder(trio.abc.Stream):
    """A stream whose received bytes are also appended to a file."""

    def __init__(self, stream: trio.SocketStream, path: Path) -> None:
        self.stream, self.path = stream, path

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = await self.stream.receive_some(max_bytes)
        with self.path.open("ab") as out:
            out.write(data)
        return data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self.stream.aclose()


async def forward(port: int, host: str, target: int, folder: Path) -> None:
    count = 0

    async def one(inbound: trio.SocketStream) -> None:
        nonlocal count
        count += 1
        recorded = Recorder(inbound, folder / f"{count}.bin")
        try:
            outbound = await trio.open_tcp_stream(host, target)
        except OSError:
            await trio.aclose_forcefully(inbound)
            return
        await both_ways(recorded, outbound)

    listeners = await trio.open_tcp_listeners(port, host="0.0.0.0")
    print("ready", flush=True)
    await trio.serve_listeners(one, listeners)


async def terminate(port: int, host: str, target: int, out: Path) -> None:
    own = new_key()

    async def one(inbound: trio.SocketStream) -> None:
        outbound = await trio.open_tcp_stream(host, target)
        try:
            preamble = b""
            while len(preamble) < PREAMBLE and (chunk := await inbound.receive_some(PREAMBLE)):
                preamble += chunk
            await outbound.send_all(preamble)
            answer = pairing_context(own, server_side=True)  # its own certificate, no question
            inner = trio.SSLStream(inbound, answer, server_side=True)
            outer = trio.SSLStream(outbound, pairing_context(own, server_side=False))
            for side, tls in (("dialler", inner), ("target", outer)):
                try:
                    with trio.fail_after(10):
                        await tls.do_handshake()
                    report(out, f"{side}: handshake done")
                except (trio.BrokenResourceError, trio.TooSlowError) as error:
                    report(out, f"{side}: handshake failed: {error.__cause__ or error!r}")
            up, down = await both_ways(inner, outer)
            report(out, f"application bytes: {up} up, {down} down")
        except (OSError, trio.BrokenResourceError) as error:
            report(out, f"ended: {error!r}")
        finally:
            await trio.aclose_forcefully(inbound)
            await trio.aclose_forcefully(outbound)

    listeners = await trio.open_tcp_listeners(port, host="0.0.0.0")
    print("ready", flush=True)
    await trio.serve_listeners(one, listeners)


async def replay(host: str, port: int, recording: Path, out: Path) -> None:
    stream = await trio.open_tcp_stream(host, port)
    back = 0
    try:
        await stream.send_all(recording.read_bytes())
        with trio.move_on_after(15):
            while data := await stream.receive_some(65536):
                back += len(data)
        report(out, f"replayed {recording.stat().st_size} bytes; {back} came back; ended")
    except trio.BrokenResourceError as error:
        report(out, f"replayed; {back} came back; broken: {error.__cause__ or error!r}")
    finally:
        await trio.aclose_forcefully(stream)
    print("ready", flush=True)


async def stranger(host: str, port: int, cert: Path, out: Path) -> None:
    stream = await trio.open_tcp_stream(host, port)
    await stream.send_all(LINK_PREAMBLE)
    tls = trio.SSLStream(stream, client_context(new_key(), [cert.read_bytes()]))
    try:
        with trio.fail_after(10):
            await tls.do_handshake()
            # TLS 1.3: the listener judges this side's certificate once this side's handshake
            # ended; its verdict shows on the first read.
            await tls.send_all(b"GET /robota-mesh/1/link HTTP/1.1\r\nHost: x\r\n\r\n")
            data = await tls.receive_some(65536)
        report(out, f"stranger: {len(data)} bytes of application data came back")
    except (trio.BrokenResourceError, trio.TooSlowError) as error:
        report(out, f"stranger: refused: {error.__cause__ or error!r}")
    finally:
        await trio.aclose_forcefully(tls)
    print("ready", flush=True)


def main(argv: list[str]) -> None:
    mode, *args = argv
    if mode == "forward":
        trio.run(forward, int(args[0]), args[1], int(args[2]), Path(args[3]))
    elif mode == "terminate":
        trio.run(terminate, int(args[0]), args[1], int(args[2]), Path(args[3]))
    elif mode == "replay":
        trio.run(replay, args[0], int(args[1]), Path(args[2]), Path(args[3]))
    elif mode == "stranger":
        trio.run(stranger, args[0], int(args[1]), Path(args[2]), Path(args[3]))
    else:
        raise SystemExit(f"no mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
