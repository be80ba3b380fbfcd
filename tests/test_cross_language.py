"""Questions in one language over runbooks in the other: answered with a language note, not refused
only because no keyword can match across languages; unrelated questions still refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.runbook_chat import SYSTEM_PROMPT, ChatConfig, ask
from core.text.script import dominant_script, quote_language_note, same_script
from tests.conftest import make_settings

# Written for this test: one short runbook per language, on different incidents, so that a
# question about one topic asked of the other folder has no answer there.
EN_RUNBOOKS = {
    "lost-badge.md": """# Lost Building Access Badge

## First steps

1. Ask the employee when and where the access badge was last seen.
2. Deactivate the badge in the physical access control system at once.
3. Issue a temporary visitor badge that expires at the end of the day.

## Review

Check the door access log for any use of the lost badge after the time it was reported missing,
and report any such entry to the security manager.
""",
    "dns-outage.md": """# Internal DNS Outage

## Symptoms

Users cannot open internal web sites by name while access by IP address still works.

## Recovery

1. Check that the DNS service is running on both domain controllers.
2. Flush the resolver cache on the affected clients with ipconfig /flushdns.
3. Confirm that name resolution works with nslookup from two different subnets.
""",
}
JA_RUNBOOKS = {
    "usb-malware.md": """# USBメモリ経由のマルウェア対応手順

## 初動対応

1. 持ち込まれたUSBメモリを端末から抜き、封筒に入れて保管する。
2. 端末をネットワークから切り離し、ウイルス対策ソフトで全体スキャンを実行する。
3. USBメモリの持ち主と入手経路を聞き取り、記録する。

## 再発防止

外部記憶媒体の利用は申請制とし、許可されていないUSBメモリは接続できないように設定する。
""",
    "printer-leak.md": """# 複合機の誤送信対応手順

## 初動対応

1. 誤って送信したファクスまたはメールの宛先と送信日時を確認する。
2. 受信者に連絡し、受け取った書類の破棄を依頼する。
3. 送信した書類に個人情報が含まれるかを確認し、情報セキュリティ責任者に報告する。
""",
}


def _folder(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("cross")
    en = _folder(base / "en", EN_RUNBOOKS)
    ja = _folder(base / "ja", JA_RUNBOOKS)
    settings = make_settings(base / "state", en)
    return settings, en, ja


def _ask(question: str, folder: Path, settings):
    return ask(question, [], ChatConfig(session_id="test", data=folder), settings)


@pytest.mark.parametrize(
    ("question", "expected_file"),
    [
        ("入館用のアクセスバッジを紛失したときの最初の手順", "lost-badge.md"),
        ("社内のDNSで名前解決できないときの復旧手順", "dns-outage.md"),
    ],
)
def test_japanese_question_over_english_runbooks_is_answered(folders, question, expected_file):
    settings, en, _ = folders
    a = _ask(question, en, settings)
    assert not a.flags.insufficient_evidence, a.evidence
    assert a.answer_mode == "extractive"
    assert a.answer.splitlines()[0] == "原文（英語）から引用しています。"
    assert a.citations[0].file == expected_file


@pytest.mark.parametrize(
    ("question", "expected_file"),
    [
        ("What should I do first when malware comes from a USB stick", "usb-malware.md"),
        ("How do we respond when a fax is sent to the wrong recipient", "printer-leak.md"),
    ],
)
def test_english_question_over_japanese_runbooks_is_answered(folders, question, expected_file):
    settings, _, ja = folders
    a = _ask(question, ja, settings)
    assert not a.flags.insufficient_evidence, a.evidence
    assert a.answer.splitlines()[0] == "原文（日本語）から引用しています。"
    assert a.citations[0].file == expected_file


@pytest.mark.parametrize(
    ("question", "which"),
    [
        ("カレーライスの作り方を教えて", "en"),
        ("ファイアウォールのルールを変更する手順", "en"),
        ("How do I cook curry rice", "ja"),
        ("How do I renew an expired TLS certificate", "ja"),
    ],
)
def test_unrelated_question_across_languages_is_refused(folders, question, which):
    settings, en, ja = folders
    a = _ask(question, en if which == "en" else ja, settings)
    assert a.flags.insufficient_evidence, a.evidence


def test_same_language_answer_has_no_note(folders):
    settings, en, _ = folders
    a = _ask("What should I do first when an access badge is lost", en, settings)
    assert not a.flags.insufficient_evidence
    assert "原文" not in a.answer


@pytest.mark.parametrize(
    ("text", "script"),
    [
        ("EDR でマルウェアのハッシュ値を全端末検索する方法", "ja"),
        ("How do I restore the VPN service after an outage", "latin"),
        ("Escalate to the 情報セキュリティ責任者 when personal data is involved", "latin"),
        ("ＶＰＮ接続", "ja"),
        ("Ｆｕｌｌ ｗｉｄｔｈ letters", "latin"),
        ("192.0.2.1 / 445 ---", "none"),
        ("", "none"),
    ],
)
def test_dominant_script(text, script):
    assert dominant_script(text) == script


def test_language_note_only_across_scripts():
    assert quote_language_note("社員証の紛失", "Deactivate the badge.") == (
        "原文（英語）から引用しています。"
    )
    assert quote_language_note("lost badge", "社員証を無効化する。") == (
        "原文（日本語）から引用しています。"
    )
    assert quote_language_note("社員証の紛失", "社員証を無効化する。") is None
    assert quote_language_note("123", "Deactivate the badge.") is None
    assert same_script("none", "ja") and not same_script("ja", "latin")


def test_llm_prompt_asks_for_the_questions_language():
    assert "質問と同じ言語" in SYSTEM_PROMPT


def test_a_question_about_a_product_no_passage_names_is_refused_and_says_so(folders):
    """General advice close in meaning is not an answer about a named product."""
    settings, _, ja = folders
    a = _ask("CrowdStrike Falcon でUSBメモリ経由のマルウェアを検知したときの初動は？", ja, settings)
    assert a.flags.insufficient_evidence
    assert a.evidence["probability"] >= 0.5  # the grade alone would have answered
    # no runbook of the folder names it at all, and the reply says so
    assert "質問にある「CrowdStrike Falcon」は、どの手順書にも出てきません。" in a.answer
    assert a.citations and not any(c.cited for c in a.citations)


def test_names_the_passages_carry_are_answered_in_either_language(folders):
    settings, en, _ = folders
    a = _ask("nslookup で名前解決を確かめる手順は？", en, settings)
    assert not a.flags.insufficient_evidence, a.evidence
    assert a.citations[0].file == "dns-outage.md"


SCOPED_RUNBOOK = """# Compromised Single Sign-On Account

## Out of Scope

Okta tenants are run by the identity team and follow the identity team's own playbook.

## Containment

1. Revoke the user's active sessions in Entra ID and require a new sign-in.
2. Reset the password and register MFA again with the user in person.
3. Review the sign-in log of the last seven days for other unusual locations.
"""


def test_a_name_only_the_out_of_scope_section_lists_is_not_covered(tmp_path):
    """A playbook's list of what it does not cover is not where it covers a product."""
    folder = _folder(tmp_path / "scope", {"sso.md": SCOPED_RUNBOOK, **EN_RUNBOOKS})
    settings = make_settings(tmp_path / "state", folder)
    a = _ask("Oktaで乗っ取られたユーザーのセッションを全部切るには？", folder, settings)
    assert a.flags.insufficient_evidence
    assert "質問にある「Okta」は、見つかった手順書では対象外として挙げられています。" in a.answer
    b = _ask("Entra IDで乗っ取られたユーザーのセッションを全部切るには？", folder, settings)
    assert not b.flags.insufficient_evidence, b.evidence
    assert b.citations[0].file == "sso.md"


# Written for this test: a Japanese page whose only English words are channel names, URLs and
# placeholders, beside the page that answers an English question in Japanese.
PLACEHOLDER_RUNBOOKS = {
    "contacts.md": """# 連絡先

| 用途 | 宛先 |
| --- | --- |
| incident chat | #incident-chat |
| incident call | https://voip.example.com/incident-call |
| on-call page | !page oncall |

上の表の incident call と on-call page は各社の値に置き換えてください。重大な障害のときは、まず
チャットの部屋に入り、次に電話会議に参加してください。担当者が見つからないときは、部署の代表番号に
連絡して、当番の管理者に取り次いでもらいます。
""",
    "oncall-notify.md": """# オンコール担当の通知設定

## 通知ルール

1. 最初の通知はプッシュ通知にする。
2. 5 分たっても応答が無ければ電話で呼び出す。
3. オンコール担当者は通知ルールを 2 つ以上設定しておく。
""",
}


def test_english_words_in_a_japanese_page_do_not_outrank_the_page_that_answers(tmp_path):
    """'call' and 'on-call' in a table of placeholders are not what an English question about
    on-call notification rules asks for: the page with their translations (オンコール, 通知) is."""
    folder = _folder(tmp_path / "ja", {**PLACEHOLDER_RUNBOOKS, **JA_RUNBOOKS})
    settings = make_settings(tmp_path / "state", folder)
    a = _ask(
        "What notification rules should the on-call engineer set up before a call?",
        folder,
        settings,
    )
    assert a.citations[0].file == "oncall-notify.md", [c.file for c in a.citations]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory):
    """One folder holding the runbooks of both languages, as a SOC's share does."""
    base = tmp_path_factory.mktemp("mixed")
    folder = _folder(base / "runbooks", {**EN_RUNBOOKS, **JA_RUNBOOKS})
    return make_settings(base / "state", folder), folder


@pytest.mark.parametrize(
    ("question", "expected_file"),
    [
        ("入館用のアクセスバッジを紛失したときの最初の手順", "lost-badge.md"),
        ("社内のDNSで名前解決できないときの復旧手順", "dns-outage.md"),
    ],
)
def test_in_a_folder_of_both_languages_the_english_playbook_answers_a_japanese_question(
    mixed, question, expected_file
):
    settings, folder = mixed
    a = _ask(question, folder, settings)
    assert not a.flags.insufficient_evidence, a.evidence
    assert a.citations[0].file == expected_file
    assert a.evidence["cross_language"] is True  # graded as across languages
    assert a.answer.startswith("原文（英語）から引用しています。")
