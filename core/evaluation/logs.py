"""Fast, tolerant reading of the audit logs (``logs/query_YYYY-MM-DD.jsonl``) for the dashboard.

Speed: a file is parsed by Arrow's multi-threaded JSON reader with an explicit schema that names
only the fields the dashboard aggregates (the long answer and search results are skipped, not
converted), after one SIMD UTF-8 check of the whole file. If Arrow rejects the file (a corrupt,
truncated or foreign line anywhere), it is parsed again in windows of ``BLOCK_LINES`` lines:
Arrow names the first bad row of a window, the rows before it are kept, that line alone is read
with ``orjson`` (a valid record of odd types is kept, a broken line is reported) and parsing
goes on after it. Parsed files are kept in a small cache keyed by path, size and modification
time, so a dashboard rerun only reads what changed. ``python -m bench.logs`` measures it.

Tolerance: a line that is not UTF-8, not a JSON object, is cut short, or has no usable
``timestamp`` is skipped and reported as a ``BadLine`` (file, 1-based line, Japanese reason);
it is never fatal.
Each record keeps its file and line, so ``read_record`` opens the full ``AuditRecord`` (answer,
citations) for a drill-down without holding every record in memory.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
import threading
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from core.audit import AuditRecord
from core.schemas.answer import Flags

try:  # orjson ships with langchain-core's dependencies; json is the fallback
    import orjson

    _loads = orjson.loads
    _JSON_ERRORS: tuple[type[Exception], ...] = (orjson.JSONDecodeError, UnicodeDecodeError)
except ImportError:  # pragma: no cover
    _loads = json.loads
    _JSON_ERRORS = (json.JSONDecodeError, UnicodeDecodeError)

LOG_GLOB = "query_*.jsonl"
_LOG_NAME = re.compile(r"^query_(\d{4}-\d{2}-\d{2})\.jsonl$")
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}")
BLOCK_LINES = 1000
MIN_SPLIT_LINES = 8  # below this, a window Arrow rejects is read line by line
_ERROR_ROW = re.compile(r"in row (\d+)")
MAX_BAD_LINES_KEPT = 1000  # per file; the count is always exact
CACHE_FILES = 64

# user … client: who asked (issue 15); lines from before sign-in read as ``local``
_WHO_FIELDS = ("user", "user_name", "role", "client")
_STRING_FIELDS = ("timestamp", "session_id", "page", "query", "answer_mode", "model", *_WHO_FIELDS)
_FLOAT_FIELDS = ("processing_time_sec", "cost_usd")
TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")
FLAG_FIELDS = tuple(Flags.model_fields)
# The fields of ``AuditRecord`` the dashboard aggregates (tests check that the record has them).
AGGREGATED_FIELDS = (*_STRING_FIELDS, *_FLOAT_FIELDS, "token_usage", "flags", "slow")

AUDIT_SCHEMA = pa.schema(
    [
        *[(name, pa.string()) for name in _STRING_FIELDS],
        *[(name, pa.float64()) for name in _FLOAT_FIELDS],
        ("token_usage", pa.struct([(name, pa.int64()) for name in TOKEN_FIELDS])),
        ("flags", pa.struct([(name, pa.bool_()) for name in FLAG_FIELDS])),
        ("slow", pa.bool_()),
    ]
)
_PARSE = pajson.ParseOptions(explicit_schema=AUDIT_SCHEMA, unexpected_field_behavior="ignore")
_READ = pajson.ReadOptions(use_threads=True, block_size=1 << 20)

COLUMNS = (
    "timestamp",
    "date",
    "session_id",
    *_WHO_FIELDS,
    "page",
    "query",
    "answer_mode",
    "model",
    "latency_sec",
    "cost_usd",
    *TOKEN_FIELDS,
    *FLAG_FIELDS,
    "slow",
    "file",
    "line",
)


@dataclass(frozen=True, slots=True)
class BadLine:
    file: str
    line: int  # 1-based
    reason: str  # Japanese


@dataclass(slots=True)
class FileRead:
    path: Path
    table: pa.Table  # AUDIT_SCHEMA plus file and line
    lines: int  # non-empty lines
    bad_count: int
    bad_lines: list[BadLine]


@dataclass(slots=True)
class AuditLog:
    frame: pd.DataFrame  # one row per readable record, columns COLUMNS
    files: list[Path] = field(default_factory=list)
    lines: int = 0
    bad_count: int = 0
    bad_lines: list[BadLine] = field(default_factory=list)

    @property
    def records(self) -> int:
        return len(self.frame)


# --- files ------------------------------------------------------------------------------------


def log_day(path: Path) -> date | None:
    m = _LOG_NAME.match(path.name)
    if not m:
        return None
    try:
        return date.fromisoformat(m.group(1))
    except ValueError:
        return None


def audit_files(logs_dir: Path, start: date | None = None, end: date | None = None) -> list[Path]:
    """The day files of ``logs_dir`` within [start, end] (inclusive), oldest first."""
    if not Path(logs_dir).is_dir():
        return []
    out = []
    for path in sorted(Path(logs_dir).glob(LOG_GLOB)):
        day = log_day(path)
        if day is None or (start and day < start) or (end and day > end):
            continue
        out.append(path)
    return out


# --- parsing ----------------------------------------------------------------------------------


def _coerce(record: Any) -> dict[str, Any] | None:
    """A record as a row of AUDIT_SCHEMA (wrong types become null); None if not a record."""
    if not isinstance(record, dict):
        return None
    row: dict[str, Any] = {}
    for name in _STRING_FIELDS:
        value = record.get(name)
        row[name] = value if isinstance(value, str) else None
    for name in _FLOAT_FIELDS:
        value = record.get(name)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        row[name] = float(value) if ok else None
    usage = record.get("token_usage")
    usage = usage if isinstance(usage, dict) else {}
    row["token_usage"] = {
        k: int(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
        for k, v in ((k, usage.get(k)) for k in TOKEN_FIELDS)
    }
    flags = record.get("flags")
    flags = flags if isinstance(flags, dict) else {}
    row["flags"] = {
        k: flags.get(k) if isinstance(flags.get(k), bool) else None for k in FLAG_FIELDS
    }
    slow = record.get("slow")
    row["slow"] = slow if isinstance(slow, bool) else None
    return row


def _line_by_line(
    lines: list[bytes], numbers: list[int], name: str, truncated_line: int | None
) -> tuple[pa.Table, list[int], list[BadLine]]:
    rows: list[dict[str, Any]] = []
    kept: list[int] = []
    bad: list[BadLine] = []
    for raw, number in zip(lines, numbers, strict=True):
        try:
            row = _coerce(_loads(raw))
        except _JSON_ERRORS:
            row = None
            reason = (
                "行が途中で切れています（書き込みの中断）"
                if number == truncated_line
                else "JSON として読めません"
            )
        else:
            reason = "監査レコード（JSON オブジェクト）ではありません"
        if row is None:
            bad.append(BadLine(name, number, reason))
            continue
        rows.append(row)
        kept.append(number)
    return pa.Table.from_pylist(rows, schema=AUDIT_SCHEMA), kept, bad


def _valid_utf8(blob: bytes) -> bool:
    """UTF-8 validation by Arrow (SIMD; Arrow's JSON reader does not validate strings)."""
    offsets = pa.py_buffer(struct.pack("<2q", 0, len(blob)))
    try:
        pa.LargeStringArray.from_buffers(1, offsets, pa.py_buffer(blob)).validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


_BLANK_LINE = re.compile(rb"(?:^|\n)[ \t\r]*\n")


def _fast(data: bytes) -> pa.Table | None:
    """The whole file in one multi-threaded pass, when every line is one record."""
    if not data.endswith(b"\n") or not _valid_utf8(data):
        return None  # the last line was cut short, or some line is not UTF-8
    if _BLANK_LINE.search(data):
        # Arrow skips blank lines; with two objects on another line the row count would still
        # match and every line number after them would be wrong
        return None
    try:
        table = pajson.read_json(io.BytesIO(data), read_options=_READ, parse_options=_PARSE)
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    # Arrow skips blank lines: then row numbers would not be line numbers
    return table if table.num_rows == data.count(b"\n") else None


def _read_block(lines: list[bytes]) -> pa.Table:
    blob = b"\n".join(lines)
    options = pajson.ReadOptions(use_threads=False, block_size=len(blob) + 1)
    table = pajson.read_json(io.BytesIO(blob), read_options=options, parse_options=_PARSE)
    if table.num_rows != len(lines):
        raise pa.ArrowInvalid("row count mismatch")  # e.g. two objects on one line
    return table


def _error_row(exc: Exception) -> int | None:
    m = _ERROR_ROW.search(str(exc))
    return int(m.group(1)) if m else None


@dataclass(slots=True)
class _Collected:
    name: str
    truncated: int | None
    tables: list[pa.Table] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)

    def add(self, table: pa.Table, numbers: list[int]) -> None:
        self.tables.append(table)
        self.numbers.extend(numbers)

    def one_by_one(self, lines: list[bytes], numbers: list[int]) -> None:
        table, kept, bad = _line_by_line(lines, numbers, self.name, self.truncated)
        self.add(table, kept)
        self.bad.extend(bad)


def _window(block: list[bytes], numbers: list[int], out: _Collected) -> None:
    """Parse a window; at a bad row, keep the rows before it and go on after it.

    Arrow stops at the first bad row and names it, so a window with k bad lines costs about
    k + 1 partial parses rather than a line-by-line pass. When Arrow cannot name the row (a
    line of control characters, two objects on one line), the window is halved until the bad
    line is alone or the pieces are small enough to read line by line.
    """
    i = 0
    while i < len(block):
        rest, rest_numbers = block[i:], numbers[i:]
        try:
            out.add(_read_block(rest), rest_numbers)
            return
        except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
            row = _error_row(exc)
        if row is None or row >= len(rest):
            if len(rest) <= MIN_SPLIT_LINES:
                out.one_by_one(rest, rest_numbers)
            else:
                half = len(rest) // 2
                _window(rest[:half], rest_numbers[:half], out)
                _window(rest[half:], rest_numbers[half:], out)
            return
        if row:
            try:
                out.add(_read_block(rest[:row]), rest_numbers[:row])
            except (pa.ArrowInvalid, UnicodeDecodeError):
                out.one_by_one(rest[:row], rest_numbers[:row])
        out.one_by_one(rest[row : row + 1], rest_numbers[row : row + 1])
        i += row + 1


def _drop_non_utf8(
    block: list[bytes], numbers: list[int], out: _Collected
) -> tuple[list[bytes], list[int]]:
    kept: list[bytes] = []
    kept_numbers: list[int] = []
    for raw, number in zip(block, numbers, strict=True):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            reason = (
                "行が途中で切れています（書き込みの中断）"
                if number == out.truncated
                else "UTF-8 として読めません"
            )
            out.bad.append(BadLine(out.name, number, reason))
            continue
        kept.append(raw)
        kept_numbers.append(number)
    return kept, kept_numbers


def _parse_window(
    name: str, truncated: int | None, block: list[bytes], numbers: list[int]
) -> _Collected:
    out = _Collected(name, truncated)
    if not _valid_utf8(b"\n".join(block)):
        block, numbers = _drop_non_utf8(block, numbers, out)
    _window(block, numbers, out)
    return out


def _tolerant(data: bytes, name: str) -> tuple[pa.Table, list[int], list[BadLine], int]:
    """Windows of BLOCK_LINES lines, each parsed around its bad lines (see ``_window``).

    Windows are independent, so they are parsed on a thread pool (Arrow releases the GIL).
    """
    lines = data.split(b"\n")
    ends_cleanly = data.endswith(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    keep = [i for i, raw in enumerate(lines) if raw and not raw.isspace()]
    body = [lines[i] for i in keep]
    numbers = [i + 1 for i in keep]
    truncated = numbers[-1] if numbers and not ends_cleanly else None
    starts = range(0, len(body), BLOCK_LINES)
    windows = [(body[i : i + BLOCK_LINES], numbers[i : i + BLOCK_LINES]) for i in starts]
    with ThreadPoolExecutor(max_workers=min(len(windows), os.cpu_count() or 2) or 1) as pool:
        parts = list(pool.map(lambda w: _parse_window(name, truncated, *w), windows))
    tables = [t for part in parts for t in part.tables]
    table = pa.concat_tables(tables) if tables else AUDIT_SCHEMA.empty_table()
    kept = [n for part in parts for n in part.numbers]
    return table, kept, [b for part in parts for b in part.bad], len(body)


def read_audit_file(path: Path) -> FileRead:
    """One day file, parsed (see the module docstring). A missing file reads as empty."""
    path = Path(path)
    name = path.name
    try:
        data = path.read_bytes()
    except OSError:
        return FileRead(path, _with_position(AUDIT_SCHEMA.empty_table(), name, []), 0, 0, [])
    table = _fast(data)
    if table is not None:
        numbers: list[int] | range = range(1, table.num_rows + 1)
        bad: list[BadLine] = []
        lines = table.num_rows
    else:
        table, numbers, bad, lines = _tolerant(data, name)
    table = _with_position(table, name, numbers)
    ts = table.column("timestamp")
    valid = pc.fill_null(pc.match_substring_regex(ts, _TIMESTAMP.pattern), False)
    if not pc.all(valid).as_py() and table.num_rows:
        for number in pc.filter(table.column("line"), pc.invert(valid)).to_pylist():
            bad.append(BadLine(name, int(number), "timestamp がありません"))
        table = table.filter(valid)
    bad.sort(key=lambda b: b.line)
    return FileRead(path, table, lines, len(bad), bad[:MAX_BAD_LINES_KEPT])


def _with_position(table: pa.Table, name: str, numbers: list[int] | range) -> pa.Table:
    n = table.num_rows
    table = table.append_column(
        "file", pa.array([name] * n, pa.string()) if n else pa.array([], pa.string())
    )
    return table.append_column("line", pa.array(numbers, pa.int64()))


def _frame(table: pa.Table) -> pd.DataFrame:
    """The dashboard's frame (COLUMNS) from parsed records."""
    frame = table.flatten().to_pandas()
    frame = frame.rename(
        columns={
            "processing_time_sec": "latency_sec",
            **{f"token_usage.{k}": k for k in TOKEN_FIELDS},
            **{f"flags.{k}": k for k in FLAG_FIELDS},
        }
    )
    for k in TOKEN_FIELDS:
        frame[k] = frame[k].fillna(0).astype("int64")
    for k in (*FLAG_FIELDS, "slow"):
        frame[k] = frame[k].fillna(False).astype(bool)
    frame["cost_usd"] = frame["cost_usd"].fillna(0.0)
    frame["page"] = frame["page"].fillna("unknown")
    frame["answer_mode"] = frame["answer_mode"].fillna("unknown")
    frame["user"] = frame["user"].fillna("local")
    frame["user_name"] = frame["user_name"].fillna(frame["user"])
    frame["role"] = frame["role"].fillna("admin")
    frame["date"] = frame["timestamp"].str.slice(0, 10)
    return frame[list(COLUMNS)]


_cache: OrderedDict[tuple[str, int, int], FileRead] = OrderedDict()
_cache_lock = threading.Lock()


def _cached_read(path: Path) -> FileRead:
    try:
        st = path.stat()
    except OSError:
        return read_audit_file(path)
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    result = read_audit_file(path)
    with _cache_lock:
        _cache[key] = result
        while len(_cache) > CACHE_FILES:
            _cache.popitem(last=False)
    return result


def load_audit_log(
    logs_dir: Path,
    start: date | None = None,
    end: date | None = None,
    *,
    files: Iterable[Path] | None = None,
    use_cache: bool = True,
) -> AuditLog:
    """The audit records of ``logs_dir`` within [start, end] (by file and by record date)."""
    paths = list(files) if files is not None else audit_files(logs_dir, start, end)
    reads = [(_cached_read(p) if use_cache else read_audit_file(p)) for p in paths]
    tables = [r.table for r in reads if r.table.num_rows]
    table = (
        pa.concat_tables(tables) if tables else _with_position(AUDIT_SCHEMA.empty_table(), "", [])
    )
    if table.num_rows and (start is not None or end is not None):
        day = pc.utf8_slice_codeunits(table.column("timestamp"), 0, 10)
        keep = pc.and_(
            pc.greater_equal(day, start.isoformat()) if start else pc.is_valid(day),
            pc.less_equal(day, end.isoformat()) if end else pc.is_valid(day),
        )
        table = table.filter(keep)
    bad = [b for r in reads for b in r.bad_lines]
    return AuditLog(
        frame=_frame(table),
        files=paths,
        lines=sum(r.lines for r in reads),
        bad_count=sum(r.bad_count for r in reads),
        bad_lines=bad,
    )


def find_line(path: Path, line: int) -> bytes | None:
    """The raw bytes of 1-based ``line`` of ``path``."""
    try:
        with Path(path).open("rb") as fh:
            for number, raw in enumerate(fh, start=1):
                if number == line:
                    return raw
    except OSError:
        return None
    return None


def read_record(path: Path, line: int) -> AuditRecord | None:
    """The full record on 1-based ``line`` of ``path`` (None when unreadable or not a record)."""
    raw = find_line(path, line)
    if raw is None:
        return None
    try:
        return AuditRecord.from_line(_loads(raw))
    except _JSON_ERRORS:
        return None
