"""Shared pieces of the retrieval benchmark: the JSQuAD corpus, metrics, timing, machine info.

JSQuAD valid (JGLUE v1.3, CC BY-SA 4.0) is read from ``$WB_DATASETS_DIR/jsquad-v1.3/`` (never
copied into the project; ``jsquad_path`` exits with a message when it is not there). Each paragraph is
one passage: its ``context`` is ``"title [SEP] text"``; the gold passage of a question is the
paragraph it was asked about.
"""

from __future__ import annotations

import hashlib
import os
import platform
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.ingest.wikipedia import jsquad_articles, parse_sources
from core.schemas.documents import Document
from core.settings import Settings
from core.text.normalize import normalize_article

BENCH_DIR = Path(__file__).resolve().parent
CACHE_DIR = BENCH_DIR / ".cache"
JSQUAD_PARTS = ("jsquad-v1.3", "valid-v1.3.json")
UPDATED_AT = "2023-01-01T00:00:00+00:00"  # fixed, so that rebuilds are reproducible
KS = (1, 5, 10)


@dataclass(frozen=True, slots=True)
class Paragraph:
    pid: str  # e.g. "a10336p0" (the question ids without their "q<n>" suffix)
    title: str
    text: str  # raw text after " [SEP] "
    context: str  # raw "title [SEP] text"


@dataclass(frozen=True, slots=True)
class Question:
    qid: str
    text: str
    pid: str  # gold paragraph


def jsquad_path() -> Path:
    """JSQuAD valid in the data sets folder (``WB_DATASETS_DIR``); exits with a message when absent."""
    settings = Settings()
    path = settings.dataset_path(*JSQUAD_PARTS)
    if path is None:
        where = settings.datasets_dir or "（未設定）"
        raise SystemExit(
            "このベンチマークには JSQuAD v1.3 の valid-v1.3.json（JGLUE、CC BY-SA 4.0、"
            "https://github.com/yahoojapan/JGLUE）が必要です。jsquad-v1.3/valid-v1.3.json を置いた"
            f"フォルダを WB_DATASETS_DIR に設定してください（現在: {where}）。"
        )
    return path


def load_jsquad(path: Path | None = None) -> tuple[list[Paragraph], list[Question]]:
    """Unique paragraphs (with questions) and their questions, read by the wiki source loader."""
    path = path or jsquad_path()
    paragraphs: list[Paragraph] = []
    questions: list[Question] = []
    seen: dict[str, str] = {}  # context -> pid (dedupe identical paragraphs)
    for _, article in jsquad_articles(parse_sources(f"jsquad:{path}")[0]):
        for p in article:
            if not p.qas:
                continue
            pid = seen.get(p.context)
            if pid is None:
                pid = p.qas[0]["id"].rsplit("q", 1)[0]
                seen[p.context] = pid
                title, _, text = p.context.partition(" [SEP] ")
                paragraphs.append(Paragraph(pid, title.strip(), text.strip(), p.context))
            questions.extend(Question(q["id"], q["question"], pid) for q in p.qas)
    return paragraphs, questions


def embed_seconds(embedder, texts: Sequence[str], batch: int) -> float:
    """Seconds the embedder alone takes for ``texts`` in batches (the peer of a build run)."""
    t0 = time.perf_counter()
    for b in range(0, len(texts), batch):
        embedder.embed_passages(texts[b : b + batch])
    return time.perf_counter() - t0


def paragraph_document(p: Paragraph) -> Document:
    """The Document a wiki build would make of one paragraph."""
    return Document(
        doc_id=f"jsquad:{p.pid}",
        source=f"jawiki:{p.title}",
        title=p.title,
        text=normalize_article(p.text),
        updated_at=UPDATED_AT,
        content_hash=hashlib.sha256(p.context.encode("utf-8")).hexdigest(),
        kind="article",
    )


def pid_of_doc(doc_id: str) -> str:
    return doc_id.removeprefix("jsquad:")


# --- metrics --------------------------------------------------------------------------------


def dedupe(ids: Sequence[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for i in ids:
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


def gold_rank(ranked_pids: Sequence[str], gold: str, depth: int = 10) -> int:
    """1-based rank of the gold paragraph in the (deduplicated) top ``depth``; 0 when absent."""
    for i, pid in enumerate(dedupe(ranked_pids)[:depth], start=1):
        if pid == gold:
            return i
    return 0


def quality(ranks: Sequence[int]) -> dict[str, float]:
    r = np.asarray(ranks)
    n = max(1, len(r))
    out = {f"R@{k}": float(((r > 0) & (r <= k)).sum() / n) for k in KS}
    out["MRR@10"] = float(np.where(r > 0, 1.0 / np.maximum(r, 1), 0.0).sum() / n)
    out["n"] = len(r)
    return out


def latency(samples_ms: Sequence[float], warmup: int = 20) -> dict[str, float]:
    s = np.asarray(samples_ms[warmup:] if len(samples_ms) > warmup else samples_ms)
    if not len(s):
        return {"p50_ms": float("nan"), "p95_ms": float("nan"), "mean_ms": float("nan"), "n": 0}
    return {
        "p50_ms": float(np.percentile(s, 50)),
        "p95_ms": float(np.percentile(s, 95)),
        "mean_ms": float(s.mean()),
        "n": len(s),
    }


# --- machine --------------------------------------------------------------------------------


def machine_info() -> dict[str, object]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu_model": cpu,
        "mem_gib": mem_gib,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


# --- query vectors -----------------------------------------------------------------------------


def cached_query_vectors(embedder, texts: Sequence[str], path: Path) -> np.ndarray:
    """Query vectors (``embed_query_vector``) of ``texts``, cached on disk by model and text.

    Only the quality runs use these (passed to the searcher as ``SearchQuery.embedding``); the
    latency runs always embed the query inside the timed call.
    """
    import sqlite3

    from tqdm import tqdm

    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE IF NOT EXISTS qvec (model TEXT, key TEXT, vec BLOB, PRIMARY KEY (model, key))"
    )
    model = embedder.info.name
    keys = [hashlib.sha1(t.encode("utf-8")).hexdigest() for t in texts]
    found = {
        k: np.frombuffer(v, dtype=np.float32)
        for k, v in db.execute("SELECT key, vec FROM qvec WHERE model=?", (model,))
    }
    missing = [i for i, k in enumerate(keys) if k not in found]
    for n, i in enumerate(tqdm(missing, desc="embedding queries", mininterval=5), start=1):
        vec = np.asarray(embedder.embed_query_vector(texts[i]), dtype=np.float32)
        found[keys[i]] = vec
        db.execute("INSERT OR REPLACE INTO qvec VALUES (?,?,?)", (model, keys[i], vec.tobytes()))
        if n % 200 == 0:
            db.commit()
    db.commit()
    db.close()
    return np.stack([found[k] for k in keys]) if keys else np.zeros((0, embedder.info.dim))
