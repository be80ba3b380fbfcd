"""Keyword index: BM25 over Japanese tokens (janome base forms by default).

Scoring uses ``bm25s`` (sparse matrices; the same BM25 as ``rank_bm25`` but ~30x faster per
query at 2.3k passages and ~300x at 100k, measured in DESIGN.md and ``bench/``). The token
lists live in the chunk store, so rebuilding the matrix never re-tokenizes; the built matrix is
cached in a pickle tagged with the store generation it was built from.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np


class KeywordIndex:
    """BM25 over pre-tokenized chunks; ``search`` returns (position, raw score) best first."""

    def __init__(self, keys: Sequence[str], corpus_tokens: Sequence[Sequence[str]]) -> None:
        import bm25s

        self.keys = list(keys)
        self._lock = threading.Lock()
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

    def known_share(self, query_tokens: Sequence[str]) -> float:
        """Share of the query's distinct tokens that occur in the corpus (1.0 for no tokens)."""
        distinct = {t for t in query_tokens if t}
        if not distinct:
            return 1.0
        return len(distinct & self._vocab) / len(distinct)

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
    def save(self, path: Path, generation: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        with tmp.open("wb") as fh:
            pickle.dump({"generation": generation, "index": self}, fh, protocol=5)
        os.replace(tmp, path)

    @staticmethod
    def load(path: Path, generation: int) -> KeywordIndex | None:
        """The cached index when it was built from ``generation``; otherwise None."""
        try:
            with path.open("rb") as fh:
                data = pickle.load(fh)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
            return None
        if data.get("generation") != generation:
            return None
        return data["index"]

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
