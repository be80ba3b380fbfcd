"""The incident-response glossary that carries a question's domain terms across languages."""

from __future__ import annotations

from core.retrieval.searcher import keyword_trust
from core.text.glossary import cross_language_terms, entries, translations


def test_japanese_terms_are_translated_longest_first():
    terms = translations("インシデントコマンダーは封じ込め戦略をどう選ぶ？", "en")
    # the longer entry wins over the shorter ones inside it (インシデント, 封じ込め)
    assert terms == ["incident commander", "containment strategy"]


def test_english_terms_match_whole_words_and_plurals():
    assert translations("Who approves remote wipes of laptops?", "ja") == [
        "承認する",
        "リモートワイプ",
        "ノートPC",
    ]
    assert translations("How do we preserve disk images and logs", "ja") == [
        "保全する",
        "ディスクイメージ",
        "ログ",
    ]
    assert translations("the catalog of blogs", "ja") == []  # no "log" inside a word
    # the words of running a response: who declares, who is told, how often updates go out
    assert translations("How often should we post updates to every department?", "ja") == [
        "頻度",
        "投稿",
        "更新",
        "部署",
    ]
    assert translations("Who can declare a major incident?", "ja") == ["宣言", "重大インシデント"]
    # verbs as questions use them: past and -ing forms
    assert translations("Once the host is isolated and the logs preserved", "ja") == [
        "ホスト",
        "隔離する",
        "ログ",
        "保全する",
    ]
    assert translations("Who is notified when it is declared?", "ja") == ["通知する", "宣言"]
    # an entry of its own wins over a form ("engineering" is not engineer + -ing), and a noun's
    # -ed form that is another word is left alone
    assert translations("engineering", "ja") == ["エンジニアリング"]
    assert translations("Microsoft-signed binaries", "ja") == []
    assert translations("Can suspended users sign in?", "ja") == [
        "サスペンド",
        "ユーザー",
        "サインイン",
    ]
    # the words of administering a product: who may edit a rule, where bugs are tracked
    assert translations("Who can change or edit a detection rule?", "ja") == [
        "変更",
        "編集",
        "検知",
        "ルール",
    ]
    assert translations("Where are the bugs and fixes tracked until resolved?", "ja") == [
        "バグ",
        "修正",
        "追跡",
        "解決",
    ]
    assert translations("編集アクセス権の制限", "en") == ["edit", "access", "limit", "restrict"]
    # a detection rule's words: which attributes correlate two rules, how many attempts
    assert translations("二つのルールを紐付ける属性は？", "en") == [
        "rule",
        "correlation",
        "attribute",
    ]
    assert translations("How many failed attempts?", "ja") == ["試行"]
    # a network triage's words, and when a rota works
    assert translations("netstat one-liner for connection counts per source IP", "ja") == [
        "接続",
        "送信元",
    ]
    assert translations("サポート当番は夜間や休日も対応する？", "en") == [
        "support",
        "on-call",
        "after hours",
        "weekend",
        "respond",
    ]
    assert translations("Store got breached: how do we size up the damage?", "ja") == [
        "侵害",
        "被害",
    ]


def test_the_direction_follows_the_question_script():
    assert cross_language_terms("ランサムウェアに感染した端末の隔離") == [
        "ransomware",
        "infected",
        "endpoint",  # 端末 is an entry of three English terms
        "device",
        "workstation",
        "isolation",
        "quarantine",
    ]
    assert "ランサムウェア" in cross_language_terms("How do I isolate a ransomware host")
    assert cross_language_terms("カレーライスの作り方") == []
    assert cross_language_terms("!!! 123") == []


def test_every_entry_has_both_sides_and_no_one_character_japanese_term():
    for entry in entries():
        assert entry.english and entry.japanese
        assert all(len(term) >= 2 for term in entry.japanese), entry


def test_keyword_trust_falls_with_the_share_of_known_terms():
    assert keyword_trust(1.0) == 1.0
    assert keyword_trust(0.5) == 1.0
    assert keyword_trust(0.25) == 0.5
    assert keyword_trust(0.0) == 0.0


def test_names_that_no_translation_changes():
    from core.text.glossary import untranslated_names

    assert untranslated_names("CrowdStrike Falconでホストを隔離する手順") == [
        "CrowdStrike",
        "Falcon",
    ]
    assert untranslated_names("JPCERT/CCに報告する様式、SEV-1の条件") == ["JPCERT/CC", "SEV-1"]
    # English: acronyms, inner capitals and digits, capitalised words inside the sentence
    assert untranslated_names("How do I rotate an AWS IAM key in Okta?") == ["AWS", "IAM", "Okta"]
    # not the first word, not a single letter, not a glossary word however it is capitalised
    assert untranslated_names("Who approves it? Ask the Incident Commander") == []
    # an English word joined to a name says how it is used: the name is Base64, SAML, S3
    assert untranslated_names("Can we commit it if the values are base64-encoded?") == ["base64"]
    assert untranslated_names("Is our SAML-based SSO affected?") == ["SAML", "SSO"]
    assert untranslated_names("Use the S3-compatible API") == ["S3", "API"]
    assert untranslated_names("Check the X-Forwarded-For header") == ["X-Forwarded-For"]


def test_proper_names_are_the_names_a_question_is_about():
    from core.text.glossary import missing_names, name_variants, proper_names

    # names written next to each other are one name: Falcon of CrowdStrike
    assert proper_names("CrowdStrike Falcon でホストを隔離する手順") == ["CrowdStrike Falcon"]
    assert proper_names("Slack と PagerDuty の Zoom 連携") == ["PagerDuty", "Zoom"]
    assert proper_names("JPCERT/CC に報告するときの様式は？") == ["JPCERT/CC"]
    # common abbreviations of computing are not names: a runbook may say "laptop"
    assert proper_names("ノートPCを紛失したときの最初の手順") == []
    assert proper_names("In the lost-device SOP, what is a remote wipe?") == []  # a word
    assert proper_names("フィッシングメールのURLをクリックした利用者への対応") == []
    # a unit after a number is a quantity, not a name: the runbook may say 1073741824 bytes
    assert proper_names("OS標準のコマンドでSecurityログの上限を1GBに上げたい") == []
    assert proper_names("Sysmon のログ上限を 2 GB にしたい") == ["Sysmon"]
    assert "Mbps" not in proper_names("帯域が 500 Mbps を超えたら Cloudflare で遮断する")
    assert "Microsoft 365" in name_variants("M365") and name_variants("Falcon") == ("Falcon",)
    # a product's number is part of its name: Microsoft Teams is not Microsoft 365
    assert proper_names("Microsoft 365の監査ログを検索する方法") == ["Microsoft 365"]
    assert missing_names(["Microsoft 365"], ["Zoom, Microsoft Teams などの会議ツール"])
    assert not missing_names(["Microsoft 365"], ["O365 の管理センター"])
    # a Japanese public body named in kanji is a name; an internal committee is not
    assert proper_names("漏えいを個人情報保護委員会に何日以内に報告する？") == [
        "個人情報保護委員会"
    ]
    assert proper_names("金融庁とJPCERT/CCへの報告は必要？") == ["JPCERT/CC", "金融庁"]
    assert proper_names("情報セキュリティ委員会の承認は必要？") == []
    assert missing_names(["金融庁"], ["Notify the regulator within 72 hours."]) == ["金融庁"]
    # found as the runbook writes it: 「Base64でエンコード」 for "base64-encoded"
    assert proper_names("Is it OK to commit it if the values are base64-encoded?") == ["base64"]
    assert not missing_names(["base64"], ["秘密データをBase64でエンコードしている場合"])


def test_a_name_phrase_is_found_by_its_head_not_by_its_vendor():
    from core.text.glossary import missing_names, proper_names

    names = proper_names("How do I rotate an AWS IAM access key with the AWS CLI?")
    assert names == ["AWS IAM"]  # AWS of "AWS CLI" is the same vendor, not a name of its own
    # a list of links that names AWS says nothing about its IAM
    assert missing_names(names, ["Examples: AWS, Google, Cloudflare outages"]) == ["AWS IAM"]
    assert missing_names(names, ["Deactivate the IAM access key"]) == []
    assert missing_names(["CrowdStrike Falcon"], ["Falcon コンソールでホストを隔離"]) == []
    # the head must be written as a name: GitHub's "self-hosted runners" are not GitLab's Runner
    gitlab = proper_names("GitLab Runnerの登録トークンをリセットする手順")
    assert gitlab == ["GitLab Runner"]
    assert missing_names(gitlab, ["Stop malicious workflow runs on self-hosted runners."])
    assert not missing_names(gitlab, ["Re-register the GitLab Runner."])
    # a phrase that is a usual form of a name is found by its other forms
    assert missing_names(proper_names("Azure AD のサインインログ"), ["Entra ID の監査ログ"]) == []


def test_translated_surfaces_are_the_question_words_the_glossary_translates() -> None:
    from core.text.glossary import translated_surfaces

    q = "How often should the on-call engineer be paged about etcd alerts?"
    assert set(translated_surfaces(q)) >= {"on-call", "engineer", "alerts"}
    assert "etcd" not in translated_surfaces(q)  # a name: no translation, counted as it is
    assert "インシデントコマンダー" in translated_surfaces("インシデントコマンダーの手順")
    assert translated_surfaces("12345") == []


def test_a_name_asked_in_lower_case_is_found_inflected():
    """A command or tool asked in lower case (ping, nslookup) is a word runbooks inflect:
    "Pinging, NSlookup" names both. A name with capitals is found as written."""
    from core.text.glossary import missing_names, proper_names

    names = proper_names("攻撃者のドメインにpingやnslookupを打って確認してもいい？")
    assert names == ["ping", "nslookup"]
    mistakes = "- Touching adversary infrastructure (Pinging, NSlookup, Browsing, etc.)"
    assert missing_names(names, [mistakes]) == []
    assert missing_names(["ping"], ["Ping the gateway, then pinged hosts"]) == []
    # the same letters inside another word are not the word
    assert missing_names(["ping"], ["Mapping the network and shipping logs"]) == ["ping"]
    assert missing_names(["Falcon"], ["falcons and hawks"]) == ["Falcon"]


def test_a_capitalized_name_is_not_found_as_the_common_word():
    """A name asked as a proper noun (Volatility, Slack) is not the same letters in lower case:
    "market volatility" says nothing about the memory forensics tool. Any capital will do, so a
    question's "Crowdstrike" still finds "CrowdStrike"."""
    from core.text.glossary import missing_names, proper_names

    names = proper_names("Which Volatility plugin lists the processes in a Windows memory dump?")
    assert names == ["Volatility", "Windows"]
    crisis = "Risks: performance degradation, market volatility, windows of downtime."
    assert missing_names(names, [crisis]) == names
    assert missing_names(names, ["Run Volatility 3 against the Windows image."]) == []
    assert missing_names(["Slack"], ["Post in SLACK"]) == []
    assert missing_names(["Slack"], ["Leave slack in the schedule"]) == ["Slack"]
    assert missing_names(["Crowdstrike"], ["Contain the host in CrowdStrike Falcon"]) == []
    # names with capitals inside or digits are found in any case, as before
    assert missing_names(["PagerDuty"], ["open pagerduty.com"]) == []


def test_the_words_of_a_user_reporting_a_suspicious_pc():
    # 「電源を切って止めちゃったほうがいい？」 over "DO NOT turn off your computer"
    assert translations("不審な動きに気づいた。電源を切ったほうがいい？", "en") == [
        "suspicious activity",
        "power off",
    ]
    assert translations("Should I turn off my computer?", "ja")[:1] == ["電源を切"]


def test_a_name_is_found_in_its_katakana_spelling():
    from core.text.glossary import missing_names

    # an English question naming the vendor over its Japanese rulebook
    assert missing_names(["Cybozu"], ["サイボウズは報奨金を指定の団体に寄付します。"]) == []
    assert missing_names(["Splunk"], ["ログはスプランクへ転送する。"]) == []
    assert missing_names(["XServer"], ["エックスサーバーのサーバー ID を変更する。"]) == []
    # another word of the same few consonants, or none at all, is not the name
    assert missing_names(["Cybozu"], ["サーバーを再起動します。"]) == ["Cybozu"]
    assert missing_names(["Splunk"], ["スプリンクラーの点検"]) == ["Splunk"]
    assert missing_names(["EDR"], ["エンドポイントの検知と対応"]) == ["EDR"]


def test_the_words_of_a_first_report_and_of_a_workplace_policy():
    assert translations("インシデント初報の『状況と確度』には何を書く？", "en") == [
        "incident",
        "first report",
        "status",
        "certainty",
    ]
    assert translations("協力会社の開発者がカフェで作業してもいい？自宅なら？", "en") == [
        "collaborator",
        "developer",
        "public space",
        "work from home",
    ]


def test_days_and_months_are_no_names_and_a_mac_is_macos():
    from core.text.glossary import missing_names, proper_names

    assert proper_names("Maintenance on Statuspage for Thursday night, as in May?") == [
        "Statuspage"
    ]
    assert missing_names(["MacBooks"], ["Quarantine works on Windows, Linux and macOS."]) == []
    # a document's language, and the analyst's own abbreviations, are no names either
    assert proper_names("In the Japanese Vault tutorial, where does the OTP go?") == ["Vault"]
    assert proper_names("Zeek に IOC の IP を入れたのに") == ["Zeek"]


def test_a_kind_of_server_and_plural_abbreviations_are_no_names():
    from core.text.glossary import proper_names

    question = "Which Windows event IDs does LogonTracer pull? Our DC must forward all of them."
    assert proper_names(question) == ["Windows", "LogonTracer"]
    assert proper_names("In the HA setup, where do the logs of our VMs end up?") == []


def test_units_formats_and_a_product_number():
    from core.text.glossary import missing_names, proper_names

    # a unit asked with 何, a number that starts another word, formats and customers
    assert proper_names("ZAPのバックアップストレージって無料で何GBまで使える？") == ["ZAP"]
    assert proper_names("Which app does the ZAP-Hosting 2FA guide name?") == ["ZAP-Hosting"]
    assert proper_names("The JSON 'message' field of our VIP accounts") == []
    # a product named with no number is that product; another version of it is not
    assert missing_names(["PowerShell 7"], ["Unregister the PowerShell event provider"]) == []
    assert missing_names(["Windows 11"], ["Windows 10 only"]) == ["Windows 11"]
    # a Windows policy object under its Japanese name
    assert missing_names(["GPO"], ["グループ ポリシー オブジェクトで設定する"]) == []
