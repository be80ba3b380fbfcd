"""Wikipedia QA page helpers (Streamlit-only): the background build job and answer rendering.

A build runs in a background thread of the server process, so that the user can leave the page
(or ask questions) while it runs and come back to its progress. If the server stops mid-build,
the next build of the same sources resumes from the last finished batch (the index folder's
embedding cache); the page offers that resume from ``wiki_status().interrupted``.
"""

from __future__ import annotations

import html
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from core.errors import PathNotAllowedError, WorkbenchError
from core.generation.citations import highlight_html
from core.ingest.folder import check_path_text
from core.ingest.wikipedia import SourceSpec, parse_sources
from core.schemas.answer import Answer, Citation
from core.settings import Settings
from core.wiki.index import WikiBuildReport, build_wiki_index, served_titles, wiki_dir
from core.wiki.qa import answer_body, reference_line

log = logging.getLogger(__name__)

MODE_LABELS = {
    "llm": "LLM 回答",
    "extractive": "抽出型回答（LLM 不使用・検索した文をそのまま引用）",
    "template": "該当なし",
}


def allowed_source_roots(settings: Settings) -> list[Path]:
    """Where page users may point a file source: the allowed roots and the data sets folder
    (``WB_DATASETS_DIR``) when one is configured."""
    datasets = [settings.datasets_dir] if settings.datasets_dir is not None else []
    return [*settings.allowed_roots, *datasets]


JSQUAD_VALID_PARTS = ("jsquad-v1.3", "valid-v1.3.json")
DATASETS_HINT_JA = (  # Markdown (st.caption)
    "JSQuAD（JGLUE v1.3、CC BY-SA 4.0）で試すには、https://github.com/yahoojapan/JGLUE から"
    "取得した `jsquad-v1.3/valid-v1.3.json` を置いたフォルダを `WB_DATASETS_DIR`"
    "（環境変数または `.env`）に設定するか、ソースに `jsquad:<ファイルのパス>` を入力してください"
    "（画面から読めるのは `WB_ALLOWED_ROOTS` と `WB_DATASETS_DIR` の下のファイルです）。"
)


def default_build_source(settings: Settings) -> str | None:
    """``jsquad:<path>`` of JSQuAD valid in the data sets folder, or None when it is not there."""
    path = settings.dataset_path(*JSQUAD_VALID_PARTS)
    return f"jsquad:{path}" if path is not None else None


def check_page_sources(settings: Settings, text: str) -> list[SourceSpec]:
    """Parse the page's source field; local files must lie under an allowed root."""
    check_path_text(text)
    specs = parse_sources(text)
    roots = [r.resolve() for r in allowed_source_roots(settings)]
    for spec in specs:
        if spec.kind == "hf":
            continue
        path = spec.path.resolve()
        if not any(path == r or path.is_relative_to(r) for r in roots):
            allowed = "、".join(str(r) for r in roots)
            raise PathNotAllowedError(
                f"ソース「{spec.raw}」は許可された場所の外にあります。許可されている場所: {allowed}"
                "（WB_ALLOWED_ROOTS で追加できます）"
            )
    return specs


# --- the background build ----------------------------------------------------------------------


@dataclass
class BuildJob:
    sources: list[str]
    max_articles: int | None
    started: float = field(default_factory=time.time)
    phase: str = "開始しています"
    done: int = 0
    total: int = 0
    first_at: tuple[float, int] | None = None  # (time, done) of the first embedding update
    finished: bool = False
    error: str | None = None
    report: WikiBuildReport | None = None
    thread: threading.Thread | None = None

    def update(self, done: int, total: int, message: str) -> None:
        self.phase = message
        if total > 1:
            if self.first_at is None:
                self.first_at = (time.time(), done)
            self.done, self.total = done, total
        elif total == 1 and done == 1 and self.total:
            self.done = self.total

    @property
    def fraction(self) -> float:
        return min(1.0, self.done / self.total) if self.total else 0.0

    @property
    def rate(self) -> float | None:
        """Chunks per second since embedding began (cached batches included)."""
        if self.first_at is None:
            return None
        t0, d0 = self.first_at
        elapsed = time.time() - t0
        return (self.done - d0) / elapsed if elapsed > 1 and self.done > d0 else None

    def progress_text(self) -> str:
        if not self.total:
            return self.phase
        # The count is of embedding inputs (passage windows, several per chunk), not of chunks.
        text = f"{self.phase}（{self.done:,} / {self.total:,} 件"
        rate = self.rate
        if rate:
            remaining = (self.total - self.done) / rate
            text += f"・{rate:.1f} 件/秒・残り約 {_duration(remaining)}"
        return text + "）"


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} 秒"
    if seconds < 3600:
        return f"{seconds // 60} 分 {seconds % 60} 秒"
    return f"{seconds // 3600} 時間 {seconds % 3600 // 60} 分"


_jobs: dict[str, BuildJob] = {}
_jobs_lock = threading.Lock()


GENERIC_EXAMPLE = "例: 記事の内容について質問してください"


def example_question(settings: Settings) -> str:
    """The question box's example: about an article the served index holds (so that it can be
    answered), else a wording that promises nothing."""
    titles = served_titles(settings)
    return f"例: {titles[0]}とは何か。" if titles else GENERIC_EXAMPLE


def rerank_unavailable(settings: Settings) -> str | None:
    """Why the cross-encoder cannot rerank here (no local model, no library), or None."""
    from core.retrieval.rerank import load_reranker

    model, reason = load_reranker(settings.rerank_model)
    return None if model is not None else reason


def current_job(settings: Settings) -> BuildJob | None:
    with _jobs_lock:
        return _jobs.get(str(wiki_dir(settings)))


def start_build(
    settings: Settings, sources: list[SourceSpec], max_articles: int | None
) -> BuildJob:
    """Start a build in a background thread (one per index folder in this server)."""
    key = str(wiki_dir(settings))
    with _jobs_lock:
        running = _jobs.get(key)
        if running is not None and not running.finished:
            raise WorkbenchError("この画面から開始した構築が実行中です。完了までお待ちください。")
        job = BuildJob([s.raw for s in sources], max_articles)

        def run() -> None:
            try:
                job.report = build_wiki_index(
                    settings, sources, max_articles=max_articles, progress=job.update
                )
            except WorkbenchError as exc:
                job.error = exc.user_message
            except Exception as exc:  # shown to the user without a traceback, logged in full
                log.exception("wiki build failed")
                job.error = f"構築に失敗しました（{type(exc).__name__}）。もう一度お試しください。"
            finally:
                job.finished = True

        job.thread = threading.Thread(target=run, name="wiki-build", daemon=True)
        _jobs[key] = job
        job.thread.start()
        return job


# --- rendering -----------------------------------------------------------------------------------


def safe_markdown(text: str) -> str:
    """Markdown with HTML escaped and images neutralized (model and document text are untrusted)."""
    return html.escape(text, quote=False).replace("![", "!\\[").replace("\n", "  \n")


def reference_html(ref: Citation, terms: list[str]) -> str:
    """The chunk text with the query terms marked (escaped) and a link to the article."""
    link = (
        f'<a href="{html.escape(ref.url or "")}" target="_blank" rel="noopener noreferrer">'
        f"Wikipedia で「{html.escape(ref.heading)}」を開く</a>"
    )
    return (
        f'<div class="wiki-chunk">{highlight_html(ref.text, terms)}</div>'
        f'<div class="wiki-link">{link}</div>'
    )


def render_answer(answer: Answer) -> None:
    for warning in answer.warnings:
        st.warning(warning)
    if answer.error:
        st.error(answer.error)
        return
    if not answer.found:
        st.info(answer.answer)
        return
    if answer.banner:
        st.error(answer.banner)
    st.markdown(safe_markdown(answer_body(answer)))
    st.markdown("**" + safe_markdown(reference_line(answer)) + "**")
    meta = [MODE_LABELS.get(answer.answer_mode, answer.answer_mode)]
    meta.append(
        "検索: "
        + (
            "ハイブリッド（BM25＋ベクトル）"
            if answer.retrieval.get("mode") == "hybrid"
            else "ベクトル"
        )
    )
    if answer.model:
        meta.append(f"モデル {answer.model}")
        meta.append(f"{answer.token_usage.get('total_tokens', 0)} トークン")
    meta.append(f"{answer.processing_time_sec:.2f} 秒")
    st.caption(" ／ ".join(meta))
    fallback = answer.retrieval.get("rerank_fallback")
    if fallback:
        st.caption(f"リランクなし（{fallback}）: 検索順のまま上位を使用しました。")
    for ref in answer.citations:
        if ref.cited:
            with st.expander(f"[{ref.n}] {ref.ref}（スコア {ref.score:.2f}）"):
                st.markdown(reference_html(ref, answer.query_terms), unsafe_allow_html=True)
