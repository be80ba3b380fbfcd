"""Wikipedia QA benchmark on JSQuAD valid: quality, latency, evidence floor, build throughput.

    .venv/bin/python -m bench.wiki [--limit N] [--skip-build-rate] [--json OUT]

(1) Recall@1/5/10 and MRR@10 of ``hybrid`` and ``dense`` over ``dev.jsonl`` (make-dev of the
same file) on an index built from JSQuAD valid (``bench/.cache/wiki-state``; the first run
builds it: ~520 chunks, minutes). (2) Warm latency without an LLM: ``search_wiki`` and the
whole ``core.wiki.qa.ask`` (extractive), and how often the extractive answer contains a gold answer.
(3) The evidence floor (``is_evidence``): how many answerable questions keep their gold-article
hit vs how many best hits from other articles (a stand-in for "not in the index") are rejected.
(4) Build throughput: a fresh build of a slice (passages/s, whole pipeline) against the
embedder alone on the same passages in the same run (before and after, averaged).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path

from core.ingest.wikipedia import Article, article_document, jsquad_articles, parse_sources
from core.retrieval.embeddings import get_embedder
from core.settings import Settings
from core.text.chunking import chunk_document, vector_texts
from core.wiki.devset import evaluate_dev, make_dev_set
from core.wiki.index import build_wiki_index, wiki_status
from core.wiki.qa import WikiConfig, answer_body, ask
from core.wiki.search import is_evidence, search_wiki

from .common import CACHE_DIR, embed_seconds, jsquad_path, latency, machine_info

STATE = CACHE_DIR / "wiki-state"
DEV = CACHE_DIR / "dev.jsonl"


def settings_for(state: Path) -> Settings:
    return Settings(_env_file=None, state_dir=state)


def ensure_index(settings: Settings) -> dict:
    status = wiki_status(settings)
    if not status.built:
        print("building the JSQuAD valid index (cached vectors are reused)…", flush=True)
        report = build_wiki_index(settings, f"jsquad:{jsquad_path()}")
        print(report.summary_ja(), flush=True)
        status = wiki_status(settings)
    return {"articles": status.articles, "chunks": status.chunks, "embedder": status.embedder}


def ensure_dev() -> list[dict]:
    spec = parse_sources(f"jsquad:{jsquad_path()}")[0]
    records, report = make_dev_set(spec, 450, 60)
    DEV.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")
    print(
        f"dev.jsonl: {len(records)} questions (covered {report.covered}, partial "
        f"{report.partial}, title {report.title}, unmapped {report.unmapped})",
        flush=True,
    )
    return records


def quality(settings: Settings, limit: int | None) -> dict:
    out = {}
    for mode in ("hybrid", "dense"):
        t0 = time.perf_counter()
        result = evaluate_dev(settings, DEV, k=5, mode=mode, limit=limit)
        result["seconds"] = round(time.perf_counter() - t0, 1)
        out[mode] = result
        print(
            f"  {mode:6s}  R@1 {result['Recall@1']:.3f}  R@5 {result['Recall@5']:.3f}  "
            f"R@10 {result['Recall@10']:.3f}  MRR@10 {result['MRR@10']:.3f}  "
            f"search p50 {result['latency_ms']['p50']:.1f} ms  p95 {result['latency_ms']['p95']:.1f} ms"
            f"  (n={result['questions']})",
            flush=True,
        )
    return out


def answer_latency(settings: Settings, records: list[dict], n: int) -> dict:
    sample = records[:: max(1, len(records) // n)][:n]
    config = WikiConfig(write_audit=False)
    for r in sample[:5]:
        ask(r["question"], [], config, settings)
    times, contains, no_hit = [], 0, 0
    for r in sample:
        t0 = time.perf_counter()
        answer = ask(r["question"], [], config, settings)
        times.append((time.perf_counter() - t0) * 1000)
        contains += any(a in answer_body(answer) for a in r["answers"])
        no_hit += not answer.found
    lat = latency(times, warmup=0)
    out = {
        **lat,
        "answer_contains_gold": contains / len(sample),
        "no_hit": no_hit,
        "n": len(sample),
    }
    print(
        f"  ask (extractive, no LLM): p50 {lat['p50_ms']:.1f} ms  p95 {lat['p95_ms']:.1f} ms"
        f"  answer contains a gold answer: {out['answer_contains_gold']:.3f}  no-hit {no_hit}/{len(sample)}",
        flush=True,
    )
    return out


def evidence_floor(settings: Settings, records: list[dict], n: int) -> dict:
    random.seed(0)
    sample = random.sample(records, min(n, len(records)))
    kept = rejected = counted = 0
    for r in sample:
        found = search_wiki(settings, r["question"], topn=16, rerank=False)
        gold = r["gold_sources"][0].rpartition("#")[0]
        own = [h for h in found.hits if h.chunk.source == gold]
        other = [h for h in found.hits if h.chunk.source != gold]
        kept += bool(own) and is_evidence(own[0], found.terms)
        if other:
            counted += 1
            rejected += not is_evidence(other[0], found.terms)
    out = {"answerable_kept": kept / len(sample), "other_article_rejected": rejected / counted}
    print(
        f"  answerable questions whose gold-article hit counts as evidence: {out['answerable_kept']:.3f}\n"
        f"  best other-article hits rejected (stand-in for 'not in the index'): "
        f"{out['other_article_rejected']:.3f}  (n={len(sample)})",
        flush=True,
    )
    return out


def build_rate(n_articles: int) -> dict:
    """A fresh build (no cache) of the first articles vs. the embedder alone, same passages."""
    spec = parse_sources(f"jsquad:{jsquad_path()}")[0]
    articles = [(t, p) for t, p in jsquad_articles(spec)][3 : 3 + n_articles]
    docs = [article_document(Article(t, "\n".join(x.text for x in p), t)) for t, p in articles]
    window = Settings(_env_file=None).article_vector_window
    # the texts the build embeds: each chunk's passage windows
    texts = [t for d in docs for c in chunk_document(d, 450, 60) for t in vector_texts(c, window)]
    with tempfile.TemporaryDirectory(dir=CACHE_DIR) as tmp:
        source = Path(tmp) / "slice.jsonl"
        source.write_text(
            "".join(
                json.dumps({"title": t, "text": "\n".join(x.text for x in p)}, ensure_ascii=False)
                + "\n"
                for t, p in articles
            ),
            "utf-8",
        )
        settings = settings_for(Path(tmp) / "state")
        inner = get_embedder(settings)
        batch = settings.embed_batch_size
        inner.embed_passages(texts[:batch])  # warm-up

        before = embed_seconds(inner, texts, batch)
        t0 = time.perf_counter()
        report = build_wiki_index(settings, str(source))
        pipeline = time.perf_counter() - t0
        after = embed_seconds(inner, texts, batch)
    embedder_rate = len(texts) / ((before + after) / 2)
    pipeline_rate = report.model_embedded / pipeline
    out = {
        "passages": len(texts),
        "articles": len(docs),
        "pipeline_seconds": round(pipeline, 2),
        "pipeline_passages_per_s": round(pipeline_rate, 3),
        "embedder_seconds": [round(before, 2), round(after, 2)],
        "embedder_passages_per_s": round(embedder_rate, 3),
        "ratio_pipeline_over_embedder": round(pipeline_rate / embedder_rate, 3),
    }
    print(
        f"  build: {pipeline_rate:.2f} passages/s ({len(texts)} passages, {pipeline:.1f} s, whole"
        f" pipeline)  embedder alone: {embedder_rate:.2f} passages/s  ratio {out['ratio_pipeline_over_embedder']:.3f}",
        flush=True,
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="first N dev questions only")
    parser.add_argument("--answers", type=int, default=300, help="questions for answer latency")
    parser.add_argument(
        "--floor", type=int, default=500, help="questions for the evidence floor (0: skip)"
    )
    parser.add_argument("--build-articles", type=int, default=6)
    parser.add_argument("--skip-build-rate", action="store_true")
    parser.add_argument("--skip-quality", action="store_true", help="(1) is `wiki eval` twice")
    parser.add_argument("--json", type=Path, default=CACHE_DIR / "wiki.json")
    args = parser.parse_args()
    jsquad_path()  # exits with a message naming WB_DATASETS_DIR when JSQuAD is not there
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    load = [round(os.getloadavg()[0], 2)]
    settings = settings_for(STATE)
    out: dict = {"machine": machine_info(), "index": ensure_index(settings)}
    records = ensure_dev()
    if not args.skip_quality:
        print("[1] quality and search latency on dev.jsonl (warm, rerank requested: fallback)")
        out["quality"] = quality(settings, args.limit)
    print("[2] whole answer without an LLM")
    out["answer"] = answer_latency(settings, records, args.answers)
    print("[3] evidence floor")
    if args.floor > 0:  # --floor 0 skips (3)
        out["evidence_floor"] = evidence_floor(settings, records, args.floor)
    if not args.skip_build_rate:
        print("[4] build throughput")
        out["build"] = build_rate(args.build_articles)
    load.append(round(os.getloadavg()[0], 2))
    out["loadavg_1min"] = load
    out["seconds"] = round(time.perf_counter() - started, 1)
    args.json.write_text(json.dumps(out, ensure_ascii=False, indent=2), "utf-8")
    print(f"load average (1 min) before/after: {load}; {out['seconds']} s; JSON: {args.json}")


if __name__ == "__main__":
    main()
