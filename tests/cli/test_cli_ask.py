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
