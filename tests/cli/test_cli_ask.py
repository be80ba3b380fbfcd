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
