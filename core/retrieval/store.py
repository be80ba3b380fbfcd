"""The chunk store: one SQLite file per corpus holding the manifest, chunks, tokens and mentions.

It is the single source of truth of what is *live*: the documents table is the manifest of
content hashes, the chunks table maps each chunk to its vector key, and every build changes
them in one transaction, so that a half-finished build is never visible. Vector stores are
content-addressed (``vector_key`` = chunk id + document hash), so vectors written by an
unfinished build are ignored until the transaction that makes them live commits.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from core.private import private_file
from core.schemas.documents import HEADING_SEPARATOR, Chunk, Document

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY, source TEXT NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL,
    updated_at TEXT NOT NULL, content_hash TEXT NOT NULL, kind TEXT NOT NULL,
    size INTEGER NOT NULL DEFAULT 0, indexed_at TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS chunks (
    row INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_id TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL, source TEXT NOT NULL,
    title TEXT NOT NULL, heading TEXT NOT NULL, body TEXT NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, chunk_index INTEGER NOT NULL,
    updated_at TEXT NOT NULL, doc_hash TEXT NOT NULL, tokens TEXT NOT NULL,
    vector_key TEXT NOT NULL UNIQUE, extra TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS chunk_history (
    chunk_id TEXT NOT NULL, doc_hash TEXT NOT NULL, source TEXT NOT NULL, heading TEXT NOT NULL,
    body TEXT NOT NULL, PRIMARY KEY (chunk_id, doc_hash)
);
"""


def vector_key(chunk: Chunk) -> str:
    return f"{chunk.chunk_id}@{chunk.doc_hash[:16]}"


_WINDOW_MARK = "|w"


def window_key(key: str, n: int) -> str:
    """The vector key of a chunk's ``n``-th passage window (corpora embedding windows)."""
    return f"{key}{_WINDOW_MARK}{n}"


def chunk_vector_key(key: str) -> str:
    """The chunk's vector key behind a vector-index key (itself, or the key of a window)."""
    head, mark, n = key.rpartition(_WINDOW_MARK)
    return head if mark and n.isdigit() else key


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A live chunk as read back from the store (what search results are made of)."""

    row: int
    chunk: Chunk
    tokens: tuple[str, ...]
    vector_key: str


class ChunkStore:
    """SQLite store of one corpus, shared by the threads of a process (Streamlit sessions).

    Writes go through ``conn``. Reads made inside ``snapshot()`` go through a read connection
    of the calling thread holding one SQLite read transaction, so that every read of one search
    sees the same generation even while a build commits the next one (WAL mode: readers never
    block the writer, nor see its transaction). Reads outside a snapshot use ``conn``.
    """

    def __init__(self, path: Path) -> None:
        private_file(path)  # 0600 in a 0700 folder; SQLite gives -wal / -shm the same mode
        self.path = path
        self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(SCHEMA)
        self.lock = threading.RLock()
        self._idle_readers: list[sqlite3.Connection] = []
        self._local = threading.local()
        self._held: Counter[int] = Counter()  # generation -> snapshots open in this process
        self._held_changed = threading.Condition()

    # --- snapshots ---------------------------------------------------------------------
    @property
    def reader(self) -> sqlite3.Connection:
        """The connection reads use: the calling thread's snapshot, else ``conn``."""
        return getattr(self._local, "conn", None) or self.conn

    def _take_reader(self) -> sqlite3.Connection:
        with self._held_changed:
            if self._idle_readers:
                return self._idle_readers.pop()
        conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA query_only=1")
        return conn

    @contextmanager
    def snapshot(self) -> Iterator[int]:
        """Hold the live generation for the reads of this thread inside the block; yields it.

        A build that commits meanwhile is invisible until the block ends. Nested blocks share
        the outer snapshot. ``wait_for_readers`` lets a build wait for older snapshots before it
        deletes what they may still read (vectors of the previous generation).
        """
        if getattr(self._local, "conn", None) is not None:
            yield self._local.generation
            return
        conn = self._take_reader()
        conn.execute("BEGIN")
        try:
            row = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
            generation = int(row[0]) if row else 0
            with self._held_changed:
                self._held[generation] += 1
            self._local.conn, self._local.generation = conn, generation
            try:
                yield generation
            finally:
                self._local.conn = None
                with self._held_changed:
                    self._held[generation] -= 1
                    if not self._held[generation]:
                        del self._held[generation]
                    self._held_changed.notify_all()
        finally:
            conn.execute("COMMIT")
            with self._held_changed:
                self._idle_readers.append(conn)

    def wait_for_readers(self, generation: int, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) until no snapshot of this process holds a generation
        older than ``generation``; False on timeout."""
        with self._held_changed:
            return self._held_changed.wait_for(
                lambda: all(g >= generation for g in self._held), timeout
            )

    # --- meta ------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.reader.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    @property
    def generation(self) -> int:
        return int(self.get_meta("generation", "0") or 0)

    # --- manifest --------------------------------------------------------------------
    def manifest(self) -> dict[str, str]:
        """doc_id -> content hash of every live document."""
        return dict(self.reader.execute("SELECT doc_id, content_hash FROM documents"))

    def document_count(self) -> int:
        return self.reader.execute("SELECT COUNT(*) FROM documents").fetchone()[0]

    def document(self, doc_id: str) -> Document | None:
        row = self.reader.execute(
            "SELECT doc_id, source, title, text, updated_at, content_hash, kind"
            " FROM documents WHERE doc_id=?",
            (doc_id,),
        ).fetchone()
        return Document(*row) if row else None

    def stats(self) -> dict[str, object]:
        docs = self.document_count()
        chunks = self.reader.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return {
            "documents": docs,
            "chunks": chunks,
            "built_at": self.get_meta("built_at"),
            "embedder": self.get_meta("embedder_name"),
            "dim": int(self.get_meta("embedder_dim", "0") or 0),
            "generation": self.generation,
        }

    # --- writes (inside the caller's transaction) -------------------------------------
    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def remove_document(self, doc_id: str) -> list[str]:
        """Delete a document and its chunks; returns the vector keys that stop being live."""
        keys = [
            r[0]
            for r in self.conn.execute("SELECT vector_key FROM chunks WHERE doc_id=?", (doc_id,))
        ]
        self.conn.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
        self.conn.execute("DELETE FROM documents WHERE doc_id=?", (doc_id,))
        return keys

    def put_document(
        self,
        doc: Document,
        chunks: Sequence[Chunk],
        tokens: Sequence[Sequence[str]],
        size: int,
        indexed_at: str,
    ) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO documents VALUES (?,?,?,?,?,?,?,?,?)",
            (
                doc.doc_id,
                doc.source,
                doc.title,
                doc.text,
                doc.updated_at,
                doc.content_hash,
                doc.kind,
                size,
                indexed_at,
            ),
        )
        rows = [
            (
                c.chunk_id,
                c.doc_id,
                c.source,
                c.title,
                c.heading,
                c.body,
                c.start,
                c.end,
                c.chunk_index,
                c.updated_at,
                c.doc_hash,
                json.dumps(list(t), ensure_ascii=False),
                vector_key(c),
                json.dumps(c.extra, ensure_ascii=False),
            )
            for c, t in zip(chunks, tokens, strict=True)
        ]
        self.conn.executemany(
            'INSERT INTO chunks (chunk_id, doc_id, source, title, heading, body, start, "end",'
            " chunk_index, updated_at, doc_hash, tokens, vector_key, extra)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        # Citations stay openable after a rebuild: keep every version of a chunk's text.
        self.conn.executemany(
            "INSERT OR IGNORE INTO chunk_history VALUES (?,?,?,?,?)",
            [(c.chunk_id, c.doc_hash, c.source, c.heading, c.body) for c in chunks],
        )

    # --- reads -----------------------------------------------------------------------
    def _chunk_from_row(self, row: tuple) -> StoredChunk:
        (
            rowid,
            chunk_id,
            doc_id,
            source,
            title,
            heading,
            body,
            start,
            end,
            index,
            updated,
            doc_hash,
            tokens,
            vkey,
            extra,
        ) = row
        chunk = Chunk(
            chunk_id=chunk_id,
            doc_id=doc_id,
            source=source,
            title=title,
            heading_path=tuple(heading.split(HEADING_SEPARATOR)) if heading else (),
            body=body,
            start=start,
            end=end,
            chunk_index=index,
            updated_at=updated,
            doc_hash=doc_hash,
            extra=json.loads(extra),
        )
        return StoredChunk(rowid, chunk, tuple(json.loads(tokens)), vkey)

    _COLUMNS = (
        'row, chunk_id, doc_id, source, title, heading, body, start, "end", chunk_index,'
        " updated_at, doc_hash, tokens, vector_key, extra"
    )

    def iter_chunks(self) -> Iterable[StoredChunk]:
        cur = self.reader.execute(f"SELECT {self._COLUMNS} FROM chunks ORDER BY row")
        for row in cur:
            yield self._chunk_from_row(row)

    def chunks_by_vector_key(self, keys: Sequence[str]) -> dict[str, StoredChunk]:
        out: dict[str, StoredChunk] = {}
        for i in range(0, len(keys), 500):
            part = list(keys[i : i + 500])
            marks = ",".join("?" * len(part))
            for row in self.reader.execute(
                f"SELECT {self._COLUMNS} FROM chunks WHERE vector_key IN ({marks})", part
            ):
                sc = self._chunk_from_row(row)
                out[sc.vector_key] = sc
        return out

    def chunks_by_id(self, chunk_ids: Sequence[str]) -> dict[str, StoredChunk]:
        out: dict[str, StoredChunk] = {}
        for i in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[i : i + 500])
            marks = ",".join("?" * len(part))
            for row in self.reader.execute(
                f"SELECT {self._COLUMNS} FROM chunks WHERE chunk_id IN ({marks})", part
            ):
                sc = self._chunk_from_row(row)
                out[sc.chunk.chunk_id] = sc
        return out

    def document_chunks(self, doc_id: str) -> list[StoredChunk]:
        """The live chunks of one document in chunk order."""
        cur = self.reader.execute(
            f"SELECT {self._COLUMNS} FROM chunks WHERE doc_id=? ORDER BY chunk_index", (doc_id,)
        )
        return [self._chunk_from_row(row) for row in cur]

    def collection_tokens(self, collections: Iterable[str]) -> list[tuple[str, list[str]]]:
        """(chunk id, BM25 tokens) of the live chunks of ``collections``, in row order."""
        names = json.dumps(sorted(collections), ensure_ascii=False)
        cur = self.conn.execute(
            "SELECT chunk_id, tokens FROM chunks WHERE json_extract(extra, '$.collection')"
            " IN (SELECT value FROM json_each(?)) ORDER BY row",
            (names,),
        )
        return [(cid, json.loads(tokens)) for cid, tokens in cur]

    def live_vector_keys(self) -> set[str]:
        return {r[0] for r in self.reader.execute("SELECT vector_key FROM chunks")}

    def chunk_version(self, chunk_id: str, doc_hash: str) -> tuple[str, str, str] | None:
        """(source, heading, body) of a chunk as it was under ``doc_hash``, if ever indexed."""
        row = self.reader.execute(
            "SELECT source, heading, body FROM chunk_history WHERE chunk_id=? AND doc_hash=?",
            (chunk_id, doc_hash),
        ).fetchone()
        return tuple(row) if row else None  # type: ignore[return-value]

    def close(self) -> None:
        with self._held_changed:
            readers, self._idle_readers = self._idle_readers, []
        for conn in readers:
            conn.close()
        self.conn.close()
