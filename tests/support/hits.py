"""Search hits built in memory, for the tests of the steps that re-order or re-score them."""

from __future__ import annotations

from core.retrieval.hits import Hit
from core.retrieval.store import StoredChunk
from core.schemas.documents import Chunk


def make_hit(
    body: str,
    combined: float,
    n: int,
    doc: str = "doc",
    source: str | None = None,
    raw: dict[str, float] | None = None,
) -> Hit:
    """The ``n``-th chunk of ``doc`` (chunk id ``{doc}_{n}``) as a hit of score ``combined``."""
    chunk = Chunk(
        chunk_id=f"{doc}_{n}",
        doc_id=doc,
        source=source or doc,
        title=doc,
        heading_path=(),
        body=body,
        start=0,
        end=len(body),
        chunk_index=n,
        updated_at="2026-01-01T00:00:00+00:00",
        doc_hash="0" * 64,
    )
    stored = StoredChunk(row=n, chunk=chunk, tokens=(), vector_key=f"{doc}_{n}@0")
    return Hit(stored=stored, combined=combined, normalized={}, raw=dict(raw or {}))
