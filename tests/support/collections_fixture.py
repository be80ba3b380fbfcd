"""Tiny runbooks in two collections (and the default one), written for the collection tests.

``network/`` is for the group ``net-team``, ``malware/`` for ``mal-team``; the top-level file is in
the default collection (public). Only the malware runbook says how to isolate a ransomware host,
and only it holds the marker ``KESTREL-7731``: a test can look for the marker (and the folder
name) in everything a user of ``net-team`` is shown.
"""

from __future__ import annotations

from pathlib import Path

from core.access import Principal

HIDDEN_MARKER = "KESTREL-7731"
HIDDEN_FILE = "malware/ransomware-containment.md"
HIDDEN_QUESTION = "ランサムウェアに感染した端末を隔離する手順を教えて"
NETWORK_QUESTION = "VPN に接続できないときの確認手順を教えて"

RUNBOOKS = {
    "password-reset.md": """# パスワードリセット手順

## 本人確認
1. 申請者の社員番号と登録済みの電話番号を照合する。
2. 上長の承認メールを確認する。

## リセット
1. ディレクトリ管理画面で一時パスワードを発行する。
2. 初回ログイン時に変更を求める設定にする。
""",
    "network/vpn-troubleshooting.md": """# VPN 接続障害の対応手順

## 確認手順
1. 利用者の VPN クライアントのバージョンを確認する。
2. 認証サーバーのログで該当ユーザーの認証失敗を確認する。
3. クライアント証明書の有効期限を確認し、期限切れなら再発行を依頼する。
""",
    HIDDEN_FILE: f"""# ランサムウェア感染端末の隔離手順

## 隔離手順
1. 感染が疑われる端末の LAN ケーブルを抜き、無線 LAN を切断する。
2. EDR コンソールから端末をネットワーク隔離する。
3. 隔離コード {HIDDEN_MARKER} をインシデント記録に書き、CSIRT に連絡する。
""",
}

MANIFEST = """# who sees which runbook collection
collections:
  network: [net-team]
  malware:
    groups: [mal-team]
"""

ALICE = Principal(subject="alice-sub", name="alice", role="reviewer", groups=("net-team",), signed_in=True)  # fmt: skip
BOB = Principal(subject="bob-sub", name="bob", role="reviewer", groups=("mal-team",), signed_in=True)  # fmt: skip


def write_runbooks(
    folder: Path, *, skip_hidden: bool = False, manifest: str | None = MANIFEST
) -> Path:
    """Write the runbooks (without the malware one when ``skip_hidden``) and the manifest."""
    for name, text in RUNBOOKS.items():
        if skip_hidden and name == HIDDEN_FILE:
            continue
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if manifest is not None:
        (folder / "collections.yaml").write_text(manifest, encoding="utf-8")
    return folder
