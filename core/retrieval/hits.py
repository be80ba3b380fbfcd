"""``Hit``: one search result with everything the pages need beyond the contract.

The searcher builds hits; focus and rerank re-score them; the answerers read them. A module of
its own so that the steps which re-score hits need not import the searcher that calls them.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.retrieval.store import StoredChunk
from core.schemas.documents import Chunk


@dataclass(slots=True)
class Hit:
    """One result with everything the pages need beyond the contract (file, heading, raw scores)."""

    stored: StoredChunk
    combined: float
    normalized: dict[str, float]  # per strategy, as fused
    raw: dict[str, float]  # bm25 (raw BM25), cosine (raw cosine), graph
    rerank: float | None = None

    @property
    def chunk(self) -> Chunk:
        return self.stored.chunk

    @property
    def score(self) -> float:
        return self.rerank if self.rerank is not None else self.combined
