"""Files and images a person shares, end to end: a real host process with a real agent against
the fake model, the files served by the fake Slack as Slack serves them (the bot token
required). A file is downloaded and named to the agent with its size and path, an image goes to
the agent as an image (its runtime takes them), and what cannot be taken is refused with a
reply and no turn."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from ...support.fake_slack import BOT_TOKEN, file_share
from ...support.media import png
from ...support.model_server import FakeModel
from ...support.slack import BOUND, CHANNEL, now_ts, served, words

# ``model`` and ``short_root``: tests/transports/conftest.py


async def test_shared_files_and_images_reach_the_agent_and_bad_ones_are_refused(
    short_root: Path, model: FakeModel
) -> None:
    async with served(short_root, model) as bot:
        fake = bot.fake
        # A file with a question: downloaded with the bot token, named to the agent.
        table = b"a,b\n1,2\n"
        csv = fake.share("../data.csv", table, "text/csv", "csv")
        ts = now_ts()
        await bot.push(file_share("sum the columns", [csv], ts=ts), event_id="EvFile")
        await bot.answered(ts)
        final = bot.replies(ts)[-1]
        assert "data.csv" in words(final) and f"({len(table)} bytes)" in words(final), final
        saved = list((short_root / "home").rglob(f"{ts}-1-data.csv"))
        assert len(saved) == 1 and saved[0].read_bytes() == table
        assert saved[0].parent.name == CHANNEL and saved[0].parent.parent.name == "attachments"
        (download,) = [d for d in fake.downloads if d.method.endswith("data.csv")]
        assert download.headers["authorization"] == f"Bearer {BOT_TOKEN}"
        assert bot.prompts("sum the columns") == 0, "the file's path came with the text"

        # An image alone: the agent gets it as an image, with the default prompt.
        image = fake.share("shot.png", png(4, 3), "image/png", "png")
        image_ts = now_ts()
        await bot.push(file_share("", [image], ts=image_ts), event_id="EvImage")
        await bot.answered(image_ts)
        sent = [r for r in model.model_requests() if r.prompt == "Please look at this image."]
        assert sent, [r.prompt for r in model.model_requests()]
        encoded = base64.b64encode(png(4, 3)).decode()
        assert encoded in json.dumps(sent[-1].body), "the agent sent the image itself"

        # Refused, each with a reply in its thread and no turn: too large on the long edge,
        # not an image at all, a file larger than 50 MB (not even downloaded), a file Slack
        # gives no download for, a download that redirects off the Slack host.
        wide = fake.share("wide.png", png(2400, 10), "image/png", "png")
        fake_png = fake.share("fake.png", b"not an image", "image/png", "png")
        huge = {**fake.share("huge.bin", b"x", "application/octet-stream", "binary")}
        huge["size"] = 60 * 1024 * 1024
        external = fake.share("doc.gdoc", b"", "application/vnd.google-apps.document", "gdoc")
        del external["url_private_download"]
        away = fake.share("away.txt", b"hi", "text/plain", "text")
        fake.redirects[away["url_private_download"].removeprefix(fake.base_url)] = (
            "http://localhost:9/away.txt"
        )
        refused = {"2400x10": wide, "PNG": fake_png, "60.0 MB": huge}
        refused |= {"doc.gdoc": external, "not on the slack host": away}
        stamps = {}
        for n, (reason, entry) in enumerate(refused.items()):
            stamps[reason] = now_ts()
            event = file_share("look", [entry], ts=stamps[reason])
            await bot.push(event, event_id=f"EvRefused{n}")
        for reason, refused_ts in stamps.items():
            await fake.wait_until(
                lambda t=refused_ts: bot.reactions(t) == {"x"} and bot.replies(t),
                timeout=BOUND,
            )
            (reply,) = bot.replies(refused_ts)
            assert reason.lower() in words(reply), (reason, reply)
        assert bot.prompts("look") == 0
        assert not [d for d in fake.downloads if d.method.endswith("huge.bin")]
    log = (short_root / "host.log").read_text()
    assert BOT_TOKEN not in log
