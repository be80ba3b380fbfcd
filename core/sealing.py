"""Encryption at rest for stores that must keep what users wrote (AES-256-GCM).

The interview store keeps answers verbatim, because the document it writes needs them (the
escalation phone number of an SOP is content, not a leak), so it is sealed instead of masked:
each sensitive column holds ``enc1:<base64(nonce | ciphertext | tag)>``, authenticated with the
column's name, so a row copied into another column or edited by hand does not open.

The key is 32 random bytes in ``keys/store-key.json`` under the state folder (the folder of the
audit keys, outside the data and log folders; created 0600 in a 0700 folder on first use, once
even when two processes race), or comes from a secret store through ``WB_STORE_KEY``
(64 hex characters). Values written before sealing (no ``enc1:`` prefix) still read as they are
and are sealed on their next write. A value that does not open (another key, an edit) raises
``SealError``; the store treats the row as corrupt, keeps it, and recovers from the WAL.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from core.errors import WorkbenchError
from core.private import private_dir

PREFIX = "enc1:"
KEY_BYTES = 32
NONCE_BYTES = 12
KEY_FILE = "store-key.json"


class SealError(WorkbenchError):
    """A sealed value cannot be opened (wrong key, edited) or the key is unusable."""


def default_key_path(db_path: Path) -> Path:
    """``keys/store-key.json`` beside the store's folder (``<state>/state/x.sqlite`` ->
    ``<state>/keys/``), the folder that holds the audit keys."""
    return Path(db_path).resolve().parent.parent / "keys" / KEY_FILE


def _read_key(path: Path) -> bytes:
    try:
        key = bytes.fromhex(json.loads(path.read_text(encoding="utf-8"))["key"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SealError(f"保存データの暗号鍵（{path}）を読み込めません。", detail=str(exc)) from exc
    if len(key) != KEY_BYTES:
        raise SealError(f"保存データの暗号鍵（{path}）の長さが不正です。")
    return key


def load_or_create_key(path: Path) -> bytes:
    """The key in ``path``; a new random key (0600) when there is none, created exactly once."""
    if path.exists():
        return _read_key(path)
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"key": secrets.token_bytes(KEY_BYTES).hex()}))
        fh.flush()
        os.fsync(fh.fileno())
    try:
        os.link(tmp, path)  # atomic "create if absent": a racing process keeps the first key
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return _read_key(path)


@dataclass(frozen=True, slots=True)
class Sealer:
    key: bytes

    @classmethod
    def from_hex(cls, value: str) -> Sealer:
        try:
            key = bytes.fromhex(value.strip())
        except ValueError as exc:
            raise SealError("WB_STORE_KEY は 16 進数 64 文字で指定してください。") from exc
        if len(key) != KEY_BYTES:
            raise SealError("WB_STORE_KEY の長さが不正です（16 進 64 文字 = 32 バイト）。")
        return cls(key)

    @classmethod
    def for_store(cls, db_path: Path, key_hex: str | None = None) -> Sealer:
        """The settings' key when given, else the key file of the state folder."""
        if key_hex:
            return cls.from_hex(key_hex)
        return cls(load_or_create_key(default_key_path(db_path)))

    def seal(self, text: str, purpose: str) -> str:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        nonce = secrets.token_bytes(NONCE_BYTES)
        body = AESGCM(self.key).encrypt(nonce, text.encode("utf-8"), purpose.encode())
        return PREFIX + base64.b64encode(nonce + body).decode("ascii")

    def open(self, value: str, purpose: str) -> str:
        """The plain text of a sealed value; a value written before sealing as it is."""
        if not value.startswith(PREFIX):
            return value
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        try:
            raw = base64.b64decode(value[len(PREFIX) :], validate=True)
            plain = AESGCM(self.key).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], purpose.encode())
            return plain.decode("utf-8")
        except (InvalidTag, ValueError) as exc:
            raise SealError(
                "保存データを復号できません（鍵が違うか、データが書き換えられています）。",
                detail=type(exc).__name__,
            ) from exc
