"""Running a set against a target and comparing runs (real runbook search as the target)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core.errors import ContractError, LLMError
from core.pipelines import Pipeline
from core.question_sets.contract import Question, loads_question_set
from core.question_sets.diff import diff_runs
from core.question_sets.runner import (
    execution_sha256,
    list_runs,
    read_run,
    run_question_set,
)
from core.question_sets.targets import (
    FunctionTarget,
    RunAnswer,
    TargetUnavailableError,
    make_target,
    to_run_answer,
)
from core.schemas.answer import Answer, Citation, Flags
from tests.question_sets.helpers import valid_bytes

RUNBOOK_QUESTIONS = [
    ("RB-1", "VPN に接続できないときの確認手順は？"),
    ("RB-2", "フィッシングメールを受け取ったらどうすればよいですか"),
    ("RB-3", "ランサムウェアに感染した端末の隔離方法"),
]


def runbook_set(questions=RUNBOOK_QUESTIONS, set_id="cqset-soc-RB-v1"):
    qs = loads_question_set(valid_bytes())
    return replace(
        qs,
        question_set_id=set_id,
        questions=tuple(Question(i, t) for i, t in questions),
    )


def search_target(settings, limit: int = 3, name: str = "runbook") -> FunctionTarget:
    """The real hybrid runbook search as a target: the top passage is the answer."""
    from core.runbooks import search_runbooks

    def ask(text: str) -> RunAnswer:
        outcome = search_runbooks(settings, text, limit=limit)
        hits = outcome.hits
        return RunAnswer(
            answer=hits[0].chunk.body if hits else "",
            citations=[
                {
                    "chunk_id": h.chunk.chunk_id,
                    "file": h.chunk.source,
                    "heading": h.chunk.heading,
                    "score": h.score,
                    "excerpt": h.chunk.body[:200],
                    "doc_hash": h.chunk.doc_hash,
                }
                for h in hits
            ],
            flags={"insufficient_evidence": not hits},
            answer_mode="search",
        )

    return FunctionTarget(name, ask)


def test_run_records_every_question_with_ids_answer_citations_flags_and_timing(small_settings):
    qs = runbook_set()
    seen = []
    result = run_question_set(
        qs, search_target(small_settings), small_settings, progress=lambda *a: seen.append(a)
    )
    assert result.path.parent == small_settings.runs_dir
    assert result.path.name.startswith("run-") and result.path.name.endswith(".json")
    data = json.loads(result.path.read_text(encoding="utf-8"))
    assert data["status"] == "completed" and data["run_format"] == "question_set_run.v1"
    assert data["question_set_id"] == "cqset-soc-RB-v1" and data["ordinance_id"] == qs.ordinance_id
    assert [r["question_id"] for r in data["records"]] == ["RB-1", "RB-2", "RB-3"]
    first = data["records"][0]
    for key in ("ordinance_id", "question_set_id", "source_golden_question_pool", "answer",
                "citations", "flags", "elapsed_ms", "started_at", "answer_mode"):  # fmt: skip
        assert key in first
    assert first["citations"][0]["file"] == "vpn-login-failure.md"
    assert {"chunk_id", "file", "heading", "score", "excerpt", "doc_hash"} <= set(first["citations"][0])  # fmt: skip
    assert data["records"][1]["citations"][0]["file"] == "phishing-report.md"
    assert first["flags"] == {"insufficient_evidence": False} and first["elapsed_ms"] > 0
    assert seen[0] == (0, 3, "") and seen[-1] == (3, 3, "RB-3")
    assert read_run(result.path).records[2].question_text == RUNBOOK_QUESTIONS[2][1]
    assert list_runs(small_settings)[0] == result.path


def test_a_failing_question_is_recorded_and_the_run_goes_on(settings):
    def ask(text: str) -> RunAnswer:
        if "定義" in text:
            raise LLMError("LLM の呼び出しに失敗しました（3回再試行）。")
        if "施行" in text:
            raise ValueError("boom")
        return RunAnswer(answer=f"回答: {text}", flags={"x": True}, answer_mode="test")

    qs = loads_question_set(valid_bytes())
    run = run_question_set(qs, FunctionTarget("runbook", ask), settings).run
    assert run.status == "completed" and run.error_count == 2
    assert run.records[0].error is None and run.records[0].answer.startswith("回答: ")
    assert run.records[1].error == "LLM の呼び出しに失敗しました（3回再試行）。"
    assert run.records[2].error.startswith("予期しないエラー: ValueError")


def test_an_interrupted_run_is_kept_and_can_be_resumed(settings):
    calls: list[str] = []

    def interrupting(text: str) -> RunAnswer:
        calls.append(text)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return RunAnswer(answer="a")

    qs = loads_question_set(valid_bytes())
    with pytest.raises(KeyboardInterrupt):
        run_question_set(qs, FunctionTarget("runbook", interrupting), settings)
    [path] = list_runs(settings)
    partial = read_run(path)
    assert partial.status == "interrupted" and [r.question_id for r in partial.records] == [
        "A-1-Q1"
    ]

    calls.clear()
    resumed = run_question_set(
        qs, FunctionTarget("runbook", lambda t: (calls.append(t), RunAnswer("b"))[1]), settings,
        resume=path,
    )  # fmt: skip
    assert resumed.path == path and resumed.run.status == "completed"
    assert [r.question_id for r in resumed.run.records] == ["A-1-Q1", "A-2-Q1", "A-14-Q1"]
    assert len(calls) == 2  # only the missing questions were asked
    other = replace(qs, questions=qs.questions[:1])
    with pytest.raises(Exception, match="別の内容の質問セット"):
        run_question_set(other, FunctionTarget("runbook", lambda t: RunAnswer("c")), settings, resume=path)  # fmt: skip


def test_run_files_are_checked_when_read(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(
        json.dumps({"run_format": "question_set_run.v1", "records": "x"}), encoding="utf-8"
    )
    with pytest.raises(ContractError) as info:
        read_run(path)
    assert info.value.user_message.startswith("実行結果ファイルが不正です")
    assert ("records", "配列である必要があります") in info.value.errors
    path.write_bytes(b"\x93\xfa")
    with pytest.raises(ContractError, match="UTF-8"):
        read_run(path)


def test_diff_reports_answer_citation_flag_and_membership_changes(small_settings):
    settings = small_settings
    qs = runbook_set()
    a = run_question_set(qs, search_target(settings, limit=3), settings).run
    same = run_question_set(qs, search_target(settings, limit=3), settings).run
    assert not diff_runs(a, same).has_differences
    assert diff_runs(a, same).counts == {"unchanged": 3, "changed": 0, "added": 0, "removed": 0}

    fewer = run_question_set(qs, search_target(settings, limit=1), settings).run
    d = diff_runs(a, fewer)
    assert d.counts["changed"] == 3
    q = d.questions[0]
    assert q.citations_changed and not q.answer_changed and not q.flags_changed
    assert len(q.citations_removed) == 2 and q.citations_removed[0].startswith(
        a.records[0].citations[1]["file"]
    )
    assert any(c.startswith("引用が変わりました") for c in q.changes_ja())

    base = search_target(settings, limit=3)

    def flagged(text: str) -> RunAnswer:
        answer = base.ask(text)
        if "VPN" in text:
            return replace(
                answer, flags={"insufficient_evidence": True, "dangerous_operation": True}
            )
        if "フィッシング" in text:
            return replace(answer, answer=answer.answer + "（追記）")
        return answer

    changed = run_question_set(qs, FunctionTarget("runbook", flagged), settings).run
    d = diff_runs(a, changed)
    by_id = {q.question_id: q for q in d.questions}
    assert by_id["RB-1"].flags_changed == {
        "insufficient_evidence": (False, True),
        "dangerous_operation": (None, True),
    }
    assert "フラグ insufficient_evidence: false → true" in by_id["RB-1"].changes_ja()
    assert by_id["RB-2"].answer_changed and not by_id["RB-2"].citations_changed
    assert by_id["RB-3"].status == "unchanged"

    other = runbook_set([RUNBOOK_QUESTIONS[0], ("RB-9", "DDoS 攻撃を受けたときの初動")])
    moved = run_question_set(other, base, settings).run
    d = diff_runs(a, moved)
    assert [(q.question_id, q.status) for q in d.questions] == [
        ("RB-1", "unchanged"), ("RB-2", "removed"), ("RB-3", "removed"), ("RB-9", "added"),
    ]  # fmt: skip
    assert any("実行内容" in n for n in d.notes)
    assert d.to_dict()["counts"] == {"unchanged": 1, "changed": 0, "added": 1, "removed": 2}


def test_to_run_answer_keeps_the_answer_as_shown_without_passage_texts():
    answer = Answer(
        question="q",
        answer="手順です",
        answer_mode="extractive",
        banner="⚠️ 承認・確認が必要",
        flags=Flags(dangerous_operation=True),
        citations=[
            Citation(
                n=0, chunk_id="c1", file="jawiki:東京都", heading="東京都", score=float("nan"),
                bm25_score=1.0, vector_score=0.5, excerpt="e", text="全文" * 100, doc_hash="d",
                ref="jawiki:東京都#chunk=2", url="https://ja.wikipedia.org/wiki/x",
            )
        ],
    )  # fmt: skip
    run_answer = to_run_answer(answer)
    assert run_answer.answer.startswith("⚠️ 承認・確認が必要") and run_answer.answer.endswith(
        "手順です"
    )
    assert run_answer.flags == {
        "insufficient_evidence": False, "dangerous_operation": True, "ambiguous_query": False,
    }  # fmt: skip
    cite = run_answer.citations[0]
    assert list(cite)[:6] == ["chunk_id", "file", "heading", "score", "excerpt", "doc_hash"]
    assert cite["score"] is None and cite["n"] == 0 and cite["ref"] == "jawiki:東京都#chunk=2"
    assert "text" not in cite
    assert to_run_answer("text").answer == "text"


def test_an_unknown_target_fails_before_the_first_question(settings):
    with pytest.raises(TargetUnavailableError, match="実行先「x」はありません（runbook, wiki"):
        make_target("x", settings)


def test_a_target_asks_its_pipeline_with_empty_history_and_a_tagged_config(settings):
    from dataclasses import dataclass

    @dataclass
    class Config:
        topk: int = 16
        session_id: str = "cli"
        write_audit: bool = True

    calls = []

    def fake_ask(question, history, config, settings_arg):
        calls.append((question, history, config, settings_arg))
        return Answer(question=question, answer="回答", answer_mode="extractive")

    pipelines = {"wiki": Pipeline("wiki", "Wikipedia QA", fake_ask, Config)}
    answer = make_target("wiki", settings, pipelines).ask("東京の人口は？")
    question, history, config, passed = calls[0]
    assert question == "東京の人口は？" and history == [] and passed is settings
    assert config == Config(session_id="qset")
    assert answer.answer == "回答" and answer.answer_mode == "extractive"


def test_the_runbook_adapter_runs_the_real_chat_pipeline(small_settings):
    qs = runbook_set(RUNBOOK_QUESTIONS[:1])
    run = run_question_set(qs, make_target("runbook", small_settings), small_settings).run
    record = run.records[0]
    assert record.error is None, record.error
    assert record.answer and record.answer_mode
    assert set(record.flags) >= {"insufficient_evidence", "dangerous_operation", "ambiguous_query"}
    assert record.citations and {"chunk_id", "file", "heading", "score", "excerpt", "doc_hash"} <= set(record.citations[0])  # fmt: skip


def test_execution_fingerprint_ignores_label_and_metadata():
    qs = loads_question_set(valid_bytes())
    assert execution_sha256(qs) == execution_sha256(replace(qs, question_set_id="別名", metadata=None))  # fmt: skip
    assert execution_sha256(qs) != execution_sha256(replace(qs, questions=qs.questions[::-1]))
