"""The editor's model of a question set: a lenient draft that may be invalid while it is edited.

A ``Draft`` holds what the page shows (header strings, rows of id and text) plus everything it
does not show (metadata, unknown keys at every level), so that opening a valid file and saving it
without edits gives the same bytes. ``draft_to_payload`` builds the JSON document that the
contract validates; the draft itself never decides validity.

Whatever a file has that a draft cannot hold as it is (a number where text is expected, a key
given twice, a body that is not an object) is converted and reported as a *note*: the file's
problems are then either still in the draft (and validation of the draft reports them) or named
by a note, so the draft's validation is the one list of what remains to fix.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.question_sets.contract import (
    ARTIFACT,
    METADATA_KEYS,
    QUESTION_KEYS,
    ROOT_KEYS,
    SCHEMA_VERSION,
    SET_KEYS,
    Issue,
    QuestionSet,
    plain_json,
    to_payload,
)

HEADER_FIELDS = ("ordinance_id", "question_set_id", "source_golden_question_pool")


@dataclass(slots=True)
class DraftRow:
    question_id: str = ""
    question_text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys of the question


@dataclass(slots=True)
class Draft:
    schema_version: str = SCHEMA_VERSION
    ordinance_id: str = ""
    question_set_id: str = ""
    source_golden_question_pool: str = ""
    rows: list[DraftRow] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    root_extra: dict[str, Any] = field(default_factory=dict)


def blank_draft() -> Draft:
    """A new set: the supported schema version and one empty question row."""
    return Draft(rows=[DraftRow()])


def _as_text(value: Any, path: str, notes: list[Issue]) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    notes.append((path, "文字列ではない値を文字列として読み込みました"))
    return json.dumps(value, ensure_ascii=False)


def _duplicate_key_notes(value: Any, path: str) -> Iterator[Issue]:
    """A note for every key given twice in an object (the draft keeps its last value)."""
    if isinstance(value, Mapping):
        for key in getattr(value, "duplicate_keys", ()):
            yield (
                f"{path}.{key}" if path else key,
                "キーが重複していたため、最後の値を読み込みました",
            )
        for key, item in value.items():
            yield from _duplicate_key_notes(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _duplicate_key_notes(item, f"{path}[{index}]")


def draft_from_payload(data: Any) -> tuple[Draft, list[Issue]]:
    """A draft from any JSON value, plus notes on what had to be converted to be editable.

    Call ``validate_payload`` on the same data for the file's own errors; this function only
    makes the content editable (missing strings become empty, other types become their JSON text).
    """
    notes: list[Issue] = list(_duplicate_key_notes(data, ""))
    if not isinstance(data, Mapping):
        notes.append(("", "ルートがオブジェクトではないため、空の質問セットとして開きました"))
        return blank_draft(), notes
    draft = Draft(
        schema_version=_as_text(data.get("schema_version"), "schema_version", notes),
        root_extra={k: plain_json(v) for k, v in data.items() if k not in ROOT_KEYS},
    )
    body = data.get(ARTIFACT)
    if not isinstance(body, Mapping):
        if body is not None:
            draft.root_extra[ARTIFACT] = plain_json(body)
            notes.append((ARTIFACT, "オブジェクトではないため、内容を読み込めませんでした"))
        return draft, notes
    for name in HEADER_FIELDS:
        setattr(draft, name, _as_text(body.get(name), f"{ARTIFACT}.{name}", notes))
    draft.extra = {k: plain_json(v) for k, v in body.items() if k not in SET_KEYS}
    meta = body.get("metadata")
    if isinstance(meta, Mapping):
        draft.metadata = plain_json(meta)
    elif "metadata" in body:
        draft.extra["metadata"] = plain_json(meta)  # kept as it is: validation reports it
    questions = body.get("questions")
    if isinstance(questions, list):
        for index, item in enumerate(questions):
            path = f"{ARTIFACT}.questions[{index}]"
            if isinstance(item, Mapping):
                draft.rows.append(
                    DraftRow(
                        question_id=_as_text(item.get("question_id"), f"{path}.question_id", notes),
                        question_text=_as_text(
                            item.get("question_text"), f"{path}.question_text", notes
                        ),
                        extra={k: plain_json(v) for k, v in item.items() if k not in QUESTION_KEYS},
                    )
                )
            else:
                notes.append((path, "オブジェクトではないため、本文として読み込みました"))
                draft.rows.append(DraftRow(question_text=_as_text(item, path, [])))
    elif questions is not None:
        notes.append((f"{ARTIFACT}.questions", "配列ではないため、読み込めませんでした"))
    return draft, notes


def draft_from_set(qs: QuestionSet) -> Draft:
    draft, _ = draft_from_payload(to_payload(qs))
    return draft


def draft_to_payload(draft: Draft) -> dict[str, Any]:
    """The JSON document of a draft, in the contract's key order (it may still be invalid)."""
    body: dict[str, Any] = {name: getattr(draft, name) for name in HEADER_FIELDS}
    body["questions"] = [
        {"question_id": r.question_id, "question_text": r.question_text, **r.extra}
        for r in draft.rows
    ]
    if draft.metadata is not None:
        body["metadata"] = _ordered(draft.metadata)
    for key, value in draft.extra.items():
        body.setdefault(key, value)
    payload: dict[str, Any] = {"schema_version": draft.schema_version, ARTIFACT: body}
    for key, value in draft.root_extra.items():
        payload.setdefault(key, value)
    return payload


def _ordered(meta: dict[str, Any]) -> dict[str, Any]:
    ordered = {k: meta[k] for k in METADATA_KEYS if k in meta}
    ordered.update({k: v for k, v in meta.items() if k not in METADATA_KEYS})
    return ordered


__all__ = [
    "HEADER_FIELDS",
    "Draft",
    "DraftRow",
    "blank_draft",
    "draft_from_payload",
    "draft_from_set",
    "draft_to_payload",
]
