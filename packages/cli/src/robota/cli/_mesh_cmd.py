"""``robota mesh``: this device in the user's mesh of machines (docs/architecture/mesh.md §14).

``init`` (the first device: the recovery phrase on the controlling terminal; ``--join``: a
device key only), ``recover`` (the phrase again: a new signing key), ``status`` and
``devices`` (``--json``: the Contract's names), ``revoke DEVICE --yes``, ``pair`` and ``join
ADDRESS`` (``_mesh_pairing``: the code only on the terminal). The identity and the lists are
``robota.mesh``'s; this module reads argv, the terminal and the profile, and prints; the PAKE
and the links run in the host's mesh service.

The phrase is shown and typed only on ``/dev/tty`` (``_mesh_tty``), never on standard output,
in argv or the environment, and is never stored. ``init``, ``recover``, ``status`` and
``devices`` work without a host; the other commands need the profile's host running and say so
(exit 2). Exit codes: 0 done, 1 refused or failed (the message says why, naming a key, never a
value), 2 a usage or configuration problem, no terminal, no host, or ``revoke`` without
``--yes``.

Only click is imported at import time (``robota --help`` loads none of the mesh).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from collections.abc import Callable

    from robota.core.config import Config, Profile
    from robota.mesh import Identity, LinkReport, Lists, Marks, MeshFiles, SecretStore

    from ._mesh_tty import Terminal

__all__ = ["mesh_group"]

_CONFIRM_TRIES = 3


@click.group("mesh")
def mesh_group() -> None:
    """The device mesh: this machine linked with your other machines by signed identities."""


def _fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"robota: {message}", err=True)
    sys.exit(code)


@dataclass
class _Mesh:
    """The profile and its mesh files, as every command reads them."""

    config: Config
    profile: Profile
    files: MeshFiles

    @property
    def dir(self) -> Path:
        return self.files.dir

    @property
    def store_path(self) -> Path:
        return self.config.storage.sqlite_path

    def marks(self) -> Marks:
        from robota.mesh import stored_marks  # noqa: PLC0415

        return stored_marks(self.store_path)

    def raise_marks(self, lists: Lists) -> None:
        from robota.mesh import Marks, raise_marks  # noqa: PLC0415

        raise_marks(self.store_path, Marks(lists.roster.seq, lists.revocations.seq))

    def change(self, action: Callable[[Marks], Lists]) -> Lists:
        """Run an action that issues lists (given the marks), then raise the marks to them;
        a refusal exits 1 with its reason (the action changed nothing)."""
        from robota.mesh import MeshError  # noqa: PLC0415

        try:
            lists = action(self.marks())
        except MeshError as error:
            _fail(f"{error}; nothing was changed")
        self.raise_marks(lists)
        return lists

    def identity(self) -> Identity | None:
        from robota.mesh import MeshError  # noqa: PLC0415

        try:
            return self.files.identity()
        except MeshError as error:
            _fail(str(error))


def _mesh() -> _Mesh:
    from robota.mesh import MeshFiles  # noqa: PLC0415

    from ._profile import load_profile  # noqa: PLC0415 (keeps --help fast)

    config, profile = load_profile()
    return _Mesh(config, profile, MeshFiles(profile.data_dir / "mesh"))


def _terminal() -> Terminal:
    from robota.mesh import NoTerminal  # noqa: PLC0415

    from ._mesh_tty import Terminal  # noqa: PLC0415

    try:
        return Terminal()
    except NoTerminal:
        _fail(
            "the recovery phrase is shown and typed only on the controlling terminal, and this"
            " process has none: run the command in a terminal",
            2,
        )


def _secret_store(mesh: _Mesh) -> SecretStore:
    from robota.mesh import CredentialStoreError, open_secrets  # noqa: PLC0415

    try:
        opened = open_secrets(mesh.files)
    except CredentialStoreError as error:
        _fail(f"{error}: the mesh's keys stay where they are; nothing was changed")
    for notice in opened.notices:
        click.echo(f"robota: {notice}", err=True)
    return opened.store


def _show_phrase(terminal: Terminal, phrase: str) -> None:
    words = phrase.split()
    rows = [
        "  ".join(f"{i + 1:>2}. {words[i]:<10}" for i in range(row, len(words), 6))
        for row in range(6)
    ]
    terminal.write(
        "\nYour recovery phrase: 24 words, shown this once. Write them down and keep them\n"
        "offline: they are the only way to certify a new signing key if this device is lost,\n"
        "and robota never stores them.\n\n" + "\n".join(rows) + "\n\n"
    )


def _confirm_phrase(terminal: Terminal, phrase: str) -> bool:
    from robota.mesh import Malformed, canonical_phrase  # noqa: PLC0415

    for attempt in range(_CONFIRM_TRIES):
        typed = terminal.ask("Type the 24 words to confirm (not shown as you type): ", echo=False)
        try:
            if canonical_phrase(typed) == phrase:
                return True
            terminal.write("That is another phrase.\n")
        except Malformed as error:
            terminal.write(f"That is not it: {error.detail}.\n")
        if attempt + 1 < _CONFIRM_TRIES:
            terminal.write("Try again.\n")
    return False


def _read_phrase(terminal: Terminal) -> str:
    from robota.mesh import Malformed, canonical_phrase  # noqa: PLC0415

    for _attempt in range(_CONFIRM_TRIES):
        typed = terminal.ask(
            "Type the 24 words of the recovery phrase (not shown as you type): ", echo=False
        )
        try:
            return canonical_phrase(typed)
        except Malformed as error:
            terminal.write(f"That is not a recovery phrase: {error.detail}.\n")
    _fail("no valid recovery phrase was typed; nothing was changed")


@mesh_group.command("init")
@click.option(
    "--join",
    is_flag=True,
    help="Only make this device's key: it joins a mesh by pairing (robota mesh join).",
)
def init_command(join: bool) -> None:
    """Make this device's mesh identity: on the first device, the user's root key from a new
    24-word recovery phrase (shown once on this terminal), a signing key and the device key."""
    from robota.mesh import NoTerminal, init_first, init_join, new_phrase  # noqa: PLC0415

    mesh = _mesh()
    existing = mesh.identity()
    if existing is not None:
        _fail(f"this device already has its mesh identity, {existing.device} (robota mesh status)")
    name = mesh.config.mesh.name
    if join:
        identity = init_join(mesh.files, _secret_store(mesh), name=name)
        click.echo(f"This device is {identity.device} ({name}).")
        click.echo(
            "Pair it, both hosts running: robota mesh pair on the signing device, then"
            " robota mesh join ADDRESS here with the code it shows."
        )
        return
    with _terminal() as terminal:
        store = _secret_store(mesh)
        phrase = new_phrase()
        try:
            _show_phrase(terminal, phrase)
            confirmed = _confirm_phrase(terminal, phrase)
        except NoTerminal:
            _fail("the terminal hung up; nothing was created")
        terminal.forget_screen()
        if not confirmed:
            _fail("the phrase was not typed back; nothing was created")
        identity, lists = init_first(
            mesh.files,
            store,
            phrase=phrase,
            name=name,
            now=int(time.time()),
            lifetime=mesh.config.mesh.list_lifetime_seconds,
        )
        del phrase
    mesh.raise_marks(lists)
    click.echo(f"This device is {identity.device} ({name}), the mesh's signing device.")
    click.echo(f"Its keys are in the {store.kind}.")


@mesh_group.command("recover")
def recover_command() -> None:
    """Type the recovery phrase (on this terminal) to certify a new signing key on this device
    and revoke the old one (for a lost signing device)."""
    from robota.mesh import NoTerminal, recover  # noqa: PLC0415

    mesh = _mesh()
    identity = mesh.identity()
    if identity is None:
        _fail("this device has no mesh identity: robota mesh init (or init --join and pair it)")
    with _terminal() as terminal:
        store = _secret_store(mesh)
        try:
            phrase = _read_phrase(terminal)
        except NoTerminal:
            _fail("the terminal hung up; nothing was changed")
        lists = mesh.change(
            lambda marks: recover(
                mesh.files,
                store,
                phrase=phrase,
                now=int(time.time()),
                lifetime=mesh.config.mesh.list_lifetime_seconds,
                marks=marks,
            )[1]
        )
    click.echo(
        f"This device ({identity.device}) now holds a new signing key; the old one is revoked."
    )
    click.echo(
        f"Roster {lists.roster.seq} and revocation list {lists.revocations.seq} reach the other"
        " devices over their links."
    )


# -- status and devices ------------------------------------------------------------------------


def _host_call(profile: Profile, request: str) -> dict[str, Any] | None:
    """The running host's answer to ``request``, ``None`` when no host (or no answer)."""
    from robota.core.control import ControlClient, ControlError  # noqa: PLC0415

    try:
        with ControlClient(profile.control_socket, timeout=5.0) as client:
            result = client.call(request)
    except ControlError:
        return None
    return result if isinstance(result, dict) else {}


def _host_links(profile: Profile, problems: list[str] | None = None) -> list[LinkReport] | None:
    """The links the host's mesh service reports (``mesh.status``); ``None`` without one.
    What it could not open (its ``problems``) is added to ``problems``."""
    from robota.mesh import LINK_STATES, LinkReport, parse_device_id  # noqa: PLC0415

    answer = _host_call(profile, "mesh.status")
    if answer is None or not isinstance(answer.get("links"), list):
        return None
    if problems is not None and isinstance(answer.get("problems"), list):
        problems.extend(f"host: {item}" for item in answer["problems"] if isinstance(item, str))
    links = []
    for item in answer["links"]:
        if not isinstance(item, dict):
            continue
        device = parse_device_id(str(item.get("device", "")))
        state = item.get("state")
        if device is None or state not in LINK_STATES:
            continue
        since, seen = item.get("since"), item.get("lastSeen")
        links.append(
            LinkReport(
                device,
                str(item.get("name", "")),
                state,
                since if isinstance(since, int | float) else None,
                seen if isinstance(seen, int | float) else None,
            )
        )
    return links


@dataclass
class _Read:
    identity: Identity | None
    lists: Lists | None
    problems: list[str]


def _read(mesh: _Mesh) -> _Read:
    """The identity and lists as accepted, and what is wrong with them (never raises)."""
    from robota.mesh import MeshError, Refused, current_lists  # noqa: PLC0415

    problems: list[str] = []
    identity = mesh.identity()
    lists = None
    if identity is not None:
        try:
            lists = current_lists(mesh.files, identity, mesh.marks())
        except Refused as error:
            problems.append(f"this device's lists are refused ({error.reason}): {error.detail}")
        except MeshError as error:
            problems.append(str(error))
    return _Read(identity, lists, problems)


def _project_problem(mesh: _Mesh) -> str | None:
    """A refused ``mesh`` section in this directory's (trusted) project settings."""
    from robota.core import ConfigError  # noqa: PLC0415
    from robota.host import workspace_config  # noqa: PLC0415

    try:
        workspace_config(mesh.config, mesh.profile, Path.cwd(), restricted=False)
    except ConfigError as error:
        if error.key == "mesh":
            return str(error)
    return None


def _links(read: _Read, reported: list[LinkReport] | None) -> list[LinkReport]:
    """The host's links; without a host, every other active device is down."""
    from robota.mesh import LinkReport  # noqa: PLC0415

    if reported is not None:
        return reported
    if read.identity is None or read.lists is None:
        return []
    return [
        LinkReport(cert.device, cert.name, "down")
        for cert in read.lists.roster.devices
        if cert.device != read.identity.device
    ]


@mesh_group.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the names are stable).")
def status_command(as_json: bool) -> None:
    """This device in the mesh: its id, where its keys are, its links and lists, problems."""
    from robota.mesh import (  # noqa: PLC0415
        CredentialStoreError,
        ListHead,
        check_store,
        lapsed_problems,
        name_problem,
        read_store_record,
        status_view,
    )

    mesh = _mesh()
    read = _read(mesh)
    settings = mesh.config.mesh
    try:
        store, _store_id = read_store_record(mesh.dir)
    except CredentialStoreError as error:
        store = None
        read.problems.append(str(error))
    roster = revocations = None
    if read.lists is not None:
        roster = ListHead(read.lists.roster.seq, read.lists.roster.expires_at)
        revocations = ListHead(read.lists.revocations.seq, read.lists.revocations.expires_at)
    problems = [*read.problems, *lapsed_problems(roster, revocations, int(time.time()))]
    failed_store = check_store(mesh.dir) if store is not None else None
    if failed_store is not None:
        problems.append(failed_store)
    project = _project_problem(mesh)
    if project is not None:
        problems.append(f"refused: {project}")
    identity = read.identity
    name = settings.name if identity is None else identity.name
    renamed = None if identity is None else name_problem(settings.name, identity.name)
    if renamed is not None:
        problems.append(renamed)
    view = status_view(
        enabled=settings.enabled,
        device=identity.device if identity is not None else None,
        name=name,
        store=store,
        signing=identity is not None and identity.signing,
        listen=settings.listen,
        links=_links(read, _host_links(mesh.profile, problems)),
        roster=roster,
        revocations=revocations,
        problems=problems,
    )
    if as_json:
        click.echo(json.dumps(view, indent=2, ensure_ascii=False))
        return
    click.echo("\n".join(_status_lines(view)))


def _status_lines(view: dict[str, Any]) -> list[str]:
    device = view["device"]
    lines = [f"mesh: {'on' if view['enabled'] else 'off'} (mesh.enabled in the profile)"]
    if device is None:
        lines.append("device: no mesh identity yet (robota mesh init)")
    else:
        signing = ", the signing device" if view["signing"] else ""
        lines.append(f"device: {device['id']} ({device['name']}{signing})")
    lines.append(f"keys: {view['store'] or 'none yet'}")
    lines.append(f"listen: {', '.join(view['listen']) or 'none (dial only)'}")
    for kind in ("roster", "revocations"):
        head = view[kind]
        if head is not None:
            lines.append(f"{kind}: number {head['seq']}, expires {head['expiresAt']}")
    for link in view["links"]:
        since = f" since {link['since']}" if link["since"] else ""
        lines.append(f"link: {link['device']} ({link['name']}) {link['state']}{since}")
    lines.extend(f"problem: {problem}" for problem in view["problems"])
    return lines


@mesh_group.command("devices")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the names are stable).")
def devices_command(as_json: bool) -> None:
    """The devices of the mesh as this device knows them: active and revoked."""
    from robota.mesh import devices_view  # noqa: PLC0415

    mesh = _mesh()
    read = _read(mesh)
    for problem in read.problems:
        click.echo(f"robota: {problem}", err=True)
    if read.lists is None:
        rows: list[dict[str, object]] = []
    else:
        rows = devices_view(
            {cert.device: cert.name for cert in read.lists.roster.devices},
            sorted(read.lists.revocations.devices),
            mesh.files.names(),
            _host_links(mesh.profile) or [],
        )
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        click.echo("no devices yet (robota mesh init)")
    own = read.identity.device if read.identity is not None else None
    for row in rows:
        this = " (this device)" if row["id"] == own else ""
        linked = " linked" if row["linked"] else ""
        click.echo(f"{row['id']}  {row['name']}  {row['state']}{linked}{this}")


# -- revoke ------------------------------------------------------------------------------------


@mesh_group.command("revoke")
@click.argument("device", metavar="DEVICE")
@click.option("--yes", is_flag=True, help="Revoke it: it cannot be undone (it must pair again).")
def revoke_command(device: str, yes: bool) -> None:
    """Revoke DEVICE (an id, a unique id prefix or a name) on this signing device: every
    device closes its links to it and refuses it from then on."""
    from robota.mesh import DeviceNotFound, pick_device, revoke  # noqa: PLC0415

    mesh = _mesh()
    read = _read(mesh)
    if read.identity is None or read.lists is None:
        _fail("this device has no roster: robota mesh init first", 2)
    try:
        target = pick_device({c.device: c.name for c in read.lists.roster.devices}, device)
    except DeviceNotFound as error:
        _fail(str(error), 2)
    if not yes:
        _fail(f"revoking {target} cannot be undone: add --yes (nothing was changed)", 2)
    if _host_call(mesh.profile, "server.status") is None:
        _fail("robota mesh revoke needs this profile's host running: robota server start", 2)
    store = _secret_store(mesh)
    lists = mesh.change(
        lambda marks: revoke(
            mesh.files,
            store,
            target,
            now=int(time.time()),
            lifetime=mesh.config.mesh.list_lifetime_seconds,
            marks=marks,
        )
    )
    # The host's mesh service sends the new lists over every link and closes the revoked
    # device's; a host without the mesh open reads them from the files when it opens it.
    _host_call(mesh.profile, "mesh.lists")
    click.echo(f"Revoked {target}: revocation list {lists.revocations.seq}.")


# -- pairing -------------------------------------------------------------------------------------


def _need_host(mesh: _Mesh) -> None:
    if _host_call(mesh.profile, "server.status") is None:
        _fail("this needs the profile's host running (robota server start)", 2)


@mesh_group.command("pair")
def pair_command() -> None:
    """Pair a new device: a one-time code on this terminal, then confirm its name and
    fingerprint (a signing device, its host running and listening: mesh.listen)."""
    from robota.mesh import NoTerminal  # noqa: PLC0415

    from ._mesh_pairing import listen_hint, pair_over  # noqa: PLC0415

    mesh = _mesh()
    with _terminal() as terminal:
        _need_host(mesh)
        terminal.write(f"This device listens on {listen_hint(mesh.config.mesh.listen)}.\n")
        timeout = mesh.config.mesh.pairing_ttl_seconds + 120.0
        try:
            end = pair_over(mesh.profile, terminal, timeout)
        except NoTerminal:
            _fail("the terminal hung up; the pairing window closes unused")
        except OSError as error:
            _fail(f"lost the connection to the host: {error}")
    if end.get("type") == "refused":
        _fail(str(end.get("message")))
    if end.get("type") != "paired":
        _fail(f"not paired: {end.get('reason', 'the pairing failed')}")
    click.echo(f"Paired {end.get('device')} ({end.get('name')}).")


@mesh_group.command("join")
@click.argument("address", metavar="ADDRESS")
@click.argument("code", required=False, metavar="")
@click.option(
    "--code", "option_code", hidden=True, help="Refused: the code is read on the terminal."
)
def join_command(address: str, code: str | None, option_code: str | None) -> None:
    """Join the mesh of the device listening at ADDRESS (HOST:PORT): type the code its
    'robota mesh pair' shows (read only on this terminal). Makes this device's key if it has
    none; its host must be running."""
    from robota.core.control import ControlClient, ControlError, HostRefused  # noqa: PLC0415
    from robota.mesh import NoTerminal, init_join  # noqa: PLC0415

    from ._mesh_pairing import ONLY_ON_TERMINAL, code_elsewhere, read_code, stdin_holds_data  # noqa: PLC0415

    if code_elsewhere(code, option_code, stdin_holds_data()):
        _fail(ONLY_ON_TERMINAL)
    mesh = _mesh()
    with _terminal() as terminal:
        _need_host(mesh)
        identity = mesh.identity()
        if identity is None:
            identity = init_join(mesh.files, _secret_store(mesh), name=mesh.config.mesh.name)
            click.echo(f"This device is {identity.device} ({identity.name}).")
        try:
            typed = read_code(terminal, identity.device, identity.name)
            if typed is None:
                _fail("no valid pairing code was typed; nothing was sent")
            terminal.write("Waiting for the other device's operator to confirm...\n")
        except NoTerminal:
            _fail("the terminal hung up; nothing was sent")
        timeout = mesh.config.mesh.pairing_ttl_seconds + 120.0
        try:
            with ControlClient(mesh.profile.control_socket, timeout=timeout) as client:
                result = client.call("mesh.join", {"address": address, "code": typed})
        except HostRefused as refused:
            _fail(refused.message)
        except ControlError as error:
            _fail(str(error))
    pairer = result.get("pairer") if isinstance(result, dict) else None
    name = result.get("pairerName") if isinstance(result, dict) else None
    click.echo(f"Joined the mesh of {pairer} ({name}); this device is {identity.device}.")


def _add_commands() -> None:
    """The commands of issue 30 live in modules of their own."""
    from ._mesh_handoff_cmd import handoffs_command  # noqa: PLC0415
    from ._mesh_offer_cmd import (  # noqa: PLC0415
        accept_command,
        decline_command,
        offer_command,
        offers_command,
    )
    from ._mesh_send import send_command  # noqa: PLC0415

    for command in (send_command, offer_command, offers_command, accept_command, decline_command):
        mesh_group.add_command(command)
    mesh_group.add_command(handoffs_command)


_add_commands()
