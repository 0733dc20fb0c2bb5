"""Running the real ``robota`` script in a controlled environment, with pipes or a terminal.

Every run gets its own HOME, ROBOTA_HOME and a PATH that holds only what the test put there, so
no agent installed on the machine running the tests can change the outcome. The ``robota``
fixture is that sandbox in ``tmp_path`` (the CLI and MCP tests' conftests register it).
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROBOTA = Path(sys.executable).with_name("robota")

# What the fake npm "installs": package -> (command, version).
FAKE_PACKAGES = {
    "@openai/codex": ("codex", "0.46.0"),
    "@zed-industries/codex-acp": ("codex-acp", "0.3.1"),
    "@google/gemini-cli": ("gemini", "0.9.0"),
    "@qwen-code/qwen-code": ("qwen", "0.1.2"),
    "opencode-ai": ("opencode", "0.15.3"),
    "@agentclientprotocol/claude-agent-acp": ("claude-agent-acp", "0.5.0"),
}

_FAKE_NPM = """\
#!{python}
# A stand-in for npm: logs its arguments and lays out a global install the way npm does.
import json, os, sys
from pathlib import Path
from typing import Any
prefix = Path({prefix!r})
packages = {packages!r}
with open({log!r}, "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
name = sys.argv[-1]
command, version = packages[name]
root = prefix / "lib" / "node_modules" / name
root.mkdir(parents=True, exist_ok=True)
(root / "package.json").write_text(json.dumps({{"name": name, "version": version}}))
entry = root / "bin.js"
entry.write_text("#!/bin/sh\\necho ran >> {ran!r}\\n")
entry.chmod(0o755)
(prefix / "bin").mkdir(exist_ok=True)
os.symlink(os.path.relpath(entry, prefix / "bin"), prefix / "bin" / command)
print(f"added 1 package: {{name}}@{{version}}")
"""


@dataclass
class Robota:
    """The ``robota`` script plus the sandbox it runs in."""

    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return Path(self.env["ROBOTA_HOME"])

    @property
    def npm_log(self) -> Path:
        return self.root / "npm.log"

    @property
    def agent_ran(self) -> Path:
        return self.root / "agent-ran"

    def install_fake_npm(self) -> None:
        """Put an npm on PATH that 'installs' agents into a prefix that is also on PATH."""
        prefix = self.root / "npm-prefix"
        (prefix / "bin").mkdir(parents=True, exist_ok=True)
        npm = self.root / "bin" / "npm"
        npm.write_text(
            _FAKE_NPM.format(
                python=sys.executable,
                prefix=str(prefix),
                packages=FAKE_PACKAGES,
                log=str(self.npm_log),
                ran=str(self.agent_ran),
            )
        )
        npm.chmod(0o755)
        self.env["PATH"] = f"{self.root / 'bin'}{os.pathsep}{prefix / 'bin'}"

    def preinstall(self, package: str) -> None:
        """Install an agent with the fake npm before the test runs robota."""
        self.install_fake_npm()
        subprocess.run(
            [self.root / "bin" / "npm", "install", "-g", package],
            check=True,
            capture_output=True,
        )
        self.npm_log.unlink()

    def environment(self, extra: dict[str, str] | None, unset: Sequence[str]) -> dict[str, str]:
        env = {**self.env, **(extra or {})}
        for name in unset:
            env.pop(name, None)
        return env

    def run(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        unset: Sequence[str] = (),
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(ROBOTA), *args],
            env=self.environment(env, unset),
            cwd=cwd or self.root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def invoke(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``run`` in this process, through click's test runner, for a test of the command
        line's parsing and messages where a fresh interpreter is not the point (each run of the
        script costs a third of a second of CPU). For the call, the sandbox's environment
        replaces this process's and its folder is the working directory; stdin is empty. The
        outcome has ``run``'s shape; an exception the command does not handle is raised here."""
        from click.testing import CliRunner  # few tests need it: imported here

        from robota.cli import cli

        env: dict[str, str | None] = dict.fromkeys(os.environ)
        env.update(self.env)
        before = Path.cwd()
        os.chdir(self.root)
        try:
            result = CliRunner(env=env).invoke(
                cli, list(args), prog_name="robota", catch_exceptions=False
            )
        finally:
            os.chdir(before)
        return subprocess.CompletedProcess(
            [str(ROBOTA), *args], result.exit_code, result.stdout, result.stderr
        )

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """Start robota in the background (the caller ends it)."""
        return subprocess.Popen(
            [str(ROBOTA), *args],
            env=self.environment(env, ()),
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run_json(self, *args: str, **kwargs: Any) -> dict[str, Any]:
        completed = self.run(*args, "--json", **kwargs)
        assert completed.returncode == 0, completed.stderr
        result = json.loads(completed.stdout)
        assert isinstance(result, dict)
        return result

    def run_in_terminal(
        self, *args: str, answers: Sequence[tuple[str, str]] = (), timeout: float = 30
    ) -> tuple[int, str]:
        """Run with stdin, stdout and stderr on a pseudo-terminal; answer prompts as they come.

        ``answers`` pairs a text to wait for with what to type once it has appeared.
        """
        master, slave = pty.openpty()
        with subprocess.Popen(
            [str(ROBOTA), *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=self.env,
            cwd=self.root,
            start_new_session=True,
        ) as process:
            os.close(slave)
            output = b""
            searched_from = 0
            pending = list(answers)
            deadline = time.monotonic() + timeout
            try:
                while time.monotonic() < deadline:
                    ready, _, _ = select.select([master], [], [], 0.05)
                    if ready:
                        try:
                            chunk = os.read(master, 4096)
                        except OSError:  # EIO: the terminal's other side is gone
                            break
                        if not chunk:
                            break
                        output += chunk
                    if pending:
                        found = output.find(pending[0][0].encode(), searched_from)
                        if found != -1:
                            searched_from = found + len(pending[0][0])
                            os.write(master, pending.pop(0)[1].encode())
                    elif not ready and process.poll() is not None:
                        break
                else:
                    process.kill()
                    pytest.fail(f"robota did not finish in {timeout} s:\n{output.decode()}")
            finally:
                os.close(master)
            code = process.wait(timeout=10)
        return code, output.decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.fixture
def robota(tmp_path: Path) -> Robota:
    (tmp_path / "bin").mkdir()
    (tmp_path / "user").mkdir()
    return Robota(
        tmp_path,
        {
            "HOME": str(tmp_path / "user"),
            "PATH": str(tmp_path / "bin"),
            "ROBOTA_HOME": str(tmp_path / "home"),
            "LC_ALL": "C.UTF-8",
        },
    )
