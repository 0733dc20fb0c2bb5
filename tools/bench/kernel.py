"""Kernel benchmark: robota's actor kernel beside bare pykka / trio, measured in the same run.

    .venv/bin/python tools/bench/kernel.py [--quick]

Prints one table. Each row is a robota figure and the same figure for the bare library it is
built on, plus their ratio, so a regression shows as a ratio change whatever machine runs it.

* tell throughput: N tells through an ``Address`` until the actor processed the last one,
  vs N ``ActorRef.tell`` to a bare ``pykka.ThreadingActor``.
* request/reply latency: ``robota.core.request`` from the trio loop to an actor and back, vs a
  bare trio-to-trio round trip over memory channels and vs a bare pykka ``ask`` from a thread.
* restart latency: from a crash to the next incarnation answering, under a supervisor with no
  backoff delay, vs starting a bare pykka actor and asking it once.
* activate / passivate: a route's first message processed by a fresh incarnation, and a sweep
  until the route saved its state and stopped, vs a bare pykka start+ask and stop.
* RSS per active route actor, and RSS of 10 000 known routes of which 100 are active, each in a
  fresh subprocess, vs the same number of bare pykka actors all alive.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pykka
import trio

from robota.core import (
    Actor,
    Backoff,
    ChildSpec,
    MemoryRouteStates,
    RouteActor,
    RouteDirectory,
    request,
)
from robota.core.testing import crash, supervised, wait_until

# -- actors ------------------------------------------------------------------------------------


class Counting(Actor):
    """Counts messages; sets ``done`` when it has seen ``target`` of them."""

    def __init__(self, target: int, done: threading.Event) -> None:
        super().__init__()
        self.count = 0
        self.target = target
        self.done = done

    def receive(self, message: Any) -> None:  # noqa: ARG002
        self.count += 1
        if self.count == self.target:
            self.done.set()


class BareCounting(pykka.ThreadingActor):
    use_daemon_thread = True

    def __init__(self, target: int, done: threading.Event) -> None:
        super().__init__()
        self.count = 0
        self.target = target
        self.done = done

    def on_receive(self, message: Any) -> None:  # noqa: ARG002
        self.count += 1
        if self.count == self.target:
            self.done.set()


class Echo(Actor):
    def receive(self, message: Any) -> None:
        value, reply = message
        reply(value)


class BareEcho(pykka.ThreadingActor):
    use_daemon_thread = True

    def on_receive(self, message: Any) -> Any:
        return message


class Route(RouteActor[dict[str, int]]):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.state = {"n": 0}

    def restore(self, state: dict[str, int] | None) -> None:
        if state is not None:
            self.state = state

    def receive(self, message: Any) -> None:
        if isinstance(message, threading.Event):
            message.set()
        else:
            self.state["n"] += 1

    def snapshot(self) -> dict[str, int]:
        return dict(self.state)


# -- measurements ------------------------------------------------------------------------------


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def tell_throughput(n: int) -> tuple[float, float]:
    """Messages per second: robota Address vs bare pykka ref."""

    async def robota_run() -> float:
        done = threading.Event()
        async with supervised([ChildSpec("c", lambda: Counting(n, done))]) as sup:
            address = sup.address("c")
            start = time.perf_counter()
            for i in range(n):
                address.tell(i)
            await trio.to_thread.run_sync(done.wait, 60)
            return n / (time.perf_counter() - start)

    robota = trio.run(robota_run)
    done = threading.Event()
    ref = BareCounting.start(n, done)
    start = time.perf_counter()
    for i in range(n):
        ref.tell(i)
    done.wait(60)
    bare = n / (time.perf_counter() - start)
    ref.stop()
    return robota, bare


def request_latency(n: int) -> dict[str, list[float]]:
    """Round-trip latencies in seconds: bridge request, trio-internal, pykka ask."""

    async def run() -> dict[str, list[float]]:
        out: dict[str, list[float]] = {"bridge": [], "trio": []}
        async with supervised([ChildSpec("e", Echo)]) as sup:
            address = sup.address("e")
            for i in range(n):
                start = time.perf_counter()
                await request(address, lambda reply, i=i: (i, reply), timeout=10)
                out["bridge"].append(time.perf_counter() - start)
        to_echo, echo_in = trio.open_memory_channel[int](1)
        to_main, main_in = trio.open_memory_channel[int](1)

        async def echo() -> None:
            async for value in echo_in:
                await to_main.send(value)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(echo)
            for i in range(n):
                start = time.perf_counter()
                await to_echo.send(i)
                await main_in.receive()
                out["trio"].append(time.perf_counter() - start)
            nursery.cancel_scope.cancel()
        return out

    samples = trio.run(run)
    ref = BareEcho.start()
    samples["pykka_ask"] = []
    for i in range(n):
        start = time.perf_counter()
        ref.ask(i, timeout=10)
        samples["pykka_ask"].append(time.perf_counter() - start)
    ref.stop()
    return samples


def restart_latency(n: int) -> tuple[list[float], list[float]]:
    """Crash to next incarnation answering (robota) vs start + first ask (bare pykka)."""

    async def run() -> list[float]:
        samples = []
        no_delay = Backoff(base=0.0, cap=0.0, reset_after=0.0)
        async with supervised(
            [ChildSpec("e", Echo)], backoff=no_delay, intensity=n + 1, period=3600
        ) as sup:
            address = sup.address("e")
            for i in range(n):
                start = time.perf_counter()
                crash(address)
                await request(address, lambda reply, i=i: (i, reply), timeout=10)
                samples.append(time.perf_counter() - start)
                await wait_until(lambda: sup.is_running("e"))
        return samples

    robota = trio.run(run)
    bare = []
    for i in range(n):
        start = time.perf_counter()
        ref = BareEcho.start()
        ref.ask(i, timeout=10)
        bare.append(time.perf_counter() - start)
        ref.stop()
    return robota, bare


def activation_cost(n: int) -> dict[str, list[float]]:
    """Seconds per activation and per passivation of a route, and bare pykka start/stop."""
    clock = [0.0]
    states: MemoryRouteStates[dict[str, int]] = MemoryRouteStates()
    directory = RouteDirectory(Route, states, idle_after=1.0, clock=lambda: clock[0])
    out: dict[str, list[float]] = {"activate": [], "passivate": [], "start": [], "stop": []}
    for i in range(n):
        seen = threading.Event()
        start = time.perf_counter()
        directory.tell("route", seen)
        seen.wait(10)
        out["activate"].append(time.perf_counter() - start)
        clock[0] += 2.0
        start = time.perf_counter()
        directory.sweep()
        deadline = time.monotonic() + 10
        while directory.active and time.monotonic() < deadline:
            time.sleep(0)
        out["passivate"].append(time.perf_counter() - start)
        start = time.perf_counter()
        ref = BareEcho.start()
        ref.ask(i, timeout=10)
        out["start"].append(time.perf_counter() - start)
        start = time.perf_counter()
        ref.stop(block=True)
        out["stop"].append(time.perf_counter() - start)
    return out


def rss_kib() -> int:
    with Path("/proc/self/status").open() as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def rss_case(case: str) -> dict[str, float]:
    """Runs in a fresh interpreter: RSS growth for one population of actors."""
    gc.collect()
    before = rss_kib()
    if case == "route-active-1000":
        states: MemoryRouteStates[dict[str, int]] = MemoryRouteStates()
        directory = RouteDirectory(Route, states, idle_after=3600)
        events = []
        for i in range(1000):
            seen = threading.Event()
            directory.tell(f"route:{i}", seen)
            events.append(seen)
        for seen in events:
            seen.wait(30)
        count = 1000
    elif case == "bare-active-1000":
        refs = [BareEcho.start() for _ in range(1000)]
        for ref in refs:
            ref.ask(0, timeout=30)
        count = 1000
    elif case == "routes-10000-known-100-active":
        clock = [0.0]
        states = MemoryRouteStates()
        directory = RouteDirectory(Route, states, idle_after=1.0, clock=lambda: clock[0])
        for i in range(10_000):
            directory.tell(f"route:{i}", "hello")
            if directory.active >= 200:  # passivate in waves, as the sweeper would
                clock[0] += 2.0
                directory.sweep()
                _wait(lambda: directory.active == 0)
        clock[0] += 2.0
        directory.sweep()
        _wait(lambda: directory.active == 0)
        for i in range(100):
            seen = threading.Event()
            directory.tell(f"route:{i}", seen)
            seen.wait(30)
        assert directory.known == 10_000 and directory.active == 100
        count = 10_000
    elif case == "bare-10000-alive":
        refs = [BareEcho.start() for _ in range(10_000)]
        for ref in refs:
            ref.ask(0, timeout=30)
        count = 10_000
    else:
        raise SystemExit(f"unknown case {case}")
    gc.collect()
    return {"total_kib": rss_kib() - before, "count": count}


def _wait(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("benchmark condition not met")
        time.sleep(0.001)


def run_rss_case(case: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--rss-case", case],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# -- report ------------------------------------------------------------------------------------


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    parser.add_argument("--rss-case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    # The restart benchmark crashes actors on purpose; their tracebacks are not the output.
    logging.disable(logging.CRITICAL)
    if args.rss_case:
        print(json.dumps(rss_case(args.rss_case)))
        return

    scale = 0.1 if args.quick else 1.0
    rows: list[tuple[str, str, str, str]] = []

    robota_tps, bare_tps = tell_throughput(int(200_000 * scale))
    rows.append(
        (
            "tell throughput",
            f"{robota_tps:,.0f} msg/s",
            f"{bare_tps:,.0f} msg/s (pykka)",
            f"{robota_tps / bare_tps:.2f}x",
        )
    )

    lat = request_latency(int(5_000 * scale))
    for p in (50, 99):
        rows.append(
            (
                f"request/reply p{p}",
                us(percentile(lat["bridge"], p)),
                f"{us(percentile(lat['trio'], p))} (trio↔trio), "
                f"{us(percentile(lat['pykka_ask'], p))} (pykka ask)",
                f"{percentile(lat['bridge'], p) / percentile(lat['pykka_ask'], p):.2f}x ask",
            )
        )

    restart, bare_start = restart_latency(int(500 * scale))
    for p in (50, 99):
        rows.append(
            (
                f"restart after crash p{p}",
                us(percentile(restart, p)),
                f"{us(percentile(bare_start, p))} (pykka start+ask)",
                f"{percentile(restart, p) / percentile(bare_start, p):.2f}x",
            )
        )

    act = activation_cost(int(500 * scale))
    rows.append(
        (
            "activate route p50",
            us(statistics.median(act["activate"])),
            f"{us(statistics.median(act['start']))} (pykka start+ask)",
            f"{statistics.median(act['activate']) / statistics.median(act['start']):.2f}x",
        )
    )
    rows.append(
        (
            "passivate route p50",
            us(statistics.median(act["passivate"])),
            f"{us(statistics.median(act['stop']))} (pykka stop)",
            f"{statistics.median(act['passivate']) / statistics.median(act['stop']):.2f}x",
        )
    )

    active = run_rss_case("route-active-1000")
    bare_active = run_rss_case("bare-active-1000")
    per_route = active["total_kib"] / active["count"]
    per_bare = bare_active["total_kib"] / bare_active["count"]
    rows.append(
        (
            "RSS per active route actor",
            f"{per_route:.1f} KiB",
            f"{per_bare:.1f} KiB (pykka actor)",
            f"{per_route / per_bare:.2f}x",
        )
    )

    known = run_rss_case("routes-10000-known-100-active")
    bare_all = run_rss_case("bare-10000-alive")
    rows.append(
        (
            "RSS 10 000 routes, 100 active",
            f"{known['total_kib'] / 1024:.1f} MiB",
            f"{bare_all['total_kib'] / 1024:.1f} MiB (10 000 pykka actors alive)",
            f"{known['total_kib'] / bare_all['total_kib']:.2f}x",
        )
    )

    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    header = ("figure", "robota", "baseline (same run)", "ratio")
    widths = [max(w, len(h)) for w, h in zip(widths, header, strict=True)]
    print(" | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
