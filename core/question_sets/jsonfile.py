"""Reading and writing the JSON files of this package: strict UTF-8 JSON in, canonical JSON out.

Reading refuses what a contract file must not be (too large, empty, UTF-16, not UTF-8, not JSON,
NaN / Infinity, overlong numbers, nesting too deep) with a Japanese message (path ``""``), and
records keys that appear twice in an object so that validation can report them. Writing is
atomic: a temporary file in the same folder, fsync, then ``os.replace``.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from core.errors import ContractError, InputError

MAX_FILE_BYTES = 5 * 1024 * 1024  # a set of thousands of questions is far below this


# --- JSON reading ---------------------------------------------------------------------------------


class _Object(dict):
    """A JSON object that remembers keys that appeared more than once."""

    duplicate_keys: tuple[str, ...] = ()


def _object_pairs(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object()
    duplicates: list[str] = []
    for key, value in pairs:
        if key in obj and key not in duplicates:
            duplicates.append(key)
        obj[key] = value
    if duplicates:
        obj.duplicate_keys = tuple(duplicates)
    return obj


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


_JSON_MESSAGES = (
    (
        "Expecting property name enclosed in double quotes",
        "キーはダブルクォートで囲む必要があります",
    ),
    ("Expecting ',' delimiter", "「,」が必要です"),
    ("Expecting ':' delimiter", "「:」が必要です"),
    ("Expecting value", "値が必要です"),
    ("Extra data", "JSON の後に余分なデータがあります"),
    ("Unterminated string", "文字列が閉じられていません"),
    ("Invalid control character", "文字列に改行などの制御文字がそのまま含まれています"),
    ("Invalid \\escape", "不正なエスケープです"),
    ("Invalid \\uXXXX escape", "不正な \\u エスケープです"),
)


# Deeper than any question set needs, far below what recursive walkers (validation, copying,
# the page's JSON view) survive: a 950-deep document is refused here, not by a RecursionError.
MAX_JSON_DEPTH = 64


def json_depth_exceeds(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether containers nest deeper than ``limit`` (iterative: no recursion at any depth)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def _read_error(message: str) -> ContractError:
    return ContractError(message, [("", message)])


def parse_json_bytes(raw: bytes, *, max_bytes: int = MAX_FILE_BYTES) -> Any:
    """Decode UTF-8 JSON bytes; unreadable input raises ContractError (path ``""``, Japanese).

    A UTF-8 BOM is ignored (RFC 8259 allows it); the canonical export never writes one.
    """
    if len(raw) > max_bytes:
        raise _read_error(
            f"ファイルが大きすぎます（{len(raw):,} バイト、上限 {max_bytes:,} バイト）。"
            "質問セットのファイルか確認してください。"
        )
    if not raw.strip():
        raise _read_error("ファイルが空です。")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise _read_error("UTF-16 で保存されています。UTF-8 で保存し直してください。")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _read_error(
            f"UTF-8 として読めません（{exc.start + 1} バイト目）。Shift_JIS などで保存されている"
            "可能性があります。UTF-8 で保存し直してください。"
        ) from None
    try:
        data = json.loads(text, object_pairs_hook=_object_pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        reason = next((ja for en, ja in _JSON_MESSAGES if exc.msg.startswith(en)), "構文エラーです")
        raise _read_error(
            f"JSON として解析できません（{exc.lineno} 行 {exc.colno} 列: {reason}）。"
        ) from None
    except RecursionError:
        raise _read_error(f"JSON の入れ子が深すぎます（上限 {MAX_JSON_DEPTH} 段）。") from None
    except ValueError as exc:  # NaN / Infinity, or an integer too long to convert
        if str(exc) in ("NaN", "Infinity", "-Infinity"):
            raise _read_error(f"JSON では使えない値 {exc} が含まれています。") from None
        raise _read_error("JSON に扱えない数値が含まれています（桁数が多すぎます）。") from None
    if json_depth_exceeds(data):
        raise _read_error(f"JSON の入れ子が深すぎます（上限 {MAX_JSON_DEPTH} 段）。")
    return data


def read_bytes(path: str | Path, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """Read a file for the contract, refusing missing, non-regular and oversized files."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise InputError(f"ファイルが見つかりません: {p}") from None
    except OSError as exc:
        raise InputError(f"ファイルを読めません: {p}（{exc.strerror}）") from None
    if not p.is_file():
        raise InputError(f"ファイルではありません: {p}")
    if size > max_bytes:
        raise _read_error(
            f"ファイルが大きすぎます（{size:,} バイト、上限 {max_bytes:,} バイト）。"
            "質問セットのファイルか確認してください。"
        )
    try:
        return p.read_bytes()
    except OSError as exc:
        raise InputError(f"ファイルを読めません: {p}（{exc.strerror}）") from None


def canonical_bytes(payload: Any) -> bytes:
    """UTF-8 JSON, indent 2, non-ASCII kept, ``\\n`` line ends, one trailing newline."""
    return (json.dumps(payload, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode()


def write_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` all or nothing: temp file in the same folder, fsync, replace."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


__all__ = [
    "MAX_FILE_BYTES",
    "canonical_bytes",
    "parse_json_bytes",
    "read_bytes",
    "write_atomic",
]
