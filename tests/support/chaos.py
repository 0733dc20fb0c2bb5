"""Chaos for the chat transports: a real host SIGKILLed at the moments a message is most exposed,
started again, again and again in one run; then every message must have exactly one final, its
reactions ended, and no card left (or redrawn) running.

The moments (``MOMENTS``), each made exact by holding the platform or the model still:

* ``reaction``: the working reaction (``OnIt`` / ``eyes``) is taken and never answered: killed
  after it, before the route was told;
* ``card``: the turn's progress card is kept by the platform and never answered: killed between
  the platform making it and the host's record of it (the next host must end that card, not
  post another: Feishu answers its ``uuid`` with it, Slack is asked for its key);
* ``mid-turn``: the model holds the turn's request: killed while the turn runs;
* ``recovered``: killed mid-turn, then again while the next host's continued turn runs;
* ``final``: the final answer is taken and neither kept nor answered: killed between the
  terminal card and the final;
* ``sent``: the final answer is kept by the platform and never answered: killed between the
  platform keeping it and the host's record of it (Slack keeps no deduplication key: the next
  host must find it there, not send it again);
* ``settling``: the working reaction's removal is taken and neither made nor answered: killed
  between the terminal reaction and that removal;
* ``queued``: a turn held at the model and a second message queued behind it (its note shown):
  killed while the queued prompt waits;
* ``random`` (the tool's): killed at a random delay after the message was pushed.

The platforms are the tests' fakes behind a small ``Chat`` adapter each (Feishu, Slack, a Feishu
team group); the run's figures are a ``Tally``. Used by the transports' chaos tests and by
``tools/chaos.py`` (N kills at random moments)."""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import trio

from robota.core.engine import recovery_prompt

from . import feishu as feishu_served
from . import slack as slack_served
from .fake_feishu import fake_platform
from .fake_slack import dm, events_api, fake_slack
from .feishu_team import add_team, team_event
from .host import sandboxed
from .model_server import FakeModel, RecordedRequest

MOMENTS = ("reaction", "card", "mid-turn", "recovered", "final", "sent", "settling", "queued")
WAIT = 120.0
"""Seconds one wait may take: reached only when something is broken."""


class ModelHold:
    """``FakeModel``'s ``on_request``: a request whose prompt is held waits (its handler
    thread blocked, so the agent's turn runs on without an answer) until ``release``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: set[str] = set()
        self._waiting: set[str] = set()
        self._go = threading.Event()

    def hold(self, prompt: str) -> None:
        with self._lock:
            self._held.add(prompt)

    def waiting(self, prompt: str) -> bool:
        with self._lock:
            return prompt in self._waiting

    def release(self) -> None:
        """Every held prompt goes on; none is held any more."""
        with self._lock:
            self._held.clear()
            self._waiting.clear()
            go, self._go = self._go, threading.Event()
        go.set()

    def __call__(self, request: RecordedRequest) -> None:  # a handler thread of the model
        with self._lock:
            if request.prompt not in self._held:
                return
            self._held.discard(request.prompt)
            self._waiting.add(request.prompt)
            go = self._go
        go.wait(WAIT)


class Chat(Protocol):
    """What the run needs of one platform (its fake), by message number."""

    async def push(self, n: int, text: str) -> None: ...

    def acked(self, n: int) -> bool:
        """The platform was told it has message ``n``'s event (it will not deliver it again)."""
        ...

    async def deliver_again(self, n: int) -> None:
        """Message ``n``'s event again, as the platform does with one not acknowledged."""
        ...

    def hold_reaction(self, on: bool) -> None: ...

    def hold_card(self, on: bool) -> None:
        """Turn cards are kept by the platform but their posts never answered."""

    def card_held(self, n: int) -> bool:
        """Message ``n``'s turn card is kept and its post not answered."""
        ...

    def cards_twice(self) -> list[str]:
        """The turn cards posted more than once (their keys)."""
        ...

    def stall_final(self, on: bool) -> None: ...

    def hold_final(self, on: bool) -> None:
        """Finals are kept by the platform but their posts never answered."""

    def final_held(self, n: int) -> bool:
        """Message ``n``'s final is kept and its post not answered."""
        ...

    def stall_settling(self, on: bool) -> None: ...

    def ended_reacted(self, n: int) -> bool:
        """Message ``n`` has its terminal reaction (its working one may be there still)."""
        ...

    def reacted(self, n: int) -> bool:
        """The working reaction is on message ``n``."""
        ...

    def final_stalled(self, n: int) -> bool: ...

    def queued(self, n: int) -> bool:
        """Message ``n`` was said to wait (its queued note)."""
        ...

    def finals(self, n: int) -> int: ...

    def settled(self, n: int) -> bool:
        """Message ``n``'s reactions ended: its one terminal reaction, no working one."""
        ...

    def reactions(self, n: int) -> str:
        """Message ``n``'s reactions now (for the report)."""
        ...

    def running_cards(self) -> list[str]:
        """The turn cards (progress messages) whose last state is running."""
        ...

    def redrawn_cards(self) -> list[str]:
        """The turn cards shown running again after they were terminal."""
        ...


@dataclass
class Tally:
    """A run's figures."""

    messages: int = 0
    kills: int = 0
    lost: list[int] = field(default_factory=list)
    doubled: list[int] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    """Messages whose reactions did not end (the working one left, or no terminal one)."""
    running: list[str] = field(default_factory=list)
    redrawn: list[str] = field(default_factory=list)
    twice: list[str] = field(default_factory=list)
    """Turn cards posted more than once (a second progress message for one turn)."""
    moments: dict[str, int] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not (
            self.lost or self.doubled or self.stale or self.running or self.redrawn or self.twice
        )

    def line(self, name: str) -> str:
        return (
            f"{name}: {self.kills} kills, {self.messages} messages: lost {len(self.lost)}, "
            f"doubled {len(self.doubled)}, stale reactions {len(self.stale)}, cards left running "
            f"{len(self.running)}, redrawn as running {len(self.redrawn)}, cards posted twice "
            f"{len(self.twice)}"
        )


Host = Callable[[], AbstractAsyncContextManager[trio.Process]]
"""Starts the host process (ready once it serves the platform) and stops it at the end."""


class Run:
    """One chaos run against ``chat``: the host started by ``host``, the model held by
    ``hold``; ``wait(condition)`` waits on the fake."""

    def __init__(
        self,
        chat: Chat,
        hold: ModelHold,
        host: Host,
        wait: Callable[[Callable[[], object], float], Any],
        *,
        prefix: str = "chaos",
    ) -> None:
        self.chat = chat
        self.hold = hold
        self.host = host
        self._wait = wait
        self.prefix = prefix
        self.tally = Tally()
        self._n = 0
        self._unacked: list[int] = []
        """Messages whose event a killed host never acknowledged: the platform delivers
        them again to the next host."""

    async def until(self, condition: Callable[[], object], within: float = WAIT) -> None:
        """Until ``condition()`` holds: on each change of the fake, and every 20 ms (the
        model's hold changes no fake)."""
        with trio.fail_after(within):
            while not condition():
                with trio.move_on_after(0.02):
                    await self._wait(condition, within)

    def _next(self) -> tuple[int, str]:
        self._n += 1
        self.tally.messages = self._n
        return self._n, f"{self.prefix} message {self._n}"

    async def killed(self, moment: str, rng: random.Random | None = None) -> None:
        """One message (two for ``queued``) through a host killed at ``moment``; the host
        is started for it and left dead."""
        self.tally.moments[moment] = self.tally.moments.get(moment, 0) + 1
        chat, hold = self.chat, self.hold
        n, text = self._next()
        self._arm(moment, text, on=True)
        try:
            async with self.host() as process:
                await self._started()
                await chat.push(n, text)
                if moment == "random":
                    await trio.sleep((rng or random.Random()).uniform(0.0, 3.0))
                else:
                    await self.until(self._reached(moment, n, text))
                if moment == "queued":
                    m, later = self._next()
                    await chat.push(m, later)
                    await self.until(lambda: chat.queued(m))
                await self._kill(process)
        finally:
            self._arm(moment, text, on=False)
        if moment == "recovered":  # the next host continues the turn: killed during it
            again = recovery_prompt(text)
            hold.hold(again)
            try:
                async with self.host() as process:
                    await self._started()
                    await self.until(lambda: hold.waiting(again))
                    await self._kill(process)
            finally:
                hold.release()

    def _arm(self, moment: str, text: str, *, on: bool) -> None:
        """The fake (or the model) set to hold still at ``moment`` (``on``), or let go."""
        chat = self.chat
        if not on:
            chat.hold_reaction(False)
            chat.hold_card(False)
            chat.stall_final(False)
            chat.hold_final(False)
            chat.stall_settling(False)
            self.hold.release()
        elif moment == "reaction":
            chat.hold_reaction(True)
        elif moment == "card":
            chat.hold_card(True)
        elif moment == "final":
            chat.stall_final(True)
        elif moment == "sent":
            chat.hold_final(True)
        elif moment == "settling":
            chat.stall_settling(True)
        elif moment in ("mid-turn", "recovered", "queued"):
            self.hold.hold(text)

    def _reached(self, moment: str, n: int, text: str) -> Callable[[], bool]:
        """Whether message ``n`` (``text``) got to ``moment``, where the fake holds still."""
        chat = self.chat
        reached: dict[str, Callable[[], bool]] = {
            "reaction": lambda: chat.reacted(n),
            "card": lambda: chat.card_held(n),
            "final": lambda: chat.final_stalled(n),
            "sent": lambda: chat.final_held(n),
            "settling": lambda: chat.ended_reacted(n),
        }
        return reached.get(moment, lambda: self.hold.waiting(text))

    async def _kill(self, process: trio.Process) -> None:
        process.kill()  # SIGKILL: nothing is said, nothing is flushed
        await process.wait()
        self.tally.kills += 1
        self._unacked = [n for n in range(1, self._n + 1) if not self.chat.acked(n)]

    async def _started(self) -> None:
        """A new host is up: what the last one never acknowledged comes again."""
        unacked, self._unacked = self._unacked, []
        for n in unacked:
            await self.chat.deliver_again(n)

    async def settle(self, *, within: float = WAIT) -> Tally:
        """A last host runs until every message has its answer and its reactions ended (or
        ``within`` seconds passed); then the run's figures."""
        chat, numbers = self.chat, range(1, self._n + 1)

        def done() -> bool:
            return all(chat.finals(n) >= 1 and chat.settled(n) for n in numbers) and not (
                chat.running_cards()
            )

        async with self.host():
            await self._started()
            try:
                await self.until(done, within)
            except trio.TooSlowError:
                pass  # the figures say what is missing
            await trio.sleep(1.0)  # what a late duplicate would need to show
        tally = self.tally
        tally.lost = [n for n in numbers if chat.finals(n) == 0]
        tally.doubled = [n for n in numbers if chat.finals(n) > 1]
        tally.stale = [f"{n}: {chat.reactions(n)}" for n in numbers if not chat.settled(n)]
        tally.running = chat.running_cards()
        tally.redrawn = chat.redrawn_cards()
        tally.twice = chat.cards_twice()
        return tally


async def chaos(run: Run, moments: Sequence[str], rng: random.Random | None = None) -> Tally:
    """Each moment in turn, one host killed at it (two for ``recovered``); then settled."""
    for moment in moments:
        await run.killed(moment, rng)
    return await run.settle()


# -- the platforms -------------------------------------------------------------------------------


def feishu_running(content: dict[str, Any]) -> bool | None:
    """A Feishu turn card's state: running (``True``), terminal (``False``); ``None``: not a
    turn card (a note)."""
    header = content.get("header")
    if not isinstance(header, dict) or "subtitle" not in header:
        return None
    return header.get("template") in ("blue", "orange")


class FeishuChat:
    """The fake Open Platform (tests/transports/feishu/fake_platform.py), a private chat or a
    team group (``event(n, text)`` makes the pushed event)."""

    def __init__(self, fake: Any, event: Callable[[int, str], dict[str, Any]], queued: str) -> None:
        self.fake = fake
        self._event = event
        self._queued = queued
        """The words of the reply that says a message waits."""
        self._events: dict[int, dict[str, Any]] = {}
        self._frames: dict[int, list[str]] = {}

    @staticmethod
    def mid(n: int) -> str:
        return f"om_user{n}"

    async def push(self, n: int, text: str) -> None:
        self._events[n] = self._event(n, text)
        await self.deliver_again(n)

    async def deliver_again(self, n: int) -> None:
        frame = await self.fake.push_event(self._events[n])
        self._frames.setdefault(n, []).append(frame)

    def acked(self, n: int) -> bool:
        frames = set(self._frames.get(n, ()))
        return any(ack.header("message_id") in frames for ack in self.fake.acks)

    def hold_reaction(self, on: bool) -> None:
        self.fake.hold_reactions = {"OnIt"} if on else set()

    def hold_card(self, on: bool) -> None:
        self.fake.hold_cards = on

    def card_held(self, n: int) -> bool:
        return self.mid(n) in self.fake.held_cards

    def cards_twice(self) -> list[str]:
        """Turn cards sent under one ``uuid`` as two messages (the platform drops a repeat,
        so none unless a card went without its key)."""
        seen = Counter(
            m.uuid
            for m in self.fake.messages
            if m.msg_type == "interactive" and m.uuid and feishu_running(m.content) is not None
        )
        return sorted(str(key) for key, count in seen.items() if count > 1)

    def stall_final(self, on: bool) -> None:
        self.fake.stall_posts = on

    def hold_final(self, on: bool) -> None:
        self.fake.hold_posts = on

    def final_held(self, n: int) -> bool:
        return self.finals(n) > 0  # every post is held while ``hold_final``

    def stall_settling(self, on: bool) -> None:
        self.fake.stall_unreactions = on

    def ended_reacted(self, n: int) -> bool:
        return bool({"DONE", "ERROR", "CrossMark"} & set(self.fake.reactions_on(self.mid(n))))

    def reacted(self, n: int) -> bool:
        return "OnIt" in self.fake.reactions_on(self.mid(n))

    def final_stalled(self, n: int) -> bool:
        return self.mid(n) in self.fake.stalled

    def queued(self, n: int) -> bool:
        return any(
            m.reply_to == self.mid(n) and self._queued in json.dumps(m.content, ensure_ascii=False)
            for m in self.fake.messages
        )

    def finals(self, n: int) -> int:
        return sum(
            1 for m in self.fake.messages if m.reply_to == self.mid(n) and m.msg_type == "post"
        )

    def settled(self, n: int) -> bool:
        return self.fake.reactions_on(self.mid(n)) in (["DONE"], ["ERROR"], ["CrossMark"])

    def reactions(self, n: int) -> str:
        return str(self.fake.reactions_on(self.mid(n)))

    def _shown(self) -> dict[str, list[bool]]:
        """Each turn card's states as shown: sent, then each PATCH."""
        shown: dict[str, list[bool]] = {}
        for sent in self.fake.messages:
            if sent.msg_type == "interactive" and feishu_running(sent.content) is not None:
                shown[sent.message_id] = [bool(feishu_running(sent.content))]
        for patch in self.fake.patched:
            state = feishu_running(patch.content)
            if patch.message_id in shown and state is not None:
                shown[patch.message_id].append(state)
        return shown

    def running_cards(self) -> list[str]:
        return [card for card, states in self._shown().items() if states[-1]]

    def redrawn_cards(self) -> list[str]:
        return [card for card, states in self._shown().items() if _running_after_terminal(states)]


def _running_after_terminal(states: list[bool]) -> bool:
    """Shown running again after it was shown terminal."""
    seen_end = False
    for running in states:
        if not running:
            seen_end = True
        elif seen_end:
            return True
    return False


class SlackChat:
    """The fake Slack (tests/transports/slack/fake_slack.py): a DM with the owner."""

    def __init__(
        self, fake: Any, event: Callable[[int, str], dict[str, Any]], channel: str
    ) -> None:
        self.fake = fake
        self._event = event
        self.channel = channel
        self.ts: dict[int, str] = {}
        self._envelopes: dict[int, list[dict[str, Any]]] = {}
        self._events: dict[int, dict[str, Any]] = {}

    async def push(self, n: int, text: str) -> None:
        event = self._event(n, text)
        self.ts[n] = str(event["ts"])
        self._events[n] = event
        await self.deliver_again(n)

    async def deliver_again(self, n: int) -> None:
        again = len(self._envelopes.get(n, ()))
        envelope = events_api(self._events[n], event_id=f"EvChaos{n}", retry_attempt=again)
        self._envelopes.setdefault(n, []).append(envelope)
        await self.fake.push(envelope)

    def acked(self, n: int) -> bool:
        ids = {e["envelope_id"] for e in self._envelopes.get(n, ())}
        return any(ack.get("envelope_id") in ids for ack in self.fake.acks)

    def hold_reaction(self, on: bool) -> None:
        self.fake.hold_reactions = {"eyes"} if on else set()

    def hold_card(self, on: bool) -> None:
        self.fake.hold_metadata = {"robota_card"} if on else set()

    def card_held(self, n: int) -> bool:
        return self.ts.get(n) in self.fake.held_posts

    def cards_twice(self) -> list[str]:
        """Card keys (the metadata each progress message carries) posted as two messages."""
        seen: Counter[str] = Counter()
        for message in self.fake.messages.values():
            metadata = message.get("metadata")
            if isinstance(metadata, dict) and metadata.get("event_type") == "robota_card":
                seen[str(metadata.get("event_payload", {}).get("key"))] += 1
        return sorted(key for key, count in seen.items() if count > 1)

    def stall_final(self, on: bool) -> None:
        self.fake.stall_finals = on

    def hold_final(self, on: bool) -> None:
        self.fake.hold_finals = on

    def final_held(self, n: int) -> bool:
        return self.ts.get(n) in self.fake.held

    def stall_settling(self, on: bool) -> None:
        self.fake.stall_removals = on

    def ended_reacted(self, n: int) -> bool:
        return bool({"white_check_mark", "x", "no_entry_sign"} & self._reactions(n))

    def _reactions(self, n: int) -> set[str]:
        ts = self.ts.get(n)
        return {name for c, t, name in self.fake.reactions if (c, t) == (self.channel, ts)}

    def reacted(self, n: int) -> bool:
        return "eyes" in self._reactions(n)

    def final_stalled(self, n: int) -> bool:
        return self.ts.get(n) in self.fake.stalled

    def _thread(self, n: int) -> list[dict[str, Any]]:
        ts = self.ts.get(n)
        return [
            m
            for (c, _), m in sorted(self.fake.messages.items())
            if c == self.channel and m.get("thread_ts") == ts
        ]

    def queued(self, n: int) -> bool:
        return any("queued" in _words(m) for m in self._thread(n))

    def finals(self, n: int) -> int:
        return sum(
            1 for m in self._thread(n) if any(b.get("type") == "markdown" for b in m["blocks"])
        )

    def settled(self, n: int) -> bool:
        return self._reactions(n) in ({"white_check_mark"}, {"x"}, {"no_entry_sign"})

    def reactions(self, n: int) -> str:
        return str(sorted(self._reactions(n)))

    def _progress(self) -> dict[str, list[bool]]:
        """Each message's states as ``chat.update`` showed them (running: ``⏳``)."""
        shown: dict[str, list[bool]] = {}
        for call in self.fake.calls:
            if call.method == "chat.update":
                shown.setdefault(str(call.args.get("ts")), []).append("⏳" in _words(call.args))
        return shown

    def running_cards(self) -> list[str]:
        return [ts for (_, ts), m in sorted(self.fake.messages.items()) if "⏳" in _words(m)]

    def redrawn_cards(self) -> list[str]:
        return [ts for ts, states in self._progress().items() if _running_after_terminal(states)]


def _words(message: Any) -> str:
    blocks = message.get("blocks")
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    return json.dumps([message.get("text"), blocks], ensure_ascii=False).lower()


# -- the runs ------------------------------------------------------------------------------------


@asynccontextmanager
async def feishu_chaos(root: Path, *, team: bool = False) -> AsyncIterator[Run]:
    """A run against the fake Open Platform, with a real agent (codex-acp) on the held fake
    model: the owner's private chat, or (``team``) a team group with one slot (the next
    requests queue)."""
    hold = ModelHold()
    with FakeModel(on_request=hold) as model:
        robota, _ = sandboxed(root, model, "codex-acp")
        log = root / "host.log"
        async with fake_platform() as fake:
            feishu_served.configure(robota.home, fake.domain)
            if team:
                project = root / "project"
                project.mkdir()
                add_team(robota.home, project, slots=1)

                def event(n: int, text: str) -> dict[str, Any]:
                    return team_event(n, text, f"ou_m{n}")

                chat = FeishuChat(fake, event, "已排队")
            else:
                chat = FeishuChat(fake, feishu_served.message_event, "Queued")
            try:
                yield Run(
                    chat,
                    hold,
                    lambda: feishu_served.host_process(robota, fake, log),
                    fake.wait_until,
                    prefix="team" if team else "chaos",
                )
            finally:
                hold.release()


@asynccontextmanager
async def slack_chaos(root: Path) -> AsyncIterator[Run]:
    """A run against the fake Slack (the owner's DM), as ``feishu_chaos``."""
    hold = ModelHold()
    with FakeModel(on_request=hold) as model:
        robota, _ = sandboxed(root, model, "codex-acp")
        log = root / "host.log"
        async with fake_slack() as fake:
            slack_served.configure(robota.home, fake.api_url)

            def event(n: int, text: str) -> dict[str, Any]:
                return dm(text, ts=slack_served.now_ts())

            chat = SlackChat(fake, event, slack_served.CHANNEL)
            try:
                yield Run(
                    chat,
                    hold,
                    lambda: slack_served.host_process(robota, fake, log),
                    fake.wait_until,
                )
            finally:
                hold.release()


def host_logs(root: Path) -> str:
    """The end of the hosts' logs, for a failure's message."""
    return "\n".join(p.read_text()[-6000:] for p in sorted(root.rglob("robota*.log")))
