"""Keyword index: BM25 over Japanese tokens (janome base forms by default).

Scoring uses ``bm25s`` (sparse matrices; the same BM25 as ``rank_bm25`` but ~30x faster per
query at 2.3k passages and ~300x at 100k, measured in DESIGN.md and ``bench/``). The token
lists live in the chunk store, so rebuilding the matrix never re-tokenizes; the built matrix is
cached on disk in bm25s' own format (numpy arrays loaded with ``allow_pickle=False``, JSON
vocabulary) plus a JSON sidecar (keys, generation), signed by a manifest
(``core.index_integrity``): a foreign or altered file is refused and the index rebuilt from the
store, never unpickled.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from core.index_integrity import IndexIntegrityError, IndexSeal
from core.text.glossary import squash_name


def _bm25s():
    """The bm25s module, its logger quieted: bm25s sets it to DEBUG when imported, and every
    index build then wrote "DEBUG bm25s: Building index from tokens" to the CLI's stderr and
    the server's log."""
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


SIDECAR = "keyword.json"
SIDECAR_FORMAT = "wb-keyword-1"
MANIFEST_KIND = "keyword-bm25s"


class KeywordIndex:
    """BM25 over pre-tokenized chunks; ``search`` returns (position, raw score) best first."""

    def __init__(self, keys: Sequence[str], corpus_tokens: Sequence[Sequence[str]]) -> None:
        bm25s = _bm25s()

        self.keys = list(keys)
        self._lock = threading.Lock()
        # the vocabulary and the keys as one text each, built on first use (``knows``,
        # ``names_a_key``)
        self._vocab_text: str | None = None
        self._keys_text: str | None = None
        self._bm25 = bm25s.BM25()
        self._empty = not any(corpus_tokens)
        if self.keys and not self._empty:
            # bm25s needs at least one token per document; an empty chunk gets a filler.
            docs = [list(t) if t else [""] for t in corpus_tokens]
            self._bm25.index(docs, show_progress=False)
        vocab = getattr(self._bm25, "vocab_dict", None) or {}
        self._vocab = set(vocab)

    def __len__(self) -> int:
        return len(self.keys)

    def scores(self, query_tokens: Sequence[str]) -> np.ndarray:
        """Raw BM25 score of every document for the query (0 where no term matches)."""
        terms = [t for t in query_tokens if t in self._vocab and t]
        if not self.keys or self._empty or not terms:
            return np.zeros(len(self.keys), dtype=np.float32)
        with self._lock:
            return np.asarray(self._bm25.get_scores(terms), dtype=np.float32)

    def knows(self, token: str) -> bool:
        """Whether ``token`` occurs in any document of the index, as a token or inside one
        ("linux" inside "kalilinux" of a finding type ``PenTest:IAMUser/KaliLinux``)."""
        if token in self._vocab:
            return True
        text = self._vocab_text
        if text is None:
            text = self._vocab_text = "\n".join(sorted(self._vocab))
        return len(token) >= 3 and token in text

    def names_a_key(self, squashed: str) -> bool:
        """Whether ``squashed`` (lower case, letters and digits only) is part of a document's
        key with its separators removed: a file filed as ``aws-eks-best-practices/…`` is about
        EKS though its page never says so."""
        text = self._keys_text
        if text is None:  # each document once: a key is the document's id and a chunk number
            documents = dict.fromkeys(key.rsplit("_", 1)[0] for key in self.keys)
            text = self._keys_text = "\n".join(squash_name(doc) for doc in documents)
        return len(squashed) >= 2 and squashed in text

    def known_share(self, query_tokens: Sequence[str]) -> float:
        """Share of the query's distinct tokens that occur in the corpus (1.0 for no tokens)."""
        distinct = {t for t in query_tokens if t}
        if not distinct:
            return 1.0
        return len(distinct & self._vocab) / len(distinct)

    def idf(self, tokens: Sequence[str]) -> dict[str, float]:
        """BM25's inverse document frequency of each distinct token the corpus knows (bm25s'
        Lucene form, ``log(1 + (N - df + 0.5) / (df + 0.5))``)."""
        known = {t for t in tokens if t and t in self._vocab}
        if not known or self._empty:
            return {}
        vocab = self._bm25.vocab_dict
        indptr = self._bm25.scores["indptr"]
        n = len(self.keys)
        out = {}
        for t in known:
            df = int(indptr[vocab[t] + 1] - indptr[vocab[t]])
            out[t] = float(np.log(1 + (n - df + 0.5) / (df + 0.5)))
        return out

    def search(self, query_tokens: Sequence[str], n: int) -> list[tuple[str, float]]:
        """The ``n`` best keys with a positive score, best first (no other threshold)."""
        scores = self.scores(query_tokens)
        if not len(scores):
            return []
        n = min(n, len(scores))
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.keys[i], float(scores[i])) for i in top if scores[i] > 0]

    # --- persistence -----------------------------------------------------------------
    def save(self, folder: Path, generation: int, seal: IndexSeal) -> None:
        """Write bm25s' own files, a JSON sidecar (keys, generation) and a signed manifest into
        ``folder``, swapped in whole (a reader sees the old folder, the new one, or none)."""
        folder.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = folder.with_name(f".{folder.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(mode=0o700)
        try:
            if self.keys and not self._empty:
                with self._lock:
                    self._bm25.save(str(tmp), allow_pickle=False, show_progress=False)
            sidecar = {
                "format": SIDECAR_FORMAT,
                "generation": generation,
                "keys": self.keys,
                "empty": self._empty or not self.keys,
            }
            (tmp / SIDECAR).write_text(json.dumps(sidecar, ensure_ascii=False), encoding="utf-8")
            for file in tmp.iterdir():
                file.chmod(0o600)
            seal.write(tmp / SIDECAR, MANIFEST_KIND, sorted(tmp.iterdir()), generation)
            old = folder.with_name(tmp.name + ".old")
            if folder.exists():
                os.replace(folder, old)
            os.replace(tmp, folder)
            shutil.rmtree(old, ignore_errors=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path, generation: int, seal: IndexSeal) -> KeywordIndex:
        """The saved index of ``generation``; IndexIntegrityError when it is missing, foreign,
        altered or of another generation (the caller rebuilds it). Nothing is unpickled."""
        bm25s = _bm25s()

        seal.check(folder / SIDECAR, MANIFEST_KIND, generation)
        try:
            sidecar = json.loads((folder / SIDECAR).read_text(encoding="utf-8"))
            keys = [str(k) for k in sidecar["keys"]]
            index = cls.__new__(cls)
            index.keys = keys
            index._lock = threading.Lock()
            index._vocab_text = index._keys_text = None
            index._empty = bool(sidecar["empty"])
            if index._empty:
                index._bm25 = bm25s.BM25()
            else:
                index._bm25 = bm25s.BM25.load(
                    str(folder), mmap=False, allow_pickle=False, show_progress=False
                )
            vocab = getattr(index._bm25, "vocab_dict", None) or {}
            index._vocab = set(vocab)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise IndexIntegrityError(
                f"キーワード索引「{folder}」を読み込めません。索引を作り直します。", detail=str(exc)
            ) from exc
        return index
