"""``robota mcp serve --cwd DIR``: an MCP client that starts its servers in a folder of its
own (Claude Desktop takes a ``command`` and ``args``, no working folder) names the workspace in
``args``; the trust gate and the tasks are that folder's, whatever the process started in."""

from __future__ import annotations

import subprocess

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ..support.real_agents import write_real_agents_config
from ..support.robota import ROBOTA, Robota


async def test_cwd_names_the_served_workspace(robota: Robota) -> None:
    write_real_agents_config(robota, ["codex"])
    elsewhere = robota.root / "elsewhere"  # not trusted: served there, it would be refused
    elsewhere.mkdir()
    params = StdioServerParameters(
        command=str(ROBOTA),
        args=["mcp", "serve", "--cwd", str(robota.root)],
        env=robota.environment(None, ()),
        cwd=str(elsewhere),
    )
    with (robota.root / "mcp.stderr").open("w") as errors:
        async with (
            stdio_client(params, errlog=errors) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            made = await session.call_tool("robota_task_new", {})
            assert not made.is_error, made.content
            task = made.structured_content["task"]
            status = await session.call_tool("robota_task_status", {"task": task})
            assert status.structured_content["cwd"] == str(robota.root)


def test_cwd_of_an_untrusted_folder_is_refused_and_a_missing_one_is_a_usage_error(
    robota: Robota,
) -> None:
    write_real_agents_config(robota, ["codex"])
    untrusted = robota.root / "untrusted"
    untrusted.mkdir()
    for folder, code, said in [
        (untrusted, 2, b"robota trust --yes"),
        (robota.root / "missing", 2, b"--cwd"),
    ]:
        refused = subprocess.run(
            [str(ROBOTA), "mcp", "serve", "--cwd", str(folder)],
            env=robota.environment(None, ()),
            cwd=robota.root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert (refused.returncode, refused.stdout) == (code, b""), refused.stderr
        assert said in refused.stderr
