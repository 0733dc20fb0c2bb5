"""File offers for real (issue 30 §2): two profiles' hosts linked on loopback.

An agent (no terminal) offers only non-secret files of its task's folder; the operator at a
terminal any readable file. The receiving operator lists the offer, accepts it on the terminal,
and the file is kept owner-only under ``data/peers/<device id>/``: a planted link there is
neither followed nor replaced (the copy takes the next name), a clash gets a suffix; a decline
reaches the sender.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

from ..support.model_server import FakeModel
from ._hosts import _until
from ._netns import PORT, SUBNET, namespaces_and_veth
from ._profiles import _env, _robota
from ._talking import linked, linked_agents, linked_in_namespaces, model, new_task
from ._terminal import ROBOTA, Run, Step, run_on_terminal

__all__ = ["linked", "model"]  # the fixtures, from _talking.py


def _as_agent(home: Path, task: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    """``robota`` with no terminal, in the environment robota gives its agents' commands."""
    env = {**_env(home), **({"ROBOTA_TASK_ID": task} if task else {})}
    return subprocess.run(
        [str(ROBOTA), *args],
        check=False,
        env=env,
        cwd=home.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )


def _offers(home: Path) -> list[dict[str, Any]]:
    done = _robota(home, "mesh", "offers", "--json")
    assert done.returncode == 0, done.stderr
    items: list[dict[str, Any]] = json.loads(done.stdout)
    return items


def _sent_phase(home: Path, offer: str) -> str:
    with closing(sqlite3.connect(home / "data" / "robota.sqlite")) as db:
        row = db.execute(
            "SELECT phase FROM mesh_offers WHERE direction = 'out' AND id = ?", (offer,)
        ).fetchone()
    return str(row[0]) if row else ""


def _offer(home: Path, path: Path, task: str, *extra: str) -> str:
    done = _as_agent(home, task, "mesh", "offer", "desk", str(path), *extra)
    assert done.returncode == 0, done.stderr
    offer: str = done.stdout.split("offer ")[-1].split(",")[0]
    return offer


def _accept(desk: Path, offer: str, answer: str = "y\n") -> Run:
    return run_on_terminal(
        ["mesh", "accept", offer], _env(desk), desk.parent, [Step("? [y/N]", lambda _s: answer)]
    )


def test_an_agent_offers_only_plain_files_of_its_folder_and_the_operator_keeps_them(
    linked: tuple[Path, Path, str, str], model: FakeModel
) -> None:
    laptop, desk, laptop_id, _desk_id = linked
    folder = laptop.parent  # the task's working folder (the profile's default)
    task = new_task(laptop)
    for name in (".env", "id_ed25519", "server.pem", ".ssh/config"):
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text("secret\n")
        refused = _as_agent(laptop, task, "mesh", "offer", "desk", str(folder / name))
        assert refused.returncode == 1, refused.stdout
        assert "may not be offered" in refused.stderr, refused.stderr
    (folder / "escape.txt").symlink_to("/etc/hostname")
    for outside in ("/etc/hostname", str(folder / "escape.txt")):
        refused = _as_agent(laptop, task, "mesh", "offer", "desk", outside)
        assert "outside the task's folder" in refused.stderr, refused.stderr
    no_task = _as_agent(laptop, None, "mesh", "offer", "desk", str(folder / "notes.txt"))
    assert "no task was named" in no_task.stderr
    assert _offers(desk) == []

    (folder / "notes.txt").write_text("the notes\n")
    listener = new_task(desk)
    offer = _offer(laptop, folder / "notes.txt", task, "--task", listener)
    [item] = _offers(desk)
    assert set(item) == {"id", "kind", "from", "name", "size", "sha256", "expiresAt"}
    assert (item["id"], item["kind"], item["from"], item["name"], item["size"]) == (
        offer,
        "file",
        laptop_id,
        "notes.txt",
        10,
    )

    accepted = _accept(desk, offer)
    assert accepted.code == 0, (accepted.stderr, accepted.screen)
    kept = desk / "data" / "peers" / laptop_id / "notes.txt"
    assert kept.read_text() == "the notes\n"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert str(kept) in accepted.stdout and item["sha256"] in accepted.stdout
    assert "the notes" not in accepted.stdout
    _until(lambda: _sent_phase(laptop, offer) == "done", "the sender hears the outcome", 30)
    assert _offers(desk) == []

    # The desk's task named in the offer is told the name, size, SHA-256 and path, no more.
    def told() -> list[str]:
        return [p for r in model.requests if (p := r.prompt) and item["sha256"] in p]

    _until(lambda: bool(told()), "the desk's task hears of the file", 120)
    assert "'notes.txt', 10 bytes" in told()[0] and str(kept) in told()[0]
    assert all("the notes" not in p for p in told())


def test_a_planted_link_and_a_clash_replace_nothing_and_a_decline_reaches_the_sender(
    linked: tuple[Path, Path, str, str],
) -> None:
    laptop, desk, laptop_id, _desk_id = linked
    folder = desk / "data" / "peers" / laptop_id
    folder.mkdir(parents=True, mode=0o700)
    target = desk.parent / "mine.txt"
    target.write_text("mine\n")
    (folder / "report.txt").symlink_to(target)
    source = laptop.parent / "report.txt"
    source.write_text("the report\n")

    kept = []
    for _ in range(2):
        offer = run_on_terminal(["mesh", "offer", "desk", str(source)], _env(laptop), laptop.parent)
        assert offer.code == 0, offer.stderr  # the operator, at a terminal, with no task
        [item] = _offers(desk)
        assert _accept(desk, item["id"]).code == 0
        kept.append(sorted(p.name for p in folder.iterdir()))
    assert kept[-1] == ["report (2).txt", "report (3).txt", "report.txt"]
    assert (folder / "report.txt").is_symlink() and target.read_text() == "mine\n"
    assert (folder / "report (3).txt").read_text() == "the report\n"

    offer = _offer(laptop, source, new_task(laptop))
    refused = _accept(desk, offer, "n\n")
    assert refused.code == 2 and _offers(desk) != []
    declined = _robota(desk, "mesh", "decline", offer)
    assert declined.returncode == 0, declined.stderr
    _until(lambda: _sent_phase(laptop, offer) == "declined", "the sender hears of it", 30)
    assert _offers(desk) == []
    assert _robota(desk, "mesh", "accept", offer).returncode == 2  # no terminal, nothing waits


def test_across_two_namespaces_odd_names_stay_plain_and_a_secret_stays_home(
    tmp_path: Path,
) -> None:
    """Hosts in two network namespaces the test creates, linked across a veth pair: an agent's
    secret is refused; the operator's files with odd names (a line break, a partial copy's
    prefix) and a clash with a planted link are kept under plain names, replacing nothing."""
    address = f"{SUBNET}.1:{PORT}"
    with namespaces_and_veth(f"ro{os.getpid() % 100000}") as (laptop_ns, desk_ns):
        nowhere = "http://127.0.0.1:9"  # no turn runs: the agents never start
        laptop, desk, laptop_id, desk_id = linked_agents(
            tmp_path, (nowhere, nowhere), address, address
        )
        with linked_in_namespaces((laptop, laptop_ns, laptop_id), (desk, desk_ns, desk_id)):
            (laptop.parent / ".env").write_text("TOKEN=1\n")
            secret = _as_agent(
                laptop, new_task(laptop), "mesh", "offer", "desk", str(laptop.parent / ".env")
            )
            assert secret.returncode == 1 and ".env*" in secret.stderr, secret.stderr

            folder = desk / "data" / "peers" / laptop_id
            folder.mkdir(parents=True, mode=0o700)
            (folder / "same.txt").symlink_to(desk.parent / "never.txt")
            names = ["two\nlines.txt", ".partial-0123456789abcdef", "same.txt", "same.txt"]
            for index, name in enumerate(names):
                source = laptop.parent / f"out{index}" / name
                source.parent.mkdir()
                source.write_text(f"file {index}\n")
                offered = run_on_terminal(
                    ["mesh", "offer", "desk", str(source)], _env(laptop), laptop.parent
                )
                assert offered.code == 0, offered.stderr
                [item] = _offers(desk)
                accepted = _accept(desk, item["id"])
                assert accepted.code == 0, (accepted.stderr, accepted.screen)
            kept = {p.name: p for p in folder.iterdir()}
            assert sorted(kept) == [
                "_.partial-0123456789abcdef",
                "same (2).txt",
                "same (3).txt",
                "same.txt",
                "twolines.txt",
            ]
            assert kept["twolines.txt"].read_text() == "file 0\n"
            assert kept["same (3).txt"].read_text() == "file 3\n"
            assert kept["same.txt"].is_symlink() and not (desk.parent / "never.txt").exists()
