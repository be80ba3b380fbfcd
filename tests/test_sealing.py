"""The interview store at rest: sealed columns, the key file, another key, rows from before."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading

import pytest

from core.interview.orchestrator import Interviewer
from core.interview.store import CorruptSessionError, SessionStore, open_session_store
from core.sealing import Sealer, SealError, default_key_path, load_or_create_key


def test_seal_and_open_round_trip_and_bind_the_column(tmp_path):
    sealer = Sealer(load_or_create_key(tmp_path / "keys" / "k.json"))
    sealed = sealer.seal("連絡先 090-1234-5678", "state_json")
    # the plaintext is not there (a short piece such as "090" can occur in the random base64)
    assert sealed.startswith("enc1:") and "連絡先" not in sealed and "090-1234" not in sealed
    assert sealer.open(sealed, "state_json") == "連絡先 090-1234-5678"
    with pytest.raises(SealError):
        sealer.open(sealed, "topic")  # moved to another column
    with pytest.raises(SealError):
        Sealer(bytes(32)).open(sealed, "state_json")  # another key
    assert sealer.open('{"plain": "from before"}', "state_json") == '{"plain": "from before"}'
    with pytest.raises(SealError, match="16 進数"):
        Sealer.from_hex("zz")
    with pytest.raises(SealError, match="長さ"):
        Sealer.from_hex("00" * 16)


def test_the_key_is_created_once_0600_even_when_processes_race(tmp_path):
    path = tmp_path / "keys" / "store-key.json"
    keys: list[bytes] = []
    threads = [
        threading.Thread(target=lambda: keys.append(load_or_create_key(path))) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(keys)) == 1 and len(keys[0]) == 32
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_another_key_reads_as_corrupt_and_keeps_the_row(settings):
    iv = Interviewer(settings)
    sid = iv.start("postmortem", "決済障害の振り返り", user_id="u").session.session_id
    iv.close()
    assert (
        default_key_path(settings.interview_db) == settings.state_root / "keys" / "store-key.json"
    )
    other = SessionStore(settings.interview_db, Sealer(bytes(32)))
    with pytest.raises(CorruptSessionError):
        other.load(sid)
    assert [s.corrupt for s in other.list()] == [True]
    other.close()
    good = open_session_store(settings)
    assert good.load(sid).topic == "決済障害の振り返り"  # nothing was lost
    good.close()


def test_rows_written_before_sealing_still_load(settings):
    store = open_session_store(settings)
    iv = Interviewer(settings, store=store)
    sid = iv.start("postmortem", "振り返り", user_id="u").session.session_id
    plain = store.load(sid).model_dump_json()
    with sqlite3.connect(settings.interview_db) as conn:
        conn.execute(
            "UPDATE sessions SET state_json=?, topic=? WHERE session_id=?", (plain, "振り返り", sid)
        )
    assert store.load(sid).topic == "振り返り"
    iv.close()


def test_the_key_can_come_from_a_secret_store(settings):
    keyed = settings.model_copy(update={"store_key": __import__("pydantic").SecretStr("ab" * 32)})
    store = open_session_store(keyed)
    assert store.sealer.key == bytes.fromhex("ab" * 32)
    store.close()
    assert not default_key_path(settings.interview_db).exists()
