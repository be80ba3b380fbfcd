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


def test_resume_continues_a_session_from_stdin(state_env, monkeypatch, capsys):
    import re

    monkeypatch.setattr("sys.stdin", io.StringIO("豚こま肉200g、じゃがいも3個、玉ねぎ1個\n"))
    assert main(["interview", "chat", "--domain", "recipe", "--topic", "肉じゃが"]) == 0
    out = capsys.readouterr().out
    sid = re.search(r"セッション: (\w+)", out).group(1)
    assert f"interview resume {sid}" in out  # input ended: the way back is told
    answers = "玉ねぎを中火で3分炒める。肉を加えて強火で2分炒める。弱火で20分煮込む\n4人分です\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(answers))
    assert main(["interview", "resume", sid]) == 0
    out = capsys.readouterr().out
    assert "から再開" in out and "質問:" in out
    assert "停止理由: 重要項目がそろいました" in out and "| 豚こま肉 | 200g |" in out
    assert main(["interview", "resume", "no-such-session"]) != 0


def test_simulate_llm_uses_the_configured_model(state_env, monkeypatch, capsys):
    from tests.support.openai_server import OpenAIStub

    from .test_llm import good

    assert main(["interview", "simulate", "--domain", "recipe", "--llm"]) == 2
    assert "LLM が設定されていません" in capsys.readouterr().err
    scenario = sorted((get_settings().project_root / "data/interview/scenarios/recipe").iterdir())[
        0
    ]
    with OpenAIStub(responder=good) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("WB_CHAT_MODEL", "local-qwen")
        monkeypatch.setenv("WB_LLM_MAX_RETRIES", "0")
        get_settings.cache_clear()
        args = ["simulate", "--domain", "recipe", "--scenario", str(scenario), "--json", "--llm"]
        code = main(["interview", *args])
        requests = stub.chat_requests()
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert requests and {r["model"] for r in requests} == {"local-qwen"}
    assert report["llm"]["model"] == "local-qwen" and report["llm"]["calls"] >= len(requests)
    assert "stage02_extract" in report["llm"]["stages"]
