"""The question-set editor without its widgets: what it holds, how a draft is opened and
replaced, which field each validation issue belongs to, and how the export compares with the
file that was opened.

``Editor`` is the state the page keeps between reruns: the draft (``core.question_sets.draft``),
a version that the page puts in its widget keys (replacing the draft bumps it, so that every
widget shows the new draft), and what the last opening found (``Opened``). The draft's own
validation is the one list of issues: once a file is loaded, its problems are either still in
the draft or named by a note (see ``draft_from_payload``), so what the page counts, lists and
shows next to the fields is always the same list.

Opening never loses work: a file that cannot be loaded (not UTF-8 JSON, not an object, a Golden
Question Pool rather than a set) leaves the draft as it was, and says why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from core.errors import ContractError
from core.question_sets.contract import (
    ARTIFACT,
    METADATA_KEYS,
    Issue,
    QuestionSet,
    dumps_question_set,
    parse_json_bytes,
    parse_question_set,
    validate_payload,
)
from core.question_sets.draft import (
    HEADER_FIELDS,
    Draft,
    DraftRow,
    blank_draft,
    draft_from_payload,
    draft_from_set,
    draft_to_payload,
)
from core.question_sets.golden import looks_like_pool, sha256_hex

PASTED_NAME = "貼り付けた JSON"
GENERATE_TAB = "プールから生成"


# --- opening ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Opened:
    """What opening one file found.

    ``loaded`` False: the draft was left as it was, and ``issues`` says why (the file's own
    problems). ``loaded`` True: ``issues`` is empty (the draft's validation is the list) and
    ``notes`` names what had to be converted to be editable. The hashes are those of the bytes
    opened and, when the file was a valid set, of its canonical export.
    """

    name: str
    loaded: bool
    issues: tuple[Issue, ...] = ()
    notes: tuple[Issue, ...] = ()
    is_pool: bool = False
    sha256: str | None = None
    canonical_sha256: str | None = None


def read_draft(raw: bytes, name: str) -> tuple[Opened, Draft | None]:
    """Open a file's bytes as a draft; the draft is None when the file cannot be loaded."""
    try:
        data = parse_json_bytes(raw)
    except ContractError as exc:
        return Opened(name, loaded=False, issues=tuple(exc.errors)), None
    file_issues = validate_payload(data)
    if not isinstance(data, Mapping):
        return Opened(name, loaded=False, issues=tuple(file_issues)), None
    if looks_like_pool(data):
        return Opened(name, loaded=False, issues=tuple(file_issues), is_pool=True), None
    draft, notes = draft_from_payload(data)
    canonical = None
    if not file_issues:
        canonical = sha256_hex(dumps_question_set(parse_question_set(data)))
    opened = Opened(
        name,
        loaded=True,
        notes=tuple(notes),
        sha256=sha256_hex(raw),
        canonical_sha256=canonical,
    )
    return opened, draft


# --- routing issues to the editor's fields ----------------------------------------------------------

# Field id (the page's widget for it) -> the JSON path its issues carry.
FIELD_PATHS: dict[str, str] = {
    "schema_version": "schema_version",
    **{name: f"{ARTIFACT}.{name}" for name in HEADER_FIELDS},
    **{f"metadata.{key}": f"{ARTIFACT}.metadata.{key}" for key in METADATA_KEYS},
    "metadata": f"{ARTIFACT}.metadata",
}
_FIELD_OF_PATH = {path: name for name, path in FIELD_PATHS.items()}
_QUESTIONS = f"{ARTIFACT}.questions["
_METADATA = f"{ARTIFACT}.metadata"


def row_of_path(path: str) -> int | None:
    """The question row an issue path points into (``…questions[3]…`` -> 3), else None."""
    if not path.startswith(_QUESTIONS):
        return None
    end = path.find("]", len(_QUESTIONS))
    digits = path[len(_QUESTIONS) : end]
    return int(digits) if end > 0 and digits.isdigit() else None


def field_of_path(path: str) -> str | None:
    """The editor field an issue path belongs to, else None (shown only in the issue list).

    Paths inside ``metadata`` go to the field of the key they are under (``metadata.note[0]``
    -> ``metadata.note``), or to the metadata field as a whole for keys without a field.
    """
    if path in _FIELD_OF_PATH:
        return _FIELD_OF_PATH[path]
    if path.startswith(_METADATA) and path[len(_METADATA) : len(_METADATA) + 1] in (".", "["):
        rest = path[len(_METADATA) + 1 :]
        key = rest.split(".", 1)[0].split("[", 1)[0]
        return f"metadata.{key}" if key in METADATA_KEYS else "metadata"
    return None


@dataclass(frozen=True, slots=True)
class IssueRouting:
    """Issues by where the editor shows them (each issue is also in the full list)."""

    fields: dict[str, list[str]]  # field id -> messages
    rows: dict[int, list[str]]  # question row -> messages, each prefixed with its key
    elsewhere: list[Issue]  # neither a field nor a row: the root, the body, the array, …


def route_issues(issues: Iterable[Issue]) -> IssueRouting:
    fields: dict[str, list[str]] = {}
    rows: dict[int, list[str]] = {}
    elsewhere: list[Issue] = []
    for path, message in issues:
        row = row_of_path(path)
        name = field_of_path(path)
        if row is not None:
            tail = path.split("]", 1)[1].lstrip(".")
            rows.setdefault(row, []).append(f"{tail}: {message}" if tail else message)
        elif name is not None:
            fields.setdefault(name, []).append(message)
        else:
            elsewhere.append((path, message))
    return IssueRouting(fields, rows, elsewhere)


# --- the export check --------------------------------------------------------------------------------


class ExportCheck(Enum):
    """How the export compares with the file that was opened."""

    UNCHANGED = "unchanged"  # the same bytes as the file
    REFORMATTED = "reformatted"  # the same set, written in the canonical form
    EDITED = "edited"  # the content differs from the file's


def export_bytes(draft: Draft) -> bytes | None:
    """The canonical export of a draft, or None while it has issues."""
    payload = draft_to_payload(draft)
    if validate_payload(payload):
        return None
    return dumps_question_set(parse_question_set(payload))


def check_export(export: bytes | None, opened: Opened | None) -> ExportCheck | None:
    """Compare an export with the loaded file by hash; None without an export or a loaded file."""
    if export is None or opened is None or not opened.loaded:
        return None
    digest = sha256_hex(export)
    if digest == opened.sha256:
        return ExportCheck.UNCHANGED
    if digest == opened.canonical_sha256:
        return ExportCheck.REFORMATTED
    return ExportCheck.EDITED


# --- what the page says ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Notice:
    level: Literal["error", "warning", "info", "success", "caption"]
    text: str


def opened_notices(opened: Opened, issues: list[Issue]) -> list[Notice]:
    """What to say about the last opening; ``issues`` is the draft's validation (when loaded)."""
    name = opened.name
    if opened.is_pool:
        return [
            Notice(
                "error",
                f"「{name}」は Golden Question Pool（質問の母集団）のファイルで、質問セットではない"
                "ため開きませんでした。編集中の内容はそのままです。",
            ),
            Notice(
                "info",
                f"プールから質問セットを作るには「{GENERATE_TAB}」タブでプールを選んでください。",
            ),
        ]
    if not opened.loaded:
        return [
            Notice(
                "error",
                f"「{name}」にはエラーが {len(opened.issues)} 件あります。"
                "読み込めなかったため、編集中の内容はそのままです。",
            )
        ]
    if issues:
        return [
            Notice(
                "error",
                f"「{name}」を開きました。エラーが {len(issues)} 件あります。"
                "編集して修正できます。",
            )
        ]
    return [Notice("success", f"「{name}」を開きました。契約に適合しています。")]


def export_notice(check: ExportCheck | None) -> Notice | None:
    if check is ExportCheck.UNCHANGED:
        return Notice(
            "caption", "開いたファイルから変更はありません（保存内容はバイト単位で同一です）。"
        )
    if check is ExportCheck.REFORMATTED:
        return Notice(
            "info", "開いたファイルとは書式またはキー順が異なるため、正規形式に整えて保存します。"
        )
    return None


# --- the editor's state and its transitions ----------------------------------------------------------


@dataclass(slots=True)
class Editor:
    """The draft being edited, its widget version, and what the last opening found."""

    draft: Draft = field(default_factory=blank_draft)
    version: int = 0
    opened: Opened | None = None
    upload_seen: str | None = None

    def replace(self, draft: Draft, opened: Opened | None = None) -> None:
        """Put another draft in the editor: every widget shows it afresh."""
        self.draft = draft
        self.opened = opened
        self.version += 1

    def refresh(self) -> None:
        """Show the same draft in fresh widgets (after a table edit folded into the draft)."""
        self.version += 1

    def new(self) -> None:
        self.replace(blank_draft())

    def load_set(self, question_set: QuestionSet) -> None:
        """A set made elsewhere (generated from a pool) becomes the draft."""
        self.replace(draft_from_set(question_set))

    def open_bytes(self, raw: bytes, name: str) -> Opened:
        opened, draft = read_draft(raw, name)
        if draft is None:
            self.opened = opened
        else:
            self.replace(draft, opened)
        return opened

    def open_text(self, text: str, name: str = PASTED_NAME) -> Opened:
        """Pasted JSON. A lone surrogate (a text area can hold one) is kept, as bytes that
        the reader then names as not UTF-8, rather than failing to encode."""
        return self.open_bytes(text.encode("utf-8", errors="surrogatepass"), name)

    def open_upload(self, file_id: str, raw: bytes, name: str) -> Opened | None:
        """An uploaded file, opened once: the uploader hands it over again on every rerun."""
        if file_id == self.upload_seen:
            return None
        self.upload_seen = file_id
        return self.open_bytes(raw, name)

    # edits from the widgets (the page calls these with what the widgets return)

    def set_header(self, name: str, value: str) -> None:
        if name != "schema_version" and name not in HEADER_FIELDS:
            raise ValueError(f"not a header field: {name}")
        setattr(self.draft, name, value)

    def set_metadata_text(self, key: str, text: str) -> None:
        """A metadata text field as typed: an empty text removes the key, an empty metadata
        object is dropped; a value left as it was changes nothing (``{}`` stays ``{}``)."""
        meta = dict(self.draft.metadata or {})
        current = meta.get(key)
        if current is not None and not isinstance(current, str):
            return  # shown read-only: a non-text value is fixed in the file, not here
        if text == (current or ""):
            return
        if text:
            meta[key] = text
        else:
            meta.pop(key, None)
        self.draft.metadata = meta or None

    def set_rows(self, rows: list[DraftRow]) -> None:
        self.draft.rows = rows

    # what the draft is now

    def payload(self) -> dict[str, Any]:
        return draft_to_payload(self.draft)

    def issues(self) -> list[Issue]:
        return validate_payload(self.payload())

    def export(self) -> bytes | None:
        return export_bytes(self.draft)

    def question_set(self) -> QuestionSet | None:
        """The draft as a valid set (to run it), or None while it has issues."""
        try:
            return parse_question_set(self.payload())
        except ContractError:
            return None


__all__ = [
    "FIELD_PATHS",
    "PASTED_NAME",
    "Editor",
    "ExportCheck",
    "IssueRouting",
    "Notice",
    "Opened",
    "check_export",
    "export_bytes",
    "export_notice",
    "field_of_path",
    "opened_notices",
    "read_draft",
    "route_issues",
    "row_of_path",
]
