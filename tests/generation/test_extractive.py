"""The extractive answerer's units and selection (no embedder: term coverage and retrieval score)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.generation.extractive import Evidence, extractive_answer, split_units
from core.generation.intent import question_intent, section_kind
from core.text.windows import content_units

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
    # the indented line continues step 1: kept under it, not merged into it
    assert steps[0].children == [(3, "EDR のコンソールで隔離を実行する。")]
    assert "EDR のコンソール" in steps[0].full_text


def test_an_english_paragraph_is_read_by_its_sentences():
    """A PDF's paragraph is one line: its sentences are units, as Japanese ones are, so an
    answer quotes the sentences that answer instead of the paragraph up to a clip.
    Abbreviations, initials, decimals and code do not end a sentence."""
    paragraph = (
        "Containment is important before an incident overwhelms resources. An essential part "
        "of containment is decision-making (e.g. shut down a system, disconnect it). Version "
        "2.1 of the tool by J. Smith is used. Run `rm x. Now` on the host. Is it done? Yes!"
    )
    units = split_units(paragraph + "\n次に端末を隔離する。ログを保全する。\n")
    assert [u.text for u in units] == [
        "Containment is important before an incident overwhelms resources.",
        "An essential part of containment is decision-making (e.g. shut down a system, "
        "disconnect it).",
        "Version 2.1 of the tool by J. Smith is used.",
        "Run `rm x. Now` on the host.",
        "Is it done?",
        "Yes!",
        "次に端末を隔離する。",
        "ログを保全する。",
    ]
    assert {u.kind for u in units} == {"sentence"}


def test_the_answer_to_an_english_question_quotes_the_sentences_that_answer():
    text = (
        "Incident handling has several phases. Evidence should be retained for at least "
        "three years after the case closes, as the legal team requires. The phases overlap "
        "in practice. Teams often hold exercises to practice them."
    )
    answer = extractive_answer(
        "How long should evidence be retained?",
        [Evidence("1", text, "Evidence Retention", 0.9)],
        ["evidence", "retained", "long"],
    )
    assert "at least three years" in answer.text
    assert "exercises" not in answer.text and "…" not in answer.text


def test_a_quoted_lead_brings_its_whole_list():
    """Quoted by sentences, a paragraph whose last sentence introduces a list brings the list
    whole and in order, not the one or two items that scored on their own."""
    text = (
        "Organizations need an incident response plan that provides a roadmap. The incident "
        "response plan should include the following elements:\n"
        "- Mission\n- Strategies and goals\n- Senior management approval\n- Metrics\n"
    )
    answer = extractive_answer(
        "What does the incident response plan contain?",
        [Evidence("1", text, "Plan Elements", 0.9)],
        ["incident", "response", "plan"],
    ).text
    items = ["Mission", "Strategies and goals", "Senior management approval", "Metrics"]
    positions = [answer.find(f"- {item} [1]") for item in items]
    assert all(p > 0 for p in positions) and positions == sorted(positions), answer


def test_a_caption_or_an_introducing_sentence_leads_its_table():
    units = split_units(
        "Sources vary.\nTable 3-1. Common Sources of Precursors\n"
        "IDPSs | IDPS products identify events\nSIEMs | SIEM products correlate\n"
        "連絡先は次のとおり:\n| 役割 | 連絡先 |\n| --- | --- |\n| SOC | 内線 1234 |\n"
    )
    got = [(u.kind, u.list_id) for u in units]
    assert got == [
        ("sentence", -1),
        ("lead", 0),  # the caption
        ("lead", 0),  # the table's first row, its header
        ("row", 0),
        ("lead", 1),  # the sentence ending in a colon
        ("lead", 1),  # the header row above the rule
        ("row", 1),
    ]
    # a sentence that merely starts with the word is no caption
    plain = split_units("Tables are kept by the SOC.\n| a | b |\n| --- | --- |\n| 1 | 2 |\n")
    assert [u.kind for u in plain] == ["sentence", "lead", "row"]


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
        # the items sit under the sentence that introduces them
        "  - CISA の KEV カタログに掲載された [1]",
        "  - CVSS 基本値が9.0以上で、公開機器が影響を受ける [1]",
        "  - JPCERT/CC から注意喚起が発行された [1]",
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
    body = [line for line in answer.text.splitlines()[1:] if not line.startswith(" ")]
    assert [line.split(".")[0] for line in body] == ["1", "2", "3"]
    assert all(line.endswith("[2]") for line in body)
    assert "   EDR のコンソールで隔離を実行する。 [2]" in answer.text.splitlines()


# --- the kind of answer the question asks for ----------------------------------------------

MAIL = "不審メール対応手順"
MAIL_SECTIONS = {
    "目的": "不審メールの報告を受けたときに、被害の有無を確かめて対応し、感染の拡大を防ぐ。\n",
    "対応手順": (
        "1. 報告者から受信日時と件名を聞き取る。\n"
        "2. メールゲートウェイで同じ送信元からの受信を検索する。\n"
        "   - 受信者が10人以上なら一斉配信として扱う\n"
        "   - 添付ファイルがあればサンドボックスで解析する\n"
        "     - 解析結果はチケットに添付する\n"
        "3. 該当メールを全受信箱から取り除くよう申請する。\n"
    ),
    "判断基準": (
        "- 添付ファイルを開いた利用者がいる: 端末をネットワークから隔離する\n"
        "- URL を開いて認証情報を入力した: パスワードをリセットする\n"
        "- 開封していない: 取り除くだけで完了とする\n"
    ),
    "連絡先": (
        "- SOC 当番: soc-duty@example.jp、内線 7300\n"
        "- メール管理者: mail-admin@example.jp、内線 7310\n"
    ),
    "用語": "一斉配信とは、同じ送信元から短い時間に多数の利用者へ送られたメールを指す。\n",
}
MAIL_TERMS = ["不審", "メール", "対応", "端末", "隔離", "連絡", "一斉配信", "手順"]


def mail_evidence(score: float = 0.8) -> list[Evidence]:
    # The 目的 section first, as retrieval tends to rank it: it names the runbook's subject.
    return [
        Evidence(str(n), body, f"{MAIL} > {heading}", score)
        for n, (heading, body) in enumerate(MAIL_SECTIONS.items(), start=1)
    ]


def answer_section(answer) -> str:
    return answer.text.splitlines()[0]


@pytest.mark.parametrize(
    ("question", "section"),
    [
        ("不審メールの対応手順は", "対応手順"),
        ("不審メールが届いた", "対応手順"),  # a symptom asks what to do
        ("不審メールを受け取ったらどうすればいいですか", "対応手順"),
        ("不審メールで端末を隔離する判断基準は", "判断基準"),
        ("どんな場合に端末を隔離しますか", "判断基準"),
        ("不審メールについて誰に連絡すればよいか", "連絡先"),
        ("不審メールの連絡先を教えて", "連絡先"),
        ("一斉配信とは", "用語"),
        ("不審メール対応の目的は", "目的"),
    ],
)
def test_each_kind_of_question_gets_its_section(question, section):
    terms = [t for t in MAIL_TERMS if t in question] or ["不審", "メール"]
    answer = extractive_answer(question, mail_evidence(), terms)
    assert answer_section(answer).startswith(f"「{MAIL} > {section}」より")


def test_the_purpose_sentence_does_not_answer_a_how_question():
    answer = extractive_answer("不審メールが届いた", mail_evidence(), ["不審", "メール"])
    assert "被害の有無" not in answer.text
    assert "1. 報告者から受信日時と件名を聞き取る。 [2]" in answer.text


def test_nested_lists_stay_nested():
    answer = extractive_answer(
        "不審メールの対応手順は", mail_evidence(), ["不審", "メール", "対応"]
    )
    lines = answer.text.splitlines()
    i = lines.index("2. メールゲートウェイで同じ送信元からの受信を検索する。 [2]")
    assert lines[i + 1 : i + 4] == [
        "   - 受信者が10人以上なら一斉配信として扱う [2]",
        "   - 添付ファイルがあればサンドボックスで解析する [2]",
        "     - 解析結果はチケットに添付する [2]",
    ]
    assert lines[i + 4] == "3. 該当メールを全受信箱から取り除くよう申請する。 [2]"


VPN_STEPS = (
    "1. 問い合わせ者のユーザー名とエラーメッセージを聞き取る。\n2. 対応状況をチケットに記録する。\n"
)
PHISH_STEPS = "1. 不審メールの報告をチケットに記録し、受信者の一覧を添える。\n"


def test_another_runbooks_step_is_no_supplement_unless_it_answers():
    question, terms = "不審メールの対応手順は", ["不審", "メール", "対応", "手順"]
    vpn = Evidence("6", VPN_STEPS, "VPN接続障害対応手順 > 対応手順", 0.9)
    answer = extractive_answer(question, [*mail_evidence(), vpn], terms)
    assert answer_section(answer).startswith(f"「{MAIL} > 対応手順」")
    assert "対応状況をチケット" not in answer.text and "[6]" not in answer.text
    assert "6" not in answer.used_labels
    # a step of another runbook that is about the question's subject is a fair 補足
    phish = Evidence("7", PHISH_STEPS, "フィッシング報告の受付 > 手順", 0.6)
    answer = extractive_answer(question, [*mail_evidence(), vpn, phish], terms)
    assert "補足:" in answer.text
    assert "- 1. 不審メールの報告をチケットに記録し、受信者の一覧を添える。 [7]" in answer.text
    assert "[6]" not in answer.text


def test_supplement_lines_of_one_passage_keep_their_order():
    """Chosen by score, the two 補足 lines of a passage are shown as it runs (1. then 2.)."""
    question = "メモリのイメージを取得してハッシュを記録する手順は"
    terms = ["メモリ", "イメージ", "取得", "ハッシュ", "記録", "手順"]
    memory = Evidence(
        "1",
        "1. 管理者権限で取得ツールを外部媒体から実行し、メモリのイメージを取得する。\n"
        "2. 取得直後にメモリイメージのハッシュ値を計算して記録する。\n",
        "証跡保全手順 > メモリの取得",
        0.95,
        "evidence.md",
    )
    disk = Evidence(
        "2",
        "1. 書き込み防止装置を介して接続し、イメージを取得する手順を記録する。\n"
        "2. 原本とイメージのハッシュ値を取得し、一致することを記録する。\n",
        "証跡保全手順 > ディスクイメージの取得",
        0.85,
        "evidence.md",
    )
    text = extractive_answer(question, [memory, disk], terms).text
    supplement = text.split("補足:\n")[1].splitlines()
    assert supplement == [
        "- 1. 書き込み防止装置を介して接続し、イメージを取得する手順を記録する。 [2]",
        "- 2. 原本とイメージのハッシュ値を取得し、一致することを記録する。 [2]",
    ]


def test_a_quote_starting_at_step_5_is_set_apart_from_its_lead_line():
    """Markdown lets only a list starting at 1 interrupt a paragraph: 「…より [1]:」 followed by
    "5. …" would render as one paragraph, so a blank line comes between them."""
    text = (  # a chunk that starts inside the list, as a long list is cut
        "5. レプリカの IP アドレスを指すように DNS レコードを更新する。\n"
        "6. DNS の更新が反映されたことを確認する。\n"
    )
    evidence = [Evidence("1", text, "フェイルオーバー > 手順", 0.9, "failover.md")]
    lines = extractive_answer(
        "DNS レコードを更新する手順は", evidence, ["DNS", "レコード", "更新", "手順"]
    ).text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("5. "))
    assert lines[start - 1] == "" and lines[start - 2].endswith("より [1]:"), lines
    one = [Evidence("1", "1. DNS レコードを更新する。\n2. 反映を確認する。\n", "DNS > 手順", 0.9)]
    lines = extractive_answer("DNS レコードの更新", one, ["DNS", "レコード", "更新"]).text
    assert lines.splitlines()[1].startswith("1. ")  # a list from 1 follows its lead directly


def test_code_blocks_inside_a_step_keep_their_fences_and_are_closed():
    """A fence with a marker after it ("``` [1]") closes no block and the rest of the answer
    would render as code; a quote that ends inside a block gets its closing fence."""
    text = (
        "1. プライマリをメンテナンスモードにする。\n"
        "   - 管理コンソールか次のコマンドを使う。\n"
        "     ```shell\n"
        "     $ ghe-maintenance -s\n"
        "     ```\n"
        "2. レプリカを昇格する。\n"
        "   ```shell\n"
        "   $ ghe-repl-promote\n"
    )
    evidence = [Evidence("1", text, "フェイルオーバー > 手順", 0.9, "failover.md")]
    lines = extractive_answer(
        "メンテナンスモードにして昇格する手順は",
        evidence,
        ["メンテナンス", "モード", "昇格", "手順"],
    ).text.splitlines()
    assert "   - 管理コンソールか次のコマンドを使う。 [1]" in lines
    fences = [line for line in lines if line.strip().startswith("```")]
    assert fences == ["     ```shell", "     ```", "   ```shell", "   ```"], lines
    assert "     $ ghe-maintenance -s" in lines and "   $ ghe-repl-promote" in lines
    # a chunk that ends on the opening fence quotes no empty block
    cut = Evidence("1", text.rsplit("   $", 1)[0], "フェイルオーバー > 手順", 0.9, "failover.md")
    lines = extractive_answer(
        "メンテナンスモードにして昇格する手順は", [cut], ["メンテナンス", "モード", "昇格", "手順"]
    ).text.splitlines()
    assert lines[-1] == "2. レプリカを昇格する。 [1]", lines


EN = "Phishing response"
EN_SECTIONS = {
    "Purpose": "This runbook describes how the SOC responds to a reported phishing email.\n",
    "Steps": (
        "1. Ask the reporter for the subject line and the time the email arrived.\n"
        "2. Search the mail gateway for the same sender.\n"
        "   - If more than 10 users received it, treat it as a campaign\n"
        "     - Record the campaign in the ticket\n"
        "3. Request removal of the email from every mailbox.\n"
    ),
    "Escalation criteria": (
        "- A user opened the attachment: isolate the host from the network\n"
        "- A user entered credentials: reset the password\n"
    ),
    "Contacts": (
        "- SOC on duty: soc-duty@example.com, ext. 7300\n"
        "- Mail administrator: mail-admin@example.com, ext. 7310\n"
    ),
}


@pytest.mark.parametrize(
    ("question", "terms", "section"),
    [
        ("How do I handle a phishing email?", ["phishing", "email"], "Steps"),
        ("When should we isolate the host?", ["isolate", "host"], "Escalation criteria"),
        (
            "Who should I contact about a phishing email?",
            ["contact", "phishing", "email"],
            "Contacts",
        ),
    ],
)
def test_english_questions_get_their_section(question, terms, section):
    evidence = [
        Evidence(str(n), body, f"{EN} > {heading}", 0.8)
        for n, (heading, body) in enumerate(EN_SECTIONS.items(), start=1)
    ]
    answer = extractive_answer(question, evidence, terms)
    assert answer_section(answer).startswith(f"「{EN} > {section}」より")
    if section == "Steps":
        assert "     - Record the campaign in the ticket [2]" in answer.text.splitlines()


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("VPN に接続できない", "steps"),
        ("How do I reset the token?", "steps"),
        ("アカウントを無効化する条件は", "criteria"),
        ("When is a host isolated?", "criteria"),
        ("夜間は誰に電話しますか", "contacts"),
        ("Who is on call tonight?", "contacts"),
        ("KEV とは", "definition"),
        ("What is a campaign?", "definition"),
        ("VPN 装置の公開 IP アドレス", None),
        # asking whether an act is allowed is no request for a procedure, symptom or not
        ("侵害が疑われるとき、攻撃者のドメインに ping を打ってもいい？", None),
        ("Our host is compromised. Is it OK to reboot it?", None),
        ("侵害が疑われる端末の対応手順は？", "steps"),
    ],
)
def test_question_intent(question, intent):
    assert question_intent(question) == intent


def test_the_title_is_not_read_as_the_section():
    assert section_kind("VPNログイン失敗対応手順 > 目的") == "purpose"
    assert section_kind("VPNログイン失敗対応手順 > 詳細手順 > 個別ユーザーの失敗") == "steps"
    assert section_kind("VPNログイン失敗対応手順 > 注意事項") is None
    assert section_kind("Incident Response > Contacts") == "contacts"


NIGHT = "エスカレーション体制 > 夜間の連絡"
NIGHT_STEPS = "1. オンコール表の当番へ電話する。\n2. 応答がなければ副責任者へ電話する。\n"


def test_a_question_asking_for_two_kinds_gets_the_second_as_a_supplement():
    question = "夜間に不審メールが届いたときの連絡先と対応手順"
    terms = ["夜間", "不審", "メール", "連絡", "対応", "手順"]
    night = Evidence("6", NIGHT_STEPS, NIGHT, 0.8)
    # the runbook itself has both: its steps and its contacts answer
    answer = extractive_answer(question, [*mail_evidence(), night], terms)
    assert answer.intent == "contacts"
    assert {"2", "4"} <= set(answer.used_labels)
    # without its own contacts, the other runbook's night contacts supplement its steps
    without = [e for e in mail_evidence() if not e.heading.endswith("連絡先")]
    answer = extractive_answer(question, [*without, night], terms)
    assert {"2", "6"} <= set(answer.used_labels)
    assert "オンコール表の当番へ電話する" in answer.text
    # the second kind comes as its own section: its heading, then its whole list in order
    tail = answer.text[answer.text.index(f"「{NIGHT}」より [6]:") :]
    assert tail.index("1. オンコール表の当番へ電話する。") < tail.index("2. 応答がなければ")
    assert "補足" not in tail
    # asked for one kind only, the other runbook's step shares too little to be a 補足
    answer = extractive_answer("不審メールの対応手順は", [*mail_evidence(), night], terms[1:])
    assert "[6]" not in answer.text


def test_sections_of_one_document_are_known_by_the_document_not_the_heading():
    # Headings without the title above them (Markdown with the title in its front matter)
    question, terms = "不審メールの対応手順は", ["不審", "メール", "対応", "手順"]
    steps = Evidence("1", MAIL_SECTIONS["対応手順"], "対応手順", 0.8, document="mail.md")
    more = Evidence("2", "1. 受信者へ注意喚起を送る。\n", "追加の対応手順", 0.8, document="mail.md")
    other = Evidence("3", "1. 受信者へ注意喚起を送る。\n", "追加の対応手順", 0.8, document="vpn.md")
    assert "[2]" in extractive_answer(question, [steps, more], terms).text
    assert "[3]" not in extractive_answer(question, [steps, other], terms).text


def test_a_list_of_related_procedures_is_not_the_answer():
    """「関連手順」 names procedures and holds none: the section that answers leads, unless the
    question asks for the related documents."""
    evidence = [
        Evidence(
            "1",
            "- アカウント侵害・パスワードリセット対応手順（account.md）\n"
            "- マルウェア感染対応手順（malware.md）",
            "フィッシングメール報告対応手順 > 関連手順",
            0.8,
            "phishing.md",
        ),
        Evidence(
            "2",
            "報告者の行動 | 判定 | 次の対応\n認証情報を入力した | 高 | アカウント侵害対応へ即時移行",
            "フィッシングメール報告対応手順 > 判断基準",
            0.9,
            "phishing.md",
        ),
    ]
    terms = ["フィッシング", "認証", "情報", "入力", "アカウント", "対応"]
    question = "フィッシングで認証情報を入力した利用者のアカウントをどう対応すればよいか"
    assert section_kind("フィッシングメール報告対応手順 > 関連手順") == "references"
    assert section_kind("Runbook > See also") == "references"
    assert section_kind("ログの参照方法") != "references"
    answer = extractive_answer(question, evidence, terms)
    assert answer.text.startswith("「フィッシングメール報告対応手順 > 判断基準」より [2]")
    asked = extractive_answer(
        "フィッシング対応の関連手順は？", evidence, ["フィッシング", "関連", "手順"]
    )
    assert asked.text.startswith("「フィッシングメール報告対応手順 > 関連手順」より [1]")
    # a navigation chunk (a list of links) is read the same way whatever its heading
    navigation = [
        replace(evidence[0], heading="フィッシングメール報告対応手順 > その他", navigation=True)
    ]
    answer = extractive_answer(question, navigation + evidence[1:], terms)
    assert answer.text.startswith("「フィッシングメール報告対応手順 > 判断基準」より [2]")


def test_lines_that_ask_questions_do_not_answer_them():
    """A tabletop exercise's questions share the question's words; the section that tells
    leads the answer."""
    evidence = [
        Evidence(
            "1",
            "1. What strategy should the organization take to contain the incident? (Section 3.3.1)\n"
            "2. What could happen if the incident were not contained? (Section 3.3.1)",
            "Guide > Appendix A > Containment:",
            0.9,
            "guide.pdf",
        ),
        Evidence(
            "2",
            "Containment strategies vary with the type of incident. Criteria for choosing the "
            "strategy include potential damage to resources and the need to preserve evidence.",
            "Guide > 3.3.1 Choosing a Containment Strategy",
            0.8,
            "guide.pdf",
        ),
    ]
    terms = ["strategy", "contain", "incident", "organization"]
    answer = extractive_answer(
        "What strategy should we use to contain an incident?", evidence, terms
    )
    assert answer.text.startswith("「Guide > 3.3.1 Choosing a Containment Strategy」より [2]")


def test_the_kind_of_section_asked_for_does_not_overrule_a_sure_search():
    """「how」 favours a steps section among close candidates; a steps section the search ranked
    far below the best passage does not lead the answer."""
    declaration = Evidence(
        "1",
        "The team leader says so in the leadership channel and pages the executive team.",
        "Crisis operations > Crisis Declaration",
        1.0,
        "crisis.md",
    )
    steps = Evidence(
        "2",
        "1. Confirm that operations have been restored to normal.\n2. Create a final report.",
        "Guide > Crisis Handling Steps",
        0.44,
        "guide.pdf",
    )
    terms = ["crisis"]
    answer = extractive_answer("How do we handle a crisis?", [declaration, steps], terms)
    assert answer.text.startswith("「Crisis operations > Crisis Declaration」より [1]")
    close = replace(steps, score=0.9)  # close to the best: the steps section may lead
    answer = extractive_answer("How do we handle a crisis?", [declaration, close], terms)
    assert answer.text.startswith("「Guide > Crisis Handling Steps」より [2]")


def test_a_table_as_the_readers_write_it_is_given_with_its_header():
    """Document readers join a row's cells with " | "; a row that answers comes with the table
    it belongs to (its header row first), and a lone command with a pipe is not a table."""
    text = (
        "報告者の行動 | 判定 | 次の対応\n"
        "開封のみ、クリックなし | 低 | メールの除去のみ\n"
        "認証情報を入力した | 高 | アカウント侵害対応へ即時移行\n"
        "添付ファイルを実行した | 高 | EDR による端末隔離を検討"
    )
    units = split_units(text)
    assert [u.kind for u in units] == ["lead", "row", "row", "row"]
    assert len({u.list_id for u in units}) == 1
    evidence = [Evidence("1", text, "フィッシング対応 > 判断基準", 0.9, "phishing.md")]
    answer = extractive_answer(
        "認証情報を入力した場合の判定は？", evidence, ["認証", "情報", "入力", "判定"]
    )
    lines = answer.text.splitlines()
    assert lines[1] == "- 報告者の行動 | 判定 | 次の対応 [1]"
    assert "- 認証情報を入力した | 高 | アカウント侵害対応へ即時移行 [1]" in lines
    assert [u.kind for u in split_units("Get-ADUser alice | Select-Object Enabled")] == ["sentence"]


def test_a_passage_in_the_other_script_is_matched_with_the_translated_terms():
    """A Japanese question answered by an English playbook: its lines are matched against the
    question's terms translated, not lost to a Japanese passage ranked below it that merely
    shares the question's words."""
    question = "ランサムウェアに感染したとき、封じ込めで隔離すべき対象は何？"
    terms = ["ランサムウェア", "感染", "封じ込め", "隔離", "対象"]
    playbook = Evidence(
        "1",
        "- Isolate the infected hosts from the network.\n"
        "- Disconnect the file shares the ransomware can reach.\n",
        "Playbook: Ransomware > Contain",
        0.67,
        "ransomware.md",
        other_script=True,
    )
    nearby = Evidence(
        "2",
        "- 調査パッケージには感染の対象となったファイルの一覧が含まれます。\n"
        "- 隔離の前後でパッケージを収集できます。\n",
        "デバイスの対応措置 > 調査パッケージを収集する",
        0.43,
        "defender.md",
    )
    translated = ["ransomware", "infected", "containment", "isolation", "isolate"]
    answer = extractive_answer(question, [playbook, nearby], terms, translated=translated)
    assert answer_section(answer).startswith("「Playbook: Ransomware > Contain」")
    # without the translations the Japanese line, sharing 感染・対象・隔離, would win
    plain = extractive_answer(question, [playbook, nearby], terms)
    assert answer_section(plain).startswith("「デバイスの対応措置")


def test_a_passage_first_by_keywords_and_meaning_decides_the_language_quoted():
    """An English question over an English page and a Japanese guide full of English UI labels:
    the Japanese lines are matched against the question's few translations and names ("Admin"),
    which they match "fully"; when the English page is first by both keywords and meaning, its
    lines answer."""
    question = "Does an admin need every 2FA method configured, or is one enough to sign in?"
    terms = ["admin", "need", "every", "2FA", "method", "configured", "one", "enough", "sign"]
    page = Evidence(
        "1",
        "Each admin user must set up at least one of the 2FA providers before signing in.\n",
        "Manage Admin user accounts > Verify or reset 2FA providers",
        0.97,
        "users.md",
    )
    guide = Evidence(
        "2",
        "Admin の二要素認証メソッドは Admin Security の設定で選びます。\n",
        "Admin Security の設定",
        0.78,
        "security-admin.pdf",
        other_script=True,
    )
    translated = ["メソッド", "Admin"]
    answer = extractive_answer(question, [page, guide], terms, translated=translated)
    assert answer_section(answer).startswith("「Manage Admin user accounts"), answer.text
    # a search that is not sure leaves the choice to the lines
    unsure = replace(page, score=0.90)
    answer = extractive_answer(question, [unsure, guide], terms, translated=translated)
    assert answer_section(answer).startswith("「Admin Security の設定」"), answer.text


def test_a_code_sample_first_keeps_its_documents_prose_in_the_running():
    """The passage first by both is a JSON sample of a Japanese page: the page's prose, in the
    question's script, still answers; the language of a code sample decides nothing."""
    question = "不審な IP からのサインインを検知したら自動でその IP を禁止したい。どう構成する？"
    terms = ["不審", "IP", "サインイン", "検知", "自動", "禁止", "構成"]
    sample = Evidence(
        "1",
        '"network": {\n  "client": {\n    "ip": ["203.0.113.7"]\n  }\n}\n',
        "不審な IP アドレスを禁止する",
        1.0,
        "webhooks.md",
        other_script=True,
    )
    prose = Evidence(
        "2",
        "新値検出ルールが不審な IP からのサインインを検知したら、Webhook で IAM に送り IP を"
        "自動で禁止するよう構成します。\n",
        "不審な IP アドレスを禁止する",
        0.71,
        "webhooks.md",
    )
    other = Evidence(
        "3",
        "Once configured, a detection rule triggers the webhook to delete the security group.\n",
        "Delete misconfigured security groups",
        0.78,
        "groups.md",
        other_script=True,
    )
    translated = ["suspicious", "IP", "sign-in", "detect", "automatic", "ban", "configure"]
    answer = extractive_answer(question, [sample, prose, other], terms, translated=translated)
    assert "Webhook で IAM に送り" in answer.text, answer.text


def test_a_long_unit_is_quoted_up_to_a_word_boundary_and_marked() -> None:
    long_en = (
        "- Replace the Macie-derived object key list with keys identified through manual "
        + "classification, data owner consultation, or naming pattern analysis, " * 8
    ).strip()
    long_ja = "- " + "影響を受けた端末をネットワークから隔離し、時刻と担当者を記録する" * 12
    short = "- Keep the original disk image and record its hash."
    units = split_units("\n".join([long_en, "", long_ja, "", short]))
    en, ja, kept = (u.text for u in units)
    assert en.endswith("…") and ja.endswith("…")
    # the English unit ends on a whole word (never "manual cla…") and is not cut at 300 letters
    assert en[:-1].rstrip(",").split()[-1] in long_en.replace(",", " ").split()
    assert len(en) > 300 and content_units(en) <= 300
    assert len(ja) <= 300
    assert long_en[2:].startswith(en[:-1].rstrip()) and long_ja[2:].startswith(ja[:-1])
    assert kept == short[2:]  # a unit within the limit is quoted whole, without a mark


BILINGUAL = (
    "When a host is confirmed infected, the incident handler isolates it from the network.\n"
    "感染が確認された端末は、インシデント担当者がネットワークから隔離します。\n\n"
    "The handler then acquires a memory image and a disk image of the host as evidence.\n"
    "担当者は次に、その端末のメモリイメージとディスクイメージを証拠として取得します。\n"
)


@pytest.mark.parametrize(
    ("question", "terms", "translated", "other_script", "expected", "absent"),
    [
        (
            "What does the handler acquire from an infected host as evidence?",
            ["handler", "acquire", "infected", "host", "evidence"],
            ["担当者", "取得", "感染", "端末", "証拠"],
            True,  # the passage is Japanese by its characters
            "acquires a memory image",
            "メモリイメージ",
        ),
        (
            "感染した端末から担当者は何を証拠として取得する？",
            ["感染", "端末", "担当者", "証拠", "取得"],
            ["infected", "host", "handler", "evidence", "acquire"],
            False,
            "メモリイメージとディスクイメージ",
            "memory image",
        ),
    ],
)
def test_a_passage_translated_line_by_line_is_quoted_in_the_askers_language(
    question, terms, translated, other_script, expected, absent
) -> None:
    passage = Evidence("1", BILINGUAL, "証拠の取得", 0.9, "ir.md", other_script=other_script)
    answer = extractive_answer(question, [passage], terms, translated=translated)
    assert expected in answer.text and absent not in answer.text, answer.text


def test_commands_in_a_japanese_runbook_are_no_translation() -> None:
    """Only prose is read as a translated line: the command lines of a Japanese runbook stay in
    the answer to a Japanese question that has translations."""
    question = "nginx が応答しないときはどう再起動する？"
    text = (
        "nginx が応答しないときはサービスを再起動する。\n"
        "sudo systemctl restart nginx\n"
        "再起動後に nginx の状態を確認する。\n"
        "```\nsystemctl status nginx\n```\n"
    )
    passage = Evidence("1", text, "nginx の再起動", 0.9, "web.md")
    answer = extractive_answer(
        question, [passage], ["nginx", "応答", "再起動"], translated=["restart", "respond", "nginx"]
    )
    assert "sudo systemctl restart nginx" in answer.text, answer.text
    assert "systemctl status nginx" in answer.text, answer.text


def test_a_code_block_is_quoted_whole_as_code_and_its_comments_are_no_headings() -> None:
    text = (
        "データベースだけを取得するスクリプト:\n"
        "```bash\n"
        "# データベースバックアップスクリプト\n"
        'pg_dump -U postgres app > "$backup_file"\n'
        'gzip "$backup_file"\n'
        "```\n"
    )
    units = split_units(text)
    assert [u.kind for u in units] == ["lead", "code", "code", "code"]  # no fence line
    passage = Evidence("1", text, "データベースのバックアップ", 0.9, "backup.md")
    answer = extractive_answer(
        "データベースバックアップスクリプトのコマンドは？",
        [passage],
        ["データベース", "バックアップ", "スクリプト"],
    )
    assert "- `# データベースバックアップスクリプト` [1]" in answer.text, answer.text
    assert '- `pg_dump -U postgres app > "$backup_file"` [1]' in answer.text  # the whole block
    assert "\n- # " not in answer.text and "```" not in answer.text


def test_a_line_the_next_chunk_repeats_is_not_quoted_again():
    """The next chunk of a section opens on the last sentences of the one before (the overlap):
    a sentence the answer quotes already is no line of 補足."""
    heading = "Compromised account > Step 1 Reset the password"
    repeated = "Users must delete their old app passwords and create new app passwords."
    first = (
        "- Do not send the new password to the user by email: the attacker may still read it.\n"
        "- Choose a strong password that was not used before.\n"
        "- Update the app passwords too. Resetting the account password does not revoke them. "
        + repeated
    )
    second = f"{repeated}\n\nSee the app password page for how to create a new app password."
    evidence = [
        Evidence("1", first, heading, 0.9, "mail.md"),
        Evidence("2", second, heading, 0.85, "mail.md"),
    ]
    question = "What should I watch for when I reset the password? Can I email the new password?"
    answer = extractive_answer(question, evidence, ["reset", "password", "email", "new"]).text
    assert answer.count(repeated) == 1, answer
    # what the next chunk adds is still given
    assert "- See the app password page for how to create a new app password. [2]" in answer


def test_a_passage_that_opens_inside_a_code_block_quotes_what_follows_as_text():
    """A chunk cut inside a code block (the overlap of two windows) starts with code and its
    first fence closes the block: the note after it is prose, not code in backticks."""
    text = (
        "> Please verify that this is the correct restore host before continuing.\n"
        "> Completed restore of 169.154.1.1:122 from snapshot 20170329T150710\n"
        "```\n"
        "\n"
        "**メモ:** ネットワーク設定はバックアップのスナップショットから除外されます。"
        "ターゲットのアプライアンスでネットワークを手動で設定する必要があります。\n"
    )
    kinds = [u.kind for u in split_units(text, 0, opens_in_code=True)]
    assert kinds == ["code", "code", "sentence", "sentence"], kinds
    evidence = [Evidence("1", text, "バックアップのリストア", 0.9, opens_in_code=True)]
    answer = extractive_answer(
        "リストアしたときネットワーク設定はどうなる？",
        evidence,
        ["リストア", "ネットワーク", "設定"],
    ).text
    assert "ネットワーク設定はバックアップのスナップショットから除外されます。" in answer
    assert "`**メモ" not in answer and "``" not in answer.replace("```", ""), answer
