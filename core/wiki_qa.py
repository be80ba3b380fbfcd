"""Wikipedia QA: the wiki corpus as the page and the CLI use it (DESIGN.md's data flow).

- ``build_wiki_index`` / ``wiki_status`` (``core.wiki.index``): sources -> index; what is served.
- ``search_wiki``: k=16 candidates -> optional CrossEncoder rerank (falls back to the retrieval
  order, logged) -> top n=5; ``hybrid`` (BM25 0.5 + dense 0.5, min-max, dense scoring each
  chunk by its best passage window, then the top k re-scored by focus; the default, measured
  best on the JSQuAD dev set) or ``dense``. Log line 「Search k=16 -> rerank=… -> topn=5」.
- ``answer_wiki``: the LLM with the design's prompts, or the extractive answerer; the reference
  line 「参照: [0] jawiki:<title>#chunk=<n>, …」 is appended by code, never by the model; markers
  the model invents are removed and logged; no usable hit gives ``NO_HIT_MESSAGE``. One audit
  record per question.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from core.audit import AuditWriteError, append_record
from core.errors import IndexStateError, InputError, LLMError
from core.generation.citations import (
    excerpt,
    markers_in,
    strip_invented_markers,
    wiki_reference_line,
)
from core.generation.extractive import Evidence, extractive_answer, term_coverage
from core.generation.llm import LLMReply, complete
from core.retrieval.corpus import Corpus
from core.retrieval.embeddings import get_embedder
from core.retrieval.searcher import Hit, Searcher, make_query
from core.schemas.search import RerankConfig
from core.settings import Settings
from core.text.normalize import normalize_query
from core.text.tokenize import get_tokenizer, query_terms
from core.wiki.index import (
    WikiBuildReport,
    WikiIndexStatus,
    article_url,
    build_wiki_index,
    wiki_dir,
    wiki_spec,
    wiki_status,
)

__all__ = [
    "NO_HIT_MESSAGE",
    "WikiAnswer",
    "WikiBuildReport",
    "WikiIndexStatus",
    "WikiReference",
    "WikiSearch",
    "answer_wiki",
    "build_wiki_index",
    "search_wiki",
    "wiki_status",
]

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

NO_HIT_MESSAGE = (
    "該当コンテキストが見つかりませんでした。質問を言い換えるか、より一般的な表現を試してください。"
)
SYSTEM_PROMPT = (
    "あなたは事実に忠実なアシスタントです。"
    "与えられたコンテキスト以外は推測せず、根拠を引用して回答してください。"
)


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
    if not text:
        raise InputError("質問を入力してください。")
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


# --- answers -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WikiReference:
    label: int  # the [i] of the context
    title: str
    chunk_number: int
    chunk_id: str
    text: str  # the chunk body
    start: int
    end: int
    score: float
    url: str

    @property
    def ref(self) -> str:
        return f"jawiki:{self.title}#chunk={self.chunk_number}"


@dataclass
class WikiAnswer:
    question: str
    text: str  # body + blank line + 参照 line (or the no-hit message)
    body: str
    references: list[WikiReference]  # the ones in the 参照 line
    contexts: list[WikiReference]  # every context given to the answerer
    mode: str  # "llm" | "extractive" | "no_hit"
    terms: list[str]
    search_mode: str
    rerank_used: bool
    rerank_fallback: str | None
    removed_refs: list[str] = field(default_factory=list)
    llm_error: str | None = None  # the LLM failed: the extractive answer was given instead
    warnings: list[str] = field(default_factory=list)
    llm: LLMReply | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return self.mode != "no_hit"

    def to_json(self) -> dict:
        data = {
            "question": self.question,
            "answer": self.text,
            "mode": self.mode,
            "search_mode": self.search_mode,
            "rerank_used": self.rerank_used,
            "rerank_fallback": self.rerank_fallback,
            "references": [{"ref": r.ref, **asdict(r)} for r in self.references],
            "contexts": [{"ref": r.ref, **asdict(r)} for r in self.contexts],
            "removed_refs": self.removed_refs,
            "llm_error": self.llm_error,
            "warnings": self.warnings,
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        }
        if self.llm is not None:
            data["llm"] = {
                "model": self.llm.model,
                **self.llm.token_usage,
                "cost_usd": self.llm.cost_usd,
                "seconds": round(self.llm.seconds, 3),
            }
        return data


def _reference(label: int, hit: Hit) -> WikiReference:
    c = hit.chunk
    return WikiReference(
        label=label,
        title=c.title,
        chunk_number=c.chunk_index,
        chunk_id=c.chunk_id,
        text=c.body,
        start=c.start,
        end=c.end,
        score=float(min(1.0, max(0.0, hit.score))),
        url=article_url(c.title),
    )


def build_user_prompt(question: str, contexts: Sequence[WikiReference]) -> str:
    """The design's user prompt: the question, numbered contexts, and the instructions."""
    blocks = "\n\n".join(f"[{r.label}] {r.title}\n{r.text}" for r in contexts)
    return (
        f"質問: {question}\n\n"
        f"参考コンテキスト:\n{blocks}\n\n"
        "指示:\n"
        "- 上の参考コンテキストの範囲内のみで、日本語で簡潔に回答してください。\n"
        "- コンテキストから分からないことは「不明」と答え、推測で補わないでください。\n"
        "- 根拠を示すときは、該当する文の末尾に [0]、[1] のようにコンテキストの番号だけを"
        "付けてください。それ以外の形式の参照は使わないでください。\n"
        "- 参照 ID の一覧（参照: …）はシステムが回答の最後に付けるので、書かないでください。"
    )


_MODEL_REF_LINE = re.compile(r"^\s*(?:参照|出典|参考|references?|sources?)\s*[:：].*$", re.I | re.M)


def _finish(body: str, contexts: list[WikiReference], cited: list[str]) -> tuple[str, list]:
    by_label = {str(r.label): r for r in contexts}
    refs = [by_label[m] for m in sorted(set(cited), key=int) if m in by_label] or contexts
    line = wiki_reference_line([(r.label, r.title, r.chunk_number) for r in refs])
    return f"{body.strip()}\n\n{line}", refs


def _whole_sentences(ref: WikiReference, overlap: int = 60) -> str:
    """The chunk body without the sentence tail it starts with (the overlap of a window cut)."""
    if ref.start == 0:
        return ref.text
    end = ref.text.find("。", 0, overlap + 1)
    return ref.text[end + 1 :].lstrip() if 0 <= end < len(ref.text) - 1 else ref.text


def _llm_body(
    settings: Settings, question: str, contexts: list[WikiReference]
) -> tuple[str, list[str], list[str], LLMReply]:
    reply = complete(settings, SYSTEM_PROMPT, build_user_prompt(question, contexts))
    text = reply.text
    if _MODEL_REF_LINE.search(text):
        log.info("Removed a reference list written by the model")
        text = _MODEL_REF_LINE.sub("", text).strip()
    body, removed = strip_invented_markers(text, [str(r.label) for r in contexts])
    if removed:
        log.warning("Removed invented references: %s", ", ".join(f"[{m}]" for m in removed))
    return body, markers_in(body), removed, reply


def answer_wiki(
    settings: Settings,
    question: str,
    *,
    topk: int = DEFAULT_TOPK,
    topn: int = DEFAULT_TOPN,
    rerank: bool = True,
    mode: str = DEFAULT_MODE,
    index_dir: str | Path | None = None,
    use_llm: bool | None = None,
    audit: bool = True,
    session_id: str | None = None,
) -> WikiAnswer:
    """Search, then answer with the LLM (when configured) or extractively, with references."""
    started = time.perf_counter()
    found = search_wiki(
        settings, question, topk=topk, topn=topn, rerank=rerank, mode=mode, index_dir=index_dir
    )
    evidence = found.evidence
    contexts = [_reference(i, h) for i, h in enumerate(evidence)]
    answer = WikiAnswer(
        question=found.question,
        text=NO_HIT_MESSAGE,
        body=NO_HIT_MESSAGE,
        references=[],
        contexts=contexts,
        mode="no_hit",
        terms=found.terms,
        search_mode=found.mode,
        rerank_used=found.rerank_used,
        rerank_fallback=found.rerank_fallback,
        timings_ms={"search": found.ms},
    )
    t0 = time.perf_counter()
    if not contexts:
        log.info("No usable context for %r", found.question)
    elif settings.llm_enabled if use_llm is None else use_llm:
        try:
            body, cited, removed, reply = _llm_body(settings, found.question, contexts)
            if not body:
                raise LLMError("LLM の回答が空でした。", detail="empty completion")
            answer.text, answer.references = _finish(body, contexts, cited)
            answer.body, answer.removed_refs, answer.llm, answer.mode = body, removed, reply, "llm"
        except LLMError as exc:
            answer.llm_error = exc.user_message
    if contexts and answer.mode == "no_hit":
        ex = extractive_answer(
            found.question,
            [Evidence(str(r.label), _whole_sentences(r), r.title, r.score) for r in contexts],
            found.terms,
            # No embedder: on 150 dev questions the answer held a gold answer 92.0 % of the time
            # without it and 91.3 % with it, at 0.2 ms vs 400 ms p50 (sentence embeddings).
            None,
            found.query_vector,
        )
        if ex.text:
            answer.text, answer.references = _finish(ex.text, contexts, ex.used_labels)
            answer.body, answer.mode = ex.text, "extractive"
    answer.timings_ms["answer"] = (time.perf_counter() - t0) * 1000
    answer.timings_ms["total"] = (time.perf_counter() - started) * 1000
    if audit:
        _audit(settings, answer, found, session_id)
    return answer


def _audit(
    settings: Settings, answer: WikiAnswer, found: WikiSearch, session_id: str | None
) -> None:
    """One masked, hash-chained record per question (core.audit); a failure becomes a warning."""
    record = {
        "session_id": session_id,
        "query": answer.question,
        "search_results": [
            {
                "chunk_id": h.chunk.chunk_id,
                "source": f"{h.chunk.source}#chunk={h.chunk.chunk_index}",
                "score": round(float(h.score), 6),
                "bm25_score": round(float(h.raw.get("bm25", 0.0)), 6),
                "vector_score": round(float(h.raw.get("cosine", 0.0)), 6),
                "excerpt": excerpt(h.chunk.body),
            }
            for h in found.hits
        ],
        "answer": answer.text,
        "answer_mode": answer.mode,
        "model": answer.llm.model if answer.llm else None,
        "processing_time_sec": round(answer.timings_ms.get("total", 0.0) / 1000, 4),
        "token_usage": answer.llm.token_usage if answer.llm else {},
        "cost_usd": answer.llm.cost_usd if answer.llm else 0.0,
        "search_config": {
            "mode": found.mode,
            "topk": found.topk,
            "topn": found.topn,
            "rerank": found.rerank_requested,
            "rerank_used": found.rerank_used,
            "rerank_fallback": found.rerank_fallback,
        },
        "removed_refs": answer.removed_refs,
        "warnings": [answer.llm_error] if answer.llm_error else [],
        "page": "wiki_qa",
    }
    try:
        append_record(settings.logs_dir, record)
    except AuditWriteError as exc:
        answer.warnings.append(exc.user_message)
