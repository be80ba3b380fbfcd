"""Runbook collections: which runbooks a principal may see, decided per collection.

A collection is a first-level sub-folder of the runbook data folder (``network/vpn.md`` is in
``network``); files at the top level are in the ``default`` collection. Every chunk carries its
collection from index time (``Chunk.collection``) and the search engine drops the chunks outside
the principal's collections before ranking (``core.retrieval.searcher``).

Who sees what (``CollectionRules.allowed_for``):

- ``LOCAL`` (no sign-in) and signed-in admins: every collection (``None``, no filter). Admins
  manage the data folder and rebuild its indexes, so hiding its contents from them would hide
  nothing.
- Any other signed-in principal: the public collections, the collections the manifest maps to
  one of their groups, and a collection not named in the manifest whose name is one of their
  groups (the convention without a manifest: folder ``network`` for group ``network``).

The optional manifest ``collections.yaml`` (or ``.yml`` / ``.json``) in the data folder::

    public: [default, general]       # visible to every signed-in user (default: [default])
    collections:
      network: [soc-network, soc-leads]
      malware:
        groups: [soc-malware]

It is read with ``yaml.safe_load`` (no code, no tags). Fail closed: a manifest that cannot be read
(syntax, encoding, size, shape, an unknown key) makes every collection invisible to signed-in
non-admins; an entry that cannot be read makes that collection invisible to them. Problems are
Japanese messages, logged once per version of the manifest and shown to admins; a manifest that
names a missing folder is reported and the rest works.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.access import Principal

log = logging.getLogger(__name__)

DEFAULT_COLLECTION = "default"
MANIFEST_NAMES = ("collections.yaml", "collections.yml", "collections.json")
MAX_MANIFEST_BYTES = 256 * 1024
_KEYS = {"public", "collections"}


def collection_of(doc_id: str) -> str:
    """The collection of a document id (its path relative to the data folder)."""
    head, sep, _ = doc_id.replace("\\", "/").partition("/")
    return head if sep and head else DEFAULT_COLLECTION


@dataclass(frozen=True, slots=True)
class CollectionRules:
    """The manifest of one data folder, as read (or the defaults when there is none)."""

    public: frozenset[str] = frozenset({DEFAULT_COLLECTION})
    groups: Mapping[str, frozenset[str]] = field(default_factory=dict)  # listed collections
    closed: frozenset[str] = frozenset()  # collections whose rule could not be read
    all_closed: bool = False  # the manifest could not be read at all
    problems: tuple[str, ...] = ()  # Japanese messages for admins
    manifest: Path | None = None
    folders: frozenset[str] | None = None  # the data folder's first-level folders (None: unknown)

    def allowed_for(self, principal: Principal) -> frozenset[str] | None:
        """The collections ``principal`` may see; ``None`` means all (no filter)."""
        if not principal.signed_in or principal.role == "admin":
            return None
        if self.all_closed:
            return frozenset()
        mine = {g for g in principal.groups if g}
        allowed = set(self.public)
        allowed |= {name for name, groups in self.groups.items() if groups & mine}
        allowed |= {
            g for g in mine if g not in self.groups and (self.folders is None or g in self.folders)
        }
        return frozenset(allowed - self.closed)


def allows(allowed: Collection[str] | None, collection: str) -> bool:
    """Whether a collection is inside an allowed set (``None``: everything)."""
    return allowed is None or collection in allowed


def _string_list(value: Any) -> list[str] | None:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        return None
    return [v.strip() for v in value]


def _closed_all(path: Path, why: str) -> CollectionRules:
    message = (
        f"コレクションの設定ファイル「{path.name}」を読み込めません（{why}）。"
        "サインインした管理者以外には、どの手順書も表示されません。設定ファイルを修正してください。"
    )
    return CollectionRules(all_closed=True, problems=(message,), manifest=path)


def parse_manifest(path: Path, raw: bytes, folders: Iterable[str] = ()) -> CollectionRules:
    """The rules of a manifest's bytes; ``folders`` are the data folder's first-level folders
    (a collection named in the manifest without a folder is reported)."""
    import yaml

    if len(raw) > MAX_MANIFEST_BYTES:
        return _closed_all(path, f"{MAX_MANIFEST_BYTES // 1024} KiB を超えています")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return _closed_all(path, "UTF-8 ではありません")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        where = getattr(exc, "problem_mark", None) or getattr(exc, "lineno", None)
        line = f"{where.line + 1} 行目付近の" if hasattr(where, "line") else ""
        return _closed_all(path, f"{line}書式が正しくありません")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return _closed_all(path, "最上位は public と collections を持つ対応表にしてください")
    unknown = sorted(str(k) for k in data if k not in _KEYS)
    if unknown:
        return _closed_all(
            path, f"不明な項目 {', '.join(unknown)}。使えるのは public と collections"
        )
    public = [DEFAULT_COLLECTION]
    if "public" in data:
        listed = [] if data["public"] is None else _string_list(data["public"])
        if listed is None:
            return _closed_all(path, "public はコレクション名の一覧にしてください")
        public = listed
    entries = data.get("collections") or {}
    if not isinstance(entries, dict):
        return _closed_all(path, "collections はコレクション名からグループへの対応表にしてください")

    problems: list[str] = []
    groups: dict[str, frozenset[str]] = {}
    closed: set[str] = set()
    for name, rule in entries.items():
        name = str(name)
        value = rule.get("groups") if isinstance(rule, dict) and set(rule) == {"groups"} else rule
        members = _string_list(value)
        if members is None:
            closed.add(name)
            problems.append(
                f"コレクション「{name}」の設定を読み込めません（groups はグループ名の一覧にしてください）。"
                "このコレクションはサインインした管理者以外には表示されません。"
            )
            continue
        groups[name] = frozenset(members)
    if "public" not in data and DEFAULT_COLLECTION in groups:
        public = []  # the manifest gives the default collection groups of its own
    folders = frozenset(folders)
    known = folders | {DEFAULT_COLLECTION}
    for name in sorted((set(groups) | closed | set(public)) - known):
        problems.append(
            f"コレクションの設定ファイル「{path.name}」に書かれたコレクション「{name}」の"
            "フォルダが見つかりません。フォルダ名を確認してください（ほかのコレクションは使えます）。"
        )
    return CollectionRules(
        public=frozenset(public),
        groups=groups,
        closed=frozenset(closed),
        problems=tuple(problems),
        manifest=path,
        folders=frozenset(folders),
    )


def _subfolders(folder: Path) -> list[str]:
    try:
        return [p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")]
    except OSError:
        return []


_cache: dict[str, tuple[tuple, CollectionRules]] = {}
_cache_lock = threading.Lock()


def load_rules(folder: Path) -> CollectionRules:
    """The rules of a data folder (cached until the manifest or the folder changes)."""
    manifest = next((folder / n for n in MANIFEST_NAMES if (folder / n).is_file()), None)
    try:
        folder_stat = folder.stat().st_mtime_ns
        stat = manifest.stat() if manifest else None
    except OSError:
        folder_stat, stat = 0, None
    version = (folder_stat, stat.st_mtime_ns if stat else None, stat.st_size if stat else None)
    key = str(folder)
    with _cache_lock:
        cached = _cache.get(key)
        if cached and cached[0] == version:
            return cached[1]
    if manifest is None:
        rules = CollectionRules(folders=frozenset(_subfolders(folder)))
    else:
        try:
            with manifest.open("rb") as fh:
                raw = fh.read(MAX_MANIFEST_BYTES + 1)
        except OSError:
            rules = _closed_all(manifest, "ファイルを開けません")
        else:
            rules = parse_manifest(manifest, raw, _subfolders(folder))
    for problem in rules.problems:
        log.warning("collections manifest %s: %s", manifest, problem)
    with _cache_lock:
        _cache[key] = (version, rules)
    return rules


def allowed_collections(principal: Principal, folder: Path) -> frozenset[str] | None:
    """The collections of ``folder`` that ``principal`` may see (``None``: all)."""
    if not principal.signed_in or principal.role == "admin":
        return None  # no need to read the manifest
    return load_rules(folder).allowed_for(principal)


__all__ = [
    "DEFAULT_COLLECTION",
    "MANIFEST_NAMES",
    "CollectionRules",
    "allowed_collections",
    "allows",
    "collection_of",
    "load_rules",
    "parse_manifest",
]
