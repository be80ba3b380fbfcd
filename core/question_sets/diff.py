"""Compare two runs question by question (matched by ``question_id``, the stable id).

For each question: answer changed, citations changed (which were added / removed), flags changed
(which, from what to what), answer mode changed, error changed, question text changed, or the
question was added / removed between the runs. Citations are compared by identity (chunk id,
file, heading, document hash), in order; their scores are shown, not compared, since a score can
move by rounding without the evidence changing.

``question_set_id`` is a display label: it is shown for both runs and never compared.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from core.question_sets.runner import RunFile, RunRecord

Status = Literal["unchanged", "changed", "added", "removed"]


def citation_label(citation: dict[str, Any]) -> str:
    """``file > heading #chunk_id`` (whatever of these the citation has)."""
    file = str(citation.get("file") or citation.get("source") or "")
    heading = str(citation.get("heading") or "")
    label = " > ".join(p for p in (file, heading) if p)
    chunk = citation.get("chunk_id")
    if chunk not in (None, ""):
        label = f"{label} #{chunk}" if label else f"#{chunk}"
    return label or "（出典情報なし）"


def _identity(citation: dict[str, Any]) -> tuple[str, ...]:
    return tuple(
        str(citation.get(k) or "") for k in ("chunk_id", "file", "heading", "doc_hash", "source")
    )


@dataclass(frozen=True, slots=True)
class QuestionDiff:
    question_id: str
    status: Status
    question_text_a: str | None = None
    question_text_b: str | None = None
    answer_a: str | None = None
    answer_b: str | None = None
    answer_changed: bool = False
    citations_changed: bool = False
    citations_added: tuple[str, ...] = ()
    citations_removed: tuple[str, ...] = ()
    flags_changed: dict[str, tuple[bool | None, bool | None]] = field(default_factory=dict)
    answer_mode_changed: bool = False
    error_a: str | None = None
    error_b: str | None = None

    @property
    def question_text_changed(self) -> bool:
        return self.status == "changed" and self.question_text_a != self.question_text_b

    @property
    def error_changed(self) -> bool:
        return self.error_a != self.error_b

    def changes_ja(self) -> list[str]:
        """What changed, in Japanese (empty when unchanged)."""
        if self.status == "added":
            return ["質問が追加されました（比較元の実行に無い）"]
        if self.status == "removed":
            return ["質問が削除されました（比較先の実行に無い）"]
        out: list[str] = []
        if self.question_text_changed:
            out.append("質問文が変わりました")
        if self.error_changed:
            out.append(f"エラー: {self.error_a or 'なし'} → {self.error_b or 'なし'}")
        if self.answer_changed:
            out.append("回答が変わりました")
        if self.answer_mode_changed:
            out.append("回答モードが変わりました")
        if self.citations_changed:
            detail = [f"+ {c}" for c in self.citations_added] + [
                f"- {c}" for c in self.citations_removed
            ]
            out.append(
                "引用が変わりました" + (f"（{', '.join(detail)}）" if detail else "（順序）")
            )
        for name, (a, b) in self.flags_changed.items():
            out.append(f"フラグ {name}: {_flag(a)} → {_flag(b)}")
        return out


def _flag(value: bool | None) -> str:
    return "なし" if value is None else str(value).lower()


@dataclass(frozen=True, slots=True)
class RunDiff:
    run_a: str
    run_b: str
    question_set_id_a: str
    question_set_id_b: str
    notes: tuple[str, ...]
    questions: tuple[QuestionDiff, ...]

    @property
    def counts(self) -> dict[str, int]:
        counts = {"unchanged": 0, "changed": 0, "added": 0, "removed": 0}
        for q in self.questions:
            counts[q.status] += 1
        return counts

    @property
    def has_differences(self) -> bool:
        return any(q.status != "unchanged" for q in self.questions)

    def summary_ja(self) -> str:
        c = self.counts
        return (
            f"変化なし {c['unchanged']}件・変化あり {c['changed']}件・"
            f"追加 {c['added']}件・削除 {c['removed']}件"
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["counts"] = self.counts
        for q, raw in zip(self.questions, data["questions"], strict=True):
            raw["changes"] = q.changes_ja()
            raw["flags_changed"] = {k: list(v) for k, v in q.flags_changed.items()}
        return data


def _compare(a: RunRecord, b: RunRecord) -> QuestionDiff:
    ids_a = [_identity(c) for c in a.citations]
    ids_b = [_identity(c) for c in b.citations]
    labels_a = {_identity(c): citation_label(c) for c in a.citations}
    labels_b = {_identity(c): citation_label(c) for c in b.citations}
    flags = {
        name: (a.flags.get(name), b.flags.get(name))
        for name in dict.fromkeys([*a.flags, *b.flags])
        if a.flags.get(name) != b.flags.get(name)
    }
    diff = QuestionDiff(
        question_id=a.question_id,
        status="unchanged",
        question_text_a=a.question_text,
        question_text_b=b.question_text,
        answer_a=a.answer,
        answer_b=b.answer,
        answer_changed=a.answer != b.answer,
        citations_changed=ids_a != ids_b,
        citations_added=tuple(labels_b[i] for i in ids_b if i not in labels_a),
        citations_removed=tuple(labels_a[i] for i in ids_a if i not in labels_b),
        flags_changed=flags,
        answer_mode_changed=a.answer_mode != b.answer_mode,
        error_a=a.error,
        error_b=b.error,
    )
    changed = (
        diff.answer_changed
        or diff.citations_changed
        or bool(flags)
        or diff.answer_mode_changed
        or diff.error_changed
        or a.question_text != b.question_text
    )
    return replace(diff, status="changed") if changed else diff


def diff_runs(a: RunFile, b: RunFile) -> RunDiff:
    """Question-by-question differences from run ``a`` (before) to run ``b`` (after)."""
    notes: list[str] = []
    if a.ordinance_id != b.ordinance_id:
        notes.append(f"条例 ID が異なります（{a.ordinance_id} → {b.ordinance_id}）")
    if a.source_golden_question_pool != b.source_golden_question_pool:
        notes.append(
            "Golden Question Pool が異なります"
            f"（{a.source_golden_question_pool} → {b.source_golden_question_pool}）"
        )
    if a.target != b.target:
        notes.append(f"実行先が異なります（{a.target} → {b.target}）")
    if a.execution_sha256 != b.execution_sha256:
        notes.append("質問セットの実行内容（質問 ID・質問文など）が異なります")
    for run, label in ((a, "比較元"), (b, "比較先")):
        if run.status != "completed":
            notes.append(f"{label}の実行は完了していません（{run.status}）")
    by_id_b = {r.question_id: r for r in b.records}
    ids_a = {r.question_id for r in a.records}
    questions: list[QuestionDiff] = []
    for rec in a.records:
        other = by_id_b.get(rec.question_id)
        if other is None:
            questions.append(
                QuestionDiff(
                    rec.question_id,
                    "removed",
                    question_text_a=rec.question_text,
                    answer_a=rec.answer,
                    error_a=rec.error,
                )
            )
        else:
            questions.append(_compare(rec, other))
    for rec in b.records:
        if rec.question_id not in ids_a:
            questions.append(
                QuestionDiff(
                    rec.question_id,
                    "added",
                    question_text_b=rec.question_text,
                    answer_b=rec.answer,
                    error_b=rec.error,
                )
            )
    return RunDiff(
        run_a=a.run_id,
        run_b=b.run_id,
        question_set_id_a=a.question_set_id,
        question_set_id_b=b.question_set_id,
        notes=tuple(notes),
        questions=tuple(questions),
    )


__all__ = ["QuestionDiff", "RunDiff", "citation_label", "diff_runs"]
