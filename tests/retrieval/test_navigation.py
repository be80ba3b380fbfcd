"""Navigation lists (a MkDocs index, a wiki hub, "see also") name every page and answer none:
they are marked when read and ranked down in search."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.ingest.html import read_html
from core.ingest.markdown import read_markdown
from core.retrieval import searcher
from core.runbooks import index_runbooks, runbook_corpus, search_runbooks
from core.schemas.documents import Document
from core.text.chunking import chunk_document, is_navigation

INDEX_MD = """---
title: Incident response
---
Our incident response documentation.

## During an incident

* [Isolate a compromised host](isolate.md) - _isolate a compromised host from the network_
* [Reset a compromised account](account.md) - _reset a compromised account's credentials_
* **[Ransomware](ransomware.md)** - _what to do first when ransomware spreads_
* [Phishing][phish] - _handling a reported phishing mail_

[phish]: phishing.md
"""

ISOLATE_MD = """# Isolating a host

## Steps

1. Confirm the alert with the EDR console and note the host name.
2. Put the host in network containment from the EDR console.
3. Tell the user by phone that the machine is cut off until the investigation ends.
4. Record the containment time in the incident ticket.
"""

STEPS_WITH_LINKS = """# Steps

1. Open the [EDR console](https://edr.example) and find the host.
2. Contain the host.
3. Tell the [incident commander](roles.md) the host name.
"""


def _doc(text: str, links: frozenset[str], kind: str = "markdown") -> Document:
    return Document("d.md", "d.md", "d", text, "", "h", kind, None, links)


def test_markdown_items_led_by_a_link_are_link_lines():
    read = read_markdown(INDEX_MD, "index.md")
    assert read.link_lines == {
        "- Isolate a compromised host - _isolate a compromised host from the network_",
        "- Reset a compromised account - _reset a compromised account's credentials_",
        "- **Ransomware** - _what to do first when ransomware spreads_",
        "- Phishing - _handling a reported phishing mail_",
    }
    # steps that mention a link are instructions, not navigation
    assert read_markdown(STEPS_WITH_LINKS, "steps.md").link_lines == frozenset()


def test_a_chunk_is_navigation_when_most_of_its_lines_are_link_lines():
    read = read_markdown(INDEX_MD, "index.md")
    chunks = chunk_document(_doc(read.text, read.link_lines), 500, 50)
    assert [c.navigation for c in chunks] == [False, True]
    assert chunks[1].extra == {"navigation": "1"} and chunks[0].extra == {}
    steps = read_markdown(STEPS_WITH_LINKS, "steps.md")
    assert not any(
        c.navigation for c in chunk_document(_doc(steps.text, steps.link_lines), 500, 50)
    )
    assert not is_navigation("- a\n- b\n- c", frozenset({"- a"}))  # one in three
    assert is_navigation("Pages:\n- a\n- b", frozenset({"- a", "- b"}))
    assert not is_navigation("- a\n- b", frozenset())


def test_html_list_items_led_by_a_link_are_link_lines():
    page = b"""<html><body><nav><a href="/">Home</a></nav><main><h1>Runbooks</h1>
    <ul><li><a href="isolate.html">Isolate a host</a> - cut it off</li>
    <li><strong><a href="ransom.html">Ransomware</a></strong> - first steps</li>
    <li>Call the <a href="ic.html">IC</a></li><li><a name="x"></a>anchor only</li></ul>
    </main></body></html>"""
    read = read_html(page, "hub.html", "hub.html")
    assert read.link_lines == {"- Isolate a host - cut it off", "- Ransomware - first steps"}


@pytest.fixture
def hub(settings, runbook_dir: Path):
    (runbook_dir / "index.md").write_text(INDEX_MD, encoding="utf-8")
    (runbook_dir / "isolate.md").write_text(ISOLATE_MD, encoding="utf-8")
    index_runbooks(settings, runbook_dir, check_allowed=False)
    return settings, runbook_dir


def _top(settings, folder: Path, question: str) -> str:
    outcome = search_runbooks(settings, question, data=folder)
    return outcome.hits[0].chunk.source


def test_the_page_that_answers_outranks_the_index_that_names_it(hub, monkeypatch):
    settings, folder = hub
    navigation = [
        c.chunk for c in runbook_corpus(settings, folder).store.document_chunks("index.md")
    ]
    assert [c.navigation for c in navigation] == [False, True]  # stored with the chunk
    question = "How do I isolate a compromised host from the network?"
    assert _top(settings, folder, question) == "isolate.md"
    # the fixture exercises the rule: without it the index's list of titles wins
    monkeypatch.setattr(searcher, "NAVIGATION_WEIGHT", 1.0)
    assert _top(settings, folder, question) == "index.md"


RELATED_MD = """# フィッシングメール報告対応手順

## 判断基準

認証情報を入力した場合は、アカウント侵害対応へ即時移行する。

## 関連手順

- アカウント侵害・パスワードリセット対応手順（account-compromise.md）
- マルウェア感染対応手順（malware-infection.md）、証拠保全手順（evidence.md）
- ransomware-isolation.md、edr-isolation-release.md
- Vendor guide: https://vendor.example/guide
"""

STEPS_WITH_REFERENCES = """# 手順

1. 設定ファイル（config.md）を編集し、サービスを再起動する。
2. ログを収集し https://upload.example/case にアップロードする。
3. collect.ps1 を実行して結果を results.txt に保存する。
"""


def test_items_made_of_references_to_other_documents_are_link_lines():
    """A 関連手順 / "see also" list written without link syntax (a title and a file name, bare
    file names, a label and a URL) is navigation; a step that mentions a file or a URL inside
    an instruction is not."""
    read = read_markdown(RELATED_MD, "phishing.md")
    assert len(read.link_lines) == 4
    chunks = chunk_document(_doc(read.text, read.link_lines), 500, 50)
    assert [c.heading_path[-1] for c in chunks if c.navigation] == ["関連手順"]
    assert read_markdown(STEPS_WITH_REFERENCES, "steps.md").link_lines == frozenset()
