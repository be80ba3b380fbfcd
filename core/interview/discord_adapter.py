"""Optional Discord front (design 4.3): ``on_message`` runs the same orchestrator.

Not started by default. ``discord.py`` is imported only by ``build_client`` / ``run_bot``; the
handler itself needs nothing but a message object with ``content``, ``author`` (``id``,
``bot``), ``channel`` (``id``, async ``send``) — which is what tests pass in.

Commands in a channel: ``!interview <domain> <topic>`` starts (domain: sop, postmortem, recipe,
daily_work), ``!interview stop`` ends with the document, any other message answers the pending
question of that user's active session in that channel (sessions survive restarts: they are
looked up in the session store).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from core.errors import WorkbenchError
from core.interview.orchestrator import Interviewer, TurnResult

log = logging.getLogger(__name__)
PREFIX = "!interview"
DISCORD_LIMIT = 2000
USAGE = "使い方: `!interview <sop|postmortem|recipe|daily_work> <テーマ>` で開始、`!interview stop` で終了。"


def user_key(message: Any) -> str:
    return f"discord:{message.channel.id}:{message.author.id}"


def _chunks(text: str, size: int = DISCORD_LIMIT) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class DiscordInterviewHandler:
    def __init__(self, interviewer: Interviewer, prefix: str = PREFIX) -> None:
        self.iv = interviewer
        self.prefix = prefix

    def _active(self, key: str) -> str | None:
        active = self.iv.sessions(user_id=key, status="active")
        return active[0].session_id if active else None

    def _reply(self, result: TurnResult) -> str:
        if result.done:
            head = f"インタビューを終了しました: {result.stop.label if result.stop else ''}"
            return f"{head}\n\n{result.document or ''}"
        notes = [
            f"※ {c.field}が以前の回答と食い違っています（「{c.old_value}」→「{c.new_value}」）"
            for c in result.contradictions
        ]
        return "\n".join([*notes, result.question or ""])

    def handle(self, message: Any) -> str | None:
        """The reply text for a message (synchronous: the orchestrator does file I/O)."""
        if getattr(message.author, "bot", False):
            return None
        content = (message.content or "").strip()
        key = user_key(message)
        try:
            if content.startswith(self.prefix):
                args = content[len(self.prefix) :].strip()
                if args in ("stop", "終了"):
                    sid = self._active(key)
                    return (
                        self._reply(self.iv.abort(sid))
                        if sid
                        else "進行中のインタビューはありません。"
                    )
                domain, _, topic = args.partition(" ")
                if not domain or not topic.strip():
                    return USAGE
                return self._reply(self.iv.start(domain, topic, user_id=key))
            sid = self._active(key)
            if sid is None:
                return None  # not talking to the interviewer
            return self._reply(self.iv.answer(sid, content))
        except WorkbenchError as exc:
            return f"エラー: {exc.user_message}"

    async def on_message(self, message: Any) -> None:
        reply = await asyncio.to_thread(self.handle, message)
        if reply:
            for part in _chunks(reply):
                await message.channel.send(part)


def build_client(handler: DiscordInterviewHandler) -> Any:
    """A discord.py client wired to the handler (needs ``pip install discord.py``)."""
    try:
        import discord
    except ImportError as exc:
        raise WorkbenchError(
            "Discord 連携には discord.py が必要です（pip install discord.py）。"
        ) from exc
    intents = discord.Intents.default()
    intents.message_content = True
    client = discord.Client(intents=intents)

    @client.event
    async def on_message(message: Any) -> None:
        if message.author != client.user:
            await handler.on_message(message)

    return client


def run_bot(interviewer: Interviewer, token: str) -> None:
    """Run the bot until interrupted (not started by default anywhere)."""
    build_client(DiscordInterviewHandler(interviewer)).run(token)
