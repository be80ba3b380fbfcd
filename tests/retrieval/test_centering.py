"""In a folder of both languages the vector ranking reads cosines with each language's mean
counted out (``core.retrieval.centering``); hits and the evidence grade keep the raw cosine."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.retrieval import centering
from core.retrieval.centering import ScriptCentroids, script_centroids
from tests.retrieval.test_language_balance import RUNBOOKS


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def few_chunks(monkeypatch):
    """Folders of a few chunks count as both languages (the product wants 20 of each)."""
    monkeypatch.setattr(centering, "MIN_SCRIPT_CHUNKS", 1)


def test_the_language_component_no_longer_decides_the_order(few_chunks):
    # dimensions: language (ja +, en -), topic A, topic B
    en_b = _unit([-1.0, 0.0, 1.0])  # English, the other topic
    ja_a = _unit([1.0, 1.0, 0.0])  # Japanese, the question's topic
    others = [_unit([1.0, 0.0, 1.0]), _unit([-1.0, 1.0, 0.0])]  # one more of each language
    vectors = np.stack([en_b, ja_a, *others])
    scripts = ["latin", "ja", "ja", "latin"]
    query = _unit([-1.0, 1.0, 0.0])  # an English question about topic A
    raw = vectors[:2] @ query
    assert raw[0] > raw[1]  # raw: the passage in the question's language wins
    centroids = script_centroids(vectors, scripts)
    assert centroids.applies
    centered = centroids.scores(query, "latin", vectors[:2], scripts[:2])
    assert centered[1] > centered[0]  # centered: the passage on the question's topic


def test_a_corpus_in_one_language_is_not_centered():
    vectors = np.stack([_unit([1.0, 0.0]), _unit([0.0, 1.0])])
    assert not script_centroids(vectors, ["latin", "latin"]).applies
    assert not script_centroids(vectors[:0], []).applies
    assert not ScriptCentroids().applies
    # a few chunks of code in a Japanese folder are no second language
    many = np.stack([_unit([1.0, float(i % 3)]) for i in range(40)])
    assert not script_centroids(many, ["ja"] * 34 + ["latin"] * 6).applies
    assert script_centroids(many, ["ja"] * 20 + ["latin"] * 20).applies


def test_the_ranking_is_centered_and_the_hits_keep_their_raw_cosine(tmp_path: Path, few_chunks):
    from core.runbooks import runbook_corpus, search_runbooks
    from tests.conftest import indexed_runbooks

    settings, folder = indexed_runbooks(tmp_path, RUNBOOKS)
    question = "How do we dispose of evidence media when the retention period ends?"
    only_vectors = {"keyword": 0.0, "semantic": 1.0, "graph": 0.0}
    outcome = search_runbooks(settings, question, data=folder, limit=8, weights=only_vectors)
    corpus = runbook_corpus(settings, folder)
    with corpus.store.snapshot() as generation:
        centroids = corpus.centroids_at(generation)
    assert centroids.applies  # English and Japanese runbooks
    hits = outcome.hits
    stored = corpus.vectors.vectors([h.stored.vector_key for h in hits])
    vectors = np.stack([stored[h.stored.vector_key] for h in hits])
    raw = vectors @ outcome.query_vector
    for h, cosine in zip(hits, raw, strict=True):
        assert h.raw["cosine"] == pytest.approx(max(0.0, float(cosine)), abs=1e-5)
    # the margin reads the raw ranking's cosines, best first, as before
    assert outcome.vector_cosines == sorted(outcome.vector_cosines, reverse=True)
    assert outcome.vector_cosines[0] == pytest.approx(float(raw.max()), abs=1e-5)
    # the order is that of the centered cosines, not the raw ones
    from core.retrieval.corpus import chunk_script

    scripts = [chunk_script(h.chunk) for h in hits]
    centered = centroids.scores(outcome.query_vector, "latin", vectors, scripts)
    assert list(centered) == sorted(centered, reverse=True)
