"""The PII table through every sink: audit log, WAL, interview store, stderr logs, question-set
runs. No raw value may be readable in any of them (the store holds them encrypted)."""

from __future__ import annotations

import io
import logging
import sqlite3

import pytest

from core import runbook_chat
from core.audit import AuditHit, AuditRecord, append_record, log_path
from core.interview.orchestrator import Interviewer
from core.interview.store import open_session_store
from core.interview.wal import wal_files
from core.masking import install_log_masking
from core.question_sets.contract import loads_question_set
from core.question_sets.runner import run_question_set
from core.question_sets.targets import FunctionTarget, RunAnswer
from core.runbook_chat import ChatConfig
from tests.question_sets.helpers import valid_bytes
from tests.support.pii import KEEP, PII

TEXTS = [text for text, _ in PII]
RAW = [value for _, values in PII for value in values]


def leaked(sink_text: str) -> list[str]:
    return [value for value in RAW if value in sink_text]


def test_audit_log(settings):
    for text in TEXTS:
        append_record(
            settings.logs_dir,
            AuditRecord(
                query=text,
                answer=f"回答: {text}",
                search_results=[AuditHit(file="a.md", excerpt=text)],
                history=[{"q": text, "a": text}],
            ),
        )
    written = "".join(p.read_text(encoding="utf-8") for p in settings.logs_dir.glob("query_*"))
    assert leaked(written) == []
    assert "[PHONE]" in written and "[CARD]" in written and "[NAME]" in written


def test_wal_and_store(settings):
    iv = Interviewer(settings)
    try:
        started = iv.start("postmortem", "障害の振り返り " + TEXTS[0], user_id="alice")
        sid = started.session.session_id
        for text in TEXTS:
            iv.answer(sid, text)
        state = iv.resume(sid).session
    finally:
        iv.close()
    wal = "".join(p.read_text(encoding="utf-8") for p in wal_files(settings.wal_dir))
    assert leaked(wal) == []
    # The store keeps the answers (the document needs them) but only encrypted on disk.
    answers = "\n".join(m.answer for m in state.messages if m.answer)
    assert "090-1234-5678" in answers
    disk = b"".join(p.read_bytes() for p in settings.interview_db.parent.glob("interview.sqlite*"))
    assert [v for v in RAW if v.encode("utf-8") in disk] == []
    with sqlite3.connect(settings.interview_db) as conn:
        stored = conn.execute("SELECT topic, state_json FROM sessions").fetchone()
    assert all(value.startswith("enc1:") for value in stored)
    reopened = open_session_store(settings)
    assert reopened.load(sid).model_dump_json() == state.model_dump_json()
    reopened.close()


@pytest.fixture
def stderr_log():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.INFO)
    install_log_masking()
    yield stream
    root.removeHandler(handler)
    root.setLevel(old_level)


def test_stderr_logs(settings, stderr_log, monkeypatch):
    monkeypatch.setattr(runbook_chat, "SLOW_SECONDS", -1.0)  # every answer counts as slow
    for text in TEXTS:  # over the length limit: refused before any search, then logged slow
        question = text + "。" * (runbook_chat.MAX_QUESTION_CHARS + 1 - len(text))
        answer = runbook_chat.ask(question, [], ChatConfig(write_audit=False), settings)
        assert answer.slow and answer.error
        logging.getLogger("core.wiki.qa").info("No usable context for %r", text)
        logging.getLogger("core.interview").warning(text, exc_info=False)
    output = stderr_log.getvalue()
    assert "slow answer" in output and "No usable context" in output
    assert leaked(output) == []


def test_question_set_runs(settings):
    qs = loads_question_set(valid_bytes())
    texts = iter(TEXTS * 3)

    def echo(question: str) -> RunAnswer:  # an answer that quotes personal data back
        text = next(texts)
        return RunAnswer(
            answer=f"{question} {text}",
            citations=[{"file": "a.md", "excerpt": text}],
            answer_mode="extractive",
        )

    for _ in range(len(TEXTS) // len(qs.questions) + 1):
        result = run_question_set(qs, FunctionTarget("runbook", echo), settings)
        assert result.path.parent == settings.runs_dir
    written = "".join(p.read_text(encoding="utf-8") for p in settings.runs_dir.glob("*.json"))
    assert leaked(written) == []


def test_over_masking_table_survives_the_audit_log(settings):
    for text in KEEP:
        append_record(settings.logs_dir, AuditRecord(query=text))
    path = log_path(settings.logs_dir, __import__("datetime").date.today())
    import json

    queries = [json.loads(line)["query"] for line in path.read_text(encoding="utf-8").splitlines()]
    assert queries == KEEP


def test_an_over_long_question_is_logged_truncated_with_length_and_hash(settings):
    question = "VPN の手順 " + "あ" * 200_000
    runbook_chat.ask(question, [], ChatConfig(), settings)
    (path,) = settings.logs_dir.glob("query_*.jsonl")
    import hashlib
    import json

    record = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    assert len(record["query"]) <= 1001 and record["query_length"] == len(question)
    assert record["query_sha256"] == hashlib.sha256(question.encode()).hexdigest()
    assert path.stat().st_size < 10_000
