"""HTML exports of wiki pages: content kept, page chrome dropped, encodings, oversized pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import SourceFileError
from core.ingest.html import read_html
from core.ingest.loaders import load_file
from core.text.chunking import chunk_document

WIKI_EXPORT = """<!DOCTYPE html>
<html lang="ja"><head><meta charset="utf-8"><title>VPN 障害対応 - 社内 Wiki</title>
<script>var menu = "<h2>メニュー</h2>";</script><style>h1 { color: red }</style></head>
<body>
<header><div class="logo">社内 Wiki ロゴ</div></header>
<nav><ul><li><a href="/">ホーム</a></li><li><a href="/ir">IR 一覧</a></li></ul></nav>
<div id="breadcrumb-section">ホーム &gt; 手順書</div>
<main>
  <h1>VPN 接続障害対応<a class="headerlink" href="#top">¶</a></h1>
  <p>この手順は <strong>VPN</strong> に接続できない場合の対応を定める（R&amp;D 拠点を含む）。</p>
  <!-- 編集者メモ: 公開しない -->
  <div id="toc"><ul><li>目次: 確認手順</li></ul></div>
  <h2>確認手順</h2>
  <ol start="3">
    <li>FortiGate のログを確認する。</li>
    <li>証明書の<em>期限</em>を確認する。
      <ul><li>期限切れなら再発行を依頼する。</li></ul>
    </li>
  </ol>
  <h3>連絡先</h3>
  <table>
    <thead><tr><th>窓口</th><th>電話</th></tr></thead>
    <tbody><tr><td>SOC 当番</td><td><p>03-0000-0000</p><p>内線 1234</p></td></tr></tbody>
  </table>
  <h4>コマンド</h4>
  <pre>show vpn ssl monitor
  diagnose debug enable</pre>
  <h5>補足</h5>
  <p>一行目<br>二行目</p>
  <form><label>検索</label><input name="q"><button>送信</button></form>
  <noscript>JavaScript を有効にしてください</noscript>
  <div hidden>非表示の下書き</div>
  <img src="diagram.png" alt="構成図">
</main>
<aside>関連ページ: DDoS 対応</aside>
<footer>© 2025 社内 Wiki</footer>
</body></html>
"""


@pytest.fixture
def page(tmp_path: Path):
    path = tmp_path / "vpn.html"
    path.write_text(WIKI_EXPORT, encoding="utf-8")
    doc, _ = load_file(path, tmp_path, 1_000_000)
    return doc


def test_headings_from_h1_to_h4(page):
    assert page.kind == "html" and page.title == "VPN 接続障害対応"
    assert [(h.level, h.title) for h in page.headings] == [
        (1, "VPN 接続障害対応"),
        (2, "確認手順"),
        (3, "連絡先"),
        (4, "コマンド"),
    ]
    for h in page.headings:
        assert page.text[h.start : h.end] == h.title
    assert "補足" in page.text.split("\n")  # h5 stays a line


def test_page_chrome_and_scripts_are_dropped(page):
    for chrome in (
        "メニュー", "color: red", "ロゴ", "ホーム", "IR 一覧", "関連ページ", "©", "検索", "送信",
        "JavaScript", "非表示", "編集者メモ", "目次", "¶", "構成図", "diagram",
    ):  # fmt: skip
        assert chrome not in page.text, chrome


def test_lists_tables_entities_and_pre_are_kept_as_text(page):
    lines = page.text.split("\n")
    assert "この手順は VPN に接続できない場合の対応を定める(R&D 拠点を含む)。" in lines
    assert "3. FortiGate のログを確認する。" in lines
    assert "4. 証明書の期限を確認する。" in lines
    assert "  - 期限切れなら再発行を依頼する。" in lines
    assert "窓口 | 電話" in lines and "SOC 当番 | 03-0000-0000 内線 1234" in lines
    assert "show vpn ssl monitor" in lines and "  diagnose debug enable" in lines
    assert "一行目" in lines and "二行目" in lines


def test_chunks_carry_the_heading_path(page):
    chunks = chunk_document(page, 500, 50)
    table = next(c for c in chunks if "03-0000-0000" in c.body)
    assert table.heading_path == ("VPN 接続障害対応", "確認手順", "連絡先")
    assert all(page.text[c.start : c.end] == c.body for c in chunks)


def test_page_without_main_uses_the_body_without_header_and_footer():
    html = b"<html><body><header>Site</header><h2>Steps</h2><p>Isolate the host.</p><footer>Legal</footer></body></html>"
    result = read_html(html, "a.html", "a.html")
    assert result.text == "Steps\nIsolate the host."
    assert result.title is None


def test_a_callout_aside_is_kept_and_a_sidebar_aside_dropped():
    html = (
        "<html><body><main><h2>改ざんされた場合</h2><p>バックアップから復元する。</p>"
        '<aside class="msg msg_caution"><h4>ご注意ください</h4>'
        "<p>ドメインが失効している可能性があります。</p></aside>"
        '<aside class="related"><a href="x">関連ページ</a></aside></main></body></html>'
    ).encode()
    text = read_html(html, "a.html", "a.html").text
    assert "ドメインが失効している可能性があります。" in text
    assert "関連ページ" not in text


@pytest.mark.parametrize(
    "data",
    [
        '<html><head><meta charset="shift_jis"></head><body><p>端末を隔離する。</p></body></html>'.encode(
            "cp932"
        ),
        "<html><body><p>端末を隔離する。</p></body></html>".encode("cp932"),  # no declaration
        '<html><head><meta charset="utf-8"></head><body><p>端末を隔離する。</p></body></html>'.encode(
            "euc_jp"
        ),  # wrong declaration
        # UTF-8 declared as Latin-1
        '<html><head><meta charset="iso-8859-1"></head><body><p>端末を隔離する。</p></body></html>'.encode(),
    ],
)
def test_japanese_encodings_are_detected(data):
    assert read_html(data, "a.html", "a.html").text == "端末を隔離する。"


def test_broken_bytes_are_replaced_and_the_rest_is_read(caplog):
    data = "<p>前半の本文。</p>".encode() + b"\xff\xfe\xfa" + "<p>後半の本文。</p>".encode()
    result = read_html(data, "broken.html", "broken.html")
    assert "前半の本文。" in result.text and "後半の本文。" in result.text
    assert any("broken.html" in r.getMessage() for r in caplog.records)


def test_a_utf16_page_with_a_broken_unit_keeps_the_rest(caplog):
    # odd length: the last unit is cut; the page is still read as UTF-16, that unit replaced
    data = b"\xff\xfe" + "<p>端末を隔離する。</p>".encode("utf-16-le") + b"\x00"
    assert read_html(data, "cut.html", "cut.html").text.startswith("端末を隔離する。")
    assert any("cut.html" in r.getMessage() for r in caplog.records)


def test_binary_file_named_html_is_skipped(tmp_path: Path):
    path = tmp_path / "image.html"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(SourceFileError, match=r"image\.html.*バイナリ"):
        load_file(path, tmp_path, 10_000)


def test_page_without_text_is_skipped(tmp_path: Path):
    path = tmp_path / "empty.html"
    path.write_text("<html><head><script>x()</script></head><body><nav>menu</nav></body></html>")
    with pytest.raises(SourceFileError, match=r"empty\.html.*本文がありません"):
        load_file(path, tmp_path, 10_000)


def test_oversized_page_is_skipped_before_parsing(tmp_path: Path):
    path = tmp_path / "huge.html"
    row = "<tr><td>ログ</td><td>" + "x" * 80 + "</td></tr>\n"
    path.write_text("<html><body><table>" + row * 2_000 + "</table></body></html>")
    assert path.stat().st_size > 100_000
    with pytest.raises(SourceFileError, match=r"huge\.html.*大きすぎる"):
        load_file(path, tmp_path, 100_000)


def test_deeply_nested_markup_does_not_crash():
    data = b"<div>" * 50_000 + "<p>深い本文</p>".encode() + b"</div>" * 50_000
    result = read_html(b"<p>before</p>" + data, "deep.html", "deep.html")  # no RecursionError
    assert result.text.startswith("before")


def test_confluence_and_mediawiki_export_chrome_is_dropped(tmp_path: Path):
    page = b"""<html><head><title>SOC : Ransomware</title></head><body>
    <div id="main-content" class="wiki-content group">
    <div class="page-metadata">Created by Taro Yamada, last modified on Nov 02, 2025</div>
    <h1>Ransomware first response</h1><p>Isolate the host from the EDR console.</p>
    <div class="pageSection group"><h2 class="pageSectionTitle">Attachments:</h2>
    <a href="attachments/1/flow.png">flow.png</a> (image/png)</div>
    <div id="catlinks">Categories: Runbooks</div><div class="printfooter">Retrieved from wiki</div>
    </div></body></html>"""
    read = read_html(page, "ransomware.html", "ransomware.html")
    assert "Isolate the host from the EDR console." in read.text
    for chrome in ("Taro Yamada", "Attachments", "flow.png", "Categories", "Retrieved from"):
        assert chrome not in read.text, chrome


def test_a_page_typed_by_hand_has_its_bold_paragraphs_as_headings():
    """A page saved from a document typed without heading styles (Word's "Web page", a wiki
    page written with bold paragraphs): no h1-h4, so its short bold paragraphs are its
    headings, under the page's title; bold sentences, bold list items and bold runs inside a
    paragraph are not."""
    page = (
        "<html><head><title>ランサムウェア対応手順書</title></head><body>"
        '<div title="header"><p>社内Wiki | 運用手順書（社外秘）</p></div>'
        "<p><b><span style='font-size:18.0pt'>ランサムウェア対応手順書</span></b></p>"
        "<p class=MsoNormal><b>1. 目的</b></p>"
        "<p class=MsoNormal>感染が疑われるときの初動を定める。</p>"
        "<p><strong>2. 初動対応</strong></p>"
        "<p><b>2.1 端末の隔離</b></p>"
        "<p>LAN ケーブルを抜く。証拠は<b>必ず</b>保全する。</p>"
        "<p><b>電源は切らないこと。</b></p>"
        "<ul><li><b>管理者へ連絡する</b></li></ul>"
        "<p><b>注意事項</b></p>"
        "<p>身代金は支払わない。</p>"
        '<div title="footer"><p>ランサムウェア対応手順書 – 1</p></div>'
        "</body></html>"
    ).encode()
    result = read_html(page, "manual.html", "manual.html")
    assert result.title == "ランサムウェア対応手順書"
    assert [(h.level, h.title) for h in result.headings] == [
        (1, "ランサムウェア対応手順書"),  # the paragraph that reads as the page's <title>
        (2, "1. 目的"),
        (2, "2. 初動対応"),
        (3, "2.1 端末の隔離"),
        (4, "注意事項"),
    ]
    lines = result.text.splitlines()
    assert "電源は切らないこと。" in lines and "- 管理者へ連絡する" in lines
    assert "社内Wiki" not in result.text and "– 1" not in result.text  # a word processor's header


def test_a_page_with_headings_keeps_its_bold_paragraphs_as_text():
    page = (
        b"<html><body><h2>Contain</h2><p><b>Isolate the host</b></p><p>Then call.</p></body></html>"
    )
    result = read_html(page, "a.html", "a.html")
    assert [h.title for h in result.headings] == ["Contain"]
    assert "Isolate the host" in result.text.splitlines()


def test_typed_headings_with_sizes_nest_by_their_sizes():
    """LibreOffice's and Word's pages set each run's size: the typed headings' sizes rank them
    (a 12 pt heading under a 14 pt one), unnumbered as they are."""

    def bold(text: str, size: int) -> str:
        return f'<p><font style="font-size: {size}pt"><b>{text}</b></font></p>'

    page = (
        "<html><head><title>バックアップ手順</title></head><body>"
        + bold("バックアップ手順", 18)
        + bold("バックアップ戦略", 14)
        + bold("バックアップ対象", 12)
        + "<p>設定ファイルとデータベース。</p>"
        + bold("自動バックアップ", 14)
        + "<p><b>cron ジョブ設定</b></p>"  # bold in the body's size: no size of its own
        + "<p>毎日 3 時に実行する。</p></body></html>"
    ).encode()
    result = read_html(page, "b.html", "b.html")
    assert [(h.level, h.title) for h in result.headings] == [
        (1, "バックアップ手順"),
        (2, "バックアップ戦略"),
        (3, "バックアップ対象"),
        (2, "自動バックアップ"),
        (4, "cron ジョブ設定"),
    ]
