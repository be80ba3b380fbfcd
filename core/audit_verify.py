"""Verification of the audit log: every day, every line, the heads and the chain's anchor.

``verify_log`` checks the whole chain (all days, in order) and names each problem in Japanese
with its file and line: an edited line (its HMAC no longer holds), a deleted, inserted or
reordered line (``prev_hash`` breaks), a truncated line, a forged append or a rewritten chain
(made without the key: the HMAC fails), a record without a key after keyed ones, a missing day
(the next day's first record points at a record that is not there), a deleted log with or
without its head (the anchor beside the keys names the chain's tip), a head without its log, a
head or anchor that was rewritten. Exit codes: 0 intact, 1 tampered, 2 could not check (no key,
unreadable file). ``verify_file`` checks one day on its own (the dashboard's per-day status).

Records from before keyed logs (no ``key_id``) are checked as the per-day sha256 chain they were.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.audit import (
    GENESIS,
    LOG_PREFIX,
    ROTATION_MODE,
    _head_message,
    _head_path,
    default_keyring,
    record_hash,
)
from core.audit_keys import AuditKeyError, KeyRing, anchor_path, keys_dir_for, read_anchor

INTACT, TAMPERED, UNCHECKED = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int | None  # 1-based; None for the file as a whole
    reason: str  # Japanese

    def message_ja(self) -> str:
        where = f"{self.file} {self.line} 行目" if self.line else self.file
        return f"{where}: {self.reason}"


@dataclass(slots=True)
class FileCheck:
    path: Path
    lines: int = 0
    last_hash: str | None = None
    keyed: bool = False  # the file holds keyed records
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def message_ja(self) -> str:
        if self.ok:
            return f"{self.path.name}: {self.lines} 行、署名とチェーンは正常です。"
        return "; ".join(p.message_ja() for p in self.problems)


@dataclass(slots=True)
class ChainState:
    """What the next record must link to and be signed with."""

    prev: str = GENESIS
    key_id: str | None = None  # the key in force (changes only after a rotation record)
    keyed_seen: bool = False


def _parse_lines(path: Path, check: FileCheck) -> list[tuple[int, dict[str, Any] | None]]:
    data = path.read_bytes()
    lines = data.split(b"\n")
    trailing_ok = data.endswith(b"\n") or not data
    if lines and lines[-1] == b"":
        lines = lines[:-1]
    out: list[tuple[int, dict[str, Any] | None]] = []
    for number, raw in enumerate(lines, start=1):
        try:
            record = json.loads(raw.decode("utf-8"))
            out.append((number, record if isinstance(record, dict) else None))
        except (UnicodeDecodeError, json.JSONDecodeError):
            last = number == len(lines) and not trailing_ok
            reason = "行が途中で切れています" if last else "JSON として読めません"
            check.problems.append(Problem(path.name, number, reason))
            out.append((number, None))
    return out


def _check_record(
    number: int, record: dict[str, Any], state: ChainState, keys: KeyRing | None, check: FileCheck
) -> bool:
    """Check one record against the chain state; False stops this file's check."""
    name = check.path.name
    key_id = record.get("key_id")
    if key_id is None and state.keyed_seen:
        check.problems.append(
            Problem(name, number, "鍵の無い記録が鍵付きの記録の後にあります（偽造された行）")
        )
        return False
    if record.get("prev_hash") != state.prev:
        check.problems.append(
            Problem(name, number, "前の記録とのチェーンが一致しません（行の削除・挿入・並べ替え）")
        )
        return False
    if key_id is not None:
        if keys is None or key_id not in keys.keys:
            raise AuditKeyError(f"監査ログの鍵 {key_id} がありません（{name} {number} 行目）。")
        if state.key_id is not None and key_id != state.key_id:
            check.problems.append(
                Problem(name, number, f"署名鍵 {key_id} が鍵の交替記録と一致しません")
            )
            return False
    if record.get("hash") != record_hash(record, keys):
        reason = (
            "署名が一致しません（行の編集、または鍵を持たない者による書き換え・追記）"
            if key_id is not None
            else "内容がハッシュと一致しません（行の編集）"
        )
        check.problems.append(Problem(name, number, reason))
        return False
    state.prev = record["hash"]
    if key_id is not None:
        state.keyed_seen = check.keyed = True
        state.key_id = record.get("rotated_to") if _is_rotation(record) else key_id
    return True


def _is_rotation(record: dict[str, Any]) -> bool:
    return record.get("answer_mode") == ROTATION_MODE and bool(record.get("rotated_to"))


def _check_head(check: FileCheck, keys: KeyRing | None) -> None:
    name = check.path.name
    head = _head_path(check.path)
    if not head.exists():
        if check.keyed:
            check.problems.append(
                Problem(name, None, "署名付きの末尾情報（.head）が削除されています")
            )
        return
    try:
        state = json.loads(head.read_text(encoding="utf-8") or "{}")
    except (OSError, json.JSONDecodeError):
        state = None
    if not isinstance(state, dict):
        check.problems.append(Problem(head.name, None, "末尾情報（.head）が読めません"))
        return
    if check.keyed:
        message = _head_message(name, int(state.get("lines", -1)), str(state.get("hash")))
        key_id = str(state.get("key_id"))
        if keys is None or not keys.check(message, str(state.get("mac", "")), key_id):
            check.problems.append(
                Problem(head.name, None, "末尾情報（.head）の署名が一致しません（書き換え）")
            )
            return
    if state and (state.get("lines") != check.lines or state.get("hash") != check.last_hash):
        check.problems.append(
            Problem(name, check.lines + 1, "末尾の行が削除されたか、切り詰められています")
        )


def _check_file(path: Path, state: ChainState, keys: KeyRing | None) -> FileCheck:
    check = FileCheck(path)
    if not state.keyed_seen:
        state.prev = GENESIS  # unkeyed (version-1) days each started their own chain
    for number, record in _parse_lines(path, check):
        if record is None:
            if not check.problems:
                check.problems.append(Problem(path.name, number, "記録として読めません"))
            break
        if not _check_record(number, record, state, keys, check):
            break
        check.lines = number
        check.last_hash = record["hash"]
    if not check.problems:
        _check_head(check, keys)
    return check


@dataclass(slots=True)
class LogReport:
    files: list[FileCheck] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    error: str | None = None  # could not check (Japanese)

    @property
    def exit_code(self) -> int:
        if self.error:
            return UNCHECKED
        return TAMPERED if self.problems else INTACT

    @property
    def lines(self) -> int:
        return sum(f.lines for f in self.files)

    def messages_ja(self) -> list[str]:
        if self.error:
            return [f"確認できません: {self.error}"]
        if not self.files and not self.problems:
            return ["監査ログはまだありません（記録が 1 件も無い状態です）。"]
        out = [p.message_ja() for p in self.problems]
        if not self.problems:
            out.append(f"{len(self.files)} 日分・{self.lines} 行、署名とチェーンはすべて正常です。")
        return out


def _day_files(logs_dir: Path) -> tuple[list[Path], list[Path]]:
    logs = sorted(Path(logs_dir).glob(f"{LOG_PREFIX}*.jsonl"))
    orphans = [
        h
        for h in sorted(Path(logs_dir).glob(f"{LOG_PREFIX}*.jsonl.head"))
        if not h.with_name(h.name[: -len(".head")]).exists()
    ]
    return logs, orphans


def verify_log(logs_dir: Path, keys: KeyRing | None = None) -> LogReport:
    """Check every day of ``logs_dir`` in order, its heads and the anchor of the chain's tip."""
    report = LogReport()
    try:
        keys = keys or default_keyring(logs_dir, create=False)
    except AuditKeyError as exc:
        logs, _ = _day_files(logs_dir)
        if logs:
            report.error = exc.user_message
        return report
    logs, orphans = _day_files(logs_dir)
    for head in orphans:
        report.problems.append(
            Problem(head.name, None, "ログが削除されています（末尾情報 .head だけが残っています）")
        )
    state = ChainState()
    try:
        for path in logs:
            check = _check_file(path, state, keys)
            report.files.append(check)
            report.problems.extend(check.problems)
            if check.problems:
                state = ChainState(keyed_seen=state.keyed_seen)  # resynchronise on the next day
                state.prev = _first_prev(logs, path)
    except (OSError, AuditKeyError) as exc:
        message = exc.user_message if isinstance(exc, AuditKeyError) else str(exc)
        report.error = message
        return report
    _check_anchor(report, logs_dir, keys)
    return report


def _first_prev(logs: list[Path], after: Path) -> str:
    """The next day's own ``prev_hash`` (after a broken day, carry on from what it claims)."""
    later = [p for p in logs if p.name > after.name]
    if not later:
        return GENESIS
    try:
        with later[0].open("rb") as fh:
            return str(json.loads(fh.readline()).get("prev_hash"))
    except (OSError, ValueError, AttributeError):
        return GENESIS


def _check_anchor(report: LogReport, logs_dir: Path, keys: KeyRing) -> None:
    keyed = [f for f in report.files if f.keyed]
    keys_dir = keys.path.parent if keys.path else keys_dir_for(logs_dir)
    anchor = read_anchor(anchor_path(keys_dir, logs_dir), keys)
    if anchor is None:
        if keyed:
            report.problems.append(
                Problem("（鍵の保管場所）", None, "チェーンの末尾を示すアンカーがありません")
            )
        return
    if not anchor:
        report.problems.append(
            Problem("（鍵の保管場所）", None, "アンカーの署名が一致しません（書き換え）")
        )
        return
    name, lines, tip = str(anchor["file"]), int(anchor["lines"]), str(anchor["hash"])
    by_name = {f.path.name: f for f in report.files}
    if name not in by_name:
        report.problems.append(
            Problem(
                name, None, "最新の日のログが削除されています（アンカーが指すファイルがありません）"
            )
        )
        return
    if report.files and report.files[-1].problems:
        return  # the newest day is broken already: that is the finding
    last = keyed[-1] if keyed else None
    if last is None or last.path.name != name:
        report.problems.append(
            Problem(
                name, None, "アンカーが指す最新の日より後の記録があるか、最新の記録が欠けています"
            )
        )
    elif (last.lines, last.last_hash) != (lines, tip) and not last.problems:
        report.problems.append(
            Problem(
                name,
                last.lines + 1,
                f"末尾の記録が削除されています（{lines} 行のはずが {last.lines} 行）",
            )
        )


def verify_file(path: Path, keys: KeyRing | None = None) -> FileCheck:
    """One day on its own: its lines, its chain from its own first ``prev_hash``, its head."""
    try:
        keys = keys or default_keyring(path.parent, create=False)
    except AuditKeyError:
        keys = None
    state = ChainState()
    try:
        with path.open("rb") as fh:
            first = json.loads(fh.readline() or b"{}")
        if isinstance(first, dict) and first.get("key_id") is not None:
            state = ChainState(prev=str(first.get("prev_hash")), keyed_seen=True)
        return _check_file(path, state, keys)
    except (OSError, ValueError) as exc:
        return FileCheck(path, problems=[Problem(path.name, None, f"読み込めません: {exc}")])
    except AuditKeyError as exc:
        return FileCheck(path, problems=[Problem(path.name, None, exc.user_message)])
