"""Reading a large HTML page: our reader (lxml) against a stdlib ``html.parser`` text extractor.

The page is a synthetic wiki export (navigation, scripts, headings, lists, tables), repeated to
the size asked for. The peer is the least a user would otherwise write: ``html.parser`` with
``handle_data`` collecting text outside script/style (no structure: no headings, no rows).

    python -m bench.html_reading [--mb 20]
"""

from __future__ import annotations

import argparse
import time
from html.parser import HTMLParser

from core.ingest.html import read_html

SECTION = """
<h2>手順 {n}: VPN 接続障害の切り分け</h2>
<p>利用者から <strong>VPN</strong> に接続できないと連絡があった場合、次の順に確認する。&amp; 記録を残す。</p>
<ol><li>FortiGate の SSL-VPN ログを確認する。</li><li>証明書の期限を確認する。
<ul><li>期限切れなら再発行を依頼する。</li></ul></li><li>結果をチケットに記録する。</li></ol>
<table><tr><th>重大度</th><th>期限</th></tr><tr><td>高</td><td>30 分以内</td></tr></table>
<script>window.track({n});</script>
"""
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>手順書 - Wiki</title>
<style>body{{font:14px}}</style></head><body><nav><a href="/">ホーム</a></nav>
<main><h1>VPN 障害対応</h1>{sections}</main><footer>© wiki</footer></body></html>"""


class _StdlibText(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def stdlib_text(data: bytes) -> str:
    parser = _StdlibText()
    parser.feed(data.decode("utf-8"))
    parser.close()
    return "\n".join(p.strip() for p in parser.parts if p.strip())


def make_page(megabytes: float) -> bytes:
    one = len(SECTION.encode("utf-8"))
    count = max(1, int(megabytes * 1e6 / one))
    return PAGE.format(sections="".join(SECTION.format(n=n) for n in range(count))).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=20.0)
    args = parser.parse_args()
    data = make_page(args.mb)
    started = time.perf_counter()
    ours = read_html(data, "page.html", "page.html")
    ours_s = time.perf_counter() - started
    started = time.perf_counter()
    peer = stdlib_text(data)
    peer_s = time.perf_counter() - started
    print(f"page: {len(data) / 1e6:.1f} MB")
    print(
        f"core.ingest.html (lxml, structure): {ours_s:.2f} s, {len(data) / 1e6 / ours_s:.1f} MB/s,"
        f" {len(ours.text) / 1e6:.1f} M chars, {len(ours.headings)} headings"
    )
    print(
        f"stdlib html.parser (text only):     {peer_s:.2f} s, {len(data) / 1e6 / peer_s:.1f} MB/s,"
        f" {len(peer) / 1e6:.1f} M chars"
    )
    print(f"ratio (ours / stdlib time): {ours_s / peer_s:.2f}")


if __name__ == "__main__":
    main()
