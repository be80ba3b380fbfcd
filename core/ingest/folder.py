"""Walking a data folder safely: paths from users, symbolic links, the files to index.

- ``check_path_text``: a path typed by a user (CLI argument, page field) with a NUL byte is a
  Japanese ``InputError``, not a ``ValueError`` from the operating system.
- ``scan_folder``: the supported files under a folder. A symbolic link (to a file or a folder)
  is followed only when its target lies inside the same allowed root as the folder; any other
  link is refused with a Japanese message naming it (``ln -s /etc/passwd x.md`` in a data
  folder indexes nothing of ``/etc``). A link back to a folder above it is not followed.
- ``link_escapes``: the same check again right before a file is read, so that a file swapped
  for a link after the scan is refused too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import InputError
from core.ingest.loaders import SUPPORTED_SUFFIXES, SUPPORTED_SUFFIXES_TEXT

NUL_MESSAGE = "パスに NUL 文字（\\0）が含まれています。パスを確認してください。"


def check_path_text(value: str | os.PathLike[str] | None) -> None:
    """Refuse a user-supplied path that contains a NUL byte (Japanese ``InputError``)."""
    if value is not None and "\x00" in os.fspath(value):
        raise InputError(NUL_MESSAGE)


def root_for(folder: Path, allowed_roots: Sequence[Path]) -> Path:
    """The allowed root that holds ``folder`` (the innermost), else the folder itself."""
    resolved = folder.resolve()
    holding = [r.resolve() for r in allowed_roots]
    holding = [r for r in holding if resolved == r or resolved.is_relative_to(r)]
    return max(holding, key=lambda r: len(r.parts)) if holding else resolved


def link_escapes(path: Path, root: Path) -> bool:
    """True when ``path`` (or a folder on its way) is a link whose target leaves ``root``."""
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):  # a dangling link or a loop
        return path.is_symlink()
    return not (target == root or target.is_relative_to(root))


def link_message(name: str) -> str:
    return (
        f"「{name}」はシンボリックリンクで、リンク先が許可された場所の外にあるため"
        "スキップしました。"
    )


@dataclass
class FolderScan:
    files: list[Path] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (name, Japanese message)


def _hidden(name: str) -> bool:
    return name.startswith(".")


# Plain-text files a repository keeps for programs or for its licence, not for its readers
# (``requirements.txt``, ``robots.txt``, ``LICENSE.txt``): a folder of runbooks checked out from
# a repository is not indexed with them.
_NOT_DOCUMENTS = re.compile(
    r"(?:requirements|constraints)[\w.-]*\.txt|robots\.txt|cmakelists\.txt"
    r"|(?:license|licence|copying|notice|third[_-]party[\w.-]*)\.txt",
    re.IGNORECASE,
)


def _document(path: Path) -> bool:
    """A file of a supported format that is not a program's or a licence's text."""
    return path.suffix.lower() in SUPPORTED_SUFFIXES and not _NOT_DOCUMENTS.fullmatch(path.name)


def walk_folder(folder: Path, root: Path) -> FolderScan:
    """Supported files under ``folder`` (recursive, sorted, hidden entries skipped) and the links
    refused because their target is outside ``root``."""
    scan = FolderScan()
    root = root.resolve()
    # Each folder to walk carries the resolved folders above it: a link back up is not followed.
    stack: list[tuple[Path, frozenset[Path]]] = [(folder, frozenset({folder.resolve()}))]
    while stack:
        current, above = stack.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if _hidden(entry.name):
                continue
            path = Path(entry.path)
            name = path.relative_to(folder).as_posix()
            is_link = entry.is_symlink()
            if is_link and link_escapes(path, root):
                if entry.is_dir() or path.suffix.lower() in SUPPORTED_SUFFIXES:
                    scan.refused.append((name, link_message(name)))
                continue
            if entry.is_dir():  # follows an allowed link
                target = path.resolve()
                if target not in above:
                    stack.append((path, above | {target}))
            elif entry.is_file() and _document(path):
                scan.files.append(path)
    scan.files.sort()
    return scan


def scan_folder(folder: Path, root: Path | None = None) -> list[Path]:
    """The files ``walk_folder`` keeps (links outside ``root``, default the folder, left out);
    a missing or empty folder is a Japanese ``InputError``."""
    check_folder(folder)
    return require_files(folder, walk_folder(folder, root or folder))


def require_files(folder: Path, scan: FolderScan) -> list[Path]:
    if not scan.files:
        raise InputError(
            f"フォルダ「{folder}」に対応ファイル（{SUPPORTED_SUFFIXES_TEXT}）がありません。"
        )
    return scan.files


def check_folder(folder: Path) -> None:
    if not folder.exists():
        raise InputError(f"フォルダ「{folder}」が見つかりません。パスを確認してください。")
    if not folder.is_dir():
        raise InputError(f"「{folder}」はフォルダではありません。")
