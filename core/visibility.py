"""What a principal may be shown of stored answers: audit records, question-set runs, evaluations.

Answers are stored with the passages they were given (cited or not). A stored runbook answer
whose passages include a runbook outside the viewer's collections is withheld from that viewer
(its answer text quotes the passage; its excerpts are the passage): the audit drill-down does not
show the record, question-set runs and evaluation results show ``WITHHELD`` instead of the answer
and drop its citations. ``allowed`` is the viewer's collections (``None``: everything, as for
``LOCAL`` and admins, ``core.collections``); collections are those of the configured runbook
folder (``folder``), so an answer given from another folder is withheld from a restricted
viewer too. Wikipedia answers are not collection-scoped.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.collections import collection_of

if TYPE_CHECKING:
    from core.audit import AuditRecord
    from core.evaluation.results import EvaluationRun
    from core.question_sets.runner import RunFile

WITHHELD = "（閲覧できるコレクションの外の手順書に基づく回答のため、表示しません）"
RUNBOOK_PAGE = "runbook_chat"
RUNBOOK_TARGET = "runbook"


def cites_hidden(files: Iterable[str], allowed: Collection[str] | None) -> bool:
    """Whether any of the source files lies outside the allowed collections."""
    if allowed is None:
        return False
    return any(collection_of(f) not in allowed for f in files if f)


def _other_folder(data: object, folder: Path | None) -> bool:
    """Whether an answer's runbook folder (as stored) is not the configured one."""
    if folder is None or not data:
        return False
    try:
        return Path(str(data)).expanduser().resolve() != folder.expanduser().resolve()
    except (OSError, RuntimeError):
        return True


def visible_audit_record(
    record: AuditRecord, allowed: Collection[str] | None, folder: Path | None = None
) -> bool:
    """Whether the viewer may see this audit record (answer and excerpts)."""
    if allowed is None or record.page != RUNBOOK_PAGE:
        return True
    if _other_folder(record.search_config.get("data"), folder):
        return False
    return not cites_hidden((hit.file for hit in record.search_results), allowed)


def _files(citations: Iterable[Any]) -> list[str]:
    return [
        str(c.get("file", "") if isinstance(c, dict) else getattr(c, "file", "")) for c in citations
    ]


def redact_question_set_run(run: RunFile, allowed: Collection[str] | None) -> RunFile:
    """The run as the viewer may see it: withheld answers where a hidden runbook was used."""
    if allowed is None or run.target != RUNBOOK_TARGET:
        return run
    records = [
        r.model_copy(update={"answer": WITHHELD, "citations": []})
        if cites_hidden(_files(r.citations), allowed)
        else r
        for r in run.records
    ]
    return run.model_copy(update={"records": records})


def redact_evaluation_run(
    run: EvaluationRun, allowed: Collection[str] | None, folder: Path | None = None
) -> EvaluationRun:
    """The evaluation as the viewer may see it: withheld cases where a hidden runbook was used
    (answer, citations, check details and the judge's reasoning all quote the passages)."""
    if allowed is None or run.settings.get("target", RUNBOOK_TARGET) != RUNBOOK_TARGET:
        return run
    elsewhere = _other_folder(run.settings.get("runbooks_dir"), folder)
    results = []
    for case in run.results:
        if elsewhere or cites_hidden(_files(case.citations), allowed):
            scores = case.scores.model_copy(update={"reasoning": ""}) if case.scores else None
            checks = [c.model_copy(update={"detail": ""}) for c in case.checks]
            case = case.model_copy(
                update={
                    "answer": WITHHELD,
                    "citations": [],
                    "checks": checks,
                    "scores": scores,
                    "warnings": [],
                    "banner": None,
                }
            )
        results.append(case)
    return run.model_copy(update={"results": results})


__all__ = [
    "WITHHELD",
    "cites_hidden",
    "redact_evaluation_run",
    "redact_question_set_run",
    "visible_audit_record",
]
