"""Stage07 QCheck: the design's decision table, and question generation."""

from __future__ import annotations

from core.interview.domains import get_domain
from core.interview.qcheck import MAX_CHARS, compress, run_qcheck, specificity, tacit_power
from core.interview.qgen import Draft, fallback_question, structured_question
from core.interview.similarity import is_duplicate

SPECS = {s.name: s for s in get_domain("postmortem").slots}


def check(draft, asked=(), regenerate=None):
    return run_qcheck(
        draft,
        SPECS,
        list(asked),
        turn=3,
        regenerate=regenerate
        or (lambda d: Draft(d.slots, structured_question(SPECS[d.slots[0]]), "structured")),
        fallback=lambda d: fallback_question(SPECS, d.slots),
    )


def test_templates_are_specific():
    for spec in SPECS.values():
        assert specificity(spec.questions[0], [spec]) >= 0.7, spec.name


def test_low_specificity_is_regenerated_once():
    checked = check(Draft(["capa"], "それについて詳しく教えてください。", "template"))
    assert checked.draft.source == "structured" and checked.result.regenerated
    assert [e.status for e in checked.events] == ["ng", "ok"]
    assert checked.events[0].failed and "specificity<0.7" in checked.events[0].reasons[0]


def test_regeneration_failing_falls_back_to_the_default_question():
    checked = check(
        Draft(["capa"], "それについて詳しく教えてください。", "template"),
        regenerate=lambda d: Draft(d.slots, "もう少しお願いします。", "template"),
    )
    assert checked.result.fallback
    assert checked.draft.core.startswith(SPECS["capa"].default_question)
    assert sum(e.failed for e in checked.events) == 2


def test_low_tacit_power_adds_a_criterion_sentence():
    assert tacit_power("原因として何が考えられますか？判断基準も教えてください。") == 1.0
    draft = Draft(["detection"], "検知の方法とTTDは？", "template")
    checked = check(draft)
    assert checked.result.appended_criterion and checked.result.status == "warn"
    assert checked.draft.core.endswith(SPECS["detection"].criterion)
    assert tacit_power(checked.draft.core) >= 0.5


def test_duplicates_are_rejected():
    asked = [SPECS["detection"].questions[0]]
    checked = check(Draft(["detection"], SPECS["detection"].questions[0], "template"), asked)
    assert checked.draft is None and checked.result.status == "dup"
    assert checked.events[-1].failed
    assert is_duplicate(
        "検知の方法とTTDはどのくらいでしたか？", ["検知の方法とTTDはどのくらいでしたか?"]
    )
    assert not is_duplicate("根本原因は何ですか？", ["検知の方法とTTDはどのくらいでしたか？"])


def test_long_questions_are_compressed_to_two_sentences():
    long = (
        "タイムラインを整理しましょう。" * 3
        + "時刻・アクション・結果を3つ教えてください？"
        + "補足があればどうぞ。" * 3
    )
    checked = check(Draft(["timeline"], long, "template"))
    assert checked.result.compressed and "length>" in " ".join(checked.result.reasons)
    assert len(checked.draft.core) <= MAX_CHARS
    assert checked.draft.core.count("。") + checked.draft.core.count("？") <= 2
    assert compress("短い質問ですか？") == "短い質問ですか？"
