"""The runbook corpus as the pages and the CLI use it: index a folder, search it.

One function per arrow of DESIGN.md's data flow: ``index_runbooks`` (folder -> indexes) and
``search_runbooks`` (query -> SearchOutcome). Pages call these and never touch indexes.
"""

from __future__ import annotations

import fcntl
import logging
from contextlib import contextmanager
from pathlib import Path

from core.access import LOCAL, Principal
from core.collections import allowed_collections
from core.errors import IndexStateError, InputError, WorkbenchError
from core.ingest.folder import check_path_text
from core.ingest.indexer import (
    IndexReport,
    Progress,
    index_outdated,
    resolve_allowed_folder,
    update_corpus,
)
from core.retrieval.corpus import Corpus, CorpusSpec, open_corpus, runbook_spec
from core.retrieval.searcher import Searcher, SearchOutcome, make_query
from core.settings import Settings

log = logging.getLogger(__name__)


def runbook_folder(
    settings: Settings,
    data: str | Path | None,
    check_allowed: bool = True,
    must_exist: bool = False,
) -> Path:
    """The folder to use: the sample runbooks by default; user input must be under an allowed root.
    With ``must_exist``, a folder that is not there is an error now, not at the first question."""
    check_path_text(data)
    if data is None or str(data).strip() == "":
        folder = settings.runbooks_dir.expanduser().resolve()
    elif check_allowed:
        folder = resolve_allowed_folder(data, settings.allowed_roots)
    else:
        folder = Path(data).expanduser().resolve()
    if must_exist and not folder.is_dir():
        if folder.exists():
            raise InputError(f"「{folder}」はフォルダではありません。")
        raise InputError(f"フォルダ「{folder}」が見つかりません。パスを確認してください。")
    return folder


SAMPLE_RUNBOOKS = Path(Settings.model_fields["runbooks_dir"].default)


def runbook_index_spec(settings: Settings, folder: Path | None = None) -> CorpusSpec:
    """The index of a runbook folder depends on the folder alone, not on how it was named
    (``--data``, ``WB_RUNBOOKS_DIR`` or the page): the shipped samples are ``runbooks``, any other
    folder ``runbooks-<hash of its resolved path>``."""
    folder = (folder or settings.runbooks_dir).expanduser().resolve()
    return runbook_spec(settings.model_copy(update={"runbooks_dir": SAMPLE_RUNBOOKS}), folder)


def runbook_corpus(settings: Settings, data: str | Path | None = None) -> Corpus:
    return open_corpus(
        runbook_index_spec(settings, runbook_folder(settings, data, check_allowed=False)), settings
    )


@contextmanager
def build_lock(corpus: Corpus, wait: bool = False):
    """One build at a time per corpus, across processes (the app and the CLI) and threads
    (sessions); ``wait`` queues behind a running build instead of refusing."""
    corpus.dir.mkdir(parents=True, exist_ok=True)
    with (corpus.dir / "build.lock").open("w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError as exc:
            raise IndexStateError(
                "別のインデックス構築が実行中です。完了してから再度お試しください。"
            ) from exc
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def index_runbooks(
    settings: Settings,
    data: str | Path | None = None,
    progress: Progress | None = None,
    check_allowed: bool = True,
) -> IndexReport:
    """Build or incrementally update the runbook indexes of ``data`` (default: the samples)."""
    folder = runbook_folder(settings, data, check_allowed)
    corpus = open_corpus(runbook_index_spec(settings, folder), settings)
    with build_lock(corpus):
        return update_corpus(corpus, folder, progress)


def visible_collections(
    settings: Settings, data: str | Path | None, principal: Principal
) -> frozenset[str] | None:
    """The collections of the runbook folder ``data`` that ``principal`` may see (None: all).

    Collections are the first-level folders of the configured runbook folder, so a restricted
    principal sees nothing of any other folder (a sub-folder named directly would otherwise
    make its files the ``default`` collection): other folders are the admins'."""
    if not principal.signed_in or principal.role == "admin":
        return None
    folder = runbook_folder(settings, data, check_allowed=False)
    if folder != runbook_folder(settings, None):
        return frozenset()
    return allowed_collections(principal, folder)


def runbook_stats(
    settings: Settings, data: str | Path | None, principal: Principal = LOCAL
) -> dict[str, object]:
    """The index status of the folder ``data`` as ``principal`` may see it: documents and chunks
    of their collections only (a restricted user is not told how much is hidden), and whether
    the index was built with other chunking parameters (``outdated``: the next question
    updates it)."""
    corpus = runbook_corpus(settings, data)
    stats = corpus.stats()
    stats["outdated"] = index_outdated(corpus)
    allowed = visible_collections(settings, data, principal)
    if allowed is not None:
        ids = corpus.scope(allowed).chunk_ids
        documents = {cid.rpartition("_")[0] for cid in ids}
        stats.update(documents=len(documents), chunks=len(ids), vectors=None, entities=None)
    return stats


def prepare_index(
    settings: Settings,
    data: str | Path | None = None,
    progress: Progress | None = None,
    corpus: Corpus | None = None,
) -> IndexReport | None:
    """Make the index of ``data`` ready to search: build it when it has never been built, update
    it when it was built with other chunking parameters (the first question after an upgrade;
    vectors whose text did not change are kept). ``None`` when it was ready already.

    The first question of a folder calls this (the pages and the CLI with a ``progress`` to show
    the build, which takes minutes on a large folder: the embedder is the cost). Operators
    asking their first questions together: one builds, the others wait for it. When an outdated
    index cannot be updated now (the folder is gone or unreadable), the question is answered
    from the index as it is and the update is tried again next time."""
    corpus = corpus or runbook_corpus(settings, data)
    built = corpus.store.document_count() > 0  # every question asks: one COUNT, no manifest
    if built and not index_outdated(corpus):
        return None
    folder = runbook_folder(settings, data, check_allowed=False)
    if not built:
        with build_lock(corpus, wait=True):
            if not corpus.store.document_count():
                return update_corpus(corpus, folder, progress)
        return None
    try:
        with build_lock(corpus, wait=True):
            if index_outdated(corpus):
                return update_corpus(corpus, folder, progress)
    except WorkbenchError as exc:
        log.warning("index of %s not updated to the current reader: %s", data, exc)
    return None


def search_runbooks(
    settings: Settings,
    text: str,
    limit: int = 5,
    fusion: str = "weighted",
    weights: dict[str, float] | None = None,
    data: str | Path | None = None,
    min_relevance: float = 0.0,
    rerank: bool = False,
    principal: Principal = LOCAL,
) -> SearchOutcome:
    """Search the runbook corpus of ``data`` as ``principal`` (only the collections they may
    see); builds it first when it has never been built."""
    query = make_query(
        text,
        limit=limit,
        min_relevance=min_relevance,
        rerank=rerank,
        strategies=["hybrid"],
        weights=weights or {"keyword": 0.4, "semantic": 0.6, "graph": 0.0},
    )
    corpus = runbook_corpus(settings, data)
    prepare_index(settings, data, corpus=corpus)
    collections = visible_collections(settings, data, principal)
    return Searcher(corpus).run(query, fusion=fusion, collections=collections)
