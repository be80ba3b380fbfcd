"""A corpus: the chunk store and the indexes built from it, opened together.

``Corpus`` is what the indexer writes and the searcher reads. The runbook corpus of a data
folder is ``runbook_corpus(settings, folder)``: the sample runbooks use the ``runbooks`` index
folder and the ``security_runbooks`` Chroma collection; any other folder gets its own pair,
named after a hash of its path.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import shutil
import sqlite3
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.audit_keys import AuditKeyError
from core.errors import IndexStateError
from core.index_integrity import IndexIntegrityError, IndexSeal, refused
from core.retrieval.centering import ScriptCentroids, script_centroids
from core.retrieval.embeddings import Embedder, EmbedderInfo, configured_info, get_embedder
from core.retrieval.graph import GraphStore, SQLiteGraphStore
from core.retrieval.graph_neo4j import Neo4jGraphStore
from core.retrieval.keyword import KeywordIndex
from core.retrieval.store import ChunkStore, chunk_vector_key
from core.retrieval.translations import ChunkVector, Translations, find_translations
from core.retrieval.vector import ChromaVectorIndex, FaissVectorIndex, VectorIndex, chroma_client
from core.settings import Settings
from core.text.loanwords import LoanwordIndex
from core.text.script import passage_script
from core.text.tokenize import Tokenizer, get_tokenizer

RUNBOOK_HEADING_WEIGHT = 2
log = logging.getLogger(__name__)

KEYWORD_DIR = "bm25"
LEGACY_KEYWORD_FILE = "bm25.pkl"  # older versions pickled the index: never loaded


@dataclass(frozen=True, slots=True)
class CorpusSpec:
    name: str  # index folder name under settings.index_dir
    kind: str  # "runbook" | "wiki"
    vector_backend: str  # "chroma" | "faiss"
    collection: str  # Chroma collection (chroma backend)
    chunk_size: int
    chunk_overlap: int
    source_dir: Path | None = None
    # 0: one vector per chunk; N: one per passage window of at most N characters
    # (``core.text.chunking.vector_texts``), the chunk scored by its best window.
    vector_window: int = 0
    # how many times a chunk's own section heading counts in its keyword text (BM25F-like:
    # a runbook section titled "Owner Responsibilities" answers "what is the owner responsible
    # for" before a neighbouring section that mentions owners in passing)
    heading_weight: int = 1


@dataclass(frozen=True, slots=True)
class CollectionScope:
    """The live chunks of some runbook collections, as the searcher filters by them.

    ``keyword`` is a BM25 index over those chunks alone: hidden chunks are never candidates
    and do not even weigh on the term statistics (IDF, average length), so the raw scores a
    restricted user sees are those of a corpus without the hidden documents.
    """

    collections: frozenset[str]
    chunk_ids: frozenset[str]
    keyword: KeywordIndex
    documents: int = 0  # how many documents those chunks come from


_MAX_SCOPES = 64
_SCRIPT_SAMPLE = 400  # characters of a chunk read to tell its script (translation pairing)


def chunk_script(chunk) -> str:
    """A chunk's script ("ja" | "latin" | "none"), from its start: a long chunk's language
    shows in its first lines."""
    return passage_script(chunk.title, chunk.heading, chunk.body[:_SCRIPT_SAMPLE])


def open_graph_store(
    conn: sqlite3.Connection,
    neo4j_uri: str | None,
    neo4j_user: str,
    neo4j_password: str | None,
    *,
    neo4j_database: str | None = None,
    reader: Callable[[], sqlite3.Connection] | None = None,
) -> GraphStore:
    """Neo4j when ``neo4j_uri`` is set (an unreachable server is an ``IndexStateError``),
    otherwise the SQLite graph inside ``conn``'s database (reads through ``reader``)."""
    if neo4j_uri:
        return Neo4jGraphStore(neo4j_uri, neo4j_user, neo4j_password, neo4j_database)
    return SQLiteGraphStore(conn, reader)


class Corpus:
    """Store + keyword + vector + graph indexes of one corpus."""

    def __init__(self, spec: CorpusSpec, settings: Settings, embedder: Embedder | None = None):
        self.spec = spec
        self.settings = settings
        self.dir = settings.index_dir / spec.name
        self._embedder = embedder
        self.embedder_info = embedder.info if embedder else configured_info(settings)
        self.tokenizer: Tokenizer = get_tokenizer(settings.tokenizer)
        self.store = ChunkStore(self.dir / "corpus.sqlite")
        self._check_embedder()
        self._vectors: VectorIndex | None = None
        store = self.store
        self.graph: GraphStore = open_graph_store(
            store.conn,
            settings.neo4j_uri,
            settings.neo4j_user,
            settings.neo4j_password,
            reader=lambda: store.reader,
        )
        self._keywords: dict[int, KeywordIndex] = {}  # generation -> index (the newest two)
        # (generation, collections or None for all) -> index, of the newest two generations
        self._loanwords: dict[tuple[int, frozenset[str] | None], LoanwordIndex] = {}
        self._loanword_lock = threading.Lock()
        # generation -> its translation pairs and script means (the newest two)
        self._languages: dict[int, tuple[Translations, ScriptCentroids]] = {}
        self._translation_lock = threading.Lock()
        self._keyword_lock = threading.Lock()
        self._scopes: dict[tuple[int, frozenset[str]], CollectionScope] = {}
        self._seal: IndexSeal | None = None

    @property
    def vectors(self) -> VectorIndex:
        """Opened on first use (a no-change rebuild never touches the vector store)."""
        if self._vectors is None:
            self._vectors = self._open_vectors()
        return self._vectors

    @property
    def embedder(self) -> Embedder:
        """Loaded on first use: a rebuild with no change never loads the model."""
        if self._embedder is None:
            self._embedder = get_embedder(self.settings)
        return self._embedder

    # --- embedder identity --------------------------------------------------------------
    def built_with(self) -> EmbedderInfo | None:
        name = self.store.get_meta("embedder_name")
        if not name:
            return None
        return EmbedderInfo(name, int(self.store.get_meta("embedder_dim", "0") or 0))

    def _check_embedder(self) -> None:
        built = self.built_with()
        if built is not None and self.store.manifest():
            built.check_matches(self.embedder_info, self.spec.name)

    def _open_vectors(self) -> VectorIndex:
        if self.spec.vector_backend == "faiss":
            try:
                seal: IndexSeal | None = self.seal
            except AuditKeyError as exc:
                raise IndexStateError(
                    f"索引の署名鍵を使えません（{exc.user_message}）。", detail=exc.detail
                ) from exc
            return FaissVectorIndex(self.dir / "vectors.npz", self.embedder_info, seal)
        return ChromaVectorIndex(self.settings, self.spec.collection, self.embedder_info)

    # --- keyword index (derived from the store, cached per generation) ------------------
    @property
    def keyword(self) -> KeywordIndex:
        """The keyword index of the live generation."""
        with self.store.snapshot() as generation:
            return self.keyword_at(generation)

    def keyword_at(self, generation: int) -> KeywordIndex:
        """The keyword index of ``generation``; call it inside ``store.snapshot()`` holding that
        generation. The two newest are kept, so searches that started before a build finish on
        their own generation while the next ones use the new one."""
        with self._keyword_lock:
            index = self._keywords.get(generation)
            if index is None:
                newest = generation >= max(self._keywords, default=generation)
                index = self._load_keyword(generation, save=newest)
                self._keywords[generation] = index
                for old in sorted(self._keywords)[:-2]:
                    del self._keywords[old]
            return index

    def loanwords_at(self, generation: int, scope: CollectionScope | None = None) -> LoanwordIndex:
        """The katakana and English words of ``generation``'s chunks (of ``scope``: a hidden
        runbook's words are not a restricted user's vocabulary) by sound
        (``core.text.loanwords``), built on first use; call it inside ``store.snapshot()``."""
        key = (generation, None if scope is None else scope.collections)
        with self._loanword_lock:
            index = self._loanwords.get(key)
            if index is None:
                allowed = None if scope is None else scope.chunk_ids
                index = LoanwordIndex(
                    f"{r.chunk.heading}\n{r.chunk.body}"
                    for r in self.store.iter_chunks()
                    if allowed is None or r.chunk.chunk_id in allowed
                )
                # the two newest generations are kept, and as many scopes as ``scope`` keeps
                newest = max([generation, *(k[0] for k in self._loanwords)])
                for old in [k for k in self._loanwords if k[0] < newest - 1]:
                    del self._loanwords[old]
                if len(self._loanwords) >= 2 * _MAX_SCOPES:
                    self._loanwords.clear()
                self._loanwords[key] = index
            return index

    def translations_at(self, generation: int) -> Translations:
        """The documents of ``generation`` that translate each other
        (``core.retrieval.translations``), from the stored chunk vectors; built on first use,
        call it inside ``store.snapshot()``. A chunk embedded as passage windows is the mean of
        its windows."""
        return self._languages_at(generation)[0]

    def centroids_at(self, generation: int) -> ScriptCentroids:
        """The mean chunk vector of each script of ``generation`` (``core.retrieval.centering``;
        empty for a corpus in one language); built on first use, call it inside
        ``store.snapshot()``."""
        return self._languages_at(generation)[1]

    def _languages_at(self, generation: int) -> tuple[Translations, ScriptCentroids]:
        """Translations and script centroids of ``generation``, from one read of its chunk
        vectors (the two newest generations kept)."""
        with self._translation_lock:
            found = self._languages.get(generation)
            if found is None:
                chunks = self._chunk_vectors()
                found = (
                    (
                        find_translations(chunks),
                        script_centroids(
                            np.stack([c.vector for c in chunks]), [c.script for c in chunks]
                        ),
                    )
                    if chunks
                    else (Translations(), ScriptCentroids())
                )
                self._languages[generation] = found
                for old in sorted(self._languages)[:-2]:
                    del self._languages[old]
            return found

    def _chunk_vectors(self) -> list[ChunkVector]:
        """Each live chunk's vector (a chunk embedded as windows: their mean) and script, when
        the corpus holds both scripts; else nothing (its vectors are not read)."""
        # each chunk's script from its start (a long chunk's language shows in its first lines)
        scripts: dict[str, tuple[str, str, str]] = {}  # vector key -> chunk id, doc, script
        for sc in self.store.iter_chunks():
            c = sc.chunk
            scripts[sc.vector_key] = (c.chunk_id, c.doc_id, chunk_script(c))
        if not {"ja", "latin"} <= {script for _, _, script in scripts.values()}:
            return []
        keys, matrix = self.vectors.all_vectors()
        rows: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            rows.setdefault(chunk_vector_key(key), []).append(i)
        return [
            ChunkVector(chunk_id, doc_id, script, matrix[rows[key]].mean(axis=0))
            for key, (chunk_id, doc_id, script) in scripts.items()
            if key in rows
        ]

    def scope(self, collections: Collection[str]) -> CollectionScope:
        """The chunks of ``collections`` and their own BM25 index (cached per generation)."""
        key = (self.store.generation, frozenset(collections))
        with self._keyword_lock:
            cached = self._scopes.get(key)
        if cached is not None:
            return cached
        rows = self.store.collection_tokens(key[1]) if key[1] else []
        keyword = KeywordIndex([cid for cid, _ in rows], [tokens for _, tokens in rows])
        scope = CollectionScope(
            key[1],
            frozenset(keyword.keys),
            keyword,
            # chunk ids are "<doc_id>_<n>"
            documents=len({cid.rpartition("_")[0] for cid in keyword.keys}),
        )
        with self._keyword_lock:
            if len(self._scopes) >= _MAX_SCOPES:
                self._scopes.clear()
            self._scopes[key] = scope
        return scope

    @property
    def seal(self) -> IndexSeal:
        """The key and embedder that this corpus' index files are signed with and checked against."""
        if self._seal is None:
            info = self.embedder_info
            self._seal = IndexSeal.for_settings(self.settings, info.name, info.dim)
        return self._seal

    def _load_keyword(self, generation: int, save: bool = True) -> KeywordIndex:
        """The saved keyword index when its manifest holds, else one rebuilt from the store
        (saved unless ``save`` is False: a search still on an older generation)."""
        legacy = self.dir / LEGACY_KEYWORD_FILE
        if legacy.exists():  # the pickle of older versions is never loaded: drop it
            log.warning("旧形式のキーワード索引（pickle）「%s」は読み込まずに削除します。", legacy)
            legacy.unlink(missing_ok=True)
        folder = self.dir / KEYWORD_DIR
        try:
            seal: IndexSeal | None = self.seal
        except AuditKeyError as exc:  # no usable key: serve from memory, load and save nothing
            log.warning("索引の署名鍵を使えません: %s", exc.user_message)
            seal = None
        if seal is not None and folder.exists():
            try:
                return KeywordIndex.load(folder, generation, seal)
            except IndexIntegrityError as exc:
                refused(exc)
        rows = list(self.store.iter_chunks())
        index = KeywordIndex([r.chunk.chunk_id for r in rows], [r.tokens for r in rows])
        if seal is not None and save:
            try:
                index.save(folder, generation, seal)
            except OSError as exc:  # the index still serves from memory
                log.warning("キーワード索引を保存できません: %s", exc)
        return index

    def vectors_refused(self) -> bool:
        """The FAISS vector file was refused (foreign or altered): every chunk must be re-embedded."""
        if self.spec.vector_backend != "faiss":
            return False
        return bool(getattr(self.vectors, "refused", False)) and bool(self.store.manifest())

    def stats(self) -> dict[str, object]:
        stats = self.store.stats()
        stats.update(
            {
                "name": self.spec.name,
                "vector_backend": self.spec.vector_backend,
                "vectors": self.vectors.count(),
                "entities": self.graph.entity_count(),
                "tokenizer": self.tokenizer.name,
                "source_dir": str(self.spec.source_dir) if self.spec.source_dir else None,
            }
        )
        return stats

    def close(self) -> None:
        self.graph.close()
        self.store.close()

    def reset(self) -> None:
        """Drop every index of this corpus (a full rebuild follows, e.g. after an embedder change)."""
        self.close()
        if self.spec.vector_backend == "chroma":
            client = chroma_client(self.settings)
            with contextlib.suppress(Exception):  # the collection may not exist yet
                client.delete_collection(self.spec.collection)
        shutil.rmtree(self.dir, ignore_errors=True)


def runbook_spec(settings: Settings, folder: Path | None = None) -> CorpusSpec:
    folder = (folder or settings.runbooks_dir).resolve()
    if folder == settings.runbooks_dir.resolve():
        name, collection = "runbooks", settings.runbook_collection
    else:
        tag = hashlib.sha1(str(folder).encode("utf-8")).hexdigest()[:10]
        name, collection = f"runbooks-{tag}", f"{settings.runbook_collection}-{tag}"
    return CorpusSpec(
        name=name,
        kind="runbook",
        vector_backend="chroma",
        collection=collection,
        chunk_size=settings.runbook_chunk_size,
        chunk_overlap=settings.runbook_chunk_overlap,
        source_dir=folder,
        vector_window=settings.runbook_vector_window,
        heading_weight=RUNBOOK_HEADING_WEIGHT,
    )


_open: dict[tuple[str, str], Corpus] = {}
_open_lock = threading.Lock()


def open_corpus(spec: CorpusSpec, settings: Settings) -> Corpus:
    """One open ``Corpus`` per (state root, name) per process."""
    key = (str(settings.state_root), spec.name)
    with _open_lock:
        if key not in _open:
            _open[key] = Corpus(spec, settings)
        return _open[key]


def forget_corpus(spec: CorpusSpec, settings: Settings) -> None:
    with _open_lock:
        corpus = _open.pop((str(settings.state_root), spec.name), None)
    if corpus is not None:
        corpus.close()
