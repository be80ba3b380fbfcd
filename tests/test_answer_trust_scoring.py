"""The answer-trust bench's scoring helpers and question file, on synthetic data (no data sets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.answer_trust import (
    CATEGORIES,
    PAIRS,
    QUESTIONS,
    Outcome,
    Question,
    aggregate,
    file_matches,
    format_table,
    load_questions,
    normalize_heading,
    pair_of,
    percentile,
    restrict,
    section_matches,
)


def outcome(**kw) -> Outcome:
    base = dict(
        id="q",
        question="?",
        pair="ja→ja",
        category="answerable",
        answerable=True,
        dangerous=False,
        expected_files=("docs-ja/a.md",),
        expected_section="Attack Mitigation",
    )
    base.update(kw)
    return Outcome(**base)


# --- section matching --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "heading", "ok"),
    [
        ("3.2.4 Incident Analysis", "3. Handling an Incident > 3.2.4 Incident Analysis", True),
        ("3.2.4 Incident Analysis", "INCIDENT   ANALYSIS", True),
        ("3.2.4 Incident Analysis", "3.2.5 Incident Documentation", False),
        ("Incident Analysis", "3.2 Detection and Analysis", False),
        ("Steps for Incident Commander", "During an Incident > Steps for Incident Commander", True),
        ("書記官", "インシデント発生中 > 書記官の手順", True),
        ("書記官", "インシデント発生中 > 副指揮官の手順", False),
        ("!ic", "ChatOps > `!ic page`", True),
        (
            "Make the title/summary descriptive",
            "Alert Content > Make the title/summary descriptive.",
            True,
        ),
        ("Long Incidents|Updates", "How to communicate > Updates", True),
        ("Long Incidents|Updates", "How to communicate > Resolution", False),
        ("攻撃の緩和", "チェックリスト", False),
        ("", "anything", False),
        ("Attack Mitigation", "", False),
    ],
)
def test_section_matches(expected: str, heading: str, ok: bool) -> None:
    assert section_matches(expected, heading) is ok


def test_normalize_heading_drops_numbering_width_and_case() -> None:
    assert normalize_heading("3.3.1 Choosing a Containment Strategy") == normalize_heading(
        "choosing  a containment strategy"
    )
    assert normalize_heading("２．３　Ｐｏｌｉｃｙ") == "policy"
    assert normalize_heading("## 1. Introduction") == "introduction"
    assert normalize_heading("第3章 対応") == "対応"


def test_file_matches_is_exact_relative_path() -> None:
    assert file_matches(["pdf/x.pdf"], "pdf/x.pdf")
    assert file_matches(["pdf/x.pdf"], "./pdf/x.pdf")
    assert not file_matches(["docs-ja/a.md"], "docs-en/a.md")
    assert not file_matches([], "docs-ja/a.md")


# --- restriction to a subset ------------------------------------------------------------


def q(**kw) -> Question:
    base = dict(
        id="x",
        question="?",
        language="ja",
        pair="ja→ja",
        category="answerable",
        files=("docs-ja/a.md",),
        section="S",
        answerable=True,
        dangerous=False,
    )
    base.update(kw)
    return Question(**base)


def test_restrict_substitutes_the_translation_and_recomputes_the_pair() -> None:
    got = restrict(q(section_translated="T"), {"docs-en/a.md", "pdf/n.pdf"})
    assert got is not None
    assert got.files == ("docs-en/a.md",)
    assert got.pair == "ja→en"
    assert got.section == "T"
    untranslated = restrict(q(), {"docs-en/a.md"})
    assert untranslated is not None and untranslated.section == ""
    same = restrict(q(), {"docs-ja/a.md", "docs-en/a.md"})
    assert same is not None and same.files == ("docs-ja/a.md",) and same.pair == "ja→ja"


def test_in_another_folder_the_pair_follows_the_script_of_the_file(tmp_path) -> None:
    (tmp_path / "shogai.md").write_text("# 障害対応\n\n1. 影響範囲を確認する。\n", encoding="utf-8")
    (tmp_path / "outage.md").write_text("# Outage\n\n1. Check the impact.\n", encoding="utf-8")
    asked = q(language="en", pair="en→ja", files=("shogai.md",))
    present = {"shogai.md", "outage.md"}
    assert restrict(asked, present, tmp_path).pair == "en→ja"
    assert restrict(q(files=("outage.md",)), present, tmp_path).pair == "ja→en"
    assert restrict(asked, present).pair == "en→en"  # without the folder: English


def test_the_pair_follows_the_text_a_reader_gives_not_the_file_s_bytes(tmp_path) -> None:
    """A wiki page saved as HTML is Japanese although its markup, style and scripts are not; a
    Word file's bytes are a zip: the script is read from the text the product indexes."""
    from docx import Document as WordDocument

    script = "function track(event) { window.dataLayer.push({event: event}); }\n" * 40
    page = (
        f"<html><head><title>障害対応</title><script>{script}</script></head><body>"
        "<nav><a href='index.html'>Home</a></nav><h1>障害対応</h1>"
        "<p>影響範囲を確認し、関係者に連絡する。</p></body></html>"
    )
    (tmp_path / "shogai.html").write_text(page, encoding="utf-8")
    word = WordDocument()
    word.add_heading("障害対応", level=1)
    word.add_paragraph("影響範囲を確認し、関係者に連絡する。")
    word.save(str(tmp_path / "shogai.docx"))
    present = {"shogai.html", "shogai.docx"}
    for name in present:
        asked = q(language="en", pair="en→ja", files=(name,))
        assert restrict(asked, present, tmp_path).pair == "en→ja", name


def test_restrict_drops_answerable_questions_without_files_and_keeps_the_others() -> None:
    assert restrict(q(files=("pdf/n.pdf",)), {"docs-ja/a.md"}) is None
    unans = q(category="unanswerable", answerable=False, files=(), pair="ja→-")
    assert restrict(unans, {"docs-ja/a.md"}) == unans


# --- aggregation ------------------------------------------------------------------------


def test_aggregate_per_pair_and_overall() -> None:
    outcomes = [
        # ja→ja: right file and section; right file wrong section and refused
        outcome(id="a", top_file="docs-ja/a.md", top_heading="Doc > Attack Mitigation"),
        outcome(id="b", top_file="docs-ja/a.md", top_heading="Doc > Checklist", refused=True),
        # ja→en: wrong file (the section is then wrong too), banner on an ordinary question
        outcome(
            id="c",
            pair="ja→en",
            expected_files=("pdf/n.pdf",),
            top_file="docs-en/a.md",
            top_heading="Attack Mitigation",
            danger=True,
        ),
        # unanswerable: one refused, one not
        outcome(id="d", pair="en→-", category="unanswerable", answerable=False, refused=True),
        outcome(id="e", pair="en→-", category="unanswerable", answerable=False),
        # dangerous: one flagged, one missed
        outcome(id="f", pair="ja→-", category="dangerous", answerable=False, dangerous=True),
        outcome(
            id="g", pair="ja→-", category="dangerous", answerable=False, dangerous=True, danger=True
        ),
    ]
    table = aggregate(outcomes)
    assert list(table) == ["ja→ja", "ja→en", "en→-", "ja→-", "overall"]
    ja = table["ja→ja"]
    assert (ja["file_p1"].hits, ja["file_p1"].total) == (2, 2)
    assert (ja["section_p1"].hits, ja["section_p1"].total) == (1, 2)
    assert ja["answerable_refused"].value == 0.5
    assert ja["unanswerable_refused"].value is None
    assert table["ja→en"]["file_p1"].value == 0.0
    assert table["ja→en"]["section_p1"].value == 0.0
    assert table["en→-"]["unanswerable_refused"].value == 0.5
    assert table["ja→-"]["danger_recall"].value == 0.5
    overall = table["overall"]
    assert (overall["file_p1"].hits, overall["file_p1"].total) == (2, 3)
    assert overall["danger_recall"].value == 0.5
    # banner on ordinary: 1 of the 5 non-dangerous questions
    assert (overall["banner_on_ordinary"].hits, overall["banner_on_ordinary"].total) == (1, 5)
    text = format_table(table, {p: 1 for p in table})
    assert "ja→en" in text and "0.50" in text


def test_failures_name_what_went_wrong() -> None:
    assert outcome(top_file="docs-ja/a.md", top_heading="Attack Mitigation").failures() == []
    assert outcome(top_file="docs-ja/a.md", top_heading="Other").failures() == ["section"]
    got = outcome(top_file="x.md", refused=True, danger=True).failures()
    assert got == ["file", "refused", "banner"]
    assert outcome(category="dangerous", answerable=False, dangerous=True).failures() == [
        "no banner"
    ]


def test_pair_of_and_percentile() -> None:
    assert pair_of(outcome(pair="en→ja")) == "en→ja"
    assert pair_of(outcome(pair="en→-")) == "en→-"
    assert pair_of(outcome(pair="en→xx")) == "en→-"
    assert percentile([5, 1, 3, 2, 4], 0.5) == 3
    assert percentile([], 0.95) == 0.0


# --- the question file --------------------------------------------------------------------


def test_question_file_is_complete_and_consistent() -> None:
    description, questions = load_questions(QUESTIONS)
    assert description
    assert len(questions) >= 80
    cats = {c: [x for x in questions if x.category == c] for c in CATEGORIES}
    assert all(len(v) >= 10 for v in cats.values())
    for x in questions:
        assert x.language in {"ja", "en"}
        assert x.pair.split("→")[0] == x.language
        assert x.dangerous == (x.category == "dangerous")
        assert x.answerable == (x.category in {"answerable", "alarming"})
        if x.answerable:
            assert x.pair in PAIRS
            assert all("/" in f and not f.startswith("/") for f in x.files)
    pairs = {x.pair for x in questions if x.answerable}
    assert {"ja→ja", "en→en", "ja→en"} <= pairs
    for c in ("unanswerable", "dangerous", "alarming"):
        assert {x.language for x in cats[c]} == {"ja", "en"}


def test_load_questions_rejects_a_bad_entry(tmp_path: Path) -> None:
    bad = tmp_path / "q.json"
    bad.write_text(json.dumps({"questions": [{"id": "1", "question": "?"}]}), encoding="utf-8")
    with pytest.raises(SystemExit, match="entry 1"):
        load_questions(bad)


@pytest.mark.parametrize(
    "name",
    [
        "answer_trust_aws.json",
        "answer_trust_jp.json",
        "answer_trust_mixed_a.json",
        "answer_trust_mixed_b.json",
        "answer_trust_mixed_c.json",
        "answer_trust_jp_b.json",
        "answer_trust_mixed_d.json",
        "answer_trust_jp_c.json",
        "answer_trust_mixed_e.json",
        "answer_trust_jp_d.json",
        "answer_trust_mixed_f.json",
        "answer_trust_jp_e.json",
        "answer_trust_mixed_g.json",
        "answer_trust_jp_f.json",
        "answer_trust_mixed_h.json",
        "answer_trust_jp_g.json",
        "answer_trust_mixed_i.json",
        "answer_trust_jp_h.json",
        "answer_trust_mixed_j.json",
        "answer_trust_jp_i.json",
        "answer_trust_mixed_k.json",
        "answer_trust_jp_j.json",
        "answer_trust_mixed_l.json",
        "answer_trust_jp_k.json",
        "answer_trust_mixed_m.json",
        "answer_trust_jp_l.json",
        "answer_trust_mixed_n.json",
        "answer_trust_jp_m.json",
        "answer_trust_mixed_o.json",
        "answer_trust_jp_n.json",
        "answer_trust_mixed_p.json",
        "answer_trust_jp_o.json",
        "answer_trust_mixed_q.json",
        "answer_trust_jp_p.json",
        "answer_trust_mixed_r.json",
        "answer_trust_jp_q.json",
    ],
)
def test_the_other_development_question_files_are_consistent(name: str) -> None:
    """Question sets over third-party runbooks outside the data set (their sources are named in
    the description; the documents are fetched into a folder passed with --data)."""
    description, questions = load_questions(QUESTIONS.parent / name)
    assert "--data" in description and len(questions) >= 40
    for x in questions:
        assert x.pair.split("→")[0] == x.language in {"ja", "en"}
        assert x.dangerous == (x.category == "dangerous")
        assert x.answerable == (x.category in {"answerable", "alarming"}) == bool(x.files)
    assert {x.category for x in questions} == set(CATEGORIES)
