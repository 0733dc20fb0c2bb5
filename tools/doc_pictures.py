"""Refresh the pictures of docs/pictures.md from a real robota, a real Codex and the fake model.

    .venv/bin/python tools/doc_pictures.py

Offline, as the benchmarks run (``tools/bench/_real.Sandbox``: a private profile, Codex
isolated and pointed at the fake model on 127.0.0.1):

* the TUI mid-turn: ``robota`` in a tmux terminal of 100 x 30 (``tests/support/terminal``),
  a prompt that runs a shell command, the screen captured while the approval waits, as text
  and with its colours (``capture-pane -e``), drawn as ``docs/img/tui-mid-turn.png`` by
  ``tools/screen_png.py``; then the command is allowed and robota leaves with Ctrl-C, its agent
  with it;
* the cards: one print-mode turn that runs a command, written as stream-json, then drawn by
  ``robota cards preview`` as Feishu and Slack would show its last update and its final answer.

Each picture replaces the text between its ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``
markers in docs/pictures.md; the rest of the page is left as it is.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tools" / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _real import Sandbox, fake_model  # noqa: E402
from tests.support.terminal import Tmux  # noqa: E402
from tools.screen_png import parse, render  # noqa: E402

PAGE = ROOT / "docs" / "pictures.md"
SCREENSHOT = ROOT / "docs" / "img" / "tui-mid-turn.png"
WIDTH, HEIGHT = 100, 30
PROMPT = "SHELL: echo hello from robota"
SHOWN_CWD = "~/src/app"
"""What the sandbox's working directory is shown as: the page does not change with the
temporary directory of each run."""


def tui(sandbox: Sandbox, work: Path) -> tuple[str, str]:
    """The TUI's screen while the turn's approval waits: as text, and with its colours."""
    terminal = Tmux(
        f"robota-pictures-{os.getpid()}-{uuid.uuid4().hex[:8]}", width=WIDTH, height=HEIGHT
    )
    status = work / "tui-exit-status"
    try:
        terminal.start(sandbox.robota(), env=sandbox.env, cwd=sandbox.cwd, status=status)
        terminal.wait_for(lambda s: "idle" in s and "Ctrl-C" in s, "the TUI is ready")
        terminal.type("what does this project build?")
        terminal.keys("Enter")
        terminal.wait_for(lambda s: "ECHO: what does" in s and "· idle" in s, "a first answer")
        terminal.type(PROMPT)
        terminal.keys("Enter")
        screen = terminal.wait_for(
            lambda s: "[a] allow once" in s and "waiting for a decision" in s,
            "the approval shows, in the dialog and in the turn's activity",
        )
        # The approval waits for a key, so the screen is still this one.
        coloured = terminal.coloured_screen()
        terminal.keys("a")
        terminal.wait_for(lambda s: "RESULT:" in s and "· idle" in s, "the turn ends")
        terminal.keys("C-c")
        terminal.wait_for(lambda _: status.exists() and status.read_text().strip() != "", "exit")
    finally:
        terminal.close()
    return "\n".join(line.rstrip() for line in screen.splitlines()).strip("\n"), coloured


def shown(text: str, sandbox: Sandbox, *, screen: bool = False) -> str:
    """``text`` with the sandbox's directory as ``SHOWN_CWD``; on a ``screen``, padded to the
    directory's width so that a box drawn around it keeps its right edge."""
    cwd = str(sandbox.cwd)
    if not screen:
        return text.replace(cwd, SHOWN_CWD)
    replaced = text.replace(cwd, SHOWN_CWD.ljust(len(cwd)))
    return "\n".join(line.rstrip() for line in replaced.splitlines())


def cards(sandbox: Sandbox, work: Path) -> dict[str, str]:
    """Feishu's last card and final answer, and Slack's, for one turn that ran a command."""
    turn = work / "turn.jsonl"
    with turn.open("w") as out:
        subprocess.run(
            [
                *sandbox.robota("-p", PROMPT),
                "--output-format",
                "stream-json",
                "--permission-mode",
                "bypassPermissions",
            ],
            env=sandbox.env,
            cwd=sandbox.cwd,
            stdout=out,
            check=True,
            timeout=300,
        )
    found: dict[str, str] = {}
    for platform in ("feishu", "slack"):
        done = subprocess.run(
            [*sandbox.robota("cards", "preview", "--platform", platform, "--json", str(turn))],
            env=sandbox.env,
            cwd=sandbox.cwd,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        last = [line for line in lines if "payload" in line][-1]
        final = [line for line in lines if "final" in line][-1]
        found[f"{platform}-card"] = json.dumps(last["payload"], indent=2, ensure_ascii=False)
        found[f"{platform}-final"] = json.dumps(final["final"], indent=2, ensure_ascii=False)
    return found


def replace(page: str, name: str, text: str, fence: str) -> str:
    pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.DOTALL)
    if not pattern.search(page):
        raise SystemExit(f"docs/pictures.md has no {name} markers")
    block = f"```{fence}\n{text}\n```\n"
    return pattern.sub(lambda match: match.group(1) + block + match.group(2), page)


def main() -> int:
    with fake_model() as url, tempfile.TemporaryDirectory(prefix="robota-pictures-") as tmp:
        work = Path(tmp)
        sandbox = Sandbox(work, url, ["codex"], tap=False)
        text, coloured = tui(sandbox, work)
        pictures = {"tui": (shown(text, sandbox, screen=True), "text")}
        # The directory padded to its width, as on the text screen (robota draws a path in one
        # colour, so no escape falls inside it).
        coloured = coloured.replace(str(sandbox.cwd), SHOWN_CWD.ljust(len(str(sandbox.cwd))))
        pictures.update(
            {name: (shown(text, sandbox), "json") for name, text in cards(sandbox, work).items()}
        )
    page = PAGE.read_text(encoding="utf-8")
    for name, (text, fence) in pictures.items():
        page = replace(page, name, text, fence)
    PAGE.write_text(page, encoding="utf-8")
    SCREENSHOT.parent.mkdir(exist_ok=True)
    render(parse(coloured, WIDTH, HEIGHT)).save(SCREENSHOT, optimize=True)
    print(f"wrote {PAGE.relative_to(ROOT)}: {', '.join(pictures)}; {SCREENSHOT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
