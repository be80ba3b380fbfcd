"""``python -m core interview``: chat, sessions, show, replay, kpi on a real state folder."""

from __future__ import annotations

import io
import json

import pytest

from core.__main__ import main
from core.settings import get_settings


@pytest.fixture
def state_env(tmp_path, monkeypatch):
    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path / "state"))
    get_settings.cache_clear()
    yield tmp_path / "state"
    get_settings.cache_clear()


def test_chat_sessions_show_replay_kpi(state_env, monkeypatch, capsys):
    answers = (
        "\n".join(
            [
                "豚こま肉200g、じゃがいも3個、玉ねぎ1個",
                "玉ねぎを中火で3分炒める。肉を加えて強火で2分炒める。弱火で20分煮込む",
                "4人分です",
            ]
        )
        + "\n"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    assert main(["interview", "chat", "--domain", "recipe", "--topic", "肉じゃが"]) == 0
    out = capsys.readouterr().out
    assert (
        "質問:" in out and "停止理由: 重要項目がそろいました" in out and "# レシピ: 肉じゃが" in out
    )

    assert main(["interview", "sessions", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["domain"] == "recipe" and row["status"] == "stopped" and not row["corrupt"]

    assert main(["interview", "show", row["session_id"]]) == 0
    assert "| 豚こま肉 | 200g |" in capsys.readouterr().out

    assert main(["interview", "replay", "--date", "1999-01-01"]) == 2
    assert "WAL ファイルが見つかりません" in capsys.readouterr().err
    (wal,) = (state_env / "logs" / "wal").glob("*.log")
    assert main(["interview", "replay", "--file", str(wal), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["rebuilt"] == [] and replayed["skipped"] == [row["session_id"]]

    assert main(["interview", "kpi", "--days", "100000", "--json"]) == 0
    kpi = json.loads(capsys.readouterr().out)
    assert kpi["domains"]["recipe"]["stop_reason_ratio"]["kpi_met"] == 1.0


def test_chat_stops_cleanly_at_end_of_input(state_env, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["interview", "chat", "--domain", "sop", "--topic", "VPN 障害の切り分け"]) == 0
    assert "再開できます" in capsys.readouterr().out
