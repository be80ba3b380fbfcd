"""Vector indexes behind one interface: Chroma (runbooks) and a FAISS ``IndexFlatIP`` file.

Both store L2-normalized vectors under a *vector key* (chunk id + document hash) and answer
with raw cosine similarities, which mean the same thing across queries (the runbook chat's
evidence grade rests on them). Each records the embedder that built it and refuses another.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

from core.errors import IndexStateError, WorkbenchError
from core.index_integrity import IndexIntegrityError, IndexSeal, refused
from core.private import private_dir, private_file
from core.retrieval.embeddings import EmbedderInfo
from core.settings import Settings

FAISS_MANIFEST_KIND = "faiss-vectors"


class VectorIndex(Protocol):
    name: str

    def upsert(self, keys: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict]) -> None:
        """Add or replace vectors under ``keys``."""

    def delete(self, keys: Sequence[str]) -> None:
        """Remove ``keys`` (unknown keys are ignored)."""

    def query(
        self, vector: np.ndarray, n: int, collections: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``n`` nearest keys with their cosine similarity, best first; ``collections``
        may restrict them to vectors of those runbook collections (a backend without metadata
        ignores it and the searcher filters)."""

    def keys(self) -> set[str]:
        """Every stored key (live or stale)."""

    def count(self) -> int: ...

    def all_vectors(self) -> tuple[list[str], np.ndarray]:
        """Every stored key and its vector (rows in the order of the keys)."""

    def vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vector of each of ``keys`` that is stored."""

    def flush(self) -> None:
        """Persist pending writes (a no-op for stores that write through)."""


def _chroma_error(exc: Exception) -> WorkbenchError:
    return IndexStateError(
        "ベクトルデータベース（Chroma）でエラーが発生しました。"
        "インデックスを再構築するか、Chroma サーバーの状態を確認してください。",
        detail=f"{type(exc).__name__}: {exc}",
    )


_clients: dict[tuple[str, str | int], object] = {}
_clients_lock = threading.Lock()


def chroma_client(settings: Settings):  # -> chromadb.ClientAPI
    """A persistent client in ``chroma_dir``, or an HTTP client when ``chroma_host`` is set."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    key: tuple[str, str | int]
    if settings.chroma_host:
        key = (settings.chroma_host, settings.chroma_port)
    else:
        key = ("local", str(settings.chroma_dir))
    with _clients_lock:
        if key not in _clients:
            try:
                if settings.chroma_host:
                    _clients[key] = chromadb.HttpClient(
                        host=settings.chroma_host,
                        port=settings.chroma_port,
                        settings=chroma_settings,
                    )
                else:
                    private_dir(settings.chroma_dir)
                    _clients[key] = chromadb.PersistentClient(
                        path=str(settings.chroma_dir), settings=chroma_settings
                    )
            except Exception as exc:
                raise _chroma_error(exc) from exc
        return _clients[key]


class ChromaVectorIndex:
    """A Chroma collection fed with our own embeddings (never Chroma's default function)."""

    def __init__(self, settings: Settings, collection: str, info: EmbedderInfo) -> None:
        self.name = collection
        self.info = info
        client = chroma_client(settings)
        try:
            self._col = client.get_or_create_collection(
                collection,
                metadata={"embedder": info.name, "dim": info.dim},
                configuration={"hnsw": {"space": "cosine"}},
                embedding_function=None,
            )
            meta = self._col.metadata or {}
        except Exception as exc:
            raise _chroma_error(exc) from exc
        built = EmbedderInfo(str(meta.get("embedder", info.name)), int(meta.get("dim", info.dim)))
        built.check_matches(info, collection)

    def upsert(self, keys: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict]) -> None:
        if not keys:
            return
        docs = [m.pop("document", "") for m in metadatas]
        try:
            for i in range(0, len(keys), 1000):
                self._col.upsert(
                    ids=list(keys[i : i + 1000]),
                    embeddings=np.asarray(vectors[i : i + 1000], dtype=np.float32),
                    metadatas=list(metadatas[i : i + 1000]),
                    documents=docs[i : i + 1000],
                )
        except Exception as exc:
            raise _chroma_error(exc) from exc

    def delete(self, keys: Sequence[str]) -> None:
        if not keys:
            return
        try:
            for i in range(0, len(keys), 1000):
                self._col.delete(ids=list(keys[i : i + 1000]))
        except Exception as exc:
            raise _chroma_error(exc) from exc

    def query(
        self, vector: np.ndarray, n: int, collections: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``n`` nearest keys; with ``collections``, only vectors whose ``collection``
        metadata is one of them (Chroma filters before the nearest-neighbour search)."""
        where = None
        if collections is not None:
            if not collections:
                return []
            where = {"collection": {"$in": sorted(collections)}}
        try:  # n larger than the collection simply returns fewer ids
            res = self._col.query(
                query_embeddings=[np.asarray(vector, dtype=np.float32)],
                n_results=max(1, n),
                where=where,
                include=["distances"],
            )
        except Exception as exc:
            raise _chroma_error(exc) from exc
        ids = res["ids"][0]
        dists = res["distances"][0] if res.get("distances") else [1.0] * len(ids)
        return [(k, float(1.0 - d)) for k, d in zip(ids, dists, strict=True)]

    def keys(self) -> set[str]:
        try:
            return set(self._col.get(include=[])["ids"])
        except Exception as exc:
            raise _chroma_error(exc) from exc

    def count(self) -> int:
        try:
            return int(self._col.count())
        except Exception as exc:
            raise _chroma_error(exc) from exc

    def vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        if not keys:
            return {}
        try:
            got = self._col.get(ids=list(keys), include=["embeddings"])
        except Exception as exc:
            raise _chroma_error(exc) from exc
        rows = np.asarray(got["embeddings"], dtype=np.float32)
        return {k: rows[i] for i, k in enumerate(got["ids"])}

    def all_vectors(self) -> tuple[list[str], np.ndarray]:
        keys: list[str] = []
        parts: list[np.ndarray] = []
        try:
            while True:  # in pages: Chroma caps what one request returns
                page = self._col.get(include=["embeddings"], limit=5000, offset=len(keys))
                if not page["ids"]:
                    break
                keys.extend(page["ids"])
                parts.append(np.asarray(page["embeddings"], dtype=np.float32))
        except Exception as exc:
            raise _chroma_error(exc) from exc
        if not parts:
            return [], np.zeros((0, self.info.dim), dtype=np.float32)
        return keys, np.concatenate(parts)

    def flush(self) -> None:
        return None


class FaissVectorIndex:
    """``IndexFlatIP`` over normalized vectors (exact cosine), saved atomically in one file.

    The file is an ``.npz`` holding the serialized FAISS index, its keys and the embedder
    info; ``flush`` writes a temporary file and ``os.replace``s it, so readers see either the
    old or the new index, never a mix. With a ``seal`` the file is signed by a manifest
    (``core.index_integrity``) and a foreign or altered file is refused (logged, ``refused``
    set, the index starts empty and the corpus re-embeds everything); the arrays are read with
    ``allow_pickle=False`` in any case.
    """

    def __init__(self, path: Path, info: EmbedderInfo, seal: IndexSeal | None = None) -> None:
        import faiss

        self._faiss = faiss
        self.path = path
        self.name = path.name
        self.info = info
        self.seal = seal
        self.refused = False  # the file on disk was refused: the corpus re-embeds everything
        self._lock = threading.RLock()
        self._keys: list[str] = []
        self._index = faiss.IndexFlatIP(info.dim)
        if path.exists() and seal is not None:
            try:
                seal.check(path, FAISS_MANIFEST_KIND)
            except IndexIntegrityError as exc:
                refused(exc)
                self.refused = True
        if path.exists() and not self.refused:
            try:
                with np.load(path, allow_pickle=False) as data:
                    meta = json.loads(str(data["meta"]))
                    keys = [str(k) for k in data["keys"]]
                    index = faiss.deserialize_index(data["index"])
            except Exception as exc:
                raise IndexStateError(
                    f"FAISS インデックス「{path}」を読み込めません。再構築してください。",
                    detail=str(exc),
                ) from exc
            EmbedderInfo(meta["embedder"], int(meta["dim"])).check_matches(info, str(path))
            if index.ntotal != len(keys):
                raise IndexStateError(
                    f"FAISS インデックス「{path}」とキー一覧の件数が一致しません。再構築してください。"
                )
            self._keys, self._index = keys, index
        self._pos = {k: i for i, k in enumerate(self._keys)}

    def upsert(self, keys: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict]) -> None:
        if not keys:
            return
        with self._lock:
            vectors = np.asarray(vectors, dtype=np.float32).reshape(len(keys), self.info.dim)
            known = [i for i, k in enumerate(keys) if k in self._pos]
            if known:  # rare: replacing vectors means rebuilding the flat index
                all_vectors = self._all_vectors()
                for i in known:
                    all_vectors[self._pos[keys[i]]] = vectors[i]
                self._reset(self._keys, all_vectors)
            fresh = [i for i, k in enumerate(keys) if k not in self._pos]
            if fresh:
                self._index.add(np.ascontiguousarray(vectors[fresh]))
                for i in fresh:
                    self._pos[keys[i]] = len(self._keys)
                    self._keys.append(keys[i])

    def delete(self, keys: Sequence[str]) -> None:
        with self._lock:
            drop = {self._pos[k] for k in keys if k in self._pos}
            if not drop:
                return
            keep = [i for i in range(len(self._keys)) if i not in drop]
            self._reset([self._keys[i] for i in keep], self._all_vectors()[keep])

    def _all_vectors(self) -> np.ndarray:
        n = self._index.ntotal
        if not n:
            return np.zeros((0, self.info.dim), dtype=np.float32)
        return self._index.reconstruct_n(0, n)

    def _reset(self, keys: list[str], vectors: np.ndarray) -> None:
        index = self._faiss.IndexFlatIP(self.info.dim)
        if len(keys):
            index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        self._index, self._keys = index, list(keys)
        self._pos = {k: i for i, k in enumerate(self._keys)}

    def query(
        self, vector: np.ndarray, n: int, collections: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``n`` nearest keys (no metadata here: the searcher filters ``collections``)."""
        with self._lock:
            if not self._keys:
                return []
            q = np.asarray(vector, dtype=np.float32).reshape(1, -1)
            scores, idx = self._index.search(q, min(n, len(self._keys)))
        return [(self._keys[i], float(s)) for s, i in zip(scores[0], idx[0], strict=True) if i >= 0]

    def keys(self) -> set[str]:
        return set(self._keys)

    def count(self) -> int:
        return len(self._keys)

    def all_vectors(self) -> tuple[list[str], np.ndarray]:
        with self._lock:
            return list(self._keys), self._all_vectors()

    def vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        with self._lock:
            return {k: self._index.reconstruct(self._pos[k]) for k in keys if k in self._pos}

    def flush(self) -> None:
        with self._lock:
            private_dir(self.path.parent)
            tmp = self.path.with_name(self.path.name + ".tmp.npz")
            meta = json.dumps({"embedder": self.info.name, "dim": self.info.dim})
            np.savez(
                tmp,
                index=self._faiss.serialize_index(self._index),
                keys=np.array(self._keys, dtype=str),
                meta=np.array(meta),
            )
            os.replace(tmp, self.path)
            private_file(self.path)
            if self.seal is not None:
                self.seal.write(self.path, FAISS_MANIFEST_KIND, [self.path], 0)
            self.refused = False
