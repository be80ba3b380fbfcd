"""LangChain ``BaseRetriever`` over the searcher: returns ``Document``s with scores in metadata."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LCDocument
from langchain_core.retrievers import BaseRetriever

from core.retrieval.searcher import Searcher, make_query


class WorkbenchRetriever(BaseRetriever):
    """Hybrid retriever: ``retriever.invoke("質問")`` -> list of LangChain Documents."""

    searcher: Any  # core.retrieval.searcher.Searcher (kept Any for pydantic)
    k: int = 4
    weights: dict[str, float] = {"keyword": 0.4, "semantic": 0.6, "graph": 0.0}
    fusion: str = "weighted"
    min_relevance: float = 0.0
    # the runbook collections to search (None: all; ``core.runbooks.visible_collections``)
    collections: frozenset[str] | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[LCDocument]:
        searcher: Searcher = self.searcher
        search_query = make_query(
            query, limit=self.k, min_relevance=self.min_relevance, weights=self.weights
        )
        outcome = searcher.run(search_query, fusion=self.fusion, collections=self.collections)
        docs = []
        for hit in outcome.hits:
            c = hit.chunk
            docs.append(
                LCDocument(
                    page_content=c.text,
                    id=c.chunk_id,
                    metadata={
                        "chunk_id": c.chunk_id,
                        "file": c.source,
                        "heading": c.heading,
                        "updated_at": c.updated_at,
                        "doc_hash": c.doc_hash,
                        "collection": c.collection,
                        "score": hit.score,
                        "bm25_score": hit.raw["bm25"],
                        "vector_score": hit.raw["cosine"],
                        "graph_score": hit.raw["graph"],
                        "keyword_norm": hit.normalized["keyword"],
                        "semantic_norm": hit.normalized["semantic"],
                    },
                )
            )
        return docs
