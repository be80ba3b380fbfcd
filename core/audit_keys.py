"""The audit log's keys: HMAC-SHA256 keys kept outside the log folder, and the chain's anchor.

A key ring (``keys/audit-keys.json`` under the state folder, created 0600 in a 0700 folder on
first use) holds every key the log was ever signed with, by id, and which one is current; a
rotation adds a key and records the change in the chain (``core.audit.rotate_key``). A key may
instead come from a secret store through ``WB_AUDIT_KEY`` (64 hex characters): the ring then
holds that one key, id ``env``.

The anchor (``keys/audit-anchor-<digest of the log folder>.json``) holds the chain's tip (file,
line count, last hash), signed with the current key. It lives beside the keys, not in the log
folder, so that deleting the newest lines, the newest day, or a whole log with its head is
evident to ``verify_log`` even though nothing is left in the log folder to compare with.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import WorkbenchError
from core.private import private_dir

KEY_BYTES = 32
ENV_KEY_ID = "env"


class AuditKeyError(WorkbenchError):
    """No usable key (missing, unreadable, wrong length): the log cannot be signed or checked."""


def keys_dir_for(logs_dir: Path) -> Path:
    """Where the keys of ``logs_dir`` live by default: ``keys/`` beside the log folder."""
    return Path(logs_dir).resolve().parent / "keys"


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` atomically with mode 0600 in a 0700 folder."""
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


write_private = _write_private  # for other modules: offsets, manifests


@dataclass(frozen=True, slots=True)
class KeyRing:
    current: str
    keys: dict[str, bytes]
    path: Path | None  # the ring file (None for a key from the environment)

    def mac(self, message: str, key_id: str | None = None) -> str:
        key = self.keys[key_id or self.current]
        return hmac.new(key, message.encode("utf-8"), hashlib.sha256).hexdigest()

    def check(self, message: str, mac: str, key_id: str) -> bool:
        return key_id in self.keys and hmac.compare_digest(self.mac(message, key_id), mac)

    @classmethod
    def from_hex(cls, value: str) -> KeyRing:
        try:
            key = bytes.fromhex(value.strip())
        except ValueError as exc:
            raise AuditKeyError(
                "WB_AUDIT_KEY は 16 進数で指定してください（64 文字）。", detail=str(exc)
            ) from exc
        if len(key) != KEY_BYTES:
            raise AuditKeyError(
                f"WB_AUDIT_KEY の長さが不正です（{len(key)} バイト。{KEY_BYTES} バイト = 16 進 64 文字）。"
            )
        return cls(ENV_KEY_ID, {ENV_KEY_ID: key}, None)

    @classmethod
    def load(cls, path: Path, *, create: bool) -> KeyRing:
        """The ring in ``path``; with ``create``, a new one (one random key) when it is missing."""
        if not path.exists():
            if not create:
                raise AuditKeyError(
                    f"監査ログの鍵（{path}）がありません。鍵が無いと改ざんを確認できません。"
                    "鍵を保管場所から戻すか、WB_AUDIT_KEY で指定してください。"
                )
            ring = cls("k1", {"k1": secrets.token_bytes(KEY_BYTES)}, path)
            if ring._create():
                return ring
            # Another process created the ring first: use that one (never two first keys).
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            keys = {str(k): bytes.fromhex(v) for k, v in data["keys"].items()}
            current = str(data["current"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise AuditKeyError(
                f"監査ログの鍵（{path}）を読み込めません。", detail=str(exc)
            ) from exc
        bad = [k for k, v in keys.items() if len(v) != KEY_BYTES]
        if current not in keys or bad:
            raise AuditKeyError(f"監査ログの鍵（{path}）の内容が不正です（鍵 {bad or current}）。")
        return cls(current, keys, path)

    def _create(self) -> bool:
        """Write a new ring only if none exists (atomic, no overwrite); False when one did."""
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}.new")
        data = {"current": self.current, "keys": {k: v.hex() for k, v in self.keys.items()}}
        _write_private(tmp, json.dumps(data, indent=2))
        try:
            os.link(tmp, self.path)  # fails when the ring exists: concurrent first runs agree
            return True
        except FileExistsError:
            return False
        finally:
            tmp.unlink(missing_ok=True)

    def save(self) -> None:
        if self.path is None:
            raise AuditKeyError("環境変数で与えた鍵（WB_AUDIT_KEY）はここでは交替できません。")
        data = {"current": self.current, "keys": {k: v.hex() for k, v in self.keys.items()}}
        _write_private(self.path, json.dumps(data, indent=2))

    def with_new_key(self) -> KeyRing:
        number = 1 + max((int(k[1:]) for k in self.keys if k[1:].isdigit()), default=0)
        new_id = f"k{number}"
        keys = {**self.keys, new_id: secrets.token_bytes(KEY_BYTES)}
        return KeyRing(new_id, keys, self.path)


def anchor_path(keys_dir: Path, logs_dir: Path) -> Path:
    digest = hashlib.sha256(str(Path(logs_dir).resolve()).encode()).hexdigest()[:16]
    return keys_dir / f"audit-anchor-{digest}.json"


def _anchor_message(file: str, lines: int, last_hash: str) -> str:
    return f"anchor\n{file}\n{lines}\n{last_hash}"


def write_anchor(path: Path, ring: KeyRing, file: str, lines: int, last_hash: str) -> None:
    mac = ring.mac(_anchor_message(file, lines, last_hash))
    data = {"file": file, "lines": lines, "hash": last_hash, "key_id": ring.current, "mac": mac}
    _write_private(path, json.dumps(data))


def read_anchor(path: Path, ring: KeyRing) -> dict[str, Any] | None:
    """The anchor when it exists and its signature holds; ``{}`` when it was altered."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        message = _anchor_message(str(data["file"]), int(data["lines"]), str(data["hash"]))
        ok = ring.check(message, str(data["mac"]), str(data["key_id"]))
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return data if ok else {}
