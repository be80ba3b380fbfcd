"""Data folders: symbolic links out of the allowed root, NUL bytes in files and in paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import InputError, SourceFileError
from core.ingest.folder import root_for, walk_folder
from core.ingest.indexer import resolve_allowed_folder, update_corpus
from core.ingest.inspect import inspect_file
from core.ingest.loaders import load_file
from core.runbooks import runbook_folder
from tests.ingest.test_indexer import RUNBOOK_A, RUNBOOK_C, corpus_for, write

SECRET = "root:x:0:0:root:/root:/bin/bash\n# 社外秘の設定\nroot:x:0:0 の行です。"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A data folder with links into it (kept) and out of it (refused)."""
    data = tmp_path / "data"
    outside = tmp_path / "outside"
    write(data, "vpn.md", RUNBOOK_A)
    write(data, "sub/backup.md", RUNBOOK_C)
    write(outside, "passwd.md", SECRET)
    os.symlink(outside / "passwd.md", data / "x.md")  # ln -s /etc/passwd x.md
    os.symlink(outside, data / "linked")  # a folder out of the root
    os.symlink(data / "sub" / "backup.md", data / "alias.md")  # inside: kept
    os.symlink(data / "sub", data / "same")  # a folder inside: kept
    os.symlink(data, data / "sub" / "loop")  # a cycle: walked once
    os.symlink(tmp_path / "missing.md", data / "dangling.md")
    return data, outside


def test_links_out_of_the_root_are_refused_and_links_inside_are_followed(layout):
    data, _ = layout
    scan = walk_folder(data, root_for(data, [data.parent / "elsewhere"]))
    names = [p.relative_to(data).as_posix() for p in scan.files]
    assert names == ["alias.md", "same/backup.md", "sub/backup.md", "vpn.md"]
    refused = dict(scan.refused)
    assert set(refused) == {"x.md", "linked", "dangling.md"}
    assert "シンボリックリンク" in refused["x.md"] and "許可された場所の外" in refused["x.md"]


def test_the_same_allowed_root_decides(layout):
    data, _ = layout
    # With the common parent as the allowed root, the link to ``outside`` stays inside it.
    scan = walk_folder(data, root_for(data, [data.parent]))
    assert "x.md" in [p.name for p in scan.files]
    assert "dangling.md" in dict(scan.refused)


def test_index_and_search_never_show_a_linked_file_from_outside(settings, layout):
    data, _ = layout
    corpus = corpus_for(settings, data)
    report = update_corpus(corpus, data)
    assert {name for name, _ in report.skipped} == {"x.md", "linked", "dangling.md"}
    assert "x.md" not in report.added
    texts = [sc.chunk.body for sc in corpus.store.iter_chunks()]
    assert texts and not any("root:x:0:0" in t for t in texts)


def test_a_nul_byte_anywhere_marks_a_text_file_binary(tmp_path: Path):
    for suffix in (".md", ".html"):
        body = "# 手順\n" + "本文です。\n" * 3000  # > 8 KB before the NUL
        path = write(tmp_path, f"late{suffix}", body.encode() + b"\x00" + "続き".encode())
        with pytest.raises(SourceFileError, match="バイナリ"):
            load_file(path, tmp_path, 10_000_000)


def test_a_nul_in_a_path_is_a_japanese_error(settings, tmp_path: Path):
    bad = str(tmp_path) + "/data\x00/x"
    for call in (
        lambda: resolve_allowed_folder(bad, settings.allowed_roots),
        lambda: runbook_folder(settings, bad),
        lambda: inspect_file(bad + ".md", settings),
    ):
        with pytest.raises(InputError, match="NUL"):
            call()


def test_the_cli_exits_2_on_a_nul_in_a_path(tmp_path, monkeypatch, capsys):
    from core.__main__ import main
    from core.settings import get_settings

    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path / "state"))
    get_settings.cache_clear()
    try:
        for args in (
            ["index", "runbooks", "--data", "a\x00b"],
            ["search", "VPN", "--data", "a\x00b"],
            ["inspect", "a\x00b.md"],
        ):
            capsys.readouterr()
            assert main(args) == 2
            err = capsys.readouterr().err
            assert "NUL 文字" in err and "Traceback" not in err
    finally:
        get_settings.cache_clear()
