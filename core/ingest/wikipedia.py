"""Wikipedia sources -> normalized article ``Document``s, and the JSQuAD dev set (make-dev).

Three source shapes, several at once (``parse_sources("a.jsonl,jsquad:b.json")``):

- ``hf:<config>``: Hugging Face ``datasets`` Wikipedia (``20231101.ja``, falling back to
  ``20220301.ja``), streamed, first ``max_articles`` records. ``datasets`` is imported lazily;
  without it (or without the hub) the error names the local options.
- a JSONL or Parquet file of ``{id, title, text}`` records (``id`` optional; ``.json`` holding a
  list of such records is accepted too).
- ``jsquad:<path>``: JSQuAD-format JSON (SQuAD v1 layout). Each title's paragraphs are
  concatenated in order into one article, the ``title [SEP] `` prefix removed.

Articles are normalized with ``normalize_article`` (safe NFKC, whitespace folded, trimmed). A
title given by two sources is kept once (the first source wins). Every problem with a source
(missing, unreadable, malformed, empty) raises ``InputError`` with a Japanese message *before*
anything is indexed, so a bad source never damages an index.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from core.errors import InputError
from core.schemas.documents import Document
from core.text.normalize import normalize_article

log = logging.getLogger(__name__)

DEFAULT_HF_CONFIG = "20231101.ja"
FALLBACK_HF_CONFIG = "20220301.ja"
HF_DEFAULT_MAX = 30_000  # the design's MAX_ARTICLES, used for hf: sources without --max
SEP = " [SEP] "

LOCAL_OPTIONS_JA = (
    "ローカルの記事ファイル（{id, title, text} の JSONL または Parquet のパス）か、"
    "JSQuAD 形式の JSON（jsquad:<パス>）を --source に指定してください"
    "（例: --source jsquad:$WB_DATASETS_DIR/jsquad-v1.3/valid-v1.3.json）。"
)


@dataclass(frozen=True, slots=True)
class SourceSpec:
    kind: str  # "hf" | "records" | "jsquad"
    value: str  # the HF config or the file path
    raw: str  # as the user wrote it

    @property
    def path(self) -> Path:
        return Path(self.value).expanduser()


@dataclass(frozen=True, slots=True)
class Article:
    title: str
    text: str  # raw (not yet normalized)
    article_id: str = ""
    updated_at: str = ""


@dataclass
class LoadReport:
    articles: list[Document] = field(default_factory=list)
    per_source: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0  # titles already given by an earlier source
    empty: int = 0  # records without text after normalization


def parse_sources(
    text: str | Iterable[str], default_config: str = DEFAULT_HF_CONFIG
) -> list[SourceSpec]:
    """``"hf:20231101.ja,articles.jsonl,jsquad:valid.json"`` -> specs (no file is opened here)."""
    parts: list[str] = []
    for item in [text] if isinstance(text, str) else list(text):
        parts.extend(p.strip() for p in str(item).split(","))
    parts = [p for p in parts if p]
    if not parts:
        raise InputError("ソースが指定されていません。" + LOCAL_OPTIONS_JA)
    specs: list[SourceSpec] = []
    for part in parts:
        if part == "hf" or part.startswith("hf:"):
            config = part[3:].strip() or default_config
            specs.append(SourceSpec("hf", config, part))
        elif part.startswith("jsquad:"):
            path = part[len("jsquad:") :].strip()
            if not path:
                raise InputError("jsquad: の後に JSQuAD 形式 JSON のパスを指定してください。")
            specs.append(SourceSpec("jsquad", path, part))
        else:
            suffix = Path(part).suffix.lower()
            if suffix not in (".jsonl", ".parquet", ".json"):
                raise InputError(
                    f"ソース「{part}」の形式が分かりません。hf:<config>、"
                    ".jsonl / .parquet / .json のパス、または jsquad:<パス> を指定してください。"
                )
            specs.append(SourceSpec("records", part, part))
    return specs


def _existing_file(spec: SourceSpec) -> Path:
    path = spec.path
    if not path.exists():
        raise InputError(f"ソース「{spec.raw}」が見つかりません。パスを確認してください。")
    if not path.is_file():
        raise InputError(f"ソース「{spec.raw}」はファイルではありません。")
    if path.stat().st_size == 0:
        raise InputError(f"ソース「{spec.raw}」は空のファイルです。")
    return path


def _mtime_iso(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).isoformat(timespec="seconds")


def _record_article(record: object, where: str, updated_at: str) -> Article:
    if not isinstance(record, dict):
        raise InputError(
            f"{where}: レコードは {{id, title, text}} のオブジェクトである必要があります。"
        )
    title, text = record.get("title"), record.get("text")
    if not isinstance(title, str) or not isinstance(text, str):
        raise InputError(f"{where}: 文字列の title と text が必要です（{{id, title, text}}）。")
    return Article(
        title=title, text=text, article_id=str(record.get("id", "")), updated_at=updated_at
    )


def _iter_jsonl(spec: SourceSpec, path: Path) -> Iterator[Article]:
    updated = _mtime_iso(path)
    with path.open("r", encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"ソース「{spec.raw}」の {number} 行目を JSON として読み込めません。",
                    detail=str(exc),
                ) from exc
            yield _record_article(record, f"ソース「{spec.raw}」の {number} 行目", updated)


def _iter_parquet(spec: SourceSpec, path: Path) -> Iterator[Article]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # ArrowInvalid, OSError, …
        raise InputError(
            f"ソース「{spec.raw}」を Parquet として読み込めません。", detail=str(exc)
        ) from exc
    missing = {"title", "text"} - set(table.column_names)
    if missing:
        raise InputError(
            f"ソース「{spec.raw}」に列 {', '.join(sorted(missing))} がありません"
            "（必要な列: id, title, text）。"
        )
    updated = _mtime_iso(path)
    for number, record in enumerate(table.to_pylist(), start=1):
        yield _record_article(record, f"ソース「{spec.raw}」の {number} 件目", updated)


def _read_json(spec: SourceSpec, path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(
            f"ソース「{spec.raw}」を JSON として読み込めません（UTF-8 の JSON を指定してください）。",
            detail=str(exc),
        ) from exc


@dataclass(frozen=True, slots=True)
class JsquadParagraph:
    text: str  # raw paragraph text, prefix removed
    prefix_len: int  # characters removed from the context ("title [SEP] ")
    qas: list
    context: str = ""  # the context as written in the file


def jsquad_articles(spec: SourceSpec) -> list[tuple[str, list[JsquadParagraph]]]:
    """(title, paragraphs in order) of a JSQuAD-format file; raises InputError when malformed."""
    path = _existing_file(spec)
    data = _read_json(spec, path)
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise InputError(
            f"ソース「{spec.raw}」は JSQuAD 形式ではありません"
            '（{"data": [{"title", "paragraphs": [{"context", "qas"}]}]} の形）。'
        )
    merged: dict[str, list[JsquadParagraph]] = {}
    for n, entry in enumerate(entries, start=1):
        paragraphs = entry.get("paragraphs") if isinstance(entry, dict) else None
        title = entry.get("title") if isinstance(entry, dict) else None
        if not isinstance(title, str) or not isinstance(paragraphs, list):
            raise InputError(
                f"ソース「{spec.raw}」の data[{n - 1}] に title と paragraphs がありません。"
            )
        for p in paragraphs:
            context = p.get("context") if isinstance(p, dict) else None
            if not isinstance(context, str):
                raise InputError(
                    f"ソース「{spec.raw}」の記事「{title}」に context のない段落があります。"
                )
            head, sep, body = context.partition(SEP)
            if sep and head.strip() == title.strip():
                prefix_len, text = len(head) + len(sep), body
            else:
                prefix_len, text = 0, context
            merged.setdefault(title.strip(), []).append(
                JsquadParagraph(text, prefix_len, list(p.get("qas") or []), context)
            )
    return list(merged.items())


def _iter_jsquad(spec: SourceSpec) -> Iterator[Article]:
    updated = _mtime_iso(spec.path)
    for title, paragraphs in jsquad_articles(spec):
        yield Article(title, "\n".join(p.text for p in paragraphs), title, updated)


def _iter_hf(spec: SourceSpec) -> Iterator[Article]:
    try:
        import datasets
    except ImportError as exc:
        raise InputError(
            "Hugging Face の datasets パッケージがインストールされていないため、"
            f"Wikipedia（{spec.value}）を取得できません。" + LOCAL_OPTIONS_JA,
            detail=str(exc),
        ) from exc
    configs = [spec.value] + ([FALLBACK_HF_CONFIG] if spec.value != FALLBACK_HF_CONFIG else [])
    errors: list[str] = []
    for config in configs:
        for repo in ("wikimedia/wikipedia", "wikipedia"):
            try:
                stream = datasets.load_dataset(repo, config, split="train", streaming=True)
                iterator = iter(stream)
                first = next(iterator)
            except Exception as exc:  # no hub, unknown config, …
                errors.append(f"{repo}/{config}: {type(exc).__name__}: {exc}")
                continue
            log.info("Streaming Wikipedia from %s (%s)", repo, config)
            updated = _hf_date(config)
            yield _record_article(first, f"{repo}/{config}", updated)
            for record in iterator:
                yield _record_article(record, f"{repo}/{config}", updated)
            return
    raise InputError(
        f"Hugging Face Hub から Wikipedia（{spec.value}、予備 {FALLBACK_HF_CONFIG}）を"
        "取得できません（ネットワークに接続できないか、設定名が不正です）。" + LOCAL_OPTIONS_JA,
        detail=" | ".join(errors)[:1000],
    )


def _hf_date(config: str) -> str:
    try:
        return datetime.strptime(config.split(".")[0], "%Y%m%d").replace(tzinfo=UTC).isoformat()
    except ValueError:
        return ""


def iter_source(spec: SourceSpec) -> Iterator[Article]:
    """Raw articles of one source, in source order."""
    if spec.kind == "hf":
        yield from _iter_hf(spec)
    elif spec.kind == "jsquad":
        yield from _iter_jsquad(spec)
    else:
        path = _existing_file(spec)
        suffix = path.suffix.lower()
        if suffix == ".parquet":
            yield from _iter_parquet(spec, path)
        elif suffix == ".jsonl":
            yield from _iter_jsonl(spec, path)
        else:  # .json: a list of records, or JSQuAD
            data = _read_json(spec, path)
            if isinstance(data, dict) and "data" in data:
                yield from _iter_jsquad(SourceSpec("jsquad", spec.value, spec.raw))
                return
            if not isinstance(data, list):
                raise InputError(
                    f"ソース「{spec.raw}」は {{id, title, text}} のレコードの配列ではありません。"
                )
            updated = _mtime_iso(path)
            for n, record in enumerate(data, start=1):
                yield _record_article(record, f"ソース「{spec.raw}」の {n} 件目", updated)


def article_document(article: Article) -> Document:
    """The normalized ``Document`` of an article: doc id and source ``jawiki:<title>``."""
    title = " ".join(article.title.split())
    raw = f"{title}\n{article.text}"
    return Document(
        doc_id=f"jawiki:{title}",
        source=f"jawiki:{title}",
        title=title,
        text=normalize_article(article.text),
        updated_at=article.updated_at,
        content_hash=hashlib.sha256(raw.encode("utf-8")).hexdigest(),
        kind="article",
    )


def load_articles(specs: list[SourceSpec], max_articles: int | None = None) -> LoadReport:
    """Every article of every source (first title wins), at most ``max_articles`` in all.

    Raises ``InputError`` when a source is missing, malformed or yields no article.
    """
    for spec in specs:  # every local file is checked before any is read
        if spec.kind != "hf":
            _existing_file(spec)
    report = LoadReport()
    seen: set[str] = set()
    for spec in specs:
        limit = max_articles
        if limit is None and spec.kind == "hf":
            limit = HF_DEFAULT_MAX
        count = 0
        duplicates_before = report.duplicates
        for article in iter_source(spec):
            if limit is not None and len(report.articles) >= limit:
                break
            doc = article_document(article)
            if not doc.title or not doc.text:
                report.empty += 1
                continue
            if doc.doc_id in seen:
                report.duplicates += 1
                continue
            seen.add(doc.doc_id)
            report.articles.append(doc)
            count += 1
        report.per_source[spec.raw] = count
        if (
            count == 0
            and report.duplicates == duplicates_before
            and (max_articles is None or len(report.articles) < max_articles)
        ):
            raise InputError(
                f"ソース「{spec.raw}」に索引できる記事がありません（空か、title / text が空です）。"
            )
    return report
