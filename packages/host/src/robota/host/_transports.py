"""The host's chat transports: one supervised child per enabled ``transports.<name>`` section.

The host knows no platform. For every chat section config.yaml has (``Transports.chat``; a
section whose settings say ``enabled: false`` is skipped) it loads the ``robota.transports``
plugin of that name and, when the plugin is a ``ServedTransport``, runs its service under the
``transports`` supervisor with a ``TransportContext``. Each transport reports its connection
through the context; the host is ready once every enabled transport is ``connected`` (at once
when none is enabled), and settled once each is ``connected`` or ``failed`` (what ``robota
server start`` waits for, briefly). The host's start never waits on a platform: a transport's
service counts as started before it connects, and one that takes longer than
``TRANSPORT_START`` to get that far is left to finish in the background. A plugin that
cannot be served, or fails to load, is reported ``failed`` with the reason and not started:
the host still serves its other front ends.

A transport's service that implements ``RestartNotes`` is told the safe restart's news for the
routes of its kind (``note``); other routes' notes (a ``cli`` route has no chat) are dropped.
One that implements ``PendingFinals`` adds its undelivered answers to ``pending_finals`` (what
a safe restart waits for); one that implements ``ServesRoutes`` follows a route of its kind the
task desk is about to prompt (``serve_route``).
A transport that can create group chats offers it through its context (``offer_groups``);
``makers`` holds the offers, by transport name, for ``task newgroup | forkgroup``.
Each context carries the team doors of the teams configured on that transport (``teams``).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from robota.core import (
    ChildSpec,
    PluginError,
    ServedTransport,
    Service,
    transport_plugin,
)
from robota.core.frontend import (
    GroupMaker,
    PendingFinals,
    RestartNote,
    RestartNotes,
    ServesRoutes,
    TransportContext,
    TransportStatus,
)

from ._routing import route_kind

if TYPE_CHECKING:
    from robota.core.config import Config, Profile
    from robota.core.frontend import FrontEndPort, HostActions
    from robota.core.store import StoreClient
    from robota.core.teams import TeamDoor

__all__ = [
    "TRANSPORT_START",
    "HostTransports",
    "enabled_transports",
    "host_locale",
    "transports_agent_env",
]

logger = logging.getLogger("robota.host")

TRANSPORT_START = 5.0
"""Seconds the host's start waits for one transport's service to start (not to connect)."""


def host_locale(environ: Mapping[str, str] | None = None) -> str:
    """``zh`` for a Chinese locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, first set wins),
    else ``en``: the language of the notes a transport writes in chats."""
    env = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def _enabled(settings: object) -> bool:
    return getattr(settings, "enabled", True) is not False


def enabled_transports(config: Config) -> dict[str, object]:
    """The settings of every enabled chat transport, by name, in file order."""
    return {name: s for name, s in config.transports.chat.items() if _enabled(s)}


def transports_agent_env(config: Config) -> dict[str, str]:
    """What the enabled transports want every agent to see (non-secret ids only)."""
    env: dict[str, str] = {}
    for name, settings in enabled_transports(config).items():
        try:
            plugin = transport_plugin(name)
        except (KeyError, PluginError):
            continue  # reported by HostTransports
        if isinstance(plugin, ServedTransport):
            env.update(
                {k: v for k, v in plugin.agent_env(settings).items() if k.startswith("ROBOTA_")}
            )
    return env


class HostTransports:
    """The ``transports`` supervisor's children and what each reported. Trio thread, except
    ``report`` callbacks, which only replace a dict entry."""

    def __init__(
        self,
        config: Config,
        profile: Profile,
        *,
        port: FrontEndPort,
        store: StoreClient,
        host: HostActions | None = None,
        teams: Callable[[str], Mapping[str, TeamDoor]] | None = None,
        clock: Callable[[], float] = time.time,
        restricted_task: Callable[[str], bool] | None = None,
    ) -> None:
        self.status: dict[str, TransportStatus] = {}
        self.specs: list[ChildSpec] = []
        self.services: dict[str, object] = {}
        """Each transport's current incarnation, by name (for ``note``)."""
        self.makers: dict[str, GroupMaker] = {}
        """The transports offering group creation now (``offer_groups``), by name."""
        started_at = clock()
        for name, settings in enabled_transports(config).items():
            try:
                plugin = transport_plugin(name)
            except KeyError:
                self.status[name] = TransportStatus("failed", f"no transport plugin {name!r}")
                continue
            except PluginError as error:
                self.status[name] = TransportStatus("failed", str(error))
                continue
            if not isinstance(plugin, ServedTransport):
                self.status[name] = TransportStatus(
                    "failed", f"the installed {name!r} plugin cannot be served by a host yet"
                )
                continue
            self.status[name] = TransportStatus("connecting")
            context = TransportContext(
                name=name,
                settings=settings,
                port=port,
                store=store,
                db_path=config.storage.sqlite_path,
                config=config,
                profile=profile,
                report=self._reporter(name),
                started_at=started_at,
                locale=host_locale(),
                host=host,
                groups=self._offer_groups,
                teams=teams(name) if teams is not None else {},
                restricted_task=restricted_task,
            )
            self.specs.append(
                ChildSpec(
                    f"transport:{name}",
                    _service_factory(plugin, context, self.services),
                    shutdown=15.0,
                    start_timeout=TRANSPORT_START,
                )
            )

    @property
    def ready(self) -> bool:
        """Every enabled transport holds a real connection (none enabled: ready)."""
        return all(s.state == "connected" for s in self.status.values())

    @property
    def settled(self) -> bool:
        """Every enabled transport is connected or has failed (none enabled: settled)."""
        return all(s.state in ("connected", "failed") for s in self.status.values())

    def note(self, note: RestartNote) -> bool:
        """Hand ``note`` to the transport of its route's kind; whether one took it."""
        service = self.services.get(route_kind(note.route_key))
        if not isinstance(service, RestartNotes):
            logger.debug(
                "restart %s: no transport shows notes on %s", note.schedule_id, note.route_key
            )
            return False
        try:
            service.restart_note(note)
        except Exception:
            logger.exception(
                "restart %s: the %s note to %s failed", note.schedule_id, note.phase, note.route_key
            )
            return False
        return True

    def serve_route(self, route_key: str) -> bool:
        """Have the transport of ``route_key``'s kind follow it; whether one does."""
        service = self.services.get(route_kind(route_key))
        if not isinstance(service, ServesRoutes):
            return False
        try:
            return service.serve_route(route_key)
        except Exception:
            logger.exception("transport %s: serve_route failed", route_kind(route_key))
            return False

    def pending_finals(self) -> int:
        """The final answers of ended turns the transports have still to deliver."""
        total = 0
        for name, service in self.services.items():
            if isinstance(service, PendingFinals):
                try:
                    total += service.pending_finals()
                except Exception:
                    logger.exception("transport %s: pending_finals failed", name)
        return total

    def as_json(self) -> list[dict[str, object]]:
        listed: list[dict[str, object]] = []
        for name, status in self.status.items():
            entry: dict[str, object] = {"name": name, "state": status.state}
            if status.state == "failed":
                entry["detail"] = status.detail or "failed"
            elif status.detail:  # a connecting transport's last error and next attempt
                entry["detail"] = status.detail
            listed.append(entry)
        return listed

    def _offer_groups(self, name: str, maker: GroupMaker | None) -> None:
        if maker is None:
            self.makers.pop(name, None)
        else:
            self.makers[name] = maker
        logger.info("transport %s: %s group creation", name, "offers" if maker else "withdrew")

    def _reporter(self, name: str) -> Callable[[TransportStatus], None]:
        def report(status: TransportStatus) -> None:
            previous = self.status.get(name)
            self.status[name] = status
            if previous != status:
                logger.info(
                    "transport %s: %s%s",
                    name,
                    status.state,
                    f" ({status.detail})" if status.detail else "",
                )

        return report


def _service_factory(
    plugin: ServedTransport, context: TransportContext, services: dict[str, object]
) -> Callable[[], Service]:
    def build() -> Service:
        # Built anew on each restart: a crashed transport starts from a clean connection.
        context.report(TransportStatus("connecting"))
        context.offer_groups(None)  # an offer made by the crashed incarnation is void
        services[context.name] = service = plugin.service(context)
        return service

    return build
