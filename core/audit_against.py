"""The local audit log against the SIEM's copy: what was edited or removed after shipping.

``verify_against(logs_dir, export)`` reads an export of the SIEM's copy (JSONL, one shipped
record per line; Elastic hits with ``_source``, Splunk HEC events or search results with
``event`` / ``result._raw``, and raw syslog lines are unwrapped) and names, in Japanese with the
local file and line:

- a shipped record whose local line now differs (edited, hash kept or recomputed);
- a shipped record that is gone locally (the line after it, when there is one, is named);
- a local line that is no longer JSON;
- two different records under one hash in the export (the local line changed between sends).

Duplicates of one record (at-least-once delivery) are expected and ignored. Local records the
export does not hold yet are counted as not shipped, not as problems. Exit codes as
``audit verify``: 0 consistent, 1 differences, 2 the export could not be read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.audit import LOG_PREFIX
from core.audit_verify import INTACT, TAMPERED, UNCHECKED, Problem


@dataclass(slots=True)
class AgainstReport:
    export: Path
    exported: int = 0  # distinct records in the export
    matched: int = 0
    unshipped: int = 0  # local records the export does not hold (not shipped yet)
    problems: list[Problem] = field(default_factory=list)
    error: str | None = None

    @property
    def exit_code(self) -> int:
        if self.error:
            return UNCHECKED
        return TAMPERED if self.problems else INTACT

    def messages_ja(self) -> list[str]:
        if self.error:
            return [f"確認できません: {self.error}"]
        out = [p.message_ja() for p in self.problems]
        summary = f"SIEM の写し {self.export.name}: {self.exported} 件中 {self.matched} 件がローカルと一致"
        if self.unshipped:
            summary += f"、ローカルにだけある記録 {self.unshipped} 件（未送信）"
        out.append(summary + ("。" if not self.problems else f"、相違 {len(self.problems)} 件。"))
        return out


def _canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def unwrap(line: str) -> dict[str, Any] | None:
    """The audit record inside one exported line, whatever the SIEM wrapped it in."""
    text = line.strip()
    if not text:
        return None
    data: Any
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        start = text.find("\ufeff{")  # a raw RFC 5424 line: the MSG after the BOM
        start = start + 1 if start >= 0 else text.find(" {") + 1
        if start <= 0:
            return None
        try:
            data = json.loads(text[start:])
        except json.JSONDecodeError:
            return None
    for _ in range(3):
        if not isinstance(data, dict) or "hash" in data:
            break
        inner = data.get("_source") or data.get("event") or data.get("result")
        if isinstance(inner, dict) and isinstance(inner.get("_raw"), str):
            return unwrap(inner["_raw"])
        data = inner
    return data if isinstance(data, dict) and isinstance(data.get("hash"), str) else None


@dataclass(frozen=True, slots=True)
class _Local:
    file: str
    line: int
    record: dict[str, Any]


def _read_local(logs_dir: Path, report: AgainstReport) -> list[_Local]:
    rows: list[_Local] = []
    for path in sorted(Path(logs_dir).glob(f"{LOG_PREFIX}*.jsonl")):
        with path.open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    record = None
                if isinstance(record, dict):
                    rows.append(_Local(path.name, number, record))
                else:
                    report.problems.append(
                        Problem(
                            path.name, number, "JSON として読めません（送信後の書き換えの可能性）"
                        )
                    )
    return rows


def verify_against(logs_dir: Path, export: Path) -> AgainstReport:
    """Compare the local log with the SIEM's exported copy (see the module docstring)."""
    report = AgainstReport(Path(export))
    exported: dict[str, tuple[int, dict[str, Any]]] = {}
    try:
        with Path(export).open(encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, start=1):
                record = unwrap(line)
                if record is None:
                    continue
                first = exported.setdefault(record["hash"], (number, record))
                if first[0] != number and _canonical(first[1]) != _canonical(record):
                    report.problems.append(
                        Problem(
                            report.export.name,
                            number,
                            f"{first[0]} 行目と同じ hash で内容が異なります"
                            "（送信の合間にローカルの行が書き換えられた）",
                        )
                    )
    except OSError as exc:
        report.error = f"SIEM の写し「{export}」を読めません（{exc}）。"
        return report
    if not exported:
        report.error = (
            f"SIEM の写し「{export}」に監査ログの記録がありません（形式を確認してください）。"
        )
        return report
    report.exported = len(exported)
    try:
        local = _read_local(logs_dir, report)
    except OSError as exc:
        report.error = f"ローカルの監査ログを読めません（{exc}）。"
        return report
    by_hash = {r.record.get("hash"): r for r in local}
    by_prev = {r.record.get("prev_hash"): r for r in local}
    for number, record in sorted(exported.values(), key=lambda e: e[0]):
        digest = record["hash"]
        mine = by_hash.get(digest)
        if mine is not None:
            if _canonical(mine.record) == _canonical(record):
                report.matched += 1
            else:
                report.problems.append(
                    Problem(
                        mine.file,
                        mine.line,
                        f"送信後に編集されています（SIEM の写し {number} 行目と内容が異なります）",
                    )
                )
            continue
        same_place = by_prev.get(record.get("prev_hash"))
        after = by_prev.get(digest)
        if same_place is not None and same_place.record.get("hash") not in exported:
            reason = f"送信後に書き換えられています（SIEM の写し {number} 行目の記録と異なります）"
            report.problems.append(Problem(same_place.file, same_place.line, reason))
        elif after is not None:
            reason = (
                f"この行の直前にあった送信済みの記録が削除されています（SIEM の写し {number} 行目）"
            )
            report.problems.append(Problem(after.file, after.line, reason))
        else:
            day = f"{LOG_PREFIX}{str(record.get('timestamp', ''))[:10]}.jsonl"
            reason = (
                f"送信済みの記録がローカルにありません（削除。SIEM の写し {number} 行目、"
                f"時刻 {record.get('timestamp', '不明')}）"
            )
            report.problems.append(Problem(day, None, reason))
    named = {(p.file, p.line) for p in report.problems}
    report.unshipped = sum(
        1 for r in local if r.record.get("hash") not in exported and (r.file, r.line) not in named
    )
    return report
