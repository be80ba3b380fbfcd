"""`python -m core ask` and `python -m core audit verify` end to end."""

from __future__ import annotations

import json

from tests.cli.test_cli_search import run_cli
from tests.ingest.test_indexer import RUNBOOK_A, RUNBOOK_B


def test_ask_json_and_audit_verify(tmp_path):
    data = tmp_path / "books"
    data.mkdir()
    (data / "vpn.md").write_text(RUNBOOK_A, encoding="utf-8")
    (data / "phishing.md").write_text(RUNBOOK_B, encoding="utf-8")
    state = tmp_path / "state"

    out = run_cli(
        ["ask", "フィッシングメールを一括削除する手順", "--data", str(data), "--json"], state
    )
    assert out.returncode == 0, out.stderr
    # the first question built the index and said so on stderr; stdout is the answer alone
    assert "インデックスを構築しました: 追加 2件" in out.stderr
    assert "DEBUG" not in out.stderr  # no library's debug lines (bm25s sets its own to DEBUG)
    answer = json.loads(out.stdout)
    assert answer["answer_mode"] == "extractive"
    assert answer["flags"] == {
        "insufficient_evidence": False,
        "dangerous_operation": True,
        "ambiguous_query": False,
    }
    cited = [c for c in answer["citations"] if c["cited"]]
    assert cited[0]["file"] == "phishing.md"
    assert {"chunk_id", "file", "heading", "score", "excerpt", "doc_hash"} <= set(cited[0])

    text = run_cli(["ask", "何", "--data", str(data)], state)
    assert "質問が曖昧な可能性があります" in text.stdout and "ambiguous_query" in text.stdout
    assert "インデックス" not in text.stderr  # built already: nothing to show

    verify = run_cli(["audit", "verify"], state)
    assert verify.returncode == 0 and "2 行、署名とチェーンはすべて正常です" in verify.stdout

    log = next((state / "logs").glob("query_*.jsonl"))
    lines = log.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["answer"] = "書き換え"
    log.write_text(
        json.dumps(record, ensure_ascii=False) + "\n" + lines[1] + "\n", encoding="utf-8"
    )
    tampered = run_cli(["audit", "verify"], state)
    assert tampered.returncode == 1 and f"{log.name} 1 行目: 署名が一致しません" in tampered.stderr


def test_ask_json_and_the_log_never_carry_unsafe_markup(tmp_path):
    import os
    import subprocess
    import sys

    from core.settings import PROJECT_ROOT
    from tests.support.openai_server import OpenAIStub

    data = tmp_path / "books"
    data.mkdir()
    (data / "vpn.md").write_text(RUNBOOK_A, encoding="utf-8")
    state = tmp_path / "state"
    reply = "確認します [1]。[click](javascript:alert(1)) <script>alert(1)</script>"
    with OpenAIStub(default_content=reply) as stub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WB_"))}
        env.update(WB_STATE_DIR=str(state), OPENAI_BASE_URL=stub.base_url)
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "core",
                "ask",
                "VPN 接続障害の初動対応でエラーコードを確認する手順",
                "--data",
                str(data),
                "--json",
            ],
            cwd=PROJECT_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["answer_mode"] == "llm" and "click" in answer["answer"]
    assert "javascript" not in answer["answer"].lower() and "<script" not in answer["answer"]
    assert any("安全でないリンク" in w for w in answer["warnings"])
    assert answer["llm_calls"][0]["stage"] == "runbook_chat"
    record = json.loads(next((state / "logs").glob("query_*.jsonl")).read_text("utf-8"))
    assert "javascript" not in record["answer"].lower() and "<script" not in record["answer"]


def ask_in_process(args: list[str], state, monkeypatch, capsys) -> tuple[int, str, str]:
    """``python -m core ask …`` through ``core.__main__.main`` (same parser and handler)."""
    from core.__main__ import main
    from core.settings import get_settings

    monkeypatch.setenv("WB_STATE_DIR", str(state))
    get_settings.cache_clear()
    capsys.readouterr()
    try:
        code = main(["ask", *args])
    finally:
        get_settings.cache_clear()
    out = capsys.readouterr()
    return code, out.out, out.err


def test_ask_refuses_bad_k_and_weights_with_exit_2_and_no_nan(tmp_path, monkeypatch, capsys):
    state = tmp_path / "state"
    for args, needle in (
        (["--k", "-1"], "取得件数 k は 1〜100"),
        (["--k", "0"], "取得件数 k は 1〜100"),
        (["--bm25-weight", "nan"], "BM25 の重みは 0〜1"),
        (["--bm25-weight", "inf"], "BM25 の重みは 0〜1"),
        (["--bm25-weight", "-0.5"], "BM25 の重みは 0〜1"),
        (["--bm25-weight", "1.5"], "BM25 の重みは 0〜1"),
    ):
        code, out, err = ask_in_process(["VPN の接続手順", *args], state, monkeypatch, capsys)
        assert code == 2 and needle in err, (args, err)
        code, out, err = ask_in_process(
            ["VPN の接続手順", *args, "--json"], state, monkeypatch, capsys
        )
        assert code == 2 and "NaN" not in out and "Infinity" not in out
        assert needle in json.loads(out)["error"]
    # the day's log only: its ``.head`` companion (no newline) would join its first line when the
    # folder lists it first
    logs = sorted((state / "logs").glob("query_*.jsonl"))
    logged = "".join(p.read_text(encoding="utf-8") for p in logs)
    assert logged.count("\n") == 12 and "NaN" not in logged and "Infinity" not in logged
    for line in logged.splitlines():
        json.loads(line, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))


def test_blank_and_emoji_only_questions_get_no_results(tmp_path, monkeypatch, capsys):
    state = tmp_path / "state"
    for question in ("   ", "\u3000\u200b\u200b", "\t\n"):
        code, out, _err = ask_in_process([question, "--json"], state, monkeypatch, capsys)
        answer = json.loads(out)
        assert code == 2 and answer["error"] == "質問を入力してください。"
        assert answer["citations"] == []
    for question in ("🔥🔥🔥🔥🔥🔥", "👍 🙏 ✨ ❓", "？？？！！！"):
        code, out, _err = ask_in_process([question, "--json"], state, monkeypatch, capsys)
        answer = json.loads(out)
        assert code == 0 and answer["flags"]["ambiguous_query"] is True
        assert answer["citations"] == [] and "質問が曖昧な可能性があります" in answer["answer"]
