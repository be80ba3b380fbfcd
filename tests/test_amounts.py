"""A question asking for a quantity (what something costs, how many days, how often, how many
times) is answered only by a passage stating one of that kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.runbook_chat import ChatConfig, ask
from core.schemas.answer import Exchange
from core.text.amounts import asked_quantity, asks_for_amount, states_amount, states_quantity
from tests.conftest import make_settings


@pytest.mark.parametrize(
    "question",
    [
        "How much does the Business plan cost per user per month?",
        "How much will the forensic retainer charge us for an incident?",
        "What does an extra on-call seat cost?",
        "What is the price of the premium support contract?",
        "オンコール手当っていくら支給されるの？",
        "フォレンジック調査の料金はどのくらい？",
        "How expensive is the incident retainer?",
        "外部のフォレンジック調査の費用はどれくらいかかる？",
        "How much do we pay the retainer firm per incident?",
    ],
)
def test_questions_about_money(question):
    assert asks_for_amount(question)


@pytest.mark.parametrize(
    "question",
    [
        "How much access should I request for the admin console?",
        "How much time do we have to notify the regulator?",
        "Who pays attention to the status page?",
        "インシデント対応の費用対効果をどう説明する？",
        "コストを抑えてログを保管する手順は？",
        "How many people should join the incident call?",
        "What's the rate limit of the alerting API?",
        "How much attention should we pay to low-severity alerts?",
        "クラウドの料金アラートが鳴ったときの対応は？",
        "Which pricing tier includes the audit log?",
    ],
)
def test_questions_not_about_money(question):
    assert not asks_for_amount(question)


def test_amounts_in_passages():
    assert states_amount(["The plan is $49 per user per month."])
    assert states_amount(["待機1回につき 5,000円 を支給する。"])
    assert states_amount(["手当は3万円とする。"])
    assert states_amount(["Support is free of charge for customers."])
    assert states_amount(["Priced at USD 1,200 per year."])
    assert not states_amount(["The on-call engineer is paged within 5 minutes."])
    assert not states_amount(["手当の申請は翌月10日までに行う。"])


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many days are blocked emails kept in quarantine?", "duration"),
        ("Within how many hours must we notify the regulator?", "duration"),
        ("How long are the audit logs retained?", "duration"),
        ("What is the target time to acknowledge a P1 page, in minutes?", "duration"),
        ("監査ログは何日間保存するのが推奨ですか？", "duration"),
        ("調査グラフはどのくらい前のインシデントまで遡れますか？", "duration"),
        # a period asked by its name
        ("What's Keycloak's default access token lifespan?", "duration"),
        ("What is the idle session timeout for the web app?", "duration"),
        ("セッションのタイムアウトはどのくらい？", "duration"),
        ("How often do we review the manual blocklist entries?", "frequency"),
        ("バックアップはどのくらいの頻度で取ればいい？", "frequency"),
        ("How many failed sign-in attempts lock the account?", "count"),
        ("サインインに何回失敗したらロックアウトされる？", "count"),
        ("オンコールは何人体制で回していますか？", "count"),
        ("レート制限は1秒あたり何リクエストで設定すればいい？", "count"),
        ("What percentage of disk usage triggers the critical alert?", "size"),
        ("ディスク使用率は何％で警告にすべき？", "size"),
        # the unit asked for makes it a size, though it asks for the most
        ("既定だと Security ログは最大何MBまで持つの？", "size"),
        ("How much does the retainer cost?", "money"),
        ("What's the monthly price per server for the premium plan?", "money"),
        ("What's the maximum number of suppression rules per subscription?", "limit"),
        ("How many alert rules are allowed per workspace?", "limit"),
        ("抑制ルールは最大いくつまで作れる？", "limit"),
        ("ルールの上限数はいくつ？", "limit"),
        ("過去ログの再スキャンには追加料金がかかりますか？", "charge"),
        ("この機能は有料ですか？", "charge"),
        ("Is there an extra charge for running historical jobs?", "charge"),
        ("Are we billed for the archived logs we rescan?", "charge"),
        ("IAMキー漏えいの件でAWSサポートに電話したい。窓口の電話番号は？", "phone"),
        ("What's the phone number of our outside retainer firm?", "phone"),
        ("夜間は何番に電話すればいい？", "phone"),
    ],
)
def test_questions_asking_for_a_quantity(question, kind):
    assert asked_quantity(question) == kind


@pytest.mark.parametrize(
    "question",
    [
        "How long does it take to reimage a laptop?",  # "until …" answers it too
        "How much time do we have to notify the regulator?",
        "How many people should join the incident call?",  # "a handful", or the roles
        "What is a session timeout?",  # a definition
        "頻度の高いアラートはどう扱う？",  # frequent alerts, not a frequency
        "復旧にはどのくらいの時間がかかる？",
        "証拠はいつまで保管すべき？",  # until an event
        "Once the host is isolated, what do we collect first?",
        "ルールの数に上限はある？",  # "no" answers it
        "コストを抑える運用のコツは？",  # how to save, not whether it is charged
        "What does the billing alert mean?",
        "電話番号を変更したユーザーのMFAはどう扱う？",  # about users, not a number to call
        "Should we call the customer by phone or email them?",
    ],
)
def test_questions_whose_answer_need_not_be_a_number(question):
    assert asked_quantity(question) is None


def test_quantities_in_passages():
    assert states_quantity("duration", ["Blocked messages are kept for 30 days."])
    assert states_quantity("duration", ["Notify within seventy-two hours."])
    assert states_quantity("duration", ["Notify within 72 hours."])
    assert states_quantity("duration", ["ログは 90 日間保存する。"])
    # a policy writes the figure after the word
    assert states_quantity("duration", ["Keep the artifacts for one (1) year from detection."])
    assert states_quantity("duration", ["Notify within thirty (30) days."])
    assert states_quantity("duration", ["ログは半年保存する。"])
    assert not states_quantity("duration", ["内容を十分に確認する。"])  # enough, not 10 minutes
    assert not states_quantity("duration", ["上長が翌月5日までに承認する。"])  # a date
    assert not states_quantity("duration", ["2024年4月に改訂した。"])
    assert not states_quantity("duration", ["Logs are kept as long as policy requires."])
    # a size as a configuration writes it
    sized = "1アプリあたりのマニフェスト合計サイズ上限はどれくらい？"
    assert states_quantity("limit", ["10G / 300 * 10 = 3M"], sized)
    assert not states_quantity("limit", ["Divide the memory by the number of apps."], sized)
    # "we keep seeing" goes on seeing: a threshold's seconds answer, no period of keeping
    seeing = "We keep seeing slow requests. After how many seconds does an OSD complain?"
    assert states_quantity("duration", ["The threshold defaults to 30 seconds."], seeing)
    assert states_quantity("frequency", ["Regular means at least every quarter."])
    assert states_quantity("frequency", ["棚卸しは四半期ごとに行う。"])
    assert states_quantity("frequency", ["Falcoは毎秒、イベントカウントを読み取ります。"])
    assert states_quantity("frequency", ["Review the list every 6 months."])
    assert not states_quantity("frequency", ["Review the list on a regular basis."])
    q = "How many failed sign-in attempts lock the account?"
    assert states_quantity("count", ["Lock after 10 failed sign-in attempts."], q)
    assert states_quantity("count", ["10 回連続で失敗するとロックする。"], q)  # either language
    assert not states_quantity("count", ["Once a suspicious IP is found, block it."], q)
    assert states_quantity("count", ["Lock after five (5) failed attempts."], q)
    assert not states_quantity("count", ["Watch for several failed attempts."], q)
    ja = "サインインに何回失敗したらロックアウトされる？"
    assert states_quantity("count", ["5回失敗するとロックされる。"], ja)
    assert states_quantity("count", ["after five unsuccessful attempts"], ja)
    assert not states_quantity("count", ["失敗が続く場合はロックする。"], ja)
    rate = "レート制限は1秒あたり何リクエストで設定すればいい？"
    assert states_quantity("count", ["Limit each client to 100 requests per second."], rate)
    assert states_quantity("count", ["1 秒あたり 50 リクエストを上限にする。"], rate)
    assert not states_quantity("count", ["Fastly のレート制限を有効にする。"], rate)
    # the counted noun asked with いくつ, and a unit a feature is counted in
    kept = "pg_dump のダンプを毎晩取る。世代はいくつ保持しておくのが推奨？"
    assert asked_quantity(kept) == "count"
    assert states_quantity("count", ["ダンプは 7 世代分を保持する。"], kept)
    assert not states_quantity("count", ["ダンプは毎晩 2 時に取得する。"], kept)
    credits = "IP 範囲制限のジョブは、転送量 1GB あたり何クレジット消費するの？"
    assert states_quantity("count", ["転送量 1GB あたり 450 クレジットを消費します。"], credits)
    assert not states_quantity("count", ["転送量に応じてクレジットの消費が発生します。"], credits)
    assert states_quantity("charge", ["Historical jobs are billed per GB of logs scanned."])
    assert states_quantity("charge", ["この機能は追加料金なしで利用できます。"])
    assert states_quantity("charge", ["$0.10 per GB"])
    assert not states_quantity("charge", ["Run the job over the last 90 days of logs."])
    assert states_quantity("limit", ["You can create up to 100 rules per subscription."])
    assert states_quantity(
        "limit", ["ルールは 1 サブスクリプションあたり 100 件まで作成できます。"]
    )
    assert states_quantity("limit", ["There is no limit on the number of rules."])
    assert states_quantity("limit", ["一度に表示される結果は 50 件のみです。"])
    assert states_quantity("limit", ["The search shows 50 results at a time."])
    assert not states_quantity("limit", ["Create one rule for each alert type."])
    # a bound on a period is not a bound on a count
    assert not states_quantity("limit", ["ルールは最大 6 か月間実行できます。"])
    assert not states_quantity("limit", ["Rules run for up to 6 months."])
    assert states_quantity("limit", ["ルールは最大 20 個まで作成できます。"])
    assert states_quantity("size", ["Critical above 90% usage."])
    assert not states_quantity("size", ["Critical when the disk is nearly full."])
    # a number to call: a phone number or an extension, not a date or a word about phoning
    assert states_quantity("phone", ["夜間窓口: 03-1234-5678（24時間）"])
    assert states_quantity("phone", ["Call the retainer hotline at +1 (555) 010-0199."])
    assert states_quantity("phone", ["SOC 当番へ内線 2345 で連絡する。"])
    assert states_quantity("phone", ["フリーダイヤル 0120-123-456"])
    assert not states_quantity("phone", ["AWS サポートに電話で連絡する。"])
    assert not states_quantity("phone", ["2024-04-01 に改訂。チケット番号 12345 を記載する。"])
    # a table of options: the number in a cell of its own, its unit said in another cell
    kept = "How many days of log files are kept by default?"
    row = "days | The number of days that daily log files should be retained | 7"
    assert states_quantity("duration", [row], kept)
    assert not states_quantity("duration", ["permission | The log file's permissions | 0644"], kept)
    assert not states_quantity("duration", ["Step | Action\n1 | Isolate the host"], kept)
    assert states_quantity("limit", ["設定 | 上限 | 20"], "ルールは最大何件まで作れる？")
    assert states_quantity("duration", ["保持期間（日） | 30"], kept)
    # a bound asked with its counter is answered by the number with that counter
    chars = "パスワードは最低何文字・最大何文字？"
    assert asked_quantity(chars) == "limit"
    assert states_quantity("limit", ["パスワードの要件: 8~50文字、数字を 1 つ以上"], chars)
    assert not states_quantity("limit", ["パスワードは複雑にする。"], chars)
    per_day = "無料の API キーだと 1 日に何件まで照会できる？"
    assert states_quantity("limit", ["無料キーは 1 日 500 件まで"], per_day)
    assert not states_quantity("limit", ["Analyzers time out after 30 seconds."], per_day)
    # the machines counted with つ: 「3 つのデータ・ノード」 (not any three things)
    nodes_q = "Redis は何台構成？ Sentinel は何ノードで動いてる？"
    assert states_quantity("count", ["各サービスは 3 つのデータ・ノードで構成されます。"], nodes_q)
    assert not states_quantity("count", ["復旧には 3 つの手順があります。"], nodes_q)
    # a setting's value under a heading naming what it counts or measures
    chars_q = "初期状態だとパスワードって最低何文字で通っちゃうの？"
    setting = (
        "認証 > パスワードの最低必要文字数\nパスワードの最低文字数を設定できます。\nデフォルト: 4"
    )
    assert states_quantity("count", [setting], chars_q)
    assert not states_quantity("count", ["認証 > パスワードの再発行\nデフォルト: 有効"], chars_q)
    assert not states_quantity("count", ["認証 > セッションの有効期間\nデフォルト: 4"], chars_q)
    timeout = "Admin > Session timeout (minutes)\nHow long an idle session lasts.\nDefault: 30"
    assert states_quantity("duration", [timeout], "How many minutes before an idle session ends?")
    # a row's number is no value, and a day in a word is no unit
    assert not states_quantity("limit", ["1 | Limit access to the admins"], "What is the limit?")
    assert not states_quantity(
        "duration", ["手順 | 毎日のバックアップを確認 | 1"], "報告は何日以内？"
    )
    # a rate limit wants a rate
    rate_q = "What's the rate limit on the RESTful API if we script nightly backups?"
    assert asked_quantity(rate_q) == "limit"
    assert states_quantity("limit", ["Each API key may send 100 requests per minute."], rate_q)
    assert states_quantity("limit", ["1 分あたり 60 リクエストまで受け付けます。"], rate_q)
    assert not states_quantity("limit", ["The API is rate limited; retry later."], rate_q)
    # how long something is kept wants a period said of keeping, in its sentence or under a
    # heading about it; "keep an eye on" is no keeping
    kept_q = "How long do we keep the base backups before they get pruned?"
    assert not states_quantity("duration", ["The backup job runs every 24 hours."], kept_q)
    assert states_quantity("duration", ["Base backups are retained for 7 days."], kept_q)
    held = "日次バックアップって何日分残ってる？"
    assert states_quantity("duration", ["手順書\nバックアップ保持ポリシー\n- 日次: 7日分"], held)
    assert not states_quantity("duration", ["手順書\n取得\n- 毎日 2 時から 3 時間で取得"], held)
    watch = "How long should we keep a close eye on the recovered boxes?"
    assert states_quantity("duration", ["Monitor the hosts for 30 days."], watch)
    # the largest size is a size: "20 MB" answers "what is the maximum size of the log"
    big = "What's the maximum size of the Security event log by default?"
    assert asked_quantity(big) == "limit"
    assert states_quantity("limit", ["The default maximum log size is 20 MB."], big)
    assert not states_quantity("limit", ["The default maximum log size is 20 MB."])


RUNBOOKS = {
    "oncall-allowance.md": """# オンコール手当の申請

## 申請手順

1. 待機した日付と時間帯を勤怠システムに入力する。
2. 夜間に呼び出された場合は、対応したインシデント番号を備考欄に記入する。
3. 上長が翌月5日までに承認する。

## 支給

手当は給与と同じ口座に、翌月の給与日にまとめて支給される。
""",
    "vpn-outage.md": """# VPN 障害対応

## 初動

1. VPN ゲートウェイの死活監視を確認する。
2. 認証サーバーのログで失敗の急増がないか確認する。
""",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("amounts")
    data = base / "runbooks"
    data.mkdir()
    for name, text in RUNBOOKS.items():
        (data / name).write_text(text, encoding="utf-8")
    return make_settings(base / "state", data), data


def _ask(question: str, settings, data: Path):
    return ask(question, [], ChatConfig(session_id="test", data=data), settings)


def test_a_price_question_over_a_runbook_without_amounts_is_refused_and_says_why(folder):
    settings, data = folder
    a = _ask("オンコール手当っていくら支給されるの？", settings, data)
    assert a.flags.insufficient_evidence
    assert a.citations and a.citations[0].file == "oncall-allowance.md"  # the right runbook …
    assert "金額の記載がありません" in a.answer  # … which states no amount
    assert a.evidence["quantity_found"] is False


def test_the_same_runbook_answers_how_to_claim_it(folder):
    settings, data = folder
    a = _ask("オンコール手当はどうやって申請すればいい？", settings, data)
    assert not a.flags.insufficient_evidence, a.evidence
    assert a.citations[0].file == "oncall-allowance.md"
    assert a.evidence["quantity_found"] is True


def test_a_runbook_stating_the_amount_answers_the_price_question(tmp_path: Path):
    data = tmp_path / "runbooks"
    data.mkdir()
    for name, text in RUNBOOKS.items():
        (data / name).write_text(text, encoding="utf-8")
    (data / "oncall-allowance.md").write_text(
        RUNBOOKS["oncall-allowance.md"]
        + "\n待機1日につき 3,000円、夜間の呼び出し1回につき 2,000円 を支給する。\n",
        encoding="utf-8",
    )
    settings = make_settings(tmp_path / "state", data)
    a = _ask("オンコール手当っていくら支給されるの？", settings, data)
    assert not a.flags.insufficient_evidence, a.evidence
    assert "3,000円" in a.answer


QUARANTINE = """# 迷惑メールの隔離対応

## 隔離メールの確認

1. 管理センターで隔離されたメールの一覧を開く。
2. 誤検知のメールは送信者を確認してから解放する。
3. 解放した件数をチケットに記録する。
"""


def test_a_period_question_is_refused_when_the_runbook_states_no_period(tmp_path: Path):
    data = tmp_path / "runbooks"
    data.mkdir()
    (data / "quarantine.md").write_text(QUARANTINE, encoding="utf-8")
    for name, text in RUNBOOKS.items():
        (data / name).write_text(text, encoding="utf-8")
    settings = make_settings(tmp_path / "state", data)
    a = _ask("隔離されたメールは何日間保管されますか？", settings, data)
    assert a.flags.insufficient_evidence, a.evidence
    assert a.citations and a.citations[0].file == "quarantine.md"
    assert "期間・時間の記載がありません" in a.answer
    assert a.evidence["quantity_found"] is False
    # nor does it say whether keeping them is charged for
    charge = _ask("隔離されたメールの保管に追加料金はかかりますか？", settings, data)
    assert charge.flags.insufficient_evidence, charge.evidence
    assert "料金・課金の記載がありません" in charge.answer
    # the same runbook answers how to release a message
    b = _ask("誤検知で隔離されたメールはどう解放すればいい？", settings, data)
    assert not b.flags.insufficient_evidence, b.evidence
    # a follow-up asks for steps, not days, though its search query carries the last question
    history = [Exchange(a.question, a.answer, a.question)]
    f = ask("その確認の手順を教えて", history, ChatConfig(session_id="test", data=data), settings)
    assert not f.flags.insufficient_evidence, f.evidence
    assert f.evidence["quantity_found"] is True
    # and answers the period once it states one
    (data / "quarantine.md").write_text(
        QUARANTINE + "\n隔離されたメールは 30 日間保管され、その後自動的に削除される。\n",
        encoding="utf-8",
    )
    settings2 = make_settings(tmp_path / "state2", data)
    c = _ask("隔離されたメールは何日間保管されますか？", settings2, data)
    assert not c.flags.insufficient_evidence, c.evidence
    assert "30 日間" in c.answer


SEARCH_GUIDE = (
    "# インシデント検索\n\n## インシデントを検索する\n\n"
    + "検索ボックスに文字列を入力し、インシデントの一覧を絞り込む。" * 12
    + "\n\n"
    + "高度な検索では、エンティティ パラメーターで絞り込める。" * 10
    + "\n\n| 項目 | 説明 |\n| --- | --- |\n| 表示される結果の数 | 一度に表示される結果は 50 件のみです。 |\n"
)


def test_the_quantity_may_be_in_the_cited_section_s_next_chunk(tmp_path: Path):
    """A question asking two things: the number sits in a table row of the best passage's
    section, in a chunk the search did not return."""
    from core.runbook_chat import _states
    from core.runbooks import runbook_corpus, search_runbooks
    from core.text.amounts import states_quantity

    data = tmp_path / "runbooks"
    data.mkdir()
    (data / "search.md").write_text(SEARCH_GUIDE, encoding="utf-8")
    settings = make_settings(tmp_path / "state", data)
    question = "インシデントの検索ボックスの使い方と、高度な検索で一度に何件まで表示されるか教えて"
    outcome = search_runbooks(settings, question, limit=4, data=data)
    corpus = runbook_corpus(settings, data)
    first = [h for h in outcome.hits if "50 件" not in h.chunk.body][:1]
    assert first and len(corpus.store.manifest()) == 1
    assert not states_quantity("limit", [first[0].chunk.body], question)
    assert _states("limit", first, question, corpus)
