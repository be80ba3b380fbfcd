"""The search action (VoI_search): look a slot up in an attached corpus.

``RunbookEvidence`` queries the runbook corpus through ``core.runbooks.search_runbooks``; any
other searcher (the Wikipedia QA pipeline, say) can be attached with ``CallableEvidence``.
Evidence found becomes a slot candidate with ``source_kind="retrieval"`` (its fact stays
pending until the user confirms it) and cites ``file > heading``. ``run_search`` also returns
every score (the retrievability estimate is the QPP of that list, ``core.interview.adaptation``)
and the measured latency (the cost_search estimate).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from core.access import LOCAL, Principal
from core.errors import IndexStateError, WorkbenchError
from core.interview.domains import SlotSpec
from core.interview.extraction import SlotCandidate, candidate
from core.interview.parsing import ParsedValue, parse_value, sentences
from core.settings import Settings

log = logging.getLogger(__name__)
MIN_SCORE = 0.3
EXCERPT_CHARS = 240


@dataclass(frozen=True, slots=True)
class Evidence:
    text: str
    source: str
    heading: str
    score: float  # 0..1
    chunk_id: str = ""

    @property
    def citation(self) -> str:
        return f"{self.source} > {self.heading}" if self.heading else self.source


class EvidenceSource(Protocol):
    name: str
    label: str

    def search(self, query: str, limit: int) -> list[Evidence]: ...


class RunbookEvidence:
    """The runbook corpus (the sample runbooks unless ``data`` names another folder), searched
    as ``principal`` (only the runbook collections they may see)."""

    name = "runbooks"
    label = "手順書コーパス"

    def __init__(
        self, settings: Settings, data: str | Path | None = None, principal: Principal = LOCAL
    ) -> None:
        self.settings = settings
        self.data = data
        self.principal = principal

    def search(self, query: str, limit: int) -> list[Evidence]:
        from core.runbooks import runbook_corpus, search_runbooks

        if not runbook_corpus(self.settings, self.data).store.manifest():
            # building the index takes minutes: never inside an interview turn
            raise IndexStateError(
                "手順書インデックスが未構築です。`python -m core index runbooks` で構築してください。"
            )
        outcome = search_runbooks(
            self.settings, query, limit=limit, data=self.data, principal=self.principal
        )
        out = []
        for hit in outcome.hits:
            if hit.raw.get("bm25", 0.0) <= 0:  # no query term at all: not evidence
                continue
            c = hit.chunk
            out.append(
                Evidence(c.body, c.source, c.heading or "", min(1.0, float(hit.score)), c.chunk_id)
            )
        return out


class WikiEvidence:
    """The Wikipedia QA index (built with ``python -m core wiki build``)."""

    name = "wiki"
    label = "Wikipedia コーパス"

    def __init__(self, settings: Settings, index_dir: str | Path | None = None) -> None:
        self.settings = settings
        self.index_dir = index_dir

    def search(self, query: str, limit: int) -> list[Evidence]:
        from core.wiki.index import wiki_status
        from core.wiki.search import search_wiki

        if not wiki_status(self.settings, self.index_dir).built:
            raise IndexStateError(
                "Wikipedia インデックスが未構築です。`python -m core wiki build` で構築してください。"
            )
        found = search_wiki(
            self.settings, query, topn=limit, rerank=False, index_dir=self.index_dir
        )
        return [
            Evidence(
                h.chunk.body,
                h.chunk.source,
                h.chunk.title,
                min(1.0, float(h.score)),
                h.chunk.chunk_id,
            )
            for h in found.evidence
        ]


def evidence_source(
    settings: Settings, corpus: str | None, principal: Principal = LOCAL
) -> EvidenceSource | None:
    """The evidence source named on the CLI or the page: "runbooks" (searched as
    ``principal``), "wiki" or none."""
    if corpus == "runbooks":
        return RunbookEvidence(settings, principal=principal)
    if corpus == "wiki":
        return WikiEvidence(settings)
    return None


class CallableEvidence:
    """Any searcher as a function ``(query, limit) -> list[Evidence]``."""

    def __init__(self, name: str, label: str, fn: Callable[[str, int], list[Evidence]]) -> None:
        self.name, self.label, self._fn = name, label, fn

    def search(self, query: str, limit: int) -> list[Evidence]:
        return self._fn(query, limit)


def _excerpt(spec: SlotSpec, text: str) -> str:
    words = list(spec.cues)
    for f in spec.fields:
        words.extend(f.cues)
    for g in spec.terms:
        words.extend(re.escape(t) for t in g)
    picked = [s for s in sentences(text) if any(re.search(w, s, re.IGNORECASE) for w in words)]
    excerpt = "。".join(picked) if picked else text
    return excerpt[:EXCERPT_CHARS]


@dataclass(slots=True)
class SlotSearch:
    """One search for a slot: the candidates, every returned score (for the QPP), the page read,
    the measured latency and a warning when the search failed."""

    candidates: list[SlotCandidate]
    scores: list[float]
    page: int = 0
    latency_s: float = 0.0
    warning: str | None = None


def run_search(
    source: EvidenceSource, spec: SlotSpec, topic: str, limit: int = 3, page: int = 0
) -> SlotSearch:
    """Search the corpus for ``spec``; ``page`` > 0 reads the next results of the same query
    (a repeated search never re-reads what the earlier one returned)."""
    query = f"{topic} {spec.search_hint or spec.label}".strip()
    t0 = time.perf_counter()
    try:
        found = source.search(query, limit * (page + 1))[limit * page :]
    except (WorkbenchError, OSError, ValueError, RuntimeError) as exc:
        log.warning("evidence search failed: %s", exc)
        warning = f"{source.label}を検索できませんでした（{getattr(exc, 'user_message', exc)}）"
        return SlotSearch([], [], page, time.perf_counter() - t0, warning)
    latency = time.perf_counter() - t0
    hits = [e for e in found if e.score >= MIN_SCORE]
    out: list[SlotCandidate] = []
    for ev in hits:
        if spec.type == "links":
            value = ParsedValue(
                text=ev.citation, items=[{"ref": ev.citation}], normalized_match=1.0
            )
        else:
            value = parse_value(spec, _excerpt(spec, ev.text))
        if value.normalized_match <= 0:
            continue
        out.append(
            candidate(spec, value, round(ev.score, 4), "retrieval", ev.citation, "retrieval")
        )
        if spec.type not in ("links", "list", "sequence") or len(out) >= 2:
            break
    return SlotSearch(out, [round(float(e.score), 4) for e in found], page, latency)


def search_slot(
    source: EvidenceSource, spec: SlotSpec, topic: str, limit: int = 3
) -> tuple[list[SlotCandidate], str | None]:
    """Candidates for ``spec`` from the corpus, and a warning when the search failed."""
    found = run_search(source, spec, topic, limit)
    return found.candidates, found.warning
