"""The CLI end to end in a subprocess: index, search (text and --json), errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core.settings import PROJECT_ROOT
from tests.ingest.test_indexer import RUNBOOK_A, RUNBOOK_B


def run_cli(args: list[str], state: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WB_", "NEO4J_"))}
    env["WB_STATE_DIR"] = str(state)
    return subprocess.run(
        [sys.executable, "-m", "core", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_cli_index_and_search(tmp_path):
    data = tmp_path / "books"
    data.mkdir()
    (data / "vpn.md").write_text(RUNBOOK_A, encoding="utf-8")
    (data / "phishing.md").write_text(RUNBOOK_B, encoding="utf-8")
    (data / "bad.md").write_bytes(b"\x00\x01binary")
    state = tmp_path / "state"

    built = run_cli(["index", "runbooks", "--data", str(data)], state)
    assert built.returncode == 0, built.stderr
    assert "追加 2件" in built.stdout
    assert "bad.md" in built.stderr and "スキップ" in built.stderr
    assert (state / "indexes").is_dir() and (state / "chroma_db").is_dir()
    assert not (PROJECT_ROOT / "indexes" / f"runbooks-{data}").exists()

    again = run_cli(["index", "runbooks", "--data", str(data)], state)
    assert "変更なし 2件" in again.stdout and "埋め込み 0 チャンク" in again.stdout

    text = run_cli(
        ["search", "フィッシングメールのヘッダー", "--data", str(data), "--k", "2"], state
    )
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].startswith("[1] phishing.md")

    js = run_cli(
        [
            "search",
            "VPN 証明書",
            "--data",
            str(data),
            "--json",
            "--fusion",
            "rrf",
            "--weights",
            "0.5,0.5,0",
        ],
        state,
    )
    assert js.returncode == 0, js.stderr
    payload = json.loads(js.stdout)
    assert payload["results"][0]["sources"]["fileId"] == "vpn.md"
    assert payload["query"]["options"]["weights"] == {"keyword": 0.5, "semantic": 0.5, "graph": 0.0}


def test_cli_errors_are_japanese_and_non_zero(tmp_path):
    state = tmp_path / "state"
    missing = run_cli(["index", "runbooks", "--data", str(tmp_path / "nope")], state)
    assert missing.returncode != 0 and "見つかりません" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad_weights = run_cli(["search", "VPN", "--weights", "0.9,0.9,0"], state)
    assert bad_weights.returncode != 0
    assert "検索重みの合計は1.0である必要があります" in bad_weights.stderr
    empty = run_cli(["search", ""], state)
    assert empty.returncode != 0 and "1文字以上" in empty.stderr
