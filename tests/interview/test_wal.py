"""The WAL: line format, salted hashes, masking, replay (rebuild, idempotent, truncated tail)."""

from __future__ import annotations

import json
import shutil

from core.interview.orchestrator import Interviewer
from core.interview.store import SessionStore
from core.interview.wal import hash_id, read_wal, replay, wal_files, wal_salt

from .conftest import APPENDIX_G, reply_for

PII = "連絡は taro.yamada@corp.example.co.jp か 090-1234-5678、住所は東京都千代田区丸の内1-2-3 です"


def play(iv, clock, user="alice@example.jp"):
    result = iv.start("postmortem", "昨日の決済システムの障害について振り返りたい", user_id=user)
    sid = result.session.session_id
    clock.tick()
    iv.answer(sid, APPENDIX_G["summary"] + "。" + PII)
    clock.tick()
    result = iv.answer(sid, reply_for(iv.resume(sid), APPENDIX_G))
    return sid, result


def test_lines_hash_ids_and_mask_personal_data(iv, clock, settings):
    sid, _ = play(iv, clock)
    (path,) = wal_files(settings.wal_dir)
    assert path.name == "2025-06-15.log"
    text = path.read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines()]
    who = {"user", "user_name", "role", "client"}  # the actor (issue 15): local here
    assert all(set(r) == {"ts", "event", "data", "user_id_hash", *who} for r in records)
    assert {(r["user"], r["role"]) for r in records} == {("local", "admin")}
    salt = wal_salt(settings)
    assert {r["user_id_hash"] for r in records} == {hash_id(salt, "alice@example.jp")}
    assert sid not in text and "alice@example.jp" not in text
    assert "taro.yamada" not in text and "090-1234-5678" not in text and "丸の内1-2-3" not in text
    assert "[EMAIL]" in text and "[PHONE]" in text and "[ADDRESS]" in text
    events = {r["event"] for r in records}
    assert {"session_started", "answer", "fill", "decision", "question", "turn_committed"} <= events


def test_salt_is_stable_per_state_folder(settings):
    assert wal_salt(settings) == wal_salt(settings)
    assert (settings.interview_db.parent / "wal.salt").exists()


def test_replay_rebuilds_sessions_and_is_idempotent(iv, clock, settings):
    sid, result = play(iv, clock)
    question = result.question
    iv.close()
    settings.interview_db.unlink()  # the session store is lost
    for extra in settings.interview_db.parent.glob("interview.sqlite-*"):
        extra.unlink()
    store = SessionStore(settings.interview_db)
    paths = wal_files(settings.wal_dir)
    salt = wal_salt(settings)
    report = replay(paths, store, salt)
    assert report.rebuilt == [f"wal-{hash_id(salt, sid)}"]
    state = store.load(report.rebuilt[0])
    assert state.last_question == question and state.turn == 3
    assert state.slots["summary"].filled and "[EMAIL]" in state.messages[1].answer
    first = state.model_dump_json()
    again = replay(paths, store, salt)
    assert again.rebuilt == [] and again.skipped == report.rebuilt
    assert store.load(report.rebuilt[0]).model_dump_json() == first
    # the rebuilt session continues
    resumed = Interviewer(settings, clock=clock, store=store)
    clock.tick()
    goes_on = resumed.answer(
        report.rebuilt[0], reply_for(resumed.resume(report.rebuilt[0]), APPENDIX_G)
    )
    assert goes_on.session.turn == 4
    resumed.close()


def test_replay_keeps_live_sessions_and_tolerates_a_truncated_tail(iv, clock, settings, tmp_path):
    sid, _ = play(iv, clock)
    (path,) = wal_files(settings.wal_dir)
    copy = tmp_path / path.name
    shutil.copy(path, copy)
    with copy.open("ab") as fh:
        fh.write(b'{"ts": "2025-06-15T01:00:00+00:00", "event": "turn_comm')
    report = replay([copy], iv.store, wal_salt(settings))
    assert report.truncated_tail and report.bad_lines == 1
    assert report.rebuilt == [] and report.skipped == [sid]  # the store is as new as the WAL
    assert read_wal(copy).events[-1]["event"] == "turn_committed"


def test_every_qcheck_fail_reason_is_in_the_wal(scenarios, settings):
    from core.interview.simulator import run_scenario

    from .conftest import scenario

    result = run_scenario(scenario(scenarios, "sop-edr-isolation"), settings)
    warned = [t for t in result.turns if "判断" in t.question and "添えてください" in t.question]
    assert warned  # some SOP templates get a criterion sentence (tacit_power < 0.5)
    records = [
        json.loads(line)
        for p in wal_files(settings.wal_dir)
        for line in p.read_text(encoding="utf-8").splitlines()
    ]
    reasons = [r["data"]["qcheck_fail_reason"] for r in records if r["event"] == "qcheck"]
    assert reasons and all(reasons) and any("tacit_power" in x for rs in reasons for x in rs)
