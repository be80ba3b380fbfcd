"""Incremental, atomic index builds: source folder -> documents -> chunks -> every index.

1. Scan the folder and hash every supported file; compare with the manifest (content hashes in
   the chunk store). Unchanged files cost a hash and nothing else.
2. Load, normalize and chunk new or changed files; a bad file is skipped with a Japanese
   message naming it (its previous version, if any, stays indexed).
3. Embed only the new chunks (each whole, or each of its passage windows when the corpus spec
   asks for windows) and write their vectors under content-addressed keys, which are
   invisible to searches until step 4 commits. Meanwhile a worker thread computes the BM25
   tokens and entity mentions (janome), so the two costs overlap where cores allow. A chunk
   re-cut only because the parameters changed (a tokenizer or chunker version, the heading
   weight) keeps its vector when the text it embeds is the same as before.
4. One SQLite transaction swaps documents, chunks, tokens and entity mentions, and bumps the
   generation: readers see the old corpus or the new one, never a half-built one.
5. Garbage-collect vectors that are no longer live (also those left by an interrupted build),
   after the searches of this process still reading the previous generation have finished
   (``ChunkStore.snapshot``): an answer being given during a build finishes on the old view.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from core.collections import collection_of
from core.errors import InputError, PathNotAllowedError, SourceFileError
from core.ingest.folder import (
    check_folder,
    check_path_text,
    link_escapes,
    link_message,
    require_files,
    root_for,
    walk_folder,
)
from core.ingest.loaders import (
    MARKDOWN_SUFFIXES,
    document_hash,
    load_file,
    read_source_bytes,
)
from core.ingest.mkdocs import nav_titles
from core.private import tighten
from core.retrieval.corpus import Corpus
from core.retrieval.graph import SQLiteGraphStore
from core.retrieval.store import ChunkStore, chunk_vector_key, vector_key, window_key
from core.schemas.documents import Chunk, Document
from core.text.chunking import CHUNKER_VERSION, chunk_document, vector_texts
from core.text.entities import extract_entities

Progress = Callable[[int, int, str], None]
log = logging.getLogger(__name__)
# How long a build waits for the searches still reading the previous generation before it
# deletes that generation's vectors (a search holds its snapshot for tens of milliseconds).
READER_GRACE_SECONDS = 30.0

# The shape of the metadata runbook chunks carry (1: ``collection``). A build whose stored
# chunks have another shape re-chunks everything, like a chunker or tokenizer change.
RUNBOOK_METADATA_VERSION = 1


@dataclass
class IndexReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, Japanese message)
    chunks_embedded: int = 0
    passages_embedded: int = 0  # texts embedded: chunks, or their passage windows
    vectors_reused: int = 0  # vectors kept because their text did not change (_reusable_vectors)
    total_chunks: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def summary_ja(self) -> str:
        parts = [
            f"追加 {len(self.added)}件",
            f"更新 {len(self.updated)}件",
            f"削除 {len(self.removed)}件",
            f"変更なし {len(self.unchanged)}件",
        ]
        if self.skipped:
            parts.append(f"スキップ {len(self.skipped)}件")
        return (
            "、".join(parts)
            + f"（埋め込み {self.chunks_embedded} チャンク、全 {self.total_chunks} チャンク、"
            f"{self.seconds:.1f} 秒）"
        )


def resolve_allowed_folder(folder: str | Path, allowed_roots: list[Path]) -> Path:
    """A user-supplied folder, resolved, refused unless it lies under an allowed root."""
    check_path_text(folder)
    path = Path(folder).expanduser()
    try:
        resolved = path.resolve(strict=False)
    except (OSError, RuntimeError) as exc:
        raise InputError(f"フォルダのパスが不正です: {folder}", detail=str(exc)) from exc
    roots = [r.resolve() for r in allowed_roots]
    if not any(resolved == r or resolved.is_relative_to(r) for r in roots):
        allowed = "、".join(str(r) for r in roots)
        raise PathNotAllowedError(
            f"フォルダ「{folder}」は許可された場所の外にあります。許可されている場所: {allowed}"
        )
    return resolved


def _now() -> str:
    return datetime.now(tz=UTC).isoformat(timespec="seconds")


def update_corpus(
    corpus: Corpus,
    folder: Path,
    progress: Progress | None = None,
    batch_size: int | None = None,
) -> IndexReport:
    """Bring the corpus in line with the files of ``folder`` (see the module docstring)."""
    started = time.perf_counter()
    report = IndexReport()
    settings = corpus.settings
    check_folder(folder)
    root = root_for(folder, settings.allowed_roots)
    scan = walk_folder(folder, root)
    report.skipped.extend(scan.refused)
    files = require_files(folder, scan)
    manifest = corpus.store.manifest()
    params_changed = _params_changed(corpus)
    titles = nav_titles(folder)  # a MkDocs site's page titles, when the folder is one

    loaded: list[tuple[Document, int]] = []
    seen: set[str] = set()
    for i, path in enumerate(files):
        doc_id = path.relative_to(folder).as_posix()
        seen.add(doc_id)
        if progress:
            progress(i, len(files), f"確認中: {doc_id}")
        try:
            if link_escapes(path, root):  # swapped for a link since the scan
                raise SourceFileError(str(path), link_message(doc_id))
            data = read_source_bytes(path, settings.max_file_bytes)
            site_title = titles.get(doc_id) if path.suffix.lower() in MARKDOWN_SUFFIXES else None
            if manifest.get(doc_id) == document_hash(data, site_title) and not params_changed:
                report.unchanged.append(doc_id)
                continue
            loaded.append(load_file(path, folder, settings.max_file_bytes, site_title))
        except SourceFileError as exc:
            # A file that cannot be read keeps its previous version, if any, in the index.
            report.skipped.append((doc_id, exc.user_message))
        except Exception as exc:  # a reader's own failure on a hostile file: skip that file only
            log.exception("reading %s failed", doc_id)
            report.skipped.append(
                (
                    doc_id,
                    f"「{doc_id}」を読み取れませんでした（{type(exc).__name__}）。スキップしました。",
                )
            )
    removed = sorted(set(manifest) - seen)
    _apply(corpus, loaded, removed, report, progress, batch_size, params_changed)
    report.seconds = time.perf_counter() - started
    return report


def index_documents(
    corpus: Corpus,
    documents: Iterable[Document],
    progress: Progress | None = None,
    batch_size: int | None = None,
    remove_missing: bool = True,
) -> IndexReport:
    """Same as ``update_corpus`` for documents that do not come from a folder (articles)."""
    started = time.perf_counter()
    report = IndexReport()
    manifest = corpus.store.manifest()
    params_changed = _params_changed(corpus)
    loaded: list[tuple[Document, int]] = []
    seen: set[str] = set()
    for doc in documents:
        seen.add(doc.doc_id)
        if manifest.get(doc.doc_id) == doc.content_hash and not params_changed:
            report.unchanged.append(doc.doc_id)
        else:
            loaded.append((doc, len(doc.text.encode("utf-8"))))
    removed = sorted(set(manifest) - seen) if remove_missing else []
    _apply(corpus, loaded, removed, report, progress, batch_size, params_changed)
    report.seconds = time.perf_counter() - started
    return report


def _embed(
    corpus: Corpus,
    units: list[tuple[Chunk, str, str]],
    batch_size: int,
    progress: Progress | None,
) -> None:
    """Embed (chunk, vector key, text) units in batches and write them to the vector index."""
    for b in range(0, len(units), batch_size):
        batch = units[b : b + batch_size]
        if progress:
            progress(b, len(units), f"埋め込み中: {batch[0][0].source}")
        vectors = corpus.embedder.embed_passages([text for _, _, text in batch])
        corpus.vectors.upsert(
            [key for _, key, _ in batch],
            vectors,
            [
                {
                    "chunk_id": c.chunk_id,
                    "file": c.source,
                    "heading": c.heading,
                    "updated_at": c.updated_at,
                    "doc_hash": c.doc_hash,
                    "collection": c.collection,
                    "document": text,
                }
                for c, _, text in batch
            ],
        )
    if units:
        corpus.vectors.flush()


class _Cancelled(Exception):
    pass


def _analyze(
    corpus: Corpus, chunked: list[tuple[Document, int, list[Chunk]]], stop: threading.Event
) -> tuple[dict[str, list[str]], dict[str, dict[str, list]]]:
    """BM25 tokens per chunk id and entity mentions per document (runs beside the embedder)."""
    tokens: dict[str, list[str]] = {}
    mentions: dict[str, dict[str, list]] = {}
    for doc, _, chunks in chunked:
        per_chunk = {}
        for c in chunks:
            if stop.is_set():
                raise _Cancelled
            tokens[c.chunk_id] = keyword_tokens(corpus, c)
            per_chunk[c.chunk_id] = extract_entities(c.text)
        mentions[doc.doc_id] = per_chunk
    return tokens, mentions


def _commit(corpus, chunked, removed, tokens_by_id, mentions, info) -> None:
    """Swap the live view in one transaction on a connection of its own.

    Searches in this process read through ``corpus.store``'s connection, so they keep seeing
    the last committed generation while this transaction is open. SQLite graph mentions are
    written in the same transaction; an external graph (Neo4j) is updated after the commit,
    idempotently per document.
    """
    writer = ChunkStore(corpus.store.path)
    graph = corpus.graph
    sqlite_graph = isinstance(graph, SQLiteGraphStore)
    if sqlite_graph:
        graph = SQLiteGraphStore(writer.conn)
    indexed_at = _now()
    try:
        writer.begin()
        try:
            for doc_id in removed:
                writer.remove_document(doc_id)
                if sqlite_graph:
                    graph.remove_doc(doc_id)
            for doc, size, chunks in chunked:
                writer.remove_document(doc.doc_id)
                writer.put_document(
                    doc, chunks, [tokens_by_id[c.chunk_id] for c in chunks], size, indexed_at
                )
                if sqlite_graph:
                    graph.replace_doc(doc.doc_id, mentions[doc.doc_id])
            writer.set_meta("generation", str(writer.generation + 1))
            writer.set_meta("built_at", indexed_at)
            writer.set_meta("embedder_name", info.name)
            writer.set_meta("embedder_dim", str(info.dim))
            writer.set_meta("chunk_params", _chunk_params(corpus))
            writer.commit()
        except BaseException:
            writer.rollback()
            raise
    finally:
        writer.close()
    if not sqlite_graph:
        for doc_id in removed:
            graph.remove_doc(doc_id)
        for doc, _, _ in chunked:
            graph.replace_doc(doc.doc_id, mentions[doc.doc_id])


def keyword_tokens(corpus: Corpus, chunk: Chunk) -> list[str]:
    """The BM25 tokens of a chunk: its indexed text, then its own section heading again
    (``heading_weight`` - 1 more times)."""
    tokens = corpus.tokenizer.tokenize(chunk.text)
    extra = corpus.spec.heading_weight - 1
    if extra > 0 and chunk.heading_path:
        tokens += corpus.tokenizer.tokenize(chunk.heading_path[-1]) * extra
    return tokens


def _chunk_params(corpus: Corpus) -> str:
    """What the stored chunks and tokens depend on besides the documents: a build whose
    parameters, chunker version or tokenizer version differ re-chunks everything."""
    spec = corpus.spec
    tokenizer = f"{corpus.tokenizer.name}.{corpus.tokenizer.version}"
    params = f"{spec.chunk_size}/{spec.chunk_overlap}/{tokenizer}/c{CHUNKER_VERSION}"
    if spec.kind == "runbook":
        params += f"/m{RUNBOOK_METADATA_VERSION}"
    params += f"/w{spec.vector_window}" if spec.vector_window else ""
    return params + (f"/h{spec.heading_weight}" if spec.heading_weight > 1 else "")


def _with_metadata(corpus: Corpus, doc: Document, chunks: list[Chunk]) -> list[Chunk]:
    """Runbook chunks carry their collection (the first folder of the document's path)."""
    if corpus.spec.kind != "runbook":
        return chunks
    collection = collection_of(doc.doc_id)
    return [replace(c, extra={**c.extra, "collection": collection}) for c in chunks]


def _vector_units(chunk: Chunk, window: int) -> list[tuple[str, str]]:
    """(vector key, embedded text) of a chunk: the chunk itself, or each passage window."""
    key = vector_key(chunk)
    texts = vector_texts(chunk, window)
    if not window:
        return [(key, texts[0])]
    return [(window_key(key, n), text) for n, text in enumerate(texts)]


def _reusable_vectors(
    corpus: Corpus, chunked: list[tuple[Document, int, list[Chunk]]], window: int
) -> set[str]:
    """Vector keys whose stored vector was embedded from exactly the text the new chunk would
    embed (same chunk id, document hash, collection and vector text): a re-chunk forced by other
    parameters (a tokenizer or chunker version, the heading weight) embeds only what changed.
    Nothing is reused from a refused vector file or another embedder's index."""
    if corpus.vectors_refused() or corpus.store.get_meta("embedder_name") not in (
        None,
        corpus.embedder_info.name,
    ):
        return set()
    indexed: set[str] | None = None
    out: set[str] = set()
    for doc, _, chunks in chunked:
        old = {sc.chunk.chunk_id: sc.chunk for sc in corpus.store.document_chunks(doc.doc_id)}
        for chunk in chunks:
            prev = old.get(chunk.chunk_id)
            if (
                prev is None
                or prev.doc_hash != chunk.doc_hash
                or prev.collection != chunk.collection
                or vector_texts(prev, window) != vector_texts(chunk, window)
            ):
                continue
            if indexed is None:
                indexed = corpus.vectors.keys()
            keys = [key for key, _ in _vector_units(chunk, window)]
            if all(key in indexed for key in keys):
                out.update(keys)
    return out


def index_outdated(corpus: Corpus) -> bool:
    """The index was built with other chunking parameters (another chunker or tokenizer version
    after an upgrade of the workbench, another chunk size): its next update re-chunks every
    document, keeping the vectors whose text did not change."""
    stored = corpus.store.get_meta("chunk_params")
    return stored is not None and stored != _chunk_params(corpus)


def _params_changed(corpus: Corpus) -> bool:
    """Everything must be re-chunked and re-embedded: other parameters, or a refused vector file."""
    return index_outdated(corpus) or corpus.vectors_refused()


def _apply(
    corpus: Corpus,
    loaded: list[tuple[Document, int]],
    removed: list[str],
    report: IndexReport,
    progress: Progress | None,
    batch_size: int | None,
    params_changed: bool,
) -> None:
    """Chunk, embed and commit the loaded documents; remove ``removed``; collect stale vectors."""
    store = corpus.store
    manifest = store.manifest()
    batch_size = batch_size or corpus.settings.embed_batch_size
    chunked: list[tuple[Document, int, list[Chunk]]] = []
    for doc, size in loaded:
        chunks = chunk_document(doc, corpus.spec.chunk_size, corpus.spec.chunk_overlap)
        chunks = _with_metadata(corpus, doc, chunks)
        if not chunks:
            report.skipped.append((doc.doc_id, f"「{doc.doc_id}」には索引できる本文がありません。"))
            continue
        chunked.append((doc, size, chunks))
        (report.updated if doc.doc_id in manifest else report.added).append(doc.doc_id)
    report.removed.extend(removed)

    # Embed the new chunks; their vectors stay invisible until the commit below. The store
    # remembers that vectors may be stale until they are collected (an interrupted build).
    new_chunks = [c for _, _, chunks in chunked for c in chunks]
    if new_chunks or removed:
        store.set_meta("vectors_dirty", "1")
    embed_started = time.perf_counter()
    window = corpus.spec.vector_window
    units = [(c, key, text) for c in new_chunks for key, text in _vector_units(c, window)]
    # a changed document has a new hash, hence new vector keys: only a re-chunk forced by the
    # parameters can find vectors to keep
    reused = _reusable_vectors(corpus, chunked, window) if params_changed else set()
    units = [u for u in units if u[1] not in reused]
    # Tokens and entity mentions (janome, pure Python) are computed in a worker thread while
    # the embedder (C, outside the GIL) runs: the build costs max(embed, analyze), not the sum.
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-analyze") as pool:
        analysis = pool.submit(_analyze, corpus, chunked, stop)
        try:
            _embed(corpus, units, batch_size, progress)
            if progress and new_chunks:
                progress(len(new_chunks), len(new_chunks), "索引を更新中")
            tokens_by_id, mentions = analysis.result()
        except BaseException:
            stop.set()  # (Ctrl-C included) the worker stops at its next chunk; the error goes on
            raise
    report.embed_seconds = time.perf_counter() - embed_started
    report.chunks_embedded = len({c.chunk_id for c, _, _ in units})
    report.passages_embedded = len(units)
    report.vectors_reused = len(reused)

    # Swap the live view in one transaction.
    info = corpus.embedder_info
    if report.changed or params_changed or store.get_meta("embedder_name") is None:
        _commit(corpus, chunked, removed, tokens_by_id, mentions, info)

    # Collect vectors that are not live any more (also those of an interrupted build), once
    # the searches of this process that started on the previous generation have finished.
    live = store.live_vector_keys()
    if store.get_meta("vectors_dirty") == "1":
        if not store.wait_for_readers(store.generation, READER_GRACE_SECONDS):
            log.warning("searches still read an older generation; collecting vectors anyway")
        indexed = corpus.vectors.keys()  # a set (windows have keys of their own)
        stale = sorted(k for k in indexed if chunk_vector_key(k) not in live)
        if stale:
            corpus.vectors.delete(stale)
            corpus.vectors.flush()
        store.set_meta("vectors_dirty", "0")
    report.total_chunks = len(live)
    tighten(corpus.dir)  # index files written by libraries (bm25, FAISS): 0600 in 0700 folders
    if not corpus.settings.chroma_host:
        tighten(corpus.settings.chroma_dir)
    if progress:
        progress(1, 1, "完了")
