"""Private files and folders: everything the workbench writes about users is 0600 in 0700 folders.

Logs, the WAL, keys, session stores (SQLite, with their ``-wal`` / ``-shm`` files, which SQLite
creates with the mode of the database file), indexes and question-set runs go through these
helpers, so that another account on the host cannot read questions, answers or indexed text.
Files written by libraries we do not control (Chroma, FAISS, bm25s) live in folders made private
here and are tightened after a build (``tighten``).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: str | Path) -> Path:
    """Create ``path`` (and missing parents) 0700; an existing folder is tightened to 0700."""
    folder = Path(path)
    missing = []
    probe = folder
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for part in reversed(missing):
        with suppress(FileExistsError):
            part.mkdir(mode=DIR_MODE)
        _chmod(part, DIR_MODE)
    _chmod(folder, DIR_MODE)
    return folder


def _chmod(path: Path, mode: int) -> None:
    try:
        if stat.S_IMODE(path.stat().st_mode) != mode:
            os.chmod(path, mode)
    except OSError:
        pass  # not ours (a shared mount): leave it, the content is still written 0600


def private_file(path: str | Path) -> Path:
    """Create ``path`` empty with 0600 when it is missing (a database before SQLite opens it);
    an existing file is tightened to 0600. Its folder is made private first."""
    target = Path(path)
    private_dir(target.parent)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        _chmod(target, FILE_MODE)
    else:
        os.close(fd)
    return target


@contextmanager
def open_private_append(path: str | Path) -> Iterator[IO[bytes]]:
    """``open(path, "ab")`` that creates the file 0600 (and its folder 0700)."""
    target = Path(path)
    private_dir(target.parent)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
    with os.fdopen(fd, "ab") as fh:
        yield fh


def write_private_atomic(path: str | Path, data: bytes | str) -> Path:
    """Write all or nothing: a 0600 temp file in the same private folder, fsync, replace."""
    target = Path(path)
    private_dir(target.parent)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:  # mkstemp creates 0600 already
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def tighten(root: str | Path) -> None:
    """Make a folder tree private: folders 0700, files 0600 (after a library wrote into it)."""
    top = Path(root)
    if not top.exists():
        return
    _chmod(top, DIR_MODE)
    for folder, dirs, files in os.walk(top, followlinks=False):
        for name in dirs:
            _chmod(Path(folder) / name, DIR_MODE)
        for name in files:
            path = Path(folder) / name
            if not path.is_symlink():
                _chmod(path, FILE_MODE)
