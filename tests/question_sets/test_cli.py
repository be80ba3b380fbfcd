"""``python -m core qset …``: end to end in subprocesses (WB_STATE_DIR set to a temp folder) for
the main paths, and in-process through ``core.__main__.main`` for the variants (same parser and
handlers, without paying a Python start-up and a model load per call)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from core.question_sets.contract import Question, loads_question_set
from core.question_sets.runner import run_question_set
from core.question_sets.targets import FunctionTarget, RunAnswer
from core.settings import PROJECT_ROOT
from tests.conftest import make_settings
from tests.question_sets.helpers import GOLDEN_DIR, STRUCTURE_EXAMPLE, valid_bytes, valid_payload


def qset(args: list[str], state: Path, **env_extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WB_", "NEO4J_"))}
    env["WB_STATE_DIR"] = str(state)
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "core", "qset", *args],
        cwd=PROJECT_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def cli(monkeypatch, capsys):
    """Run ``python -m core qset …`` in-process: (exit code, stdout, stderr)."""
    from core.__main__ import main
    from core.settings import get_settings

    def call(args: list[str], state: Path, **env: str) -> tuple[int, str, str]:
        for name in [k for k in os.environ if k.startswith("WB_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("WB_STATE_DIR", str(state))
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        capsys.readouterr()
        try:
            code = main(["qset", *args])
        finally:
            get_settings.cache_clear()
        out = capsys.readouterr()
        return code, out.out, out.err

    return call


def test_validate_exit_codes_and_japanese_errors_with_paths(tmp_path, cli):
    good = tmp_path / "good.json"
    good.write_bytes(valid_bytes())
    ok = qset(["validate", str(good)], tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "有効です" in ok.stdout and "質問 3件" in ok.stdout

    data = valid_payload()
    data["schema_version"] = "customized_question_set.v1.0"
    data["customized_question_set"]["questions"][2]["question_id"] = "A-1-Q1"
    data["customized_question_set"]["metadata"]["note"] = "全問 PASS"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    result = qset(["validate", str(bad)], tmp_path)
    assert result.returncode == 1
    assert "無効です" in result.stderr and "エラー 3件" in result.stderr
    assert "  schema_version: 形式が不正です" in result.stderr
    assert "customized_question_set.questions[2].question_id: question_id「A-1-Q1」が重複" in result.stderr  # fmt: skip
    assert "customized_question_set.metadata.note: metadata には" in result.stderr
    assert "Traceback" not in result.stderr

    code, out, _ = cli(["validate", str(bad), "--json"], tmp_path)
    report = json.loads(out)
    assert code == 1 and report["valid"] is False and len(report["errors"]) == 3
    code, out, _ = cli(["validate", str(good), "--json"], tmp_path)
    assert code == 0 and json.loads(out)["valid"] is True

    loose = tmp_path / "loose.json"
    loose.write_text(json.dumps(valid_payload()), encoding="utf-8")
    code, out, err = cli(["validate", str(loose)], tmp_path)
    assert code == 0 and "正規形式" in err

    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\x82\xa0{")
    for path, needle in (
        (garbage, "UTF-8 として読めません"),
        (tmp_path / "nope.json", "見つかりません"),
    ):
        code, _, err = cli(["validate", str(path)], tmp_path)
        assert code == 1 and needle in err and "（ルート）" in err


def test_validate_names_a_pool_given_as_a_set(tmp_path, cli):
    code, _, err = cli(["validate", str(GOLDEN_DIR / "A-v1.1.json")], tmp_path)
    assert code == 1 and "ヒント: これは Golden Question Pool のファイルです" in err
    assert "qset generate" in err
    _, _, err = cli(["validate", str(tmp_path / "nope.json")], tmp_path)
    assert "ヒント" not in err


def test_generate_writes_the_set_and_a_separate_report(tmp_path, cli):
    out = tmp_path / "sets" / "cqset.json"
    args = ["generate", "--pool", "A-v1.1", "--ordinance-id", "k518RG00000022",
            "--structure", str(STRUCTURE_EXAMPLE), "--out", str(out)]  # fmt: skip
    result = qset(args, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "質問 19件" in result.stdout and "除外 A-11-Q1" in result.stdout
    qs = loads_question_set(out.read_bytes())
    assert qs.question_set_id == "cqset-k518RG00000022-A-v1.1"
    assert "○○市情報セキュリティ対策推進条例" in qs.questions[0].question_text
    report = json.loads((tmp_path / "sets" / "cqset.generation_report.json").read_text("utf-8"))
    assert len(report["excluded"]) == 8 and "除外" not in out.read_text("utf-8")

    code, _, err = cli(args, tmp_path)
    assert code == 2 and "--force" in err
    code, _, _ = cli([*args, "--force", "--name", "架空町条例"], tmp_path)
    assert code == 0
    assert loads_question_set(out.read_bytes()).questions[0].question_text.startswith("架空町条例")

    code, _, err = cli(["generate", "--pool", "Z-v9", "--ordinance-id", "x", "--out", str(tmp_path / "z.json")], tmp_path)  # fmt: skip
    assert code == 2 and "見つかりません" in err


def test_generate_fails_fast_and_refuses_a_tampered_pool(tmp_path, cli):
    golden = tmp_path / "golden"
    golden.mkdir()
    pool = {
        "pool_id": "T-v1",
        "placeholders": {"ordinance_name": "名称"},
        "features": {"penalties": "罰則"},
        "questions": [
            {
                "question_id": "T-1",
                "template": "{ordinance_name}の罰則は？",
                "requires": ["penalties"],
            }
        ],
    }
    (golden / "T-v1.json").write_text(json.dumps(pool, ensure_ascii=False), encoding="utf-8")
    from core.question_sets.golden import (
        freeze_pool,
    )

    freeze_pool(golden / "T-v1.json")
    structure = tmp_path / "structure.json"
    structure.write_text(json.dumps({"features": {"penalties": False}}), encoding="utf-8")
    out = tmp_path / "out.json"
    code, _, err = cli(
        ["generate", "--pool", "T-v1", "--ordinance-id", "X1", "--structure", str(structure), "--out", str(out)],
        tmp_path,
        WB_GOLDEN_DIR=str(golden),
    )  # fmt: skip
    assert code == 1
    assert "1件も残りません" in err and "除外 T-1" in err
    assert not out.exists()

    shutil.copy2(GOLDEN_DIR / "A-v1.1.json", golden / "A-v1.1.json")
    shutil.copy2(GOLDEN_DIR / "A-v1.1.json.sha256", golden / "A-v1.1.json.sha256")
    with (golden / "A-v1.1.json").open("ab") as fh:
        fh.write(b" ")
    code, _, err = cli(
        ["generate", "--pool", "A-v1.1", "--ordinance-id", "X1", "--out", str(out)],
        tmp_path,
        WB_GOLDEN_DIR=str(golden),
    )
    assert code == 2 and "チェックサムが記録値と一致しません" in err
    code, out_text, _ = cli(["pools"], tmp_path, WB_GOLDEN_DIR=str(golden))
    assert code == 1 and "T-v1: 検証済み" in out_text and "一致しません" in out_text
    code, out_text, _ = cli(["pools"], tmp_path)
    assert code == 0 and "A-v1.1: 検証済み・27問" in out_text


def test_diff_exit_codes_and_output(tmp_path, cli):
    settings = make_settings(tmp_path / "state")
    qs = loads_question_set(valid_bytes())
    a = run_question_set(qs, FunctionTarget("runbook", lambda t: RunAnswer("同じ回答")), settings)
    b = run_question_set(qs, FunctionTarget("runbook", lambda t: RunAnswer("同じ回答")), settings)
    c = run_question_set(
        replace(qs, questions=(*qs.questions[:2], Question("A-99", "追加の質問"))),
        FunctionTarget("runbook", lambda t: RunAnswer("違う回答", flags={"insufficient_evidence": True})),
        settings,
    )  # fmt: skip
    changed = qset(["diff", str(a.path), str(c.path)], tmp_path)
    assert changed.returncode == 1, changed.stderr
    assert (
        "A-1-Q1:\n  回答が変わりました\n  フラグ insufficient_evidence: なし → true"
        in changed.stdout
    )
    assert "A-14-Q1:\n  質問が削除されました" in changed.stdout
    assert "A-99:\n  質問が追加されました" in changed.stdout
    code, out, _ = cli(["diff", str(a.path), str(b.path)], tmp_path)
    assert code == 0 and "変化なし 3件・変化あり 0件・追加 0件・削除 0件" in out
    code, out, _ = cli(["diff", str(a.path), str(c.path), "--json"], tmp_path)
    assert code == 1
    assert json.loads(out)["counts"] == {"unchanged": 0, "changed": 2, "added": 1, "removed": 1}
    broken = tmp_path / "broken.json"
    broken.write_text("{}", encoding="utf-8")
    code, _, err = cli(["diff", str(a.path), str(broken)], tmp_path)
    assert code == 2 and "実行結果ファイルが不正です" in err


@pytest.mark.skipif(
    importlib.util.find_spec("core.runbook_chat") is None, reason="runbook chat not present"
)
def test_run_against_the_runbook_pipeline(tmp_path, small_state, cli):
    qs = loads_question_set(valid_bytes())
    one = replace(qs, questions=(Question("RB-1", "VPN に接続できないときの確認手順は？"),))
    from core.question_sets.contract import save_question_set

    path = save_question_set(one, tmp_path / "one.json")
    state = small_state / "state"
    env = {"WB_RUNBOOKS_DIR": str(small_state / "runbooks")}
    result = qset(["run", str(path), "--target", "runbook", "--json"], state, **env)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["status"] == "completed" and run["records"][0]["question_id"] == "RB-1"
    assert run["records"][0]["citations"][0]["file"] == "vpn-login-failure.md"
    saved = Path(result.stderr.strip().splitlines()[-1].split("保存しました: ")[1])
    assert saved.parent == state / "eval" / "runs" and saved.is_file()

    code, out, _ = cli(["run", str(path), "--target", "runbook"], state, **env)
    assert code == 0 and "[1/1] RB-1" in out and "引用: vpn-login-failure.md" in out
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    code, _, err = cli(["run", str(bad), "--target", "runbook"], state, **env)
    assert code == 2 and "ルートは JSON オブジェクト" in err


def test_run_exits_1_when_a_question_failed_and_keeps_the_run(tmp_path, cli, monkeypatch):
    from core.errors import IndexStateError
    from core.question_sets import cli as qset_cli

    def failing(text: str) -> RunAnswer:
        raise IndexStateError("Wikipedia インデックスは未構築です。")

    monkeypatch.setattr(
        qset_cli, "make_target", lambda name, settings: FunctionTarget(name, failing)
    )
    path = tmp_path / "set.json"
    path.write_bytes(valid_bytes())
    code, out, _ = cli(["run", str(path), "--target", "wiki"], tmp_path / "state")
    assert code == 1
    assert "エラー: Wikipedia インデックスは未構築です。" in out and "エラー 3件" in out
    [saved] = (tmp_path / "state" / "eval" / "runs").glob("run-*-wiki-*.json")
    assert json.loads(saved.read_text("utf-8"))["status"] == "completed"


def deep_set(depth: int) -> str:
    """A valid set whose metadata nests ``depth`` objects deep (the probe that crashed)."""
    text = valid_bytes().decode().rstrip()
    data = json.loads(text)
    data["customized_question_set"]["metadata"] = {"deep": "@"}
    nested = '{"a":' * depth + "1" + "}" * depth
    return json.dumps(data, ensure_ascii=False).replace('"@"', nested)


@pytest.mark.parametrize("depth", [950, 5000])
def test_deeply_nested_json_is_a_japanese_error_not_a_crash(tmp_path, cli, depth):
    path = tmp_path / "deep.json"
    path.write_text(deep_set(depth), encoding="utf-8")
    code, out, err = cli(["validate", str(path)], tmp_path / "state")
    assert code == 1 and "入れ子が深すぎます" in err and "Traceback" not in err
    code, out, err = cli(["validate", str(path), "--json"], tmp_path / "state")
    report = json.loads(out)
    assert code == 1 and report["valid"] is False
    assert "入れ子が深すぎます" in report["errors"][0]["message"]
