"""The optional Discord adapter, called with a simple message object (no discord.py needed)."""

from __future__ import annotations

import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from core.errors import WorkbenchError
from core.interview.discord_adapter import DiscordInterviewHandler, build_client

from .conftest import APPENDIX_G


class Channel:
    def __init__(self, cid: int) -> None:
        self.id = cid
        self.sent: list[str] = []

    async def send(self, text: str) -> None:
        self.sent.append(text)


def message(content: str, channel: Channel, author: int = 7, bot: bool = False):
    return SimpleNamespace(
        content=content, channel=channel, author=SimpleNamespace(id=author, bot=bot)
    )


def say(handler, text, channel, **kw):
    # A fresh thread has no running event loop, whatever other tests left in the main thread.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, handler.on_message(message(text, channel, **kw))).result()
    return channel.sent[-1] if channel.sent else None


def test_on_message_runs_the_orchestrator(iv, clock):
    handler = DiscordInterviewHandler(iv)
    ch = Channel(100)
    assert say(handler, "こんにちは", ch) is None  # no session: the bot stays quiet
    assert "使い方" in say(handler, "!interview", ch)
    first = say(handler, "!interview postmortem 昨日の決済システムの障害について振り返りたい", ch)
    assert first.startswith("了解しました。まず、事象の概要")
    ch.sent.clear()
    say(handler, "人間ではない", ch, bot=True)
    assert ch.sent == []  # other bots are ignored
    # the root cause last: a postmortem does not stop before it was asked
    for slot in ("summary", "impact", "detection", "capa", "timeline", "root_cause"):
        clock.tick()
        reply = say(handler, APPENDIX_G[slot], ch)
    assert reply is not None and all(len(part) <= 2000 for part in ch.sent)
    assert any("インタビューを終了しました" in part for part in ch.sent)
    (session,) = iv.sessions(user_id="discord:100:7")
    assert session.status == "stopped" and session.stop_reason == "kpi_met"


def test_sessions_are_per_user_and_channel_and_errors_are_japanese(iv):
    handler = DiscordInterviewHandler(iv)
    a, b = Channel(1), Channel(2)
    say(handler, "!interview recipe 肉じゃが", a)
    assert say(handler, "4人分です", b) is None  # another channel: no session there
    assert say(handler, "!interview stop", a).startswith("インタビューを終了しました")
    assert "未知のドメイン" in say(handler, "!interview novel 小説", a)


def test_discord_is_optional(monkeypatch):
    monkeypatch.setitem(sys.modules, "discord", None)  # not installed
    with pytest.raises(WorkbenchError) as err:
        build_client(DiscordInterviewHandler(None))  # type: ignore[arg-type]
    assert "discord.py" in err.value.user_message
