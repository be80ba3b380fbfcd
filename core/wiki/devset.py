"""The development set: JSQuAD questions -> gold chunks (make-dev), and Recall@K over it (eval).

``make_dev_set`` rebuilds each JSQuAD article exactly as a build does (paragraphs concatenated,
``normalize_article``), maps every answer span into the normalized article, cuts it with the
index's chunker and size/overlap, and lists as gold the chunks whose span covers an answer's
span (``jawiki:<title>#<chunk index>``). When an answer crosses a cut and no chunk covers it
whole, the chunks overlapping it are gold (counted as ``partial``). When the answer is the
article title (JSQuAD's ``title [SEP] `` prefix), the chunks of the question's paragraph are gold:
each chunk is indexed with its title at the head.

``evaluate_dev`` runs every question through ``search_wiki`` (warm: a few untimed questions
first) and reports Recall@1/5/10, MRR@10, latency p50/p95 and the settings used.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.errors import InputError
from core.ingest.indexer import Progress
from core.ingest.wikipedia import (
    Article,
    JsquadParagraph,
    SourceSpec,
    article_document,
    jsquad_articles,
)
from core.settings import Settings
from core.text.chunking import chunk_document
from core.text.normalize import normalize_article
from core.wiki.index import wiki_status
from core.wiki.search import (
    DEFAULT_MODE,
    DEFAULT_TOPK,
    DENSE_WEIGHTS,
    FOCUS_WEIGHT,
    HYBRID_WEIGHTS,
    search_wiki,
)

_SENTINEL = "\ue000"  # a private-use character: normalization keeps it, texts never contain it


# --- make-dev ---------------------------------------------------------------------------------


def _normalized_offset(raw: str, position: int) -> int:
    """Offset in ``normalize_article(raw)`` of the character at raw ``position``."""
    marked = normalize_article(raw[:position] + _SENTINEL + raw[position:])
    return marked.index(_SENTINEL)


def _answer_span(
    text: str, para_start: int, paragraph: JsquadParagraph, answer: dict
) -> tuple[int, int] | None:
    """(start, end) of an answer in the normalized article text, or None when it cannot be found."""
    answer_text = answer.get("text")
    raw_start = answer.get("answer_start")
    if not isinstance(answer_text, str) or not isinstance(raw_start, int):
        return None
    wanted = normalize_article(answer_text)
    if not wanted:
        return None
    start = raw_start - paragraph.prefix_len
    if 0 <= start <= len(paragraph.text):
        s = para_start + _normalized_offset(paragraph.text, start)
        if text[s : s + len(wanted)] == wanted:
            return s, s + len(wanted)
        guess = s
    else:
        guess = para_start
    # Fallback: the occurrence nearest to where the answer should be.
    best: int | None = None
    found = text.find(wanted)
    while found >= 0:
        if best is None or abs(found - guess) < abs(best - guess):
            best = found
        found = text.find(wanted, found + 1)
    return None if best is None else (best, best + len(wanted))


def _answers_title(qa: dict, paragraph: JsquadParagraph) -> bool:
    return any(
        isinstance(a, dict)
        and isinstance(a.get("answer_start"), int)
        and a["answer_start"] < paragraph.prefix_len
        for a in qa.get("answers") or []
    )


@dataclass
class DevReport:
    questions: int = 0
    covered: int = 0  # a chunk covers the whole answer span
    partial: int = 0  # only chunks overlapping the span (the answer crosses a cut)
    title: int = 0  # the answer is the article title (only in the "title [SEP] " prefix)
    unmapped: int = 0  # the answer text was not found in the article (question left out)


def make_dev_set(
    spec: SourceSpec, chunk_size: int, overlap: int, max_articles: int | None = None
) -> tuple[list[dict], DevReport]:
    """One record per question: ``{id, question, answers, gold_sources}``.

    ``gold_sources`` are ``jawiki:<title>#<chunk index>`` of the chunks whose span covers an
    answer's span in the rebuilt article (chunked exactly as the index is).
    """
    if spec.kind != "jsquad":
        raise InputError(
            "make-dev のソースは jsquad:<JSQuAD 形式 JSON のパス> で指定してください。"
        )
    report = DevReport()
    records: list[dict] = []
    articles = jsquad_articles(spec)
    if max_articles is not None:
        articles = articles[:max_articles]
    for title, paragraphs in articles:
        doc = article_document(Article(title, "\n".join(p.text for p in paragraphs), title))
        text = doc.text
        chunks = chunk_document(doc, chunk_size, overlap)
        position = 0
        for paragraph in paragraphs:
            normalized = normalize_article(paragraph.text)
            para_start = text.find(normalized, position) if normalized else position
            if para_start < 0:
                para_start = position
            position = para_start + len(normalized)
            for qa in paragraph.qas:
                question = qa.get("question") if isinstance(qa, dict) else None
                if not isinstance(question, str) or not question.strip():
                    continue
                report.questions += 1
                spans = [
                    span
                    for answer in qa.get("answers") or []
                    if isinstance(answer, dict)
                    and (span := _answer_span(text, para_start, paragraph, answer)) is not None
                ]
                if not spans and _answers_title(qa, paragraph):
                    # The answer is the title (in the "title [SEP] " prefix): every chunk's
                    # indexed text starts with the title; the paragraph's chunks are gold.
                    end = para_start + len(normalized)
                    gold = [c.chunk_index for c in chunks if c.start < end and para_start < c.end]
                    report.title += 1
                elif not spans:
                    report.unmapped += 1
                    continue
                else:
                    gold = [
                        c.chunk_index
                        for c in chunks
                        if any(c.start <= s and e <= c.end for s, e in spans)
                    ]
                    if gold:
                        report.covered += 1
                    else:
                        s, e = spans[0]
                        gold = [c.chunk_index for c in chunks if c.start < e and s < c.end]
                        report.partial += 1
                answers = list(
                    dict.fromkeys(
                        normalize_article(a["text"])
                        for a in qa.get("answers") or []
                        if isinstance(a, dict) and isinstance(a.get("text"), str)
                    )
                )
                records.append(
                    {
                        "id": str(qa.get("id", "")),
                        "question": question,
                        "answers": answers,
                        "gold_sources": [f"{doc.source}#{n}" for n in sorted(set(gold))],
                    }
                )
    if not records:
        raise InputError(
            f"ソース「{spec.raw}」から開発セットの質問を作れませんでした（質問がありません）。"
        )
    return records, report


# --- evaluation ----------------------------------------------------------------------------------


def read_dev_set(path: str | Path) -> list[dict]:
    """Records of a make-dev file; raises InputError when missing, malformed or empty."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise InputError(
            f"開発セット「{path}」が見つかりません。`wiki make-dev` で作成してください。"
        )
    records = []
    with file.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"開発セット「{path}」の {number} 行目を JSON として読み込めません。"
                ) from exc
            if (
                not isinstance(record, dict)
                or not isinstance(record.get("question"), str)
                or not isinstance(record.get("gold_sources"), list)
            ):
                raise InputError(
                    f"開発セット「{path}」の {number} 行目に question と gold_sources がありません。"
                )
            records.append(record)
    if not records:
        raise InputError(f"開発セット「{path}」に質問がありません。")
    return records


def evaluate_dev(
    settings: Settings,
    dev_path: str | Path,
    *,
    k: int = 5,
    topk: int = DEFAULT_TOPK,
    mode: str = DEFAULT_MODE,
    rerank: bool = True,
    index_dir: str | Path | None = None,
    limit: int | None = None,
    warmup: int = 5,
    progress: Progress | None = None,
) -> dict:
    """Recall@1/5/10 (and @k), MRR@10 and warm search latency over a dev set, with the settings."""
    records = read_dev_set(dev_path)[:limit]
    depth = max(10, k)
    topk = max(topk, depth)
    status = wiki_status(settings, index_dir)
    for record in records[:warmup]:  # warm: the first searches load BM25 and the embedder
        search_wiki(
            settings,
            record["question"],
            topk=topk,
            topn=depth,
            rerank=rerank,
            mode=mode,
            index_dir=index_dir,
        )
    ranks: list[int] = []
    answer_ranks: list[int] = []  # first hit whose text contains an answer (any paragraph)
    times: list[float] = []
    fallback: str | None = None
    rerank_used = False
    for i, record in enumerate(records):
        if progress:
            progress(i, len(records), "評価中")
        t0 = time.perf_counter()
        found = search_wiki(
            settings,
            record["question"],
            topk=topk,
            topn=depth,
            rerank=rerank,
            mode=mode,
            index_dir=index_dir,
        )
        times.append((time.perf_counter() - t0) * 1000)
        rerank_used |= found.rerank_used
        fallback = fallback or found.rerank_fallback
        gold = set(record["gold_sources"])
        got = [f"{h.chunk.source}#{h.chunk.chunk_index}" for h in found.hits]
        ranks.append(next((r for r, g in enumerate(got, start=1) if g in gold), 0))
        answers = [a for a in record.get("answers") or [] if isinstance(a, str) and a]
        if answers:
            answer_ranks.append(
                next(
                    (
                        r
                        for r, h in enumerate(found.hits, 1)
                        if any(a in h.chunk.text for a in answers)
                    ),
                    0,
                )
            )
    if progress:
        progress(len(records), len(records), "完了")
    r = np.asarray(ranks)
    n = len(r)
    out: dict = {"questions": n}
    for kk in sorted({1, 5, 10, k}):
        out[f"Recall@{kk}"] = round(float(((r > 0) & (r <= kk)).sum() / n), 4)
    out["MRR@10"] = round(
        float(np.where((r > 0) & (r <= 10), 1.0 / np.maximum(r, 1), 0).sum() / n), 4
    )
    if answer_ranks:  # a looser view: the answer string anywhere in a retrieved chunk
        a = np.asarray(answer_ranks)
        out["AnswerInTop@5"] = round(float(((a > 0) & (a <= 5)).sum() / len(a)), 4)
    t = np.asarray(times)
    out["latency_ms"] = {
        "p50": round(float(np.percentile(t, 50)), 2),
        "p95": round(float(np.percentile(t, 95)), 2),
        "mean": round(float(t.mean()), 2),
    }
    out["settings"] = {
        "index_dir": status.index_dir,
        "built_at": status.built_at,  # the dashboard tells builds apart by it
        "articles": status.articles,
        "chunks": status.chunks,
        "chunk_params": status.chunk_params,
        "embedder": status.embedder,
        "dim": status.dim,
        "mode": mode,
        "weights": HYBRID_WEIGHTS if mode == "hybrid" else DENSE_WEIGHTS,
        "focus_weight": FOCUS_WEIGHT if mode == "hybrid" else 0.0,
        "topk": topk,
        "depth": depth,
        "rerank": rerank,
        "rerank_model": settings.rerank_model,
        "rerank_used": rerank_used,
        "rerank_fallback": fallback,
        "warmup_queries": min(warmup, n),
    }
    return out
