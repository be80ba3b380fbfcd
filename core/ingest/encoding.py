"""Text files in the encodings Japanese teams keep them in.

A runbook written on a team's own machines comes as UTF-8 (with or without a BOM), as UTF-16
with a BOM (Windows Notepad's "Unicode"), or in Shift_JIS (CP932, Windows' Japanese code page)
or EUC-JP (older Unix tools and wikis). ``decode_text`` tries, in order: a byte order mark;
UTF-8 (bytes that decode as UTF-8 are UTF-8, whatever a wrong declaration says); the encoding
the file declares (an HTML page's ``meta charset``), trusted as declared; then CP932 and EUC-JP,
each only when the text it gives is Japanese (it holds hiragana or katakana: Latin-1 or
Windows-1252 text, whose accented letters also decode as CP932, does not). A file with NUL bytes
and no UTF-16 BOM is binary. What fits no encoding (a BOM's included) is ``None``: the caller refuses the file or
reads it with replacement characters.
"""

from __future__ import annotations

import re

from core.errors import SourceFileError

__all__ = ["decode_replacing", "decode_text"]

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_LEGACY_JAPANESE = ("cp932", "euc_jp")
_KANA = re.compile("[\u3041-\u3096\u30a1-\u30fa]")


def decode_text(data: bytes, name: str, path: str, *, declared: str | None = None) -> str | None:
    """``data`` as text (module docstring), or ``None`` when no encoding fits; a binary file
    raises ``SourceFileError`` with a Japanese message naming ``name``."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding)
            except UnicodeDecodeError:
                return None  # marked, yet not that encoding: broken
    if b"\x00" in data:  # anywhere, not only in the first block
        raise SourceFileError(
            path, f"「{name}」はテキストではなくバイナリファイルのようです。スキップしました。"
        )
    for encoding in ("utf-8", declared):
        if encoding is None:
            continue
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
    for encoding in _LEGACY_JAPANESE:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if _KANA.search(text):
            return text
    return None


def decode_replacing(data: bytes) -> str:
    """``data`` in the encoding its BOM marks, else UTF-8, undecodable bytes replaced: for a
    reader that keeps what it can of a broken file (HTML) after ``decode_text`` gave up."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(encoding, errors="replace")
    return data.decode("utf-8", errors="replace")
