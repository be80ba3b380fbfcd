"""Signed manifests for persisted index files: nothing is loaded that this workbench did not write.

Every index artifact on disk (the keyword index's bm25s arrays and JSON sidecar, the FAISS
vector file of the wiki corpus, the exported ``wiki.index`` and its metas) is written with a
manifest ``<name>.manifest.json`` beside it:

    {"format": "wb-index", "format_version": 1, "kind": "...", "embedder": "...", "dim": 384,
     "generation": 7, "files": {"<file>": {"sha256": "...", "bytes": 123}},
     "key_id": "k1", "mac": "<HMAC-SHA256 of the canonical manifest without mac>"}

The HMAC key is of the same kind as the audit log's (``core.audit_keys.KeyRing``): a separate
ring ``keys/index-keys.json`` under the state folder (0600 in a 0700 folder, created on first
use), or ``WB_INDEX_KEY`` from a secret store. ``check_manifest`` refuses a missing, foreign or
altered manifest, a file whose digest differs, a format or generation that is not the expected
one: ``IndexIntegrityError`` with a Japanese message. Callers log it and rebuild the index from
its source of truth (the chunk store); no index file is ever unpickled or executed.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.audit_keys import AuditKeyError, KeyRing, write_private
from core.errors import IndexStateError
from core.settings import Settings

log = logging.getLogger(__name__)

MANIFEST_FORMAT = "wb-index"
MANIFEST_VERSION = 1
INDEX_KEYS_FILE = "index-keys.json"


class IndexIntegrityError(IndexStateError):
    """An index file is missing its manifest, foreign, or altered: refused, to be rebuilt."""


def manifest_path(path: Path) -> Path:
    return path.with_name(path.name + ".manifest.json")


def index_keyring(settings: Settings) -> KeyRing:
    """``WB_INDEX_KEY`` when set, else the ring ``keys/index-keys.json`` under the state folder."""
    if settings.index_key is not None:
        return KeyRing.from_hex(settings.index_key.get_secret_value())
    return KeyRing.load(settings.state_root / "keys" / INDEX_KEYS_FILE, create=True)


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _canonical(manifest: dict[str, Any]) -> str:
    body = {k: v for k, v in manifest.items() if k != "mac"}
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class IndexSeal:
    """What a persisted index is signed with and checked against: the key and the embedder."""

    keys: KeyRing
    embedder: str = ""
    dim: int = 0

    @classmethod
    def for_settings(cls, settings: Settings, embedder: str = "", dim: int = 0) -> IndexSeal:
        return cls(index_keyring(settings), embedder, dim)

    def write(self, path: Path, kind: str, files: list[Path], generation: int) -> None:
        """Sign ``files`` (all in ``path``'s folder) as the index ``kind`` of ``generation``."""
        manifest: dict[str, Any] = {
            "format": MANIFEST_FORMAT,
            "format_version": MANIFEST_VERSION,
            "kind": kind,
            "embedder": self.embedder,
            "dim": self.dim,
            "generation": generation,
            "files": {f.name: {"sha256": file_digest(f), "bytes": f.stat().st_size} for f in files},
            "key_id": self.keys.current,
        }
        manifest["mac"] = self.keys.mac(_canonical(manifest))
        write_private(manifest_path(path), json.dumps(manifest, ensure_ascii=False, indent=1))

    def check(self, path: Path, kind: str, generation: int | None = None) -> dict[str, Any]:
        """The verified manifest of the index ``path``; IndexIntegrityError when it does not hold."""
        where = manifest_path(path)

        def refuse(reason: str, detail: str | None = None) -> IndexIntegrityError:
            return IndexIntegrityError(
                f"索引ファイル「{path}」を読み込みません（{reason}）。索引を作り直します。",
                detail=detail,
            )

        try:
            manifest = json.loads(where.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise refuse(
                "署名付きの目録がありません。このワークベンチが書いたものではありません"
            ) from exc
        except (OSError, ValueError) as exc:
            raise refuse("目録が読めません", str(exc)) from exc
        if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
            raise refuse("目録の形式が不正です")
        try:
            ok = self.keys.check(
                _canonical(manifest), str(manifest.get("mac")), str(manifest.get("key_id"))
            )
        except AuditKeyError as exc:  # pragma: no cover - KeyRing.check does not raise
            raise refuse("鍵を使えません", str(exc)) from exc
        if not ok:
            raise refuse("目録の署名が一致しません。外部から置かれたか書き換えられたファイルです")
        if manifest.get("format_version") != MANIFEST_VERSION or manifest.get("kind") != kind:
            raise refuse(
                f"形式 {manifest.get('kind')} v{manifest.get('format_version')} は対象外です"
            )
        if self.embedder and (manifest.get("embedder"), manifest.get("dim")) != (
            self.embedder,
            self.dim,
        ):
            raise refuse(
                f"埋め込みモデル {manifest.get('embedder')}/{manifest.get('dim')} で作られています"
                f"（現在は {self.embedder}/{self.dim}）"
            )
        if generation is not None and manifest.get("generation") != generation:
            raise refuse(
                f"世代 {manifest.get('generation')} は現在の世代 {generation} と異なります"
            )
        files = manifest.get("files")
        if not isinstance(files, dict) or not files:
            raise refuse("目録にファイルがありません")
        for name, meta in files.items():
            file = path.parent / name
            if Path(name).name != name or not file.is_file():
                raise refuse(f"ファイル {name} がありません")
            if not isinstance(meta, dict) or file_digest(file) != meta.get("sha256"):
                raise refuse(f"ファイル {name} の内容が署名と一致しません（改ざん）")
        return manifest


def refused(exc: IndexIntegrityError) -> None:
    """Log a refused index file (the caller rebuilds it)."""
    log.warning("%s", exc.user_message + (f" ({exc.detail})" if exc.detail else ""))
