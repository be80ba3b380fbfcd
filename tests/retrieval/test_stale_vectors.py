"""Vectors left by a killed build never take a live candidate's place (issue 14, item 6)."""

from __future__ import annotations

import numpy as np
import pytest

from core.ingest import indexer
from core.ingest.indexer import update_corpus
from core.retrieval.searcher import Searcher
from core.retrieval.searcher import make_query as searcher_query
from tests.conftest import make_settings
from tests.ingest.test_indexer import RUNBOOK_A, RUNBOOK_B, RUNBOOK_C, corpus_for, write

QUERY = "VPN に接続できないときの確認手順"


def outcome(corpus, limit: int = 3):
    query = searcher_query(
        QUERY,
        limit=limit,
        strategies=["hybrid"],
        weights={"keyword": 0.4, "semantic": 0.6, "graph": 0.0},
    )
    out = Searcher(corpus).run(query)
    ranking = [(h.chunk.chunk_id, round(h.score, 6)) for h in out.hits]
    semantic = [(h.chunk.chunk_id, round(h.raw["cosine"], 6)) for h in out.hits]
    return out.result.total_count, ranking, semantic


def test_a_killed_build_leaves_stale_vectors_that_change_nothing(tmp_path, monkeypatch):
    # A small candidate floor, so that the vector index is asked for few neighbours.
    settings = make_settings(tmp_path / "state", tmp_path / "books", candidate_floor=1)
    folder = tmp_path / "books"
    write(folder, "vpn.md", RUNBOOK_A)
    write(folder, "phishing.md", RUNBOOK_B)
    write(folder, "backup.md", RUNBOOK_C)
    corpus = corpus_for(settings, folder)
    update_corpus(corpus, folder)
    clean = outcome(corpus)
    live = corpus.store.live_vector_keys()

    # A build of a changed file is killed after its vectors were written, before the commit.
    write(
        folder,
        "vpn.md",
        RUNBOOK_A + "\n## 追加\nVPN に接続できないときは証明書と時刻を確認する。\n",
    )

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(indexer, "_commit", killed)
    with pytest.raises(KeyboardInterrupt):
        update_corpus(corpus, folder)
    monkeypatch.undo()
    assert corpus.store.live_vector_keys() == live  # the live view did not move
    assert corpus.vectors.count() > len(live)  # ... but the new vectors are in the index

    # More stale vectors, as a longer killed build would leave: 40 keys of a document version
    # that was never committed, each nearer to the query than any live chunk.
    qvec = corpus.embedder.embed_query_vector(QUERY)
    rng = np.random.default_rng(0)
    ghosts = qvec + rng.normal(scale=0.01, size=(40, qvec.shape[0])).astype(np.float32)
    ghosts /= np.linalg.norm(ghosts, axis=1, keepdims=True)
    keys = [f"vpn.md#ghost-{i}@{'f' * 16}" for i in range(40)]
    corpus.vectors.upsert(keys, ghosts, [{"document": "", "doc_id": "vpn.md"} for _ in keys])
    assert corpus.vectors.query(qvec, 1)[0][0] in keys  # they do rank first in the raw index

    assert outcome(corpus) == clean  # totalCount, order, scores and cosines of a clean build
