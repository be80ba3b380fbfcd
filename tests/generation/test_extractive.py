"""The extractive answerer's units and selection (no embedder: term coverage and retrieval score)."""

from __future__ import annotations

from core.generation.extractive import Evidence, extractive_answer, split_units

PATCH = """悪用が確認された脆弱性について、月例のサイクルを待たずに修正を適用する基準を定める。

次のいずれかに当てはまる場合は緊急パッチとして扱う。

- CISA の KEV カタログに掲載された
- CVSS 基本値が9.0以上で、公開機器が影響を受ける
- JPCERT/CC から注意喚起が発行された

例外の扱いは情報セキュリティ責任者が決める。
"""

REPORT = """- 1,000人を超える本人の個人データの漏えいは、個人情報保護委員会への報告が必要になる。
- 速報は認知から概ね3〜5日以内、確報は30日以内に提出する。
- 報告書の提出は法務部門が行う。
"""

STEPS = """1. 端末をネットワークから切り離す。
   EDR のコンソールで隔離を実行する。
2. メモリを取得する。
3. 利用者へ連絡する。
"""


def test_units_steps_bullets_and_a_lead():
    units = split_units(PATCH)
    kinds = [(u.kind, u.list_id) for u in units]
    assert kinds == [
        ("sentence", -1),
        ("lead", 0),
        ("bullet", 0),
        ("bullet", 0),
        ("bullet", 0),
        ("sentence", -1),
    ]
    steps = split_units(STEPS)
    assert [u.kind for u in steps] == ["step", "step", "step"]
    assert "EDR のコンソール" in steps[0].text  # the indented line continues step 1


def test_a_sentence_that_does_not_introduce_the_list_is_not_its_lead():
    units = split_units("手順の目的を説明する。\n- 項目A を確認する\n- 項目B を確認する\n")
    assert [u.kind for u in units] == ["sentence", "bullet", "bullet"]


def test_the_lead_brings_its_whole_list():
    answer = extractive_answer(
        "緊急パッチとして扱う判断基準は",
        [Evidence("1", PATCH, "緊急パッチ適用手順 > 判断基準", 0.9)],
        ["緊急", "パッチ", "扱う", "判断", "基準"],
    )
    lines = answer.text.splitlines()
    assert lines[0] == "「緊急パッチ適用手順 > 判断基準」より [1]:"
    assert lines[1:5] == [
        "- 次のいずれかに当てはまる場合は緊急パッチとして扱う。 [1]",
        "- CISA の KEV カタログに掲載された [1]",
        "- CVSS 基本値が9.0以上で、公開機器が影響を受ける [1]",
        "- JPCERT/CC から注意喚起が発行された [1]",
    ]
    assert "例外の扱い" not in answer.text


def test_a_short_list_is_given_whole_and_a_long_one_only_by_its_best_items():
    terms = ["個人情報保護委員会", "報告", "期限"]
    short = extractive_answer("報告期限は", [Evidence("1", REPORT, "報告義務", 0.9)], terms)
    assert "確報は30日以内" in short.text and "法務部門" in short.text
    filler = "".join(f"- 無関係な項目その{i}を確認する\n" for i in range(8))
    long = extractive_answer("報告期限は", [Evidence("1", REPORT + filler, "報告義務", 0.9)], terms)
    assert "個人情報保護委員会への報告" in long.text
    assert "無関係な項目" not in long.text


def test_numbered_steps_stay_whole_and_in_order():
    answer = extractive_answer(
        "メモリを取得する手順", [Evidence("2", STEPS, "初動", 0.8)], ["メモリ", "取得"]
    )
    body = answer.text.splitlines()[1:]
    assert [line.split(".")[0] for line in body] == ["1", "2", "3"]
    assert all(line.endswith("[2]") for line in body)
