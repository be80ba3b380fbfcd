"""Golden Question Pools: frozen assets, verified by checksum before every use.

A pool is ``<golden_dir>/<pool_id>.json``, frozen by ``<pool_id>.json.sha256`` beside it (the
``sha256sum`` format, so ``sha256sum -c`` verifies it too). Every use verifies the checksum
first: a pool whose bytes changed is refused (a changed pool is a new pool version, never an
edit). The pool file::

    {
      "pool_id": "A-v1.1",                       # must equal the file name's stem
      "title": "...", "description": "...",
      "placeholders": {"ordinance_name": "..."},  # names usable as {name} in templates
      "features": {"penalties": "罰則の規定がある", ...},   # structure vocabulary
      "questions": [
        {"question_id": "A-11-Q1", "category": "罰則",
         "template": "{ordinance_name}の罰則規定について…", "requires": ["penalties"]}
      ]
    }

Generating a customized set from a pool is ``core.question_sets.generation``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import ContractError, InputError
from core.question_sets.contract import (
    ARTIFACT,
    Issue,
    parse_json_bytes,
    read_bytes,
    write_atomic,
)

POOL_ID_FORM = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
MAX_POOL_BYTES = 2 * 1024 * 1024
# The pool offered first: questions over the sample runbooks the workbench ships (data/runbooks).
DEFAULT_POOL_ID = "RB-v1.0"


class GoldenPoolError(InputError):
    """A pool is missing, unrecorded, tampered with, or malformed."""


# --- pools -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PoolQuestion:
    question_id: str
    category: str
    template: str
    requires: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GoldenPool:
    pool_id: str
    title: str
    description: str
    placeholders: dict[str, str]
    features: dict[str, str]
    questions: tuple[PoolQuestion, ...]
    sha256: str
    path: Path


@dataclass(frozen=True, slots=True)
class PoolEntry:
    """One pool as listed for choosing: ``ok`` False says why it cannot be used."""

    pool_id: str
    path: Path
    ok: bool
    message: str
    title: str = ""
    question_count: int = 0


def _check_pool_id(pool_id: str) -> str:
    if not isinstance(pool_id, str) or not POOL_ID_FORM.match(pool_id):
        raise GoldenPoolError(
            f"Golden Question Pool の ID が不正です: 「{pool_id}」"
            "（英数字で始まり、英数字・「.」「_」「-」だけを使えます）"
        )
    return pool_id


def pool_path(golden_dir: Path, pool_id: str) -> Path:
    return Path(golden_dir) / f"{_check_pool_id(pool_id)}.json"


def checksum_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def recorded_checksum(path: Path) -> str | None:
    """The checksum recorded beside ``path`` (``sha256sum`` format), or None when there is none."""
    sidecar = checksum_path(path)
    if not sidecar.is_file():
        return None
    text = sidecar.read_text(encoding="utf-8", errors="replace").strip()
    digest = text.split()[0].lower() if text else ""
    return digest if re.fullmatch(r"[0-9a-f]{64}", digest) else ""


def verified_pool_bytes(path: Path) -> tuple[bytes, str]:
    """The pool file's bytes after checking them against the recorded checksum."""
    name = path.stem
    if not path.is_file():
        raise GoldenPoolError(f"Golden Question Pool「{name}」が見つかりません（{path}）。")
    expected = recorded_checksum(path)
    if expected is None:
        raise GoldenPoolError(
            f"Golden Question Pool「{name}」のチェックサムが記録されていません"
            f"（{checksum_path(path).name}）。凍結されていないプールは使えません。"
        )
    if expected == "":
        raise GoldenPoolError(
            f"Golden Question Pool「{name}」のチェックサムファイルが読めません"
            f"（{checksum_path(path).name}）。"
        )
    try:
        raw = read_bytes(path, max_bytes=MAX_POOL_BYTES)
    except ContractError as exc:
        raise GoldenPoolError(f"Golden Question Pool「{name}」: {exc.user_message}") from exc
    actual = sha256_hex(raw)
    if actual != expected:
        raise GoldenPoolError(
            f"Golden Question Pool「{name}」のチェックサムが記録値と一致しません。"
            "ファイルが改変された可能性があるため使用を中止しました。凍結資産は改変せず、"
            "変更が必要な場合は新しい版のプールを作成してください。"
        )
    return raw, actual


def _pool_issues(data: Any, stem: str) -> list[Issue]:
    if not isinstance(data, Mapping):
        return [("", "ルートは JSON オブジェクトである必要があります")]
    issues: list[Issue] = []
    if data.get("pool_id") != stem:
        issues.append(("pool_id", f"ファイル名と一致する必要があります（{stem}）"))
    for key in ("placeholders", "features"):
        value = data.get(key, {})
        if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            issues.append((key, "文字列から文字列へのオブジェクトである必要があります"))
    placeholders = data.get("placeholders") if isinstance(data.get("placeholders"), Mapping) else {}
    features = data.get("features") if isinstance(data.get("features"), Mapping) else {}
    questions = data.get("questions")
    if not isinstance(questions, list) or not questions:
        return [*issues, ("questions", "1件以上の質問の配列である必要があります")]
    seen: set[str] = set()
    for index, q in enumerate(questions):
        path = f"questions[{index}]"
        if not isinstance(q, Mapping):
            issues.append((path, "オブジェクトである必要があります"))
            continue
        for key in ("question_id", "template"):
            if not isinstance(q.get(key), str) or not q[key].strip():
                issues.append((f"{path}.{key}", "空でない文字列である必要があります"))
        qid = q.get("question_id")
        if isinstance(qid, str):
            if qid in seen:
                issues.append((f"{path}.question_id", f"「{qid}」が重複しています"))
            seen.add(qid)
        for name in PLACEHOLDER.findall(q.get("template") or ""):
            if name not in placeholders:
                issues.append((f"{path}.template", f"未定義のプレースホルダー {{{name}}} です"))
        requires = q.get("requires", [])
        if not isinstance(requires, list) or not all(isinstance(r, str) for r in requires):
            issues.append((f"{path}.requires", "文字列の配列である必要があります"))
        else:
            for feature in requires:
                if feature not in features:
                    issues.append((f"{path}.requires", f"features に無い構造要素「{feature}」です"))
    return issues


def looks_like_pool(data: Any) -> bool:
    """Whether a JSON document is shaped like a pool (``pool_id`` and question templates) rather
    than a question set, well formed or not: a pool given where a set is expected can be named."""
    if not isinstance(data, Mapping) or "pool_id" not in data or ARTIFACT in data:
        return False
    questions = data.get("questions")
    return isinstance(questions, list) and any(
        isinstance(q, Mapping) and "template" in q for q in questions
    )


def load_pool(golden_dir: Path, pool_id: str) -> GoldenPool:
    """Load a pool after verifying its checksum and its structure (Japanese errors)."""
    path = pool_path(golden_dir, pool_id)
    raw, digest = verified_pool_bytes(path)
    try:
        data = parse_json_bytes(raw, max_bytes=MAX_POOL_BYTES)
    except ContractError as exc:
        raise GoldenPoolError(f"Golden Question Pool「{pool_id}」: {exc.user_message}") from exc
    issues = _pool_issues(data, path.stem)
    if issues:
        detail = "; ".join(f"{p}: {m}" for p, m in issues[:5])
        raise GoldenPoolError(f"Golden Question Pool「{pool_id}」の内容が不正です: {detail}")
    return GoldenPool(
        pool_id=data["pool_id"],
        title=str(data.get("title", "")),
        description=str(data.get("description", "")),
        placeholders=dict(data.get("placeholders", {})),
        features=dict(data.get("features", {})),
        questions=tuple(
            PoolQuestion(
                question_id=q["question_id"],
                category=str(q.get("category", "")),
                template=q["template"],
                requires=tuple(q.get("requires", [])),
            )
            for q in data["questions"]
        ),
        sha256=digest,
        path=path,
    )


def list_pools(golden_dir: Path) -> list[PoolEntry]:
    """Every ``*.json`` pool directly in ``golden_dir``, each verified (sorted by id)."""
    entries: list[PoolEntry] = []
    folder = Path(golden_dir)
    if not folder.is_dir():
        return entries
    for path in sorted(folder.glob("*.json")):
        if not POOL_ID_FORM.match(path.stem):
            continue
        try:
            pool = load_pool(folder, path.stem)
        except GoldenPoolError as exc:
            entries.append(PoolEntry(path.stem, path, False, exc.user_message))
        else:
            entries.append(
                PoolEntry(pool.pool_id, path, True, "検証済み", pool.title, len(pool.questions))
            )
    return entries


def freeze_pool(path: Path) -> str:
    """Record the checksum of a new pool file; a pool already frozen is never re-recorded."""
    path = Path(path)
    if recorded_checksum(path) is not None:
        raise GoldenPoolError(
            f"{path.name} は既に凍結されています。変更する場合は新しい版のプールを作成してください。"
        )
    raw = read_bytes(path, max_bytes=MAX_POOL_BYTES)
    issues = _pool_issues(parse_json_bytes(raw, max_bytes=MAX_POOL_BYTES), path.stem)
    if issues:
        detail = "; ".join(f"{p}: {m}" for p, m in issues[:5])
        raise GoldenPoolError(f"{path.name} の内容が不正です: {detail}")
    digest = sha256_hex(raw)
    write_atomic(checksum_path(path), f"{digest}  {path.name}\n".encode())
    return digest


__all__ = [
    "DEFAULT_POOL_ID",
    "MAX_POOL_BYTES",
    "GoldenPool",
    "GoldenPoolError",
    "PoolEntry",
    "PoolQuestion",
    "checksum_path",
    "freeze_pool",
    "list_pools",
    "load_pool",
    "looks_like_pool",
    "pool_path",
    "recorded_checksum",
    "sha256_hex",
    "verified_pool_bytes",
]
