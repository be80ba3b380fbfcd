"""``python -m core inspect FILE``: title, heading tree and chunks as the index reads them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core.ingest.loaders import load_file
from core.settings import PROJECT_ROOT

RUNBOOK = (
    """---
title: 不審ログイン対応
---
!!! warning "承認が必要"
    アカウントの無効化は責任者の承認を得てから行う。

## 検知
Entra ID のサインインログで不審な国からのログインを確認する。

## 封じ込め
### アカウント
1. セッションを失効させる。
1. パスワードをリセットする。

### 端末
"""
    + "端末のログを保全し、EDR で調査する。" * 30
    + "\n"
)


def run_inspect(args: list[str], tmp_path: Path, **env_extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WB_", "NEO4J_"))}
    env["WB_STATE_DIR"] = str(tmp_path / "state")
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "core", "inspect", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_inspect_text_output(tmp_path: Path):
    path = tmp_path / "login.md"
    path.write_text(RUNBOOK, encoding="utf-8")
    done = run_inspect([str(path)], tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "タイトル: 不審ログイン対応" in out and "形式: markdown" in out
    assert "  ## 検知" in out and "    ### アカウント" in out
    assert "封じ込め > アカウント" in out
    assert "サイズ 500 文字・重なり 50 文字" in out


def test_inspect_json_matches_the_loader_and_the_settings(tmp_path: Path):
    path = tmp_path / "login.md"
    path.write_text(RUNBOOK, encoding="utf-8")
    done = run_inspect([str(path), "--json"], tmp_path, WB_RUNBOOK_CHUNK_SIZE="200")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["title"] == "不審ログイン対応" and result["chunk_size"] == 200
    assert [h["path"] for h in result["headings"]] == [
        ["検知"],
        ["封じ込め"],
        ["封じ込め", "アカウント"],
        ["封じ込め", "端末"],
    ]
    doc, _ = load_file(path, tmp_path, 10_000_000)
    assert result["chars"] == len(doc.text)
    for h in result["headings"]:
        assert h["title"] in doc.text[h["start"] : h["end"]]
    chunks = result["chunks"]
    assert len(chunks) > 3 and all(c["chars"] <= 200 for c in chunks)
    assert sum(c["heading_path"] == ["封じ込め", "端末"] for c in chunks) >= 2
    for c in chunks:
        body = doc.text[c["start"] : c["end"]]
        assert body.replace("\n", "↵").startswith(c["preview"].rstrip("…"))


def test_inspect_docx(tmp_path: Path):
    import docx

    d = docx.Document()
    d.add_heading("マルウェア感染", level=1)
    d.add_paragraph("端末を隔離する。")
    d.save(str(tmp_path / "m.docx"))
    done = run_inspect([str(tmp_path / "m.docx"), "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["kind"] == "docx" and result["headings"][0]["title"] == "マルウェア感染"
    assert result["chunks"][0]["heading_path"] == ["マルウェア感染"]


def test_inspect_errors_are_japanese_and_non_zero(tmp_path: Path):
    missing = run_inspect([str(tmp_path / "nothing.md")], tmp_path)
    assert missing.returncode != 0 and "見つかりません" in missing.stderr
    assert "Traceback" not in missing.stderr
    other = tmp_path / "notes.rtf"
    other.write_text("text", encoding="utf-8")
    unsupported = run_inspect([str(other)], tmp_path)
    assert unsupported.returncode != 0 and "notes.rtf" in unsupported.stderr
    assert "対応していない形式" in unsupported.stderr
    fake = tmp_path / "fake.docx"
    fake.write_bytes(b"plain text")
    broken = run_inspect([str(fake)], tmp_path)
    assert broken.returncode != 0 and "fake.docx" in broken.stderr
