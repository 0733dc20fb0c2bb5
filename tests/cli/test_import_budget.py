"""What a start imports: the heavy parts load only for the commands that use them.

Import time is most of what a ``robota`` start costs (``tools/bench/warm_turns.py`` measures
the rest), and a module imported at the top of the wrong file is how it creeps back. So
instead of timing a start (noisy on a shared machine), these tests pin *what* is imported.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ..support.model_server import FakeModel
from ..support.real_agents import write_real_agents_config
from ..support.robota import Robota
from ..support.trust import trust_workspace

HEAVY_ALWAYS = ("importlib.metadata", "textual", "cryptography", "email")
"""Never needed to start: versions and plugins are read by ``robota.core._dists``."""


def imported_by(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def loaded(modules: set[str], name: str) -> bool:
    return name in modules or any(m.startswith(name + ".") for m in modules)


def run_probe(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run a probe script (its exit status is the command's: not checked here)."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def run_cli(argv: list[str]) -> set[str]:
    return imported_by(
        f"from robota.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    )


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["-p", "--help"], ["cards", "--help"], ["server", "--help"], ["task", "--help"]],
)
def test_help_imports_no_runtime(argv: list[str]) -> None:
    modules = run_cli(argv)
    assert "click" in modules
    for heavy in (*HEAVY_ALWAYS, "trio", "sqlite_utils", "pykka", "robota.core"):
        assert not loaded(modules, heavy), f"robota {' '.join(argv)} imported {heavy}"


def test_version_reads_no_metadata_package() -> None:
    modules = run_cli(["--version"])
    for heavy in (*HEAVY_ALWAYS, "sqlite_utils", "robota.core.presentation"):
        assert not loaded(modules, heavy), f"robota --version imported {heavy}"


def test_print_mode_imports_neither_the_tui_nor_the_renderers() -> None:
    modules = imported_by("import robota.cli._print, robota.host._engine_host, robota.runtimes")
    assert {"trio", "sqlite3", "robota.core.engine"} <= modules
    for heavy in (*HEAVY_ALWAYS, "sqlite_utils", "robota.core.presentation", "robota.core.cards"):
        assert not loaded(modules, heavy), f"print mode imported {heavy}"


def test_a_start_pauses_the_collector_and_settles_it_frozen() -> None:
    """``robota`` starts with the cyclic collector off; once settled, what the start made is
    in the permanent generation and collection is on again (see ``robota.cli._gc``)."""
    code = (
        "import gc, json\n"
        "from robota.cli import _gc\n"
        "before = gc.get_freeze_count()\n"
        "_gc.settle()\n"  # nothing paused: nothing to settle
        "steps = [gc.isenabled(), gc.get_freeze_count() == before]\n"
        "_gc.pause()\n"
        "steps.append(gc.isenabled())\n"
        "import robota.cli._print\n"
        "_gc.settle()\n"
        "steps += [gc.isenabled(), gc.get_freeze_count() > before + 10000]\n"
        "print(json.dumps(steps))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(out.stdout) == [True, True, False, True, True]


_AT_SPAWN = """
import json, sys
seen = {}
def hook(event, args):
    if event == "subprocess.Popen" and not seen and "codex" in str(args[1]):
        seen["modules"] = sorted(sys.modules)
sys.addaudithook(hook)
from robota.cli import main
try:
    main(["-p", "hello"])
except SystemExit:
    pass
print(json.dumps(seen.get("modules")))
"""


AT_SPAWN_NEVER = (
    "trio",
    "pykka",
    "robota.core.engine",
    "robota.core.store",
    "sqlite3",
    # The spawn path needs the log redactor only, not the log file's handler, nor logging
    # itself: its processes' logger loads on first use (``robota.runtimes._reaper``).
    "logging",
    "logging.handlers",
    "robota.core.logs._jsonlines",
    # Only a configuration with teams needs these.
    "zoneinfo",
    "robota.core._commands",
)
"""What print mode has not loaded when its agent's ``Popen`` starts: each is time the agent's
start would otherwise wait for."""


def test_print_mode_spawns_its_agent_before_trio_and_pykka_load(tmp_path: Path) -> None:
    """The prestart (``robota.cli._prestart``) comes right after the configuration: what is
    loaded when the agent's ``Popen`` starts is the configuration, not the kernel."""
    env = {"HOME": str(tmp_path), "ROBOTA_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    robota = Path(sys.executable).with_name("robota")
    subprocess.run([str(robota), "init"], env=env, capture_output=True, timeout=60, check=True)
    # No codex on PATH: the spawn fails after the audit event, and print mode reports it.
    out = run_probe(_AT_SPAWN, env)
    modules = json.loads(out.stdout.splitlines()[-1])
    assert modules is not None, out.stderr
    at_spawn = set(modules)
    assert loaded(at_spawn, "robota.core.config")
    assert "robota.runtimes._prestart" in at_spawn
    for heavy in AT_SPAWN_NEVER:
        assert not loaded(at_spawn, heavy), f"{heavy} was loaded before the agent's spawn"


_AT_OPENING = """
import json, os, sys
from robota.runtimes import _prestart
original = _prestart.Prestarted.open_session
def spy(self, **settings):
    written = original(self, **settings)
    print(json.dumps({"written": written, "modules": sorted(sys.modules)}), flush=True)
    os._exit(0)  # the reaper ends the fake agent
_prestart.Prestarted.open_session = spy
from robota.cli import main
main(["-p", "hello"])
"""


def test_print_mode_opens_a_new_tasks_session_before_trio_loads(tmp_path: Path) -> None:
    """A new task's ``thread/start`` is written to the prestarted agent (``_prestart``)
    before print mode's heavy imports: what it races is their load."""
    env = {"HOME": str(tmp_path), "ROBOTA_HOME": str(tmp_path / "home")}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "codex").write_text("#!/bin/sh\nexec cat > /dev/null\n")
    (bin_dir / "codex").chmod(0o755)
    env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    robota = Path(sys.executable).with_name("robota")
    subprocess.run([str(robota), "init"], env=env, capture_output=True, timeout=60, check=True)
    trust_workspace(tmp_path / "home", tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", _AT_OPENING],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["written"] is True, out.stderr
    at_opening = set(seen["modules"])
    for heavy in AT_SPAWN_NEVER:
        assert not loaded(at_opening, heavy), f"{heavy} was loaded before the session's opening"


_AT_CONNECT = """
import json, socket, sys
seen = {}
def hook(event, args):
    if event == "socket.connect" and not seen and args[0].family == socket.AF_UNIX:
        seen["modules"] = sorted(sys.modules)
sys.addaudithook(hook)
from robota.cli import main
try:
    main(["task", "send", sys.argv[1], "hello", "--wait"])
except SystemExit as exit:
    print(json.dumps({"code": exit.code, "modules": seen.get("modules")}))
"""

TASK_CLIENT_NEVER = (
    *HEAVY_ALWAYS,
    "trio",
    "pykka",
    "platformdirs",  # the profile is pinned (ROBOTA_HOME)
    "concurrent.futures",
    "robota.runtimes",
    "robota.transports",
    "robota.core.engine",
    "robota.core.presentation",
    "robota.core.store",  # the host resolves TASK: the client reads no store
    "sqlite3",
    "robota.core.config._load",  # nor the configuration: the profile's paths are enough
    "robota.core.config._model",
    "robota.core.config._dotenv",
    "robota.core._plugins",  # the profile's paths need no plugin registry
    "ruamel",
    "robota.core.control._server",
    "robota.core.control._host_lock",
    "robota.core.control._requests",  # the host's request registry: a client decodes replies only
    "robota.core.control._protocol",  # the host's request decoding: a client needs the envelope
    "robota.core.control._peer",  # who listens on a socket: the host's question, not a client's
    "robota.core.config._init",
    "robota.core.config._detect",
    "robota.core.config._merge",
    "robota.core.config._lock",
    "robota.core.frontend._port",
    "robota.core.frontend._transport",
    "robota.cli._print",
    "robota.cli._tui",
    "robota.cli._init_cmd",
    "robota.cli._agents_cmd",
    "robota.cli._server_cmd",
    "robota.cli._team_cmd",
    "robota.cli._doctor_cmd",
    "robota.host._desk",
)
"""What ``robota task send`` must not load to call the host: the command is a client of the
host, which resolves its TASK, and everything else is start-up time on every call."""


def test_task_send_loads_only_its_client_path(tmp_path: Path) -> None:
    """When ``task send`` connects to the host, it has loaded the profile's paths and the
    control client, and no configuration, no store, no other command, no engine."""
    home = tmp_path / "home"
    env = {"HOME": str(tmp_path), "ROBOTA_HOME": str(home), "PATH": "/usr/bin:/bin"}
    robota = Path(sys.executable).with_name("robota")
    subprocess.run([str(robota), "init"], env=env, capture_output=True, timeout=60, check=True)
    seed = (
        "import sqlite3, sys\n"
        "from robota.core.store import CreateTask, Database, migrate\n"
        "db = Database(sqlite3.connect(sys.argv[1], isolation_level=None))\n"
        "migrate(db)\n"
        "CreateTask('t1a2b3c4d5e6', 'codex', sys.argv[2], 'app-server').apply(db)\n"
        "db.close()\n"
    )
    store = home / "data" / "robota.sqlite"
    store.parent.mkdir(exist_ok=True)
    subprocess.run([sys.executable, "-c", seed, str(store), str(tmp_path)], timeout=60, check=True)
    # No host runs: the client connects, finds none and exits 2 after the audit event.
    out = run_probe(_AT_CONNECT, env, "t1a2b3")
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["code"] == 2, out.stderr
    assert "needs a running host" in out.stderr
    assert result["modules"] is not None, out.stderr
    at_connect = set(result["modules"])
    for needed in (
        "robota.core.config._paths",
        "robota.core.control._client",
        "robota.cli._task_cmd",
    ):
        assert needed in at_connect, f"task send did not load {needed}"
    for heavy in TASK_CLIENT_NEVER:
        assert not loaded(at_connect, heavy), f"task send loaded {heavy} before connecting"


_AFTER_A_TURN = """
import json, sys
from robota.cli import main
try:
    main(["-p", "hello", "--agent", sys.argv[1]])
except SystemExit as exit:
    code = exit.code
else:
    code = 0
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

PROTOCOL_MODULES = {
    "app-server": ("robota.runtimes._app_server_driver", "robota.runtimes._app_server"),
    "acp": (
        "robota.runtimes._acp_driver",
        "robota.runtimes._acp",
        "robota.runtimes._acp_host",
        "robota.runtimes._acp_map",
    ),
}
"""Each protocol's driver and client: a run loads its agent's and never the other's."""


@pytest.mark.parametrize(("agent", "protocol"), [("codex", "app-server"), ("claude", "acp")])
def test_print_mode_loads_only_its_agents_protocol(
    robota: Robota, agent: str, protocol: str
) -> None:
    """With both protocols' agents configured (so both get a host), a turn through one loads
    that protocol's driver and client only."""
    with FakeModel() as model:
        write_real_agents_config(robota, ["codex", "claude-agent-acp"], model.url)
        out = run_probe(_AFTER_A_TURN, robota.env, agent)
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["code"] == 0, out.stderr
    modules = set(result["modules"])
    other = "acp" if protocol == "app-server" else "app-server"
    for module in PROTOCOL_MODULES[protocol]:
        assert module in modules, f"a turn through {agent} did not load {module}"
    for module in PROTOCOL_MODULES[other]:
        assert module not in modules, f"a turn through {agent} loaded {module}"


def test_a_second_start_on_the_same_config_parses_no_yaml(tmp_path: Path) -> None:
    """The first start on a config.yaml parses it and remembers what it parsed to
    (``robota.core.config._parsed``); the next one on the same text loads no YAML parser
    before its agent's spawn, and one with ``ROBOTA_CODE_CACHE=0`` does."""
    env = {"HOME": str(tmp_path), "ROBOTA_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"}
    robota = Path(sys.executable).with_name("robota")
    subprocess.run([str(robota), "init"], env=env, capture_output=True, timeout=60, check=True)

    def at_spawn(extra: dict[str, str]) -> set[str]:
        out = run_probe(_AT_SPAWN, {**env, **extra})
        modules = json.loads(out.stdout.splitlines()[-1])
        assert modules is not None, out.stderr
        return set(modules)

    at_spawn({})  # whatever init left, this start's text is remembered now
    assert not loaded(at_spawn({}), "ruamel")
    assert loaded(at_spawn({"ROBOTA_CODE_CACHE": "0"}), "ruamel")
    config = tmp_path / "home" / "config.yaml"
    config.write_text(config.read_text() + "\n# changed\n")
    assert loaded(at_spawn({}), "ruamel")  # another text: parsed again
    assert not loaded(at_spawn({}), "ruamel")


_ON_A_WARM_HOST = """
import json, socket, sys, threading
from robota.core.config import resolve_profile
path = resolve_profile().control_socket
path.parent.mkdir(parents=True)
server = socket.socket(socket.AF_UNIX)
server.bind(str(path))
server.listen()
heard = []
def notice(kind, **fields):
    return {"type": "notice", "notice": {"kind": kind, "route_key": "print:1", **fields}}
def host():
    conn, _ = server.accept()
    reader = conn.makefile("rb")
    heard.append(json.loads(reader.readline()))  # print.run
    frames = [{"type": "hello", "agent": "codex", "await_task": False}]
    conn.sendall(b"".join(json.dumps(f).encode() + b"\\n" for f in frames))
    heard.append(json.loads(reader.readline()))  # the submit
    task = {"task_id": "t1", "attempt_id": "a1"}
    frames = [
        notice("TaskOpened", task_id="t1", agent="codex", cwd="/", remote_id="r1", resumed=False),
        notice("TurnBegan", prompt="hi", **task),
        notice("TurnFinished", status="completed", final_text="ECHO: hi", duration_ms=5, **task),
        notice("RouteIdle", inputs=1),
    ]
    conn.sendall(b"".join(json.dumps(f).encode() + b"\\n" for f in frames))
    reader.read()  # until the client leaves
threading.Thread(target=host, daemon=True).start()
from robota.cli import main
try:
    main(["-p", "hi", "--output-format", sys.argv[1]])
except SystemExit as exit:
    code = exit.code
print(json.dumps({"code": code, "heard": heard, "modules": sorted(sys.modules)}))
"""

WARM_HOST_CLIENT_NEVER = (
    "trio",
    "pykka",
    "sqlite3",
    "robota.core.engine",
    "robota.core.events",
    "robota.core.frontend",
    "robota.core.kernel._actor",
    "robota.core.protocol._notices",
    "robota.core.config._load",
    "ruamel",
    "robota.host",
    "robota.runtimes",
    "robota.cli._print",
    "robota.cli._prestart",
)
"""What ``robota -p`` must not load when a warm host runs its turn: the client relays frames
and writes the output (``robota.cli._print_relay``); the engine is the host's."""


@pytest.mark.parametrize(
    ("output_format", "out"),
    [("text", "ECHO: hi\n"), ("json", None), ("stream-json", None)],
)
def test_print_mode_on_a_warm_host_loads_no_engine(output_format: str, out: str | None) -> None:
    root = Path(tempfile.mkdtemp(prefix="robota-budget-", dir="/tmp"))  # a short socket path
    try:
        env = {"HOME": str(root), "ROBOTA_HOME": str(root / "home"), "PATH": "/usr/bin:/bin"}
        probe = run_probe(_ON_A_WARM_HOST, env, output_format)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result = json.loads(probe.stdout.splitlines()[-1])
    assert result["code"] == 0, probe.stderr
    assert probe.stderr == ""
    request, submit = result["heard"]
    assert (request["type"], submit) == ("print.run", {"type": "submit", "prompt": "hi"})
    printed = "".join(line + "\n" for line in probe.stdout.splitlines()[:-1])
    if out is not None:
        assert printed == out
    else:
        last = json.loads(printed.splitlines()[-1])
        assert (last["type"], last["result"], last["session_id"]) == ("result", "ECHO: hi", "t1")
    modules = set(result["modules"])
    assert "robota.cli._print_relay" in modules
    for heavy in WARM_HOST_CLIENT_NEVER:
        assert not loaded(modules, heavy), f"robota -p on a warm host loaded {heavy}"
