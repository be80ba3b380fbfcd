"""Wikipedia search: the served wiki corpus and ``search_wiki`` (the answers are ``core.wiki.qa``).

- ``search_wiki``: k=16 candidates -> optional CrossEncoder rerank (falls back to the retrieval
  order, logged) -> top n=5; ``hybrid`` (BM25 0.5 + dense 0.5, min-max, dense scoring each
  chunk by its best passage window, then the top k re-scored by focus; the default, measured
  best on the JSQuAD dev set) or ``dense``. Log line 「Search k=16 -> rerank=… -> topn=5」.
- ``is_evidence``: the floor a hit must pass to be given to the answerer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.errors import IndexStateError, InputError
from core.generation.extractive import term_coverage
from core.guardrails import AMBIGUOUS_TEMPLATE, has_no_words, is_blank_question
from core.retrieval.corpus import Corpus
from core.retrieval.embeddings import get_embedder
from core.retrieval.hits import Hit
from core.retrieval.searcher import Searcher, make_query
from core.schemas.search import RerankConfig
from core.settings import Settings
from core.text.normalize import normalize_query
from core.text.tokenize import get_tokenizer, query_terms
from core.wiki.index import wiki_dir, wiki_spec, wiki_status

log = logging.getLogger(__name__)

DEFAULT_TOPK = 16
DEFAULT_TOPN = 5
SEARCH_MODES = ("hybrid", "dense")
# Measured on dev.jsonl from JSQuAD valid, 4,442 questions (README, bench/wiki.py): hybrid beats
# dense at every K. Chunks are scored by their best 160-character passage window
# (``core.wiki.index``), then the fused top k by focus (``core.retrieval.focus``).
DEFAULT_MODE = "hybrid"
HYBRID_WEIGHTS = {"keyword": 0.5, "semantic": 0.5, "graph": 0.0}
FOCUS_WEIGHT = 1.0
DENSE_WEIGHTS = {"keyword": 0.0, "semantic": 1.0, "graph": 0.0}
# A hit is evidence when its cosine (its best passage window's) reaches MIN_EVIDENCE_COSINE or
# it contains at least MIN_EVIDENCE_COVERAGE of the query terms (length-weighted). Measured on
# 500 JSQuAD dev questions (bench/wiki.py [3]): 98.8 % of gold-article top hits pass; 76.5 % of
# the best hits from other articles (a hard stand-in for "not in the index") are rejected
# (0.86: 98.8 % / 74.5 %; 0.88: 98.6 % / 77.8 %).
MIN_EVIDENCE_COSINE = 0.87
MIN_EVIDENCE_COVERAGE = 0.5


# --- search --------------------------------------------------------------------------------------

_open: dict[tuple[str, str, str], tuple[Corpus, int]] = {}
_open_lock = threading.Lock()


def wiki_corpus(settings: Settings, index_dir: str | Path | None = None) -> Corpus:
    """The served wiki corpus, reopened when a build (any process) has switched the live view."""
    directory = wiki_dir(settings, index_dir)
    key = (str(directory), settings.embedder, settings.embedder_model)
    with _open_lock:
        entry = _open.get(key)
        if entry is not None:
            corpus, generation = entry
            if corpus.store.generation == generation:
                return corpus
            # Not closed: a search in another thread may still hold it (freed when unused).
            del _open[key]
        if not wiki_status(settings, directory).built:
            raise IndexStateError(
                f"Wikipedia インデックス（{directory}）は未構築です。"
                "`python -m core wiki build --source …` か、画面の「インデックスの構築」で"
                "構築してください。"
            )
        corpus = Corpus(wiki_spec(settings, directory), settings, embedder=get_embedder(settings))
        _open[key] = (corpus, corpus.store.generation)
        return corpus


@dataclass
class WikiSearch:
    question: str
    hits: list[Hit]
    terms: list[str]
    mode: str
    topk: int
    topn: int
    rerank_requested: bool
    rerank_used: bool = False
    rerank_fallback: str | None = None
    query_vector: np.ndarray | None = None
    ms: float = 0.0

    @property
    def evidence(self) -> list[Hit]:
        """Hits close enough in meaning, or sharing enough query terms, to answer from."""
        return [h for h in self.hits if is_evidence(h, self.terms)]


def highlight_terms(text: str) -> list[str]:
    """Content words of the question (janome surface and base forms), whatever the BM25 tokenizer.

    Used for highlighting and for the evidence floor, whose coverage threshold was measured with
    these terms (the char-bigram tokenizer would give whole runs of characters instead).
    """
    return query_terms(text, get_tokenizer("janome"))


def is_evidence(hit: Hit, terms: Sequence[str]) -> bool:
    if hit.raw.get("cosine", 0.0) >= MIN_EVIDENCE_COSINE:
        return True
    return term_coverage(hit.chunk.text, terms) >= MIN_EVIDENCE_COVERAGE


def _check_search_args(question: str, topk: int, topn: int, mode: str) -> str:
    text = normalize_query(question or "")
    if not text or is_blank_question(text):
        raise InputError("質問を入力してください。")
    if has_no_words(text):  # emoji or marks only: nothing to search for
        raise InputError(AMBIGUOUS_TEMPLATE)
    if len(text) > 1000:
        raise InputError(f"質問は 1000 文字以内で入力してください（{len(text)} 文字）。")
    if not 1 <= topn <= topk <= 100:
        raise InputError(
            f"件数の指定が不正です: topn={topn}, topk={topk}（1 ≤ topn ≤ topk ≤ 100）。"
        )
    if mode not in SEARCH_MODES:
        raise InputError(f"検索方式は {' / '.join(SEARCH_MODES)} のいずれかです（{mode}）。")
    return text


def search_wiki(
    settings: Settings,
    question: str,
    *,
    topk: int = DEFAULT_TOPK,
    topn: int = DEFAULT_TOPN,
    rerank: bool = True,
    mode: str = DEFAULT_MODE,
    index_dir: str | Path | None = None,
) -> WikiSearch:
    """k candidates -> optional rerank (fallback: retrieval order) -> top n."""
    started = time.perf_counter()
    text = _check_search_args(question, topk, topn, mode)
    corpus = wiki_corpus(settings, index_dir)
    query = make_query(
        text,
        limit=topn,
        rerank=rerank,
        strategies=["hybrid"] if mode == "hybrid" else ["semantic"],
        weights=HYBRID_WEIGHTS if mode == "hybrid" else DENSE_WEIGHTS,
    )
    # The searcher reranks the first top_k fused candidates and returns the first ``limit``.
    outcome = Searcher(corpus).run(
        query,
        fusion="weighted",
        rerank=RerankConfig(model=settings.rerank_model, top_k=topk),
        focus_weight=FOCUS_WEIGHT if mode == "hybrid" else 0.0,
        focus_top_k=topk,
    )
    log.info("Search k=%d -> rerank=%s -> topn=%d", topk, outcome.rerank_used, topn)
    if rerank and not outcome.rerank_used:
        log.info(
            "Rerank fallback: %s; keeping the %s order",
            outcome.rerank_fallback or "no candidates",
            "hybrid" if mode == "hybrid" else "vector",
        )
    return WikiSearch(
        question=text,
        hits=outcome.hits,
        terms=highlight_terms(text),
        mode=mode,
        topk=topk,
        topn=topn,
        rerank_requested=rerank,
        rerank_used=outcome.rerank_used,
        rerank_fallback=outcome.rerank_fallback,
        query_vector=outcome.query_vector,
        ms=(time.perf_counter() - started) * 1000,
    )
