"""Recall@K results of the Wikipedia QA dev-set evaluation, per index build.

The files are JSON under ``<eval_dir>/recall/`` (``recall_dir``): each one the object printed by
``python -m core wiki eval --json`` (``questions``, ``Recall@1`` … ``Recall@k``, ``MRR@10``,
``latency_ms``, ``settings`` with ``index_dir``, ``articles``, ``chunks``, ``embedder``, ``mode``,
``rerank`` …), optionally with ``created_at`` and ``settings.built_at``; a file may also hold a
list of such objects. A build is identified by its index folder and ``built_at`` (else its
embedder, article and chunk counts). Unreadable files are reported, never fatal.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pandas as pd

RECALL_KEY = re.compile(r"^Recall@(\d+)$")
MAX_FILE_BYTES = 5 * 1024 * 1024


def recall_dir(eval_dir: Path) -> Path:
    return Path(eval_dir) / "recall"


def build_label(settings: dict[str, Any]) -> str:
    folder = Path(str(settings.get("index_dir") or "wiki")).name
    built = settings.get("built_at")
    if built:
        return f"{folder} @ {built}"
    parts = [
        str(settings.get("embedder") or "?"),
        f"{settings.get('articles', '?')} 記事",
        f"{settings.get('chunks', '?')} チャンク",
    ]
    return f"{folder}（{' / '.join(parts)}）"


def _rows(result: dict[str, Any], path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    settings = result.get("settings") if isinstance(result.get("settings"), dict) else {}
    created = result.get("created_at")
    if not isinstance(created, str):
        created = (
            datetime.fromtimestamp(path.stat().st_mtime).astimezone().isoformat(timespec="seconds")
        )
    latency = result.get("latency_ms") if isinstance(result.get("latency_ms"), dict) else {}
    recalls = {
        int(m.group(1)): float(v)
        for k, v in result.items()
        if (m := RECALL_KEY.match(k)) and isinstance(v, int | float)
    }
    if not recalls:
        raise ValueError("Recall@K がありません")
    build = build_label(settings)
    summary = {
        "created_at": created,
        "build": build,
        "index_dir": settings.get("index_dir"),
        "built_at": settings.get("built_at"),
        "embedder": settings.get("embedder"),
        "articles": settings.get("articles"),
        "chunks": settings.get("chunks"),
        "mode": settings.get("mode"),
        "rerank": settings.get("rerank_used", settings.get("rerank")),
        "questions": result.get("questions"),
        **{f"Recall@{k}": v for k, v in sorted(recalls.items())},
        "MRR@10": result.get("MRR@10"),
        "latency_p50_ms": latency.get("p50"),
        "latency_p95_ms": latency.get("p95"),
        "file": path.name,
    }
    long = [
        {"created_at": created, "build": build, "mode": settings.get("mode"), "k": k, "recall": v}
        for k, v in sorted(recalls.items())
    ]
    return summary, long


def load_recall_results(
    folder: Path, start: date | None = None, end: date | None = None
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(one row per evaluation, Recall@K in long form, Japanese problems per unreadable file),
    for the evaluations made within [start, end] (date of ``created_at``)."""
    summaries: list[dict[str, Any]] = []
    longs: list[dict[str, Any]] = []
    problems: list[str] = []
    if not Path(folder).is_dir():
        return pd.DataFrame(), pd.DataFrame(), problems
    for path in sorted(Path(folder).glob("*.json")):
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise ValueError("ファイルが大きすぎます")
            data = json.loads(path.read_text(encoding="utf-8"))
            items = data if isinstance(data, list) else [data]
            for item in items:
                if not isinstance(item, dict):
                    raise ValueError("評価結果のオブジェクトではありません")
                summary, long = _rows(item, path)
                day = summary["created_at"][:10]
                if (start and day < start.isoformat()) or (end and day > end.isoformat()):
                    continue
                summaries.append(summary)
                longs.extend(long)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            problems.append(f"Recall@K の結果「{path.name}」を読み込めません（{exc}）。")

    frame = pd.DataFrame(summaries)
    if not frame.empty:
        frame = frame.sort_values("created_at").reset_index(drop=True)
    return frame, pd.DataFrame(longs), problems


def save_recall_result(eval_dir: Path, result: dict[str, Any]) -> Path:
    """Write one evaluation result (with ``created_at``) atomically; returns its path."""
    import os

    folder = recall_dir(eval_dir)
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.now().astimezone()
    record = {"created_at": now.isoformat(timespec="seconds"), **result}
    path = folder / f"recall-{now.strftime('%Y%m%dT%H%M%S%f')}.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
