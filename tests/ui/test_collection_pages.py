"""Runbook collections in the pages (AppTest): the chat, the question-set run and the dashboard's
drill-downs show a restricted user nothing of a runbook outside their collections.

The pages ask ``ui.auth`` who the session runs as (``require(role)``, from ``st.user``); the
tests give them a signed-in ``Principal`` by replacing ``ui.auth.signed_in`` (the sign-in itself
is tested with a real provider in ``tests/ui/test_auth_pages.py`` and the browser test).
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

from core.access import LOCAL, Principal
from core.evaluation.runner import run_evaluation
from core.question_sets.contract import Question, loads_question_set
from core.question_sets.runner import run_question_set
from core.question_sets.targets import make_target
from core.runbook_chat import ChatConfig, ask
from core.runbooks import index_runbooks
from core.settings import PROJECT_ROOT
from tests.conftest import make_settings
from tests.question_sets.helpers import valid_bytes
from tests.support.collections_fixture import (
    ALICE,
    BOB,
    HIDDEN_FILE,
    HIDDEN_MARKER,
    HIDDEN_QUESTION,
    NETWORK_QUESTION,
    write_runbooks,
)

RECORDED = f"{HIDDEN_QUESTION}（監査用）"
CHAT = str(PROJECT_ROOT / "views" / "runbook_chat.py")
DASHBOARD = str(PROJECT_ROOT / "views" / "dashboard.py")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Indexed runbooks in two collections and one audit record that used the hidden one."""
    root = tmp_path_factory.mktemp("collection-pages")
    settings = make_settings(root / "state", write_runbooks(root / "runbooks"))
    settings = settings.model_copy(update={"allowed_roots": [root]})
    index_runbooks(settings, None)
    local = ask(RECORDED, [], ChatConfig(session_id="local-1"), settings)
    assert any(c.file == HIDDEN_FILE for c in local.citations)
    # a question-set run and an evaluation made without sign-in, both answered from the hidden runbook
    qs = loads_question_set(valid_bytes())
    qs = replace(qs, questions=(Question("A-1-Q1", HIDDEN_QUESTION),))
    run = run_question_set(qs, make_target("runbook", settings), settings).run
    assert HIDDEN_MARKER in json.dumps(run.model_dump(mode="json"), ensure_ascii=False)
    dataset = root / "eval.json"
    case = {"id": "normal_001", "category": "normal", "query": HIDDEN_QUESTION, "expected_citations": [HIDDEN_FILE]}  # fmt: skip
    dataset.write_text(json.dumps({"version": "1", "created_at": "2026-01-01", "test_cases": [case]}))  # fmt: skip
    evaluation = run_evaluation(settings, dataset, "heuristic").run
    assert HIDDEN_MARKER in json.dumps(evaluation.model_dump(mode="json"), ensure_ascii=False)
    return root, settings


@pytest.fixture
def env(monkeypatch, world):
    root, settings = world
    monkeypatch.setenv("WB_STATE_DIR", str(settings.state_dir))
    monkeypatch.setenv("WB_RUNBOOKS_DIR", str(settings.runbooks_dir))
    monkeypatch.setenv("WB_ALLOWED_ROOTS", json.dumps([str(root)]))

    def run_as(principal):
        monkeypatch.setattr("ui.auth.signed_in", lambda settings=None: principal)

    return run_as


def everything_shown(at: AppTest) -> str:
    """The text of every element the page rendered (values, labels, options)."""
    parts = []
    for kind in ("markdown", "text", "caption", "info", "warning", "error", "success", "code"):
        parts += [str(e.value) for e in at.get(kind)]
    parts += [e.label for e in at.expander]
    parts += [str(o) for s in at.selectbox for o in s.options]
    parts += [f.value.to_csv() for f in at.get("dataframe")]
    parts += [str(j.value) for j in at.get("json")]
    return "\n".join(parts)


def test_chat_as_a_restricted_user_gets_the_ordinary_refusal(env):
    env(ALICE)
    at = AppTest.from_file(CHAT, default_timeout=120).run()
    # the index status counts what alice may see (the public and the network runbook)
    assert any("文書 2 件" in i.value for i in at.sidebar.info)
    assert not [t for t in at.sidebar.text_input if t.key == "chat_folder"]  # admins' only
    at.chat_input[0].set_value(HIDDEN_QUESTION).run()
    assert not at.exception
    shown = everything_shown(at)
    assert "該当する手順が見つかりませんでした。" in shown
    assert HIDDEN_MARKER not in shown and "malware" not in shown
    assert not at.expander  # a refusal shows no passage
    # an answer from the visible runbooks, with every 「全文を表示」 open
    at.chat_input[0].set_value(NETWORK_QUESTION).run()
    toggles = [t for t in at.toggle if t.key and t.key.startswith("full-m1-")]
    assert toggles
    for toggle in toggles:
        toggle.set_value(True)
    at.run()
    assert not at.exception
    shown = everything_shown(at)
    assert "利用者の VPN クライアントのバージョンを確認する" in shown
    assert HIDDEN_MARKER not in shown and "malware" not in shown


def test_chat_as_the_group_of_the_collection_answers_from_it(env):
    env(BOB)
    at = AppTest.from_file(CHAT, default_timeout=120).run()
    at.chat_input[0].set_value(HIDDEN_QUESTION).run()
    assert not at.exception
    assert any(HIDDEN_FILE in e.label for e in at.expander)


def test_admins_are_told_about_a_manifest_that_cannot_be_read(env, world):
    _root, settings = world
    manifest = settings.runbooks_dir / "collections.yaml"
    good = manifest.read_text(encoding="utf-8")
    manifest.write_text("collections: [network\n", encoding="utf-8")
    try:
        env(LOCAL)  # no sign-in: the local admin
        at = AppTest.from_file(CHAT, default_timeout=120).run()
        assert at.sidebar.text_input(key="chat_folder").value
        assert any(
            "collections.yaml" in w.value and "読み込めません" in w.value
            for w in at.sidebar.warning
        )
        env(ALICE)  # fail closed, and an operator is not shown the admin's message
        at = AppTest.from_file(CHAT, default_timeout=120).run()
        assert not any("collections.yaml" in w.value for w in at.sidebar.warning)
        at.chat_input[0].set_value("VPN に接続できないときの確認手順を教えて").run()
        assert not at.exception
        assert "該当する手順が見つかりませんでした。" in everything_shown(at)
        assert not at.expander
    finally:
        manifest.write_text(good, encoding="utf-8")


def test_dashboard_drill_down_hides_records_that_used_a_hidden_collection(env):
    """The audit record, the question-set run and the evaluation (every tab is rendered)."""

    def drill_down(principal) -> AppTest:
        env(principal)
        at = AppTest.from_file(DASHBOARD, default_timeout=120).run()
        at.text_input(key="dash_audit_search").input("監査用").run()
        assert not at.exception
        assert len(at.selectbox(key="dash_audit_record").options) == 1
        return at

    at = drill_down(LOCAL)
    assert HIDDEN_MARKER in everything_shown(at)  # the local admin sees the record in full
    both = Principal(subject="c", name="carol", role="reviewer", groups=("net-team", "mal-team"), signed_in=True)  # fmt: skip
    at = drill_down(both)  # so does a reviewer of every collection the answer used
    assert HIDDEN_MARKER in everything_shown(at)
    at = drill_down(BOB)  # not one who may not see one of its passages (the network runbook)
    assert HIDDEN_MARKER not in everything_shown(at)

    at = drill_down(ALICE)
    shown = everything_shown(at)
    assert HIDDEN_MARKER not in shown
    assert any(
        "閲覧できるコレクションの外の手順書を含むため表示しません" in i.value for i in at.info
    )


def test_question_set_run_on_the_page_runs_as_the_user(env):
    env(ALICE)
    at = AppTest.from_file(str(PROJECT_ROOT / "views" / "question_sets.py"), default_timeout=120)
    at.run()
    payload = json.loads(valid_bytes())
    payload["customized_question_set"]["questions"] = [
        {"question_id": "A-1-Q1", "question_text": HIDDEN_QUESTION},
        {"question_id": "A-2-Q1", "question_text": NETWORK_QUESTION},
    ]
    at.text_area(key="qs_paste").input(json.dumps(payload, ensure_ascii=False))
    at.button(key="qs_paste_open").click()
    at.run()
    at.button(key="qs_run_go").click()
    at.run()
    assert not at.exception
    assert any("実行しました" in s.value for s in at.success)
    shown = everything_shown(at)
    assert "network/vpn-troubleshooting.md" in shown  # the question alice may ask is answered
    assert HIDDEN_MARKER not in shown and "malware" not in shown
