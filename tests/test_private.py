"""Files about users are created 0600 in 0700 folders: logs, WAL, keys, stores, indexes, runs."""

from __future__ import annotations

import os
import stat

from core.audit import AuditRecord, append_record
from core.interview.orchestrator import Interviewer
from core.private import open_private_append, private_dir, private_file, tighten
from core.question_sets.contract import loads_question_set
from core.question_sets.runner import run_question_set
from core.question_sets.targets import FunctionTarget, RunAnswer
from core.retrieval.store import ChunkStore
from tests.question_sets.helpers import valid_bytes


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_helpers(tmp_path):
    old = os.umask(0o022)
    try:
        folder = private_dir(tmp_path / "a" / "b")
        assert mode(tmp_path / "a") == 0o700 and mode(folder) == 0o700
        with open_private_append(folder / "x.log") as fh:
            fh.write(b"1\n")
        assert mode(folder / "x.log") == 0o600
        loose = folder / "loose.bin"
        loose.write_bytes(b"x")
        os.chmod(loose, 0o644)
        assert mode(private_file(loose)) == 0o600
        (folder / "sub").mkdir(mode=0o755)
        (folder / "sub" / "f").write_text("x")
        os.chmod(folder / "sub" / "f", 0o644)
        tighten(folder)
        assert mode(folder / "sub") == 0o700 and mode(folder / "sub" / "f") == 0o600
    finally:
        os.umask(old)


def test_every_sink_and_store_is_private(settings):
    old = os.umask(0o022)  # a usual umask: 0644 files unless we say otherwise
    try:
        append_record(settings.logs_dir, AuditRecord(query="q"))
        iv = Interviewer(settings)
        sid = iv.start("postmortem", "障害の振り返り", user_id="u").session.session_id
        iv.answer(sid, "昨日 API がタイムアウトした")
        open_db = {p.name: mode(p) for p in settings.interview_db.parent.glob("interview.sqlite*")}
        iv.close()
        qs = loads_question_set(valid_bytes())
        run = run_question_set(
            qs, FunctionTarget("runbook", lambda t: RunAnswer(answer=t)), settings
        )
        store = ChunkStore(settings.runbook_index_dir / "corpus.sqlite")
        store.close()
    finally:
        os.umask(old)
    state = settings.state_root
    files = [
        *settings.logs_dir.glob("query_*"),
        *settings.wal_dir.glob("*.log"),
        *(state / "keys").glob("*.json"),
        *settings.interview_db.parent.glob("interview.sqlite*"),
        settings.interview_db.parent / "wal.salt",
        run.path,
        settings.runbook_index_dir / "corpus.sqlite",
    ]
    # SQLite's -wal / -shm (present while the store is open) take the database file's mode
    assert {"interview.sqlite-wal", "interview.sqlite-shm"} <= set(open_db)
    assert {name: oct(m) for name, m in open_db.items() if m != 0o600} == {}
    assert {str(p): oct(mode(p)) for p in files if mode(p) != 0o600} == {}
    folders = [
        settings.logs_dir,
        settings.wal_dir,
        state / "keys",
        settings.interview_db.parent,
        settings.runs_dir,
        settings.runbook_index_dir,
    ]
    assert {str(p): oct(mode(p)) for p in folders if mode(p) != 0o700} == {}
