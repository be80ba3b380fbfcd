"""The frozen ``customized_question_set.json`` contract (seed: question-set-contract.md, fixed).

The file is an Execution Input Contract: downstream test automation runs it as it is, so this
module checks it strictly and reports *every* problem at once, each as ``(JSON path, Japanese
message)`` with paths like ``customized_question_set.questions[2].question_id`` (``""`` is the
root). ``question_set_id`` is a human-readable label: it is checked to be a non-blank string and
echoed, never parsed or used to decide anything.

Decisions where the design is silent:

* required strings must not be blank and must not hold control characters (other than tab and
  newlines): an empty question or id cannot be executed as it is;
* unknown optional keys are accepted at every level and kept, in their order, after the
  contract's own keys (adding a key is not a breaking change);
* ``metadata`` (optional, non-contract) must not carry evaluation results, correctness
  judgements, exclusion reasons or PASS / FAIL / gate verdicts: every key (at any depth) and
  every text value in it is checked for such wording, in Japanese and in English;
* a duplicated key in any JSON object is an error (parsers disagree on which value wins), as are
  ``NaN`` / ``Infinity`` and lone surrogates (not valid UTF-8 JSON);
* a well-formed but unsupported ``schema_version`` (``customized_question_set.v2``) is reported
  alone: the structure of another version is not known here. A missing or malformed one is
  reported together with the v1 check of the body.

The canonical export is UTF-8 JSON, the contract's key order, indent 2, non-ASCII kept, ``\\n``
line ends and one trailing newline, no BOM: exporting a canonical file again gives the same
bytes. Saving is atomic (temporary file in the same folder, then ``os.replace``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from core.errors import ContractError, InputError
from core.question_sets.jsonfile import (
    MAX_FILE_BYTES,
    canonical_bytes,
    parse_json_bytes,
    read_bytes,
    write_atomic,
)
from core.question_sets.metadata_rules import forbidden_wording, metadata_issues

ARTIFACT = "customized_question_set"
SCHEMA_VERSION = f"{ARTIFACT}.v1"
SUPPORTED_SCHEMA_VERSIONS: tuple[str, ...] = (SCHEMA_VERSION,)

ROOT_KEYS = ("schema_version", ARTIFACT)
SET_KEYS = (
    "ordinance_id",
    "question_set_id",
    "source_golden_question_pool",
    "questions",
    "metadata",
)
QUESTION_KEYS = ("question_id", "question_text")
METADATA_KEYS = ("generated_by", "generated_at", "note")

# "<artifact>.v<major>": no minor or patch part.
_VERSION_FORM = re.compile(r"^[a-z][a-z0-9_]*\.v(0|[1-9][0-9]*)$")

Issue = tuple[str, str]  # (JSON path, Japanese message)


# --- structural validation ------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "真偽値"
    if isinstance(value, int | float):
        return "数値"
    if isinstance(value, str):
        return "文字列"
    if isinstance(value, list):
        return "配列"
    if isinstance(value, Mapping):
        return "オブジェクト"
    return type(value).__name__


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk_json(value: Any, path: str) -> Iterator[Issue]:
    """Problems anywhere in the document: duplicate keys and characters UTF-8 cannot carry."""
    if isinstance(value, Mapping):
        for key in getattr(value, "duplicate_keys", ()):
            yield (
                _join(path, key),
                "キーが重複しています（どの値が使われるか解析器によって異なります）",
            )
        for key, item in value.items():
            child = _join(path, str(key))
            if isinstance(key, str) and _SURROGATE.search(key):
                yield (child, "キーに UTF-8 で表せない文字（単独のサロゲート）が含まれています")
            yield from _walk_json(item, child)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _walk_json(item, f"{path}[{index}]")
    elif isinstance(value, str):
        if _SURROGATE.search(value):
            yield (path, "UTF-8 で表せない文字（単独のサロゲート）が含まれています")
    elif isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        yield (path, "JSON では使えない値（NaN / Infinity）です")
    elif value is not None and not isinstance(value, bool | int | float):
        yield (path, f"JSON で表せない値です（{type(value).__name__}）")


def _required_string(obj: Mapping, key: str, path: str) -> Iterator[Issue]:
    where = _join(path, key)
    if key not in obj:
        yield (where, "必須項目です")
        return
    value = obj[key]
    if not isinstance(value, str):
        yield (where, f"文字列である必要があります（{_type_name(value)} が指定されています）")
    elif not value.strip():
        yield (where, "空にできません")
    elif _CONTROL.search(value):
        yield (where, "制御文字が含まれています")


def _optional_string(obj: Mapping, key: str, path: str) -> Iterator[Issue]:
    if key in obj and not isinstance(obj[key], str):
        yield (
            _join(path, key),
            f"文字列である必要があります（{_type_name(obj[key])} が指定されています）",
        )


def is_iso8601(text: str) -> bool:
    """An ISO-8601 date or date-time (``2026-01-02``, ``2026-01-02T09:00:00+09:00``, ``…Z``)."""
    for parse in (datetime.fromisoformat, date.fromisoformat):
        try:
            parse(text)
        except ValueError:
            continue
        return True
    return False


def _schema_version_issues(root: Mapping) -> tuple[list[Issue], bool]:
    """Issues of ``schema_version`` and whether the body should still be checked as v1."""
    if "schema_version" not in root:
        return [("schema_version", f"必須項目です（例: {SCHEMA_VERSION}）")], True
    version = root["schema_version"]
    if not isinstance(version, str):
        return [
            (
                "schema_version",
                f"文字列である必要があります（{_type_name(version)} が指定されています。"
                f"例: {SCHEMA_VERSION}）",
            )
        ], True
    if not version.strip():
        return [("schema_version", f"空にできません（例: {SCHEMA_VERSION}）")], True
    if not _VERSION_FORM.match(version):
        return [
            (
                "schema_version",
                f"形式が不正です: 「{version}」。「<成果物名>.v<メジャー番号>」の形式のみ使えます"
                f"（マイナー・パッチ番号は付けません。例: {SCHEMA_VERSION}）",
            )
        ], True
    if version not in SUPPORTED_SCHEMA_VERSIONS:
        return [
            (
                "schema_version",
                f"未対応のスキーマバージョンです: 「{version}」（対応: "
                f"{', '.join(SUPPORTED_SCHEMA_VERSIONS)}）。この版の構造は検証できません",
            )
        ], False
    return [], True


def validate_payload(data: Any) -> list[Issue]:
    """Every problem of a parsed JSON document as ``(path, Japanese message)``; ``[]`` if valid."""
    if not isinstance(data, Mapping):
        return [("", f"ルートは JSON オブジェクトである必要があります（{_type_name(data)} です）")]
    issues: list[Issue] = list(_walk_json(data, ""))
    version_issues, check_body = _schema_version_issues(data)
    issues += version_issues
    if not check_body:
        return issues

    body_path = ARTIFACT
    if ARTIFACT not in data:
        return [*issues, (body_path, "必須項目です")]
    body = data[ARTIFACT]
    if not isinstance(body, Mapping):
        return [
            *issues,
            (body_path, f"オブジェクトである必要があります（{_type_name(body)} です）"),
        ]
    for key in ("ordinance_id", "question_set_id", "source_golden_question_pool"):
        issues += _required_string(body, key, body_path)

    questions_path = f"{body_path}.questions"
    if "questions" not in body:
        issues.append((questions_path, "必須項目です（1件以上の質問の配列）"))
    elif not isinstance(body["questions"], list):
        issues.append(
            (
                questions_path,
                f"配列である必要があります（{_type_name(body['questions'])} です）",
            )
        )
    elif not body["questions"]:
        issues.append((questions_path, "質問は1件以上必要です"))
    else:
        first_seen: dict[str, int] = {}
        for index, question in enumerate(body["questions"]):
            q_path = f"{questions_path}[{index}]"
            if not isinstance(question, Mapping):
                issues.append(
                    (q_path, f"オブジェクトである必要があります（{_type_name(question)} です）")
                )
                continue
            issues += _required_string(question, "question_id", q_path)
            issues += _required_string(question, "question_text", q_path)
            qid = question.get("question_id")
            if isinstance(qid, str) and qid.strip():
                if qid in first_seen:
                    issues.append(
                        (
                            f"{q_path}.question_id",
                            f"question_id「{qid}」が重複しています"
                            f"（{questions_path}[{first_seen[qid]}] と同じ）",
                        )
                    )
                else:
                    first_seen[qid] = index

    if "metadata" in body:
        meta = body["metadata"]
        meta_path = f"{body_path}.metadata"
        if not isinstance(meta, Mapping):
            issues.append(
                (
                    meta_path,
                    f"オブジェクトである必要があります（{_type_name(meta)} です。"
                    "不要なら項目ごと省略してください）",
                )
            )
        else:
            for key in METADATA_KEYS:
                issues += _optional_string(meta, key, meta_path)
            stamp = meta.get("generated_at")
            if isinstance(stamp, str) and not is_iso8601(stamp):
                issues.append(
                    (
                        f"{meta_path}.generated_at",
                        f"ISO-8601 形式の日時である必要があります（例: 2026-01-02T09:00:00+09:00）。"
                        f"「{stamp}」は読めません",
                    )
                )
            issues += metadata_issues(meta, meta_path)
    return _unique(issues)


def _unique(issues: list[Issue]) -> list[Issue]:
    return list(dict.fromkeys(issues))


# --- the typed set ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Question:
    question_id: str
    question_text: str
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, in file order


@dataclass(frozen=True, slots=True)
class QuestionSet:
    """A valid ``customized_question_set.json``; unknown keys are kept for the round trip."""

    ordinance_id: str
    question_set_id: str
    source_golden_question_pool: str
    questions: tuple[Question, ...]
    metadata: dict[str, Any] | None = None
    schema_version: str = SCHEMA_VERSION
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys of the set object
    root_extra: dict[str, Any] = field(default_factory=dict)  # unknown keys of the root

    @property
    def question_ids(self) -> list[str]:
        return [q.question_id for q in self.questions]


def summarize(issues: list[Issue], label: str = "質問セット") -> str:
    path, message = issues[0]
    head = f"{label}が不正です: {path}: {message}" if path else f"{label}が不正です: {message}"
    return head if len(issues) == 1 else f"{head}（ほか{len(issues) - 1}件）"


def plain_json(value: Any) -> Any:
    """A deep copy with plain dicts (drops the duplicate-key bookkeeping)."""
    if isinstance(value, Mapping):
        return {k: plain_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(v) for v in value]
    return value


def _extra(obj: Mapping, known: tuple[str, ...]) -> dict[str, Any]:
    return {k: plain_json(v) for k, v in obj.items() if k not in known}


def parse_question_set(data: Any) -> QuestionSet:
    """A QuestionSet from a parsed JSON document; ContractError lists every problem."""
    issues = validate_payload(data)
    if issues:
        raise ContractError(summarize(issues), issues)
    body = data[ARTIFACT]
    meta = body.get("metadata")
    return QuestionSet(
        schema_version=data["schema_version"],
        ordinance_id=body["ordinance_id"],
        question_set_id=body["question_set_id"],
        source_golden_question_pool=body["source_golden_question_pool"],
        questions=tuple(
            Question(q["question_id"], q["question_text"], _extra(q, QUESTION_KEYS))
            for q in body["questions"]
        ),
        metadata=None if meta is None else _ordered_metadata(meta),
        extra=_extra(body, SET_KEYS),
        root_extra=_extra(data, ROOT_KEYS),
    )


def loads_question_set(raw: bytes, *, max_bytes: int = MAX_FILE_BYTES) -> QuestionSet:
    """Bytes of a file -> QuestionSet; unreadable or invalid input raises ContractError."""
    return parse_question_set(parse_json_bytes(raw, max_bytes=max_bytes))


def read_question_set(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> QuestionSet:
    return loads_question_set(read_bytes(path, max_bytes=max_bytes), max_bytes=max_bytes)


# --- canonical export --------------------------------------------------------------------------------


def _ordered_metadata(meta: Mapping[str, Any]) -> dict[str, Any]:
    ordered = {k: plain_json(meta[k]) for k in METADATA_KEYS if k in meta}
    ordered.update(_extra(meta, METADATA_KEYS))
    return ordered


def to_payload(qs: QuestionSet) -> dict[str, Any]:
    """The JSON document in the contract's key order (unknown keys after the known ones)."""
    body: dict[str, Any] = {
        "ordinance_id": qs.ordinance_id,
        "question_set_id": qs.question_set_id,
        "source_golden_question_pool": qs.source_golden_question_pool,
        "questions": [
            {"question_id": q.question_id, "question_text": q.question_text, **q.extra}
            for q in qs.questions
        ],
    }
    if qs.metadata is not None:
        body["metadata"] = _ordered_metadata(qs.metadata)
    body.update(qs.extra)
    return {"schema_version": qs.schema_version, ARTIFACT: body, **qs.root_extra}


def dumps_question_set(qs: QuestionSet) -> bytes:
    """The canonical export of a valid set (re-validated: a QuestionSet built by hand can be wrong)."""
    payload = to_payload(qs)
    issues = validate_payload(payload)
    if issues:
        raise ContractError(summarize(issues), issues)
    return canonical_bytes(payload)


def is_canonical(raw: bytes) -> bool:
    """Whether ``raw`` is a valid set already in the canonical form (export gives the same bytes)."""
    try:
        return dumps_question_set(loads_question_set(raw)) == raw
    except ContractError:
        return False


def save_question_set(qs: QuestionSet, path: str | Path) -> Path:
    """Validate and write the canonical export atomically; a failure leaves ``path`` untouched."""
    data = dumps_question_set(qs)
    try:
        return write_atomic(path, data)
    except OSError as exc:
        raise InputError(f"保存できませんでした: {path}（{exc.strerror or exc}）") from exc


__all__ = [
    "ARTIFACT",
    "MAX_FILE_BYTES",
    "SCHEMA_VERSION",
    "SUPPORTED_SCHEMA_VERSIONS",
    "Issue",
    "Question",
    "QuestionSet",
    "canonical_bytes",
    "dumps_question_set",
    "forbidden_wording",
    "is_canonical",
    "is_iso8601",
    "loads_question_set",
    "parse_json_bytes",
    "parse_question_set",
    "plain_json",
    "read_bytes",
    "read_question_set",
    "save_question_set",
    "summarize",
    "to_payload",
    "validate_payload",
    "write_atomic",
]
