"""「全文を表示」: the whole section a cited chunk comes from, live and after the file changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.retrieval import sections
from core.retrieval.sections import section_view
from core.runbook_chat import open_section
from core.runbooks import index_runbooks, runbook_corpus

STEPS = "".join(
    f"{n}. 手順{n}: サーバー{n} のイベントログを確認し、結果を記録票の{n}行目に書き写す。\n"
    for n in range(1, 25)
)
RUNBOOK = f"# ログ調査手順\n\n## 目的\n調査の目的を定める。\n\n## 手順\n{STEPS}\n## 報告\n結果を報告する。\n"


@pytest.fixture
def indexed(settings, runbook_dir: Path):
    (runbook_dir / "logs.md").write_text(RUNBOOK, encoding="utf-8")
    index_runbooks(settings, runbook_dir, check_allowed=False)
    store = runbook_corpus(settings, runbook_dir).store
    return settings, runbook_dir, store


def _section_chunks(store):
    chunks = [s.chunk for s in store.document_chunks("logs.md")]
    return [c for c in chunks if c.heading_path == ("ログ調査手順", "手順")]


def test_live_section_is_the_whole_run_of_chunks_cut_from_the_document(indexed):
    settings, folder, store = indexed
    steps = _section_chunks(store)
    assert len(steps) >= 3
    middle = steps[len(steps) // 2]
    view = open_section(settings, folder, middle.chunk_id, "logs.md", middle.doc_hash)
    assert not view.changed and not view.removed and not view.truncated
    assert view.chunk_count == len(steps)
    assert view.heading == "ログ調査手順 > 手順"
    assert view.text == store.document("logs.md").text[steps[0].start : steps[-1].end]
    assert view.text.startswith("1. 手順1:") and "24. 手順24:" in view.text
    assert "調査の目的" not in view.text and "結果を報告する" not in view.text


def test_one_chunk_section_is_that_chunk(indexed):
    store = indexed[2]
    purpose = next(
        c for c in store.document_chunks("logs.md") if c.chunk.heading_path[-1:] == ("目的",)
    )
    view = section_view(store, purpose.chunk.chunk_id, "logs.md", purpose.chunk.doc_hash)
    assert view.text == purpose.chunk.body and view.chunk_count == 1


def test_changed_document_shows_the_section_as_it_was_cited(indexed):
    settings, folder, store = indexed
    steps = _section_chunks(store)
    before = store.document("logs.md").text[steps[0].start : steps[-1].end]
    cited = steps[1]
    (folder / "logs.md").write_text(RUNBOOK.replace("イベントログ", "監査ログ"), encoding="utf-8")
    index_runbooks(settings, folder, check_allowed=False)
    view = section_view(store, cited.chunk_id, "logs.md", cited.doc_hash)
    assert view.changed and not view.removed
    assert view.chunk_count == len(steps)
    assert view.text == before and "監査ログ" not in view.text


def test_removed_document_and_unknown_chunk(indexed):
    settings, folder, store = indexed
    cited = _section_chunks(store)[0]
    (folder / "logs.md").unlink()
    (folder / "other.md").write_text("# 別の手順\n本文。\n", encoding="utf-8")
    index_runbooks(settings, folder, check_allowed=False)
    view = section_view(store, cited.chunk_id, "logs.md", cited.doc_hash)
    assert view.removed and view.text is not None and "1. 手順1:" in view.text
    unknown = section_view(store, "nothing_0", "nothing", "0" * 64)
    assert unknown.text is None and unknown.removed


def test_long_section_is_cut_around_the_cited_chunk(indexed, monkeypatch):
    store = indexed[2]
    monkeypatch.setattr(sections, "MAX_SECTION_CHARS", 1_000)
    steps = _section_chunks(store)
    cited = steps[len(steps) // 2]
    view = section_view(store, cited.chunk_id, "logs.md", cited.doc_hash)
    assert view.truncated and 1 < view.chunk_count < len(steps)
    assert cited.body in view.text and len(view.text) <= 1_000
