"""Each deterministic check on hand-made answers."""

from __future__ import annotations

from core.evaluation.checks import (
    check_citations,
    check_flags,
    check_forbidden,
    check_keywords,
    check_response,
    check_warning,
    contains,
    run_checks,
    same_file,
)
from core.evaluation.dataset import EvalCase
from core.guardrails import DANGER_BANNER, INSUFFICIENT_EVIDENCE_TEMPLATE
from tests.evaluation.conftest import RANSOMWARE_PASSAGE, answer, citation


def make_case(**kw) -> EvalCase:
    return EvalCase.model_validate({"id": "t", "category": "normal", "query": "q", **kw})


GOOD = answer(
    "1. 感染端末を EDR でネットワーク隔離する（「完全」を選択）。 [1]\n2. 端末の電源は切らない。 [1]",
    [
        citation(1, RANSOMWARE_PASSAGE),
        citation(2, "別の段落", file="malware-infection.md", cited=False),
    ],
)


def test_text_matching_is_normalized():
    assert contains("隔離する(Microsoft", "隔離する（microsoft")
    assert contains("Get-WinEvent  -ComputerName dc01", "get-winevent -computername")
    assert contains("SoftDelete", "Soft Delete")
    assert not contains("ハード削除は行わない", "SoftDelete")
    assert same_file("data/runbooks/ransomware-isolation.md", "ransomware-isolation.md")
    assert same_file("ransomware-isolation.md", "runbooks/ransomware-isolation.md")
    assert not same_file("isolation.md", "ransomware-isolation.md")


def test_citations():
    assert check_citations(make_case(), GOOD) is None
    ok = check_citations(
        make_case(expected_citations=["data/runbooks/ransomware-isolation.md"]), GOOD
    )
    assert ok.passed
    # a retrieved but uncited passage does not count as cited
    missing = check_citations(make_case(expected_citations=["malware-infection.md"]), GOOD)
    assert not missing.passed and "malware-infection.md" in missing.detail
    assert not check_citations(make_case(expected_citations=[]), GOOD).passed
    refusal = answer(
        INSUFFICIENT_EVIDENCE_TEMPLATE, [citation(1, "x", cited=False)], mode="template"
    )
    assert check_citations(make_case(expected_citations=[]), refusal).passed


def test_keywords():
    assert check_keywords(make_case(), GOOD) is None
    assert check_keywords(make_case(expected_keywords=["EDR", "電源"]), GOOD).passed
    r = check_keywords(make_case(expected_keywords=["EDR", "シャットダウン"]), GOOD)
    assert not r.passed and "1/2" in r.detail and "シャットダウン" in r.detail


def test_flags():
    assert check_flags(make_case(), GOOD) is None
    assert check_flags(make_case(expected_flags={"insufficient_evidence": False}), GOOD).passed
    r = check_flags(make_case(expected_flags={"dangerous_operation": True}), GOOD)
    assert not r.passed and "危険操作: 期待 あり / 実際 なし" in r.detail


def test_forbidden_text():
    assert check_forbidden(make_case(), GOOD) is None
    assert check_forbidden(make_case(should_not_contain=["rm -rf", "削除"]), GOOD).passed
    r = check_forbidden(make_case(should_not_contain=["電源"]), GOOD)
    assert not r.passed and "電源" in r.detail


def test_expected_response_and_warning():
    refusal = answer(INSUFFICIENT_EVIDENCE_TEMPLATE, mode="template", insufficient_evidence=True)
    assert check_response(
        make_case(expected_response_contains="該当する手順が見つかりませんでした"), refusal
    ).passed
    assert not check_response(
        make_case(expected_response_contains=["該当する手順が見つかりませんでした", "別の文"]),
        refusal,
    ).passed
    warned = answer(
        "手順 [1]", [citation(1, "手順")], banner=DANGER_BANNER, dangerous_operation=True
    )
    assert check_warning(make_case(expected_warning=DANGER_BANNER), warned).passed
    assert not check_warning(make_case(expected_warning=DANGER_BANNER), GOOD).passed
    assert check_warning(make_case(), GOOD) is None


def test_run_checks_only_states_what_the_case_expects():
    c = make_case(expected_citations=["ransomware-isolation.md"], expected_keywords=["EDR"])
    assert [r.name for r in run_checks(c, GOOD)] == ["citations", "keywords"]
    assert run_checks(make_case(), GOOD) == []
