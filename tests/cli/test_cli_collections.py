"""``--user`` / ``--groups`` / ``--role`` on the CLI: search, ask, qset run and eval run as a user.

One subprocess per command over tiny runbooks in two collections
(``tests/support/collections_fixture.py``): ``alice`` (net-team) never gets the malware runbook,
in text, JSON, run files, evaluation results or the audit log.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from core.audit import log_path
from core.settings import PROJECT_ROOT
from tests.question_sets.helpers import valid_payload
from tests.support.collections_fixture import (
    HIDDEN_FILE,
    HIDDEN_MARKER,
    HIDDEN_QUESTION,
    NETWORK_QUESTION,
    write_runbooks,
)

ALICE = ["--user", "alice", "--groups", "net-team"]
BOB = ["--user", "bob", "--groups", "mal-team,other", "--role", "reviewer"]


def run_cli(args: list[str], state: Path, runbooks: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WB_", "NEO4J_"))}
    env |= {"WB_STATE_DIR": str(state), "WB_RUNBOOKS_DIR": str(runbooks), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "core", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    """The runbooks (the default folder of every command) indexed by the CLI."""
    root = tmp_path_factory.mktemp("cli-collections")
    data = write_runbooks(root / "runbooks")
    state = root / "state"
    built = run_cli(["index", "runbooks"], state, data)
    assert built.returncode == 0, built.stderr

    def run(*args: str) -> subprocess.CompletedProcess:
        return run_cli([*args], state, data)

    return root, data, state, run


def test_search_as_a_user_returns_only_their_collections(cli):
    _, data, _, run = cli
    mine = run("search", HIDDEN_QUESTION, "--data", str(data), "--json", *ALICE)
    assert mine.returncode == 0, mine.stderr
    result = json.loads(mine.stdout)
    assert result["totalCount"] == len(result["results"]) > 0
    result.pop("query")
    shown = json.dumps(result, ensure_ascii=False)
    assert HIDDEN_MARKER not in shown and "malware" not in shown
    theirs = run("search", HIDDEN_QUESTION, "--data", str(data), *BOB)
    assert theirs.stdout.splitlines()[0].startswith(f"[1] {HIDDEN_FILE}")
    local = run("search", HIDDEN_QUESTION, "--data", str(data))
    assert local.stdout.splitlines()[0].startswith(f"[1] {HIDDEN_FILE}")


def test_ask_as_a_user_refuses_what_only_a_hidden_runbook_answers(cli):
    _, data, state, run = cli
    mine = run("ask", HIDDEN_QUESTION, "--data", str(data), "--json", *ALICE)
    assert mine.returncode == 0, mine.stderr
    answer = json.loads(mine.stdout)
    assert answer["flags"]["insufficient_evidence"] and answer["answer_mode"] == "template"
    assert HIDDEN_MARKER not in mine.stdout and "malware" not in mine.stdout
    text = run("ask", NETWORK_QUESTION, "--data", str(data), *ALICE)
    assert "network/vpn-troubleshooting.md" in text.stdout
    theirs = run("ask", HIDDEN_QUESTION, "--data", str(data), *BOB)
    assert HIDDEN_FILE in theirs.stdout and HIDDEN_MARKER in theirs.stdout
    day = datetime.now().astimezone().date()
    records = [json.loads(x) for x in log_path(state / "logs", day).read_text().splitlines()]
    refused = [r for r in records if r["query"] == HIDDEN_QUESTION and r["flags"]["insufficient_evidence"]]  # fmt: skip
    assert refused and HIDDEN_MARKER not in json.dumps(refused, ensure_ascii=False)


def test_question_set_run_as_a_user(cli):
    root, _, _, run = cli
    payload = valid_payload()
    questions = payload["customized_question_set"]["questions"]
    questions[0]["question_text"] = HIDDEN_QUESTION
    questions[1]["question_text"] = NETWORK_QUESTION
    del questions[2:]
    path = root / "cqset.json"
    path.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    mine = run("qset", "run", str(path), "--target", "runbook", "--json", *ALICE)
    theirs = run("qset", "run", str(path), "--target", "runbook", "--json", *BOB)
    assert mine.returncode == 0, mine.stderr
    records = json.loads(mine.stdout)["records"]
    assert records[0]["flags"]["insufficient_evidence"]
    assert any(c["file"].startswith("network/") for c in records[1]["citations"])
    assert HIDDEN_MARKER not in mine.stdout and "malware" not in mine.stdout
    saved = mine.stderr.split("保存しました: ")[-1].strip()
    assert HIDDEN_MARKER not in Path(saved).read_text(encoding="utf-8")
    assert HIDDEN_FILE in theirs.stdout


def test_eval_run_as_a_user(cli):
    root, _, _, run = cli
    case = {
        "id": "normal_001",
        "category": "normal",
        "query": HIDDEN_QUESTION,
        "conversation_context": None,
        "expected_citations": [HIDDEN_FILE],
        "expected_keywords": [],
        "should_not_contain": [],
        "expected_flags": {"insufficient_evidence": False},
        "expected_response_contains": None,
        "expected_warning": None,
        "note": "",
    }
    dataset = root / "eval.json"
    dataset.write_text(json.dumps({"version": "1", "created_at": "2026-01-01", "test_cases": [case]}))  # fmt: skip
    out = root / "eval-alice.json"
    mine = run("eval", "run", "--dataset", str(dataset), "--out", str(out), "--json", *ALICE)
    assert mine.returncode in (0, 1), mine.stderr
    result = json.loads(mine.stdout)["results"][0]
    assert result["refused"]
    assert all(not c["file"].startswith("malware/") for c in result["citations"])
    assert HIDDEN_MARKER not in out.read_text(encoding="utf-8")
    assert json.loads(mine.stdout)["settings"]["run_as"] == "alice"


def test_bad_principal_options_are_refused_in_japanese(cli):
    _, data, _, run = cli
    lonely = run("search", "VPN", "--data", str(data), "--groups", "net-team")
    assert lonely.returncode == 2 and "--user と一緒に" in lonely.stderr
    bad_role = run("search", "VPN", "--data", str(data), "--user", "eve", "--role", "root")
    assert bad_role.returncode == 2 and "--role は" in bad_role.stderr
