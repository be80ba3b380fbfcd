"""Destructive-operation detection: what the question asks for and what the answer instructs.

A match is an operation applied to an object, in a mood that asks for it or instructs it:

- **verb + object**: a destructive verb (JA: 削除・消去・無効化・停止・初期化・ワイプ・破棄…,
  消す・止める…, and English verbs used as する-verbs: 「dropして」「rmしておいて」; EN: delete,
  remove, wipe, purge, disable, shut down, stop, format, revoke…, with their inflections) and
  the thing it is applied to (logs, accounts, disks, databases, servers, backups, services,
  keys, evidence, files…, the object lexicon). In an answer the object must
  come from the lexicon, so that "stop the spread", 「被害の拡大を停止」 or 「不審な電話番号を
  削除する」 stay quiet. In a question, strong verbs (delete, wipe, 削除, 消去, 初期化…) fire with
  any or no object (「ワイプする条件」「削除してください」): the asker names the operation.
- **command**: shell, SQL, PowerShell and Windows command patterns (``rm -rf``, ``DROP TABLE``,
  ``Remove-Item -Recurse``, ``format C:``, ``vssadmin delete shadows`` …), in prose, inline code
  or code blocks.
- **keyword** (question only): the design's keyword list (``DANGEROUS_KEYWORDS``) stays the floor
  for recall on the question: a design keyword used as the operation the question is about
  (「消去してよいですか」, "how do I purge?") fires even without an object. 証跡, the one noun
  of the list, is an object: it fires with a destructive or tampering verb (「証跡を消す」
  「証跡を改ざんしたい」), as do requests to leave no trace or hide what one did (「痕跡が残ら
  ないように」「記録に残らないように」「誰にも辿られたくない」「証跡を「なかったこと」に」「ログ
  対象の設定を外す」「誰にもバレないように」「こっそり消して」, "cover my tracks", "without the
  auditors noticing", "scrub it from the audit logs", "so nothing I do ever shows up"; rule
  ``concealment``; also one's activity kept from being flagged, a review kept out: "so my
  activity isn't flagged", "without telling change management", "before the regulator sees
  it", "make the tickets disappear", 「自分の操作を監査対象から除外」), and a loss asked for or
  accepted (「データは全部消えていいので」「全部消えるようにしたい」, "so everything is gone";
  rule ``loss``); ``rm -rf`` is a command pattern. An answer telling what attackers do to leave
  no trace is no request. A question asking for secrecy in words that alone ask for nothing
  (内緒, こっそり, 黙って, quietly, secretly, undetected: ``_SECRECY``) makes any destructive verb
  it uses a ``concealment`` match, whatever its object.
- The verbs are those of writing and of talk: expunge, obliterate, trash, scrap, tear down,
  throw away, clean out, discard, deprovision, decommission, bypass; 吹っ飛ばす・一掃・潰す・
  握りつぶす・もみ消す・葬る・剥がす・取り上げる・まっさらにする・デリート. Tampering verbs
  (alter, edit, modify, forge; 改変・偽装・捏造) fire on records ("alter the access log
  entries"), not on a rule or a setting. Verbs of everyday speech fire only on the objects where
  they are the operation: 「サーバーを落とす」 (「ログを落とす」 downloads), 「ファイアウォールを
  切る」 (not 「電源を切る」 nor 切り分け), 「監視エージェントを外す」, 「証拠を片付ける」.

Mood and scope decide whether a verb occurrence counts:

- Negation and prohibition are the opposite of an instruction and never fire: しない・せず・
  してはいけない・禁止・避ける・控える / do not, don't, never, must not, avoid, refrain from,
  without, prohibited, not allowed. Japanese negation follows the verb (its own inflection, or
  the predicate of 「〜することは禁止」 and of a て-chain 「削除し、初期化しないこと」); English
  negation precedes it within the clause (a subordinate clause's negation ends at its comma).
- Reports are not requests: past tense, passive and state (削除された・停止している / was deleted,
  has been disabled), possibility (〜することがある / "may be shut down"), and any clause whose
  subject is an attacker (「攻撃者がログを削除した」, "the attacker deleted the logs"), and what a
  system does to things ("before they get archived or purged").
- Nothing is destroyed when a secret is replaced (a password, token or MFA reset: the first
  step of containment) or a member leaves a group or a watch (remove someone from the call,
  「管理者役割グループから削除」, delete an instance from a target group, remove a user from
  high-risk monitoring) or a containment measure is lifted in recovery (remove the host from
  isolation, the deny-all or session revocation policy, 「拒否ポリシーを削除」); an operation
  named as what is looked for or prevented (「ユーザーの削除を探す」「改ざんの再発防止」,
  "stops anyone from overwriting or deleting"), a noun ("format of the user id") and a short
  quoted string (the log text “delete user”), an adjective (「破壊的な変更」), a tool's options
  asked about ("what do disable and delete do?") and a file dropped into a folder are mentions.
  A device reset and a deleted
  credential still count.
- In the **question** every remaining use counts (a question is a request: 〜したい・〜して・
  〜する手順・〜してよいか, how do I…, can I…), including nominal uses asking about the operation
  (「ログ削除の手順」), what the asker wants made ("a script that deletes the logs") and what
  they want done ("I want the logs deleted", "the entries scrubbed out of the log"), but
  not a noun naming an event (「サービス停止の影響」).
- In the **answer** only instructions count: imperative or list step (Delete…, 「〜を削除する。」,
  「〜を削除してください」, a list item ending in 「〜の削除」), obligation or recommendation
  (should, must, need to, 〜すべき, 〜する必要がある), permission (〜してもよい). Descriptions,
  capabilities ("you can…", 「〜できる」) and consequences (「削除すると復元できない」) do not.
  The design's bare keyword list does not apply to answers: an extractive answer quotes runbook
  passages, which mention these words in passing (41% of ordinary questions got the banner on
  English runbooks); every design keyword is in the verb lexicon, so an answer that instructs one
  of these operations still fires through verb + object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.schemas.answer import DangerMatch, DangerRule, DangerSource, quoted_heading

# --- the design's list (the floor for recall on the question) -------------------------------
DANGEROUS_KEYWORDS = (
    "削除", "delete", "rm -rf", "drop", "truncate",
    "証跡", "消去", "format", "reset", "purge",
    "disable", "shutdown", "kill", "停止", "無効化",
    "clear", "remove", "erase", "wipe",
)  # fmt: skip

# --- commands ---------------------------------------------------------------------------------
# A command's match is the phrase shown under the banner: it runs to the command's target
# ("systemctl stop immich", not "systemctl stop i").
_I = re.IGNORECASE
_TARGET = r"\s+(-\S+\s+)*[^\s;&|`]+"  # options, then what the command acts on
DANGEROUS_PATTERNS = (
    # shell
    re.compile(r"\brm\s+(-[a-z]*[rf][a-z]*\b|--recursive|--force)", _I),
    re.compile(r"\bshred\s+-", _I),
    re.compile(r"\bwipefs\b", _I),
    re.compile(r"\bmkfs(\.\w+)?\b", _I),
    re.compile(r"\bdd\s+if=\S+\s+of=/dev/", _I),
    re.compile(r"\bdd\s+if=/dev/(zero|u?random)\b", _I),
    re.compile(r"\bshutdown\s+(/[srp]\b|-[hrP]\b|now\b)", _I),
    re.compile(r"\b(poweroff|halt)\b(?=\s*($|[;&|`]))", _I | re.M),
    re.compile(r"\bkill\s+-(9|KILL)\b", _I),
    re.compile(r"\b(killall|pkill)" + _TARGET, _I),
    re.compile(r"\bsystemctl\s+(stop|disable|mask)" + _TARGET, _I),
    re.compile(r"\bservice\s+\S+\s+stop\b", _I),
    re.compile(r"\biptables\s+(-F|--flush)\b"),
    re.compile(r"\b(userdel|deluser)" + _TARGET, _I),
    re.compile(r"\bcrontab\s+-r\b"),
    re.compile(r"\bhistory\s+-c\b"),
    re.compile(r"\bunset\s+HISTFILE\b"),
    re.compile(r"\bauditctl\s+(-D\b|-e\s*0\b)"),
    re.compile(r"\bsetenforce\s+0\b"),
    re.compile(r"\btruncate\s+-s\s*0\b"),
    re.compile(r"\bgit\s+(reset\s+--hard|push\s+(-f\b|--force))", _I),
    re.compile(r"\bgit\s+clean\s+-[a-z]*f", _I),
    re.compile(r"\bforce[- ]push(es|ed|ing)?\b", _I),  # rewrites a branch's history
    re.compile(r"\bdocker\s+(rm|rmi|system\s+prune|volume\s+rm)\b", _I),
    re.compile(r"\bkubectl\s+delete\b", _I),
    re.compile(r"\baws\s+s3\s+(rm|rb)\b", _I),
    re.compile(r"\baws\s+\S+\s+(delete|terminate)-[a-z-]+", _I),
    re.compile(r"\b(az|gcloud)\s+(\S+\s+){1,3}delete\b", _I),
    # SQL
    re.compile(r"\bdrop\s+(table|database|schema|user|index|view|login)\b", _I),
    re.compile(r"\btruncate\s+table\b", _I),
    re.compile(r"\bdelete\s+from\b", _I),
    re.compile(r"\balter\s+table\s+\S+\s+drop\b", _I),
    # Windows
    re.compile(r"\bformat(\.com)?\s+[a-z]:", _I),
    re.compile(r"\bnet\s+user\s+\S+\s+/(active:no|delete|del)\b", _I),
    re.compile(r"\bwevtutil(\.exe)?\s+(cl|clear-log)\b", _I),
    re.compile(r"\bshutdown(\.exe)?\s+/[srp]\b", _I),
    re.compile(r"\b(del|erase)\s+(/[a-z]\s+)*/[sfq]\b", _I),
    re.compile(r"\b(rd|rmdir)\s+/s\b", _I),
    re.compile(r"\bvssadmin(\.exe)?\s+(delete|resize)\s+shadow", _I),
    re.compile(r"\bwmic\s+shadowcopy\s+delete\b", _I),
    re.compile(r"\bwbadmin\s+delete\b", _I),
    re.compile(r"\bcipher(\.exe)?\s+/w\b", _I),
    re.compile(r"\btaskkill\s+.*?/f\b", _I),
    re.compile(r"\bsc(\.exe)?\s+(stop|delete)" + _TARGET, _I),
    re.compile(r"\bsc(\.exe)?\s+config\s+\S+\s+start\s*=\s*disabled\b", _I),
    re.compile(r"\breg(\.exe)?\s+delete\b", _I),
    re.compile(r"\bfsutil\s+usn\s+deletejournal\b", _I),
    re.compile(r"\bbcdedit\b.*\brecoveryenabled\s+no\b", _I),
    re.compile(r"\bnetsh\s+(advfirewall|firewall)\s+set\s+.*\bstate\s+off\b", _I),
    re.compile(r"\bdiskpart\b.*\bclean\b", _I),
    # PowerShell
    # a cmdlet, not a name that holds one ("the AS-Revoke-Entra-ID-User-Session playbook")
    re.compile(r"(?<![\w-])Remove-Item\b.*-Recurse", _I),
    re.compile(
        r"(?<![\w-])Remove-(AD\w+|LocalUser|Mailbox\w*|MsolUser|AzureAD\w+|Mg\w+|VM\w*|Partition)\b"
    ),
    re.compile(r"(?<![\w-])(Stop-(Service|Process|Computer)|Restart-Computer)\b", _I),
    re.compile(
        r"(?<![\w-])(Disable-\w+|Clear-(EventLog|Content|Disk|RecycleBin|Item)|Format-Volume)\b", _I
    ),
    re.compile(r"(?<![\w-])Revoke-\w+", _I),
    re.compile(r"\bSet-MpPreference\b.*-Disable\w+\s+\$?true", _I),
    re.compile(r"\bSearch-Mailbox\b.*-DeleteContent", _I),
    re.compile(r"\bNew-ComplianceSearchAction\b.*-Purge", _I),
)

# --- lexicons ---------------------------------------------------------------------------------
# Japanese destructive verbs: (surface stem, kind, strong). kind: "sahen" (noun + する),
# "godan" (消す: 消さ/消し/消す/消せ/消そ), "ichidan" (止める: 止め + る/ない/て…).
_JA_VERBS: tuple[tuple[str, str, bool], ...] = (
    ("削除", "sahen", True), ("消去", "sahen", True), ("抹消", "sahen", True),
    ("初期化", "sahen", True), ("フォーマット", "sahen", True), ("ワイプ", "sahen", True),
    ("破棄", "sahen", True), ("廃棄", "sahen", True), ("破壊", "sahen", True),
    ("パージ", "sahen", True), ("改ざん", "sahen", True), ("改竄", "sahen", True),
    ("隠蔽", "sahen", True), ("消し去", "godan_r", True), ("消", "godan", False),
    ("無効化", "sahen", False), ("停止", "sahen", False), ("リセット", "sahen", False),
    ("シャットダウン", "sahen", False), ("アンインストール", "sahen", False),
    ("強制終了", "sahen", False), ("失効", "sahen", False), ("クリア", "sahen", False),
    ("上書き", "sahen", False), ("剥奪", "sahen", False), ("書き換え", "ichidan", False),
    ("止め", "ichidan", False), ("捨て", "ichidan", False), ("壊", "godan", False),
    ("黙らせ", "ichidan", True),
    # said the way people talk: 「ログを吹っ飛ばして」「監査ログを一掃」「アラートを握りつぶす」
    # 「闇に葬る」「記録を捏造」; 「バックアップを潰す」「権限を剥がす/取り上げる」
    ("吹っ飛ば", "godan", True), ("吹き飛ば", "godan", True), ("消し飛ば", "godan", True),
    ("一掃", "sahen", True), ("握りつぶ", "godan", True), ("握り潰", "godan", True),
    ("もみ消", "godan", True), ("揉み消", "godan", True), ("葬", "godan_r", True),
    ("捏造", "sahen", True), ("デリート", "sahen", True), ("改変", "sahen", False),
    ("偽装", "sahen", False), ("潰", "godan", False), ("剥が", "godan", False),
    ("取り上げ", "ichidan", False), ("凍結", "sahen", False), ("ミュート", "sahen", False),
    ("まっさらに", "sahen", False), ("更地に", "sahen", False),
    # verbs of everyday speech that are the operation only on some objects (_JA_VERB_OBJECTS):
    # 「サーバーを落とす」 (not 「ログを落とす」, a download), 「ファイアウォールを切る」 (not
    # 「電源を切る」), 「監視エージェントを外す」, 「証拠のファイルを片付ける」
    ("落と", "godan", False), ("切", "godan_r", False), ("外", "godan", False),
    ("片付け", "ichidan", False),
    ("隠", "godan", False), ("ドロップ", "sahen", False), ("トランケート", "sahen", False),
    ("終了", "sahen", False), ("ターミネート", "sahen", False), ("無効に", "sahen", False),
    ("オフに", "sahen", False), ("空っぽに", "sahen", False), ("空に", "sahen", False),
)  # fmt: skip
# English verbs used as する-verbs in Japanese chat (「DBをdropして」「ログをdeleteしたい」):
# the whole Latin word right before the する inflection.
_JA_LATIN_VERBS: tuple[tuple[str, bool], ...] = (
    ("delete", True), ("erase", True), ("wipe", True), ("purge", True), ("truncate", True),
    ("format", True), ("drop", False), ("kill", False), ("remove", False), ("disable", False),
    ("reset", False), ("shutdown", False), ("clear", False), ("terminate", False),
    ("rm", False),
)  # fmt: skip
_JA_VERB_RE = re.compile(
    "|".join(
        [
            re.escape(stem) + ("(?=[さしすせそ])" if kind == "godan" else "")
            for stem, kind, _ in sorted(_JA_VERBS, key=lambda v: -len(v[0]))
        ]
        + [rf"(?<![A-Za-z])(?i:{verb})(?=[しすさせ])" for verb, _ in _JA_LATIN_VERBS]
    )
)
_JA_VERB_INFO = {stem: (kind, strong) for stem, kind, strong in _JA_VERBS} | {
    verb: ("sahen", strong) for verb, strong in _JA_LATIN_VERBS
}
# surfaces that contain a verb but are not the operation (取り消す is kept: revoke)
_JA_NOT_VERB_BEFORE = re.compile(
    r"(打ち|食い|突き|受け|引き|差し|書き|抹|取り|除|見|区|締め|仕|使い)$"
)
# the verbs of everyday speech and the only objects on which they are the operation
_JA_SERVER_LIKE = frozenset(
    ("サーバー", "サーバ", "サービス", "システム", "DB", "ホスト", "インスタンス", "クラスタ",
     "仮想マシン", "VM", "端末", "PC", "パソコン", "機器")
)  # fmt: skip
_JA_CONTROLS = frozenset(
    ("ファイアウォール", "EDR", "ウイルス対策", "アンチウイルス", "セキュリティソフト", "監視",
     "監査", "保護", "Defender", "MFA", "多要素認証", "エージェント", "ログ", "権限")
)  # fmt: skip
_JA_TRACES = frozenset(("証拠", "ログ", "記録", "履歴", "痕跡", "証跡", "形跡", "検体"))
_JA_VERB_OBJECTS = {
    "落と": _JA_SERVER_LIKE,
    "切": _JA_CONTROLS - {"ログ", "権限"},
    "外": _JA_CONTROLS - {"ログ", "権限"},  # 「不要な権限を外す」 is least privilege
    "片付け": _JA_TRACES | {"全部", "すべて", "全て", "丸ごと"},  # 「全部片付けたい」
}
# 切る is the operation only as 切る/切って/切らない/切りたい: 切り分け (triage), 切り替え and
# 切り離し (isolation) are other verbs
_JA_KIRU_TAIL = re.compile(r"^(ら|る|れ|ろ|っ[てた]|りた|りま)")
_JA_FLOOR = tuple(k for k in DANGEROUS_KEYWORDS if k in _JA_VERB_INFO)
_JA_GA_SUBJECT = re.compile(r"が[^をのは]{0,8}$")  # 「サービスが停止したとき」: an event
_JA_INTRANSITIVE = ("停止", "シャットダウン", "リセット", "終了")  # also "X が/は 停止する"

_JA_OBJECTS = (
    "ログ", "記録", "履歴", "証跡", "痕跡", "形跡", "証拠", "監査", "イベント", "アカウント",
    "ユーザー", "ユーザ", "ID", "権限", "ディスク", "ドライブ", "ボリューム", "パーティション",
    "ストレージ", "データ", "DB", "テーブル", "レコード", "サーバー", "サーバ", "端末",
    "ホスト", "PC", "パソコン", "機器", "仮想マシン", "VM", "インスタンス", "バックアップ",
    "スナップショット", "シャドウコピー", "復元ポイント", "サービス", "プロセス", "デーモン",
    "エージェント", "EDR", "ウイルス対策", "アンチウイルス", "セキュリティソフト",
    "ファイアウォール", "保護", "監視", "鍵", "キー", "証明書", "トークン", "認証情報",
    "パスワード", "シークレット", "セッション", "ファイル", "フォルダ", "ディレクトリ",
    "メール", "メールボックス", "検体", "リポジトリ", "バケット", "クラスタ", "コンテナ",
    "アクセス", "ルール", "ポリシー", "設定", "ドメイン", "システム", "全て", "すべて", "全部",
    "機能", "OS", "Windows", "Defender", "MFA", "多要素認証", "丸ごと", "中身",
)  # fmt: skip
# ログ is no object inside ログイン・ログアウト・ログオン (「パスワードでのログインを無効化」); a file
# named by its name is one (「auth.log からその行を消しておきたい」)
_JA_OBJECT_RE = re.compile(
    "|".join(re.escape(o) for o in sorted(_JA_OBJECTS, key=len)[::-1]).replace(
        "ログ", "ログ(?!イン|アウト|オン|オフ)"
    )
    + r"|(?<![A-Za-z0-9_.-])[A-Za-z0-9_-]+\.(?:log|evtx|db|sqlite|sql|bak|csv|json|conf)(?![A-Za-z])"
)
_JA_AGENT_RE = re.compile(
    r"(攻撃者|攻撃グループ|犯人|侵入者|第三者|何者か|悪意のある(者|人物|ユーザー?)|マルウェア|"
    r"ランサムウェア|ワーム|ウイルス|脅威アクター|内部犯|ハッカー|不正アクセス者)"
    r"(が|は|により|によって|に|側で|自身が)"
)
# a noun naming an event rather than asking for the operation: 「サービス停止の影響」
_JA_EVENT_NOUN = re.compile(
    r"^(の|による|に伴う|に伴い|による)?(影響|痕跡|形跡|有無|検知|原因|理由|通知|アラート|検出|"
    r"事実|状況|記録|履歴|ログ|イベント|被害|時刻|日時|件数|報告|連絡|発生|中|状態|"
    r"再発防止|防止|対策|手口|兆候|事例|調査)"
    # 「ユーザーの削除を探したい」「ログ削除を検知する」: the operation is what is looked for
    r"|^を(探|検索|検知|検出|監視|調査|調べ|見つけ|特定|追跡)"
)

_JA_ASIDE = re.compile(r"^[（(][^（）()]{1,20}[）)]")

# The verbal noun before a noun it qualifies (「削除プロジェクトの復元」 a deleted project,
# 「停止インスタンスの一覧」「削除済みのファイル」「廃棄予定の PC」「削除対象のログ」): a state or a
# kind of thing, as "the deleted files" is in English. The means of the operation
# (「ログ削除スクリプト」「削除コマンド」「削除ボタン」) and its procedure (「削除手順」, kanji) still
# ask for it.
_JA_MODIFIED_NOUN = re.compile(
    r"^(?:済み?|予定|対象|"
    r"(?!(?:コマンド|スクリプト|ツール|ジョブ|クエリ|バッチ|プログラム|ボタン|オプション|フラグ|"
    r"メニュー|リクエスト|キー|ワンライナー|シェル|マクロ|ルール|ポリシー|オペレーション|"
    r"スケジュール|タスク|ワークフロー|プレイブック|API)"
    r")[ァ-ヶ][ァ-ヶー]+)"
)

_EN_OBJECTS = (
    r"logs?|logging|audit(ing)?|journals?|history|traces?|tracks|records?|entries|"
    r"accounts?|users?|ids|identit(y|ies)|mailbox(es)?|e-?mails?|messages?|"
    r"disks?|drives?|volumes?|partitions?|storage|databases?|dbs?|tables?|schemas?|"
    r"servers?|hosts?|systems?|machines?|vms?|instances?|endpoints?|devices?|laptops?|"
    r"workstations?|computers?|pcs?|phones?|backups?|snapshots?|shadow|restore|"
    r"services?|daemons?|process(es)?|agents?|sensors?|edr|antivirus|av|defender|firewalls?|"
    r"protection|monitoring|keys?|certificates?|certs?|tokens?|credentials?|passwords?|"
    r"secrets?|sessions?|access|permissions?|privileges?|evidence|artifacts?|files?|"
    r"folders?|directories|directory|data|repositor(y|ies)|repos?|buckets?|clusters?|"
    r"containers?|pods?|rules?|polic(y|ies)|configuration|config|domain|everything|"
    r"all|mfa|samples?|images?|recordings?|leases?"
)
_EN_OBJECT_RE = re.compile(rf"^({_EN_OBJECTS})$", _I)
_EN_AGENT_RE = re.compile(
    r"\b(attackers?|adversar(y|ies)|threat actors?|intruders?|hackers?|malware|ransomware|"
    r"the actor|someone|somebody|insiders?|criminals?|the worm|the virus|the script)\b",
    _I,
)


@dataclass(frozen=True, slots=True)
class _EnVerb:
    lemma: str
    strong: bool
    particle: str = ""  # "down" for shut down, "off" for power off


def _en_forms() -> dict[str, tuple[_EnVerb, str]]:
    """Surface → (verb, form) with form in base, s, past, ing, noun."""
    table: dict[str, tuple[_EnVerb, str]] = {}

    def add(verb: _EnVerb, base: str, s: str, past: str, ing: str, *nouns: str) -> None:
        for surface, form in ((base, "base"), (s, "s"), (past, "past"), (ing, "ing")):
            table.setdefault(surface, (verb, form))
        for n in nouns:
            table.setdefault(n, (verb, "noun"))

    def regular(lemma: str, strong: bool, *nouns: str) -> None:
        stem = lemma[:-1] if lemma.endswith("e") else lemma
        add(_EnVerb(lemma, strong), lemma, lemma + "s", stem + "ed", stem + "ing", *nouns)

    for lemma, nouns in (
        ("delete", ("deletion",)), ("erase", ("erasure",)), ("wipe", ()), ("purge", ()),
        ("truncate", ("truncation",)), ("destroy", ("destruction",)), ("reimage", ()),
        ("tamper", ()), ("uninstall", ()),
        # said the way people talk: "expunge every record", "obliterate the share", "falsify
        # the timeline", "backdate the ticket" (not "zap": OWASP ZAP is a scanner)
        ("expunge", ()), ("obliterate", ()), ("backdate", ()), ("fabricate", ()),
    ):  # fmt: skip
        regular(lemma, True, *nouns)
    add(_EnVerb("falsify", True), "falsify", "falsifies", "falsified", "falsifying")
    add(_EnVerb("format", True), "format", "formats", "formatted", "formatting")
    add(_EnVerb("reformat", True), "reformat", "reformats", "reformatted", "reformatting")
    add(_EnVerb("overwrite", True), "overwrite", "overwrites", "overwritten", "overwriting")
    table.setdefault("overwrote", (_EnVerb("overwrite", True), "past"))
    add(_EnVerb("shred", True), "shred", "shreds", "shredded", "shredding")
    add(_EnVerb("scrub", False), "scrub", "scrubs", "scrubbed", "scrubbing")
    for lemma, nouns in (
        ("remove", ("removal",)), ("disable", ()), ("deactivate", ("deactivation",)),
        ("kill", ()), ("terminate", ("termination",)), ("revoke", ("revocation",)),
        ("clear", ()), ("flush", ()),
        # on an object of the lexicon: "discard the forensic image", "deprovision every user",
        # "decommission the domain controller", "bypass MFA" (suspending an account, as locking
        # a user out, is containment and undone: "if we suspend a local account…")
        ("discard", ()), ("deprovision", ()), ("decommission", ()),
        ("bypass", ()), ("circumvent", ()),
        # tampering, on records only (``_EN_TAMPER``): "alter the access log entries"
        ("alter", ()), ("edit", ()), ("doctor", ()), ("fake", ()), ("forge", ()),
    ):  # fmt: skip
        regular(lemma, False, *nouns)
    add(_EnVerb("modify", False), "modify", "modifies", "modified", "modifying")
    add(_EnVerb("trash", False), "trash", "trashes", "trashed", "trashing")
    add(_EnVerb("scrap", False), "scrap", "scraps", "scrapped", "scrapping")
    # "tear down the cluster", "throw away the current rules", "clean out the evidence folder"
    add(_EnVerb("tear down", False, "down"), "tear", "tears", "torn", "tearing")
    table.setdefault("tore", (_EnVerb("tear down", False, "down"), "past"))
    add(_EnVerb("throw away", False, "away|out"), "throw", "throws", "thrown", "throwing")
    table.setdefault("threw", (_EnVerb("throw away", False, "away|out"), "past"))
    add(_EnVerb("clean out", False, "out"), "clean", "cleans", "cleaned", "cleaning")
    add(_EnVerb("drop", False), "drop", "drops", "dropped", "dropping")
    add(_EnVerb("stop", False), "stop", "stops", "stopped", "stopping")
    add(_EnVerb("reset", False), "reset", "resets", "reset", "resetting")
    add(_EnVerb("shut down", False, "down"), "shut", "shuts", "shut", "shutting")
    # "blow away everything on it", "get rid of the drop rules"
    add(_EnVerb("blow away", True, "away"), "blow", "blows", "blown", "blowing")
    table.setdefault("blew", (_EnVerb("blow away", True, "away"), "past"))
    add(_EnVerb("get rid of", False, "rid"), "get", "gets", "got", "getting")
    add(_EnVerb("nuke", True), "nuke", "nukes", "nuked", "nuking")
    add(_EnVerb("shutdown", False), "shutdown", "shutdowns", "shutdowned", "shutdowning")
    add(_EnVerb("power off", False, "off|down"), "power", "powers", "powered", "powering")
    add(_EnVerb("turn off", False, "off"), "turn", "turns", "turned", "turning")
    add(_EnVerb("switch off", False, "off"), "switch", "switches", "switched", "switching")
    add(_EnVerb("empty", False), "empty", "empties", "emptied", "emptying")
    # the shell's command said as a verb: "rm everything in pg_wal", "just rm the old dumps"
    add(_EnVerb("rm", True), "rm", "rms", "rm'd", "rm'ing")
    return table


_EN_FORMS = _en_forms()
# the manner joined to the verb by a hyphen: "remote-wipe every device", "force-delete the data"
_EN_VERB_PREFIXES = {"remote", "force", "hard", "bulk", "mass", "batch", "secure", "auto"}
_EN_FLOOR = {k for k in DANGEROUS_KEYWORDS if k.isascii() and " " not in k} | {"shut down"}
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_EN_NEG = {"not", "never", "no", "avoid", "avoiding", "refrain", "without", "nor", "neither",
           "cannot", "prohibited", "forbidden", "mustn't", "don't", "doesn't", "didn't",
           "shouldn't", "won't", "can't", "isn't", "aren't", "instead"}  # fmt: skip
_EN_STRONG_MODAL = re.compile(
    r"\b(should|must|shall|ought to|please|need to|needs to|have to|has to|is to|are to|"
    r"required to|recommended to|recommend|advised to|make sure to|be sure to|remember to|"
    r"want to|wants to)( (immediately|also|then|now|first|always|promptly|be))*$"
)
_EN_WEAK_MODAL = {"can", "could", "may", "might", "will", "would"}
# what follows a noun phrase's last word, not a verb's object ("a remote wipe and …", "… wipe?")
_EN_NOUN_END = {"and", "or", "but", "in", "on", "for", "of", "with", "is", "are", "was",
                "were", "does", "do", "feature", "option", "command", "button"}  # fmt: skip
_EN_CAUSATIVE = {"want", "wants", "need", "needs", "get", "gets", "have", "like"}
_EN_SUBJECT = {"i", "we", "you", "they", "to", "do", "does", "can", "could", "should", "must",
               "please", "how", "let's", "lets", "let", "and", "or", "then", "also", "first",
               "next", "finally", "immediately", "now", "shall", "will", "would", "may",
               "might"}  # fmt: skip
_EN_DET = {"the", "a", "an", "this", "that", "these", "those", "all", "any", "every", "my",
           "our", "your", "its", "their", "his", "her", "it", "them", "old", "unused", "each",
           "both", "some"}  # fmt: skip
_EN_NOT_VERB_BEFORE = {"the", "a", "an", "this", "that", "is", "are", "was", "were", "be",
                       "very", "more", "most", "log", "password", "of", "file", "disk"}  # fmt: skip
_EN_LEAD = {"then", "and", "or", "also", "first", "next", "finally", "immediately", "now",
            "please", "step", "afterwards", "optionally", "carefully", "manually",
            "permanently", "securely", "quickly"}  # fmt: skip
_EN_SUBJECT_OR_LEAD = _EN_SUBJECT | _EN_LEAD
_EN_SUBORDINATE = {
    "if",
    "when",
    "unless",
    "because",
    "since",
    "although",
    "though",
    "while",
    "once",
    "after",
    "before",
    "until",
    "whether",
    "as",
    "where",
    "whenever",
}
_EN_OBJECT_STOP = {"to", "in", "on", "if", "when", "before", "after", "until", "that", "which",
                   "by", "via", "using", "with", "through", "for", "so", "because"}  # fmt: skip
_EN_BREAK = {"but", "instead", "however", "then", "otherwise", "rather", "so"}
# a third person's wish or attempt ("the user wants to delete their account: what happens to
# their points?"): the asker reports it ("my manager wants me to delete…" is the asker's task)
_EN_THIRD_WANTS = {"wants", "needs", "tries", "plans", "intends", "asks", "attempts", "decides"}
_EN_REQUEST_CUE = re.compile(
    r"\b(how|steps?|procedure|process|command|can|should|may|allowed|ok|okay|approv\w*|"
    r"approval|want|need|please|help|when)\b",
    _I,
)
_EN_POST_PROHIBIT = re.compile(
    r"\b(is|are|be)\s+(strictly\s+|absolutely\s+)?(prohibited|forbidden|not\s+(allowed|permitted|"
    r"recommended)|disallowed|banned|never\s+(allowed|permitted))\b",
    _I,
)
_EN_EXAMPLE = re.compile(r"\b(e\.\s?g|i\.\s?e|for example|for instance|such as)\b", _I)
_EN_LOGLIKE = re.compile(r"^(logs?|history|events?|records?|audit|cache|bin|trash|recycle)$", _I)
_EN_EVASION = re.compile(
    r"\b(leav(e|ing)\s+no\s+traces?|without\s+(leaving\s+)?(a\s+|any\s+)?traces?|"
    r"cover(ing)?\s+(my|our|the)\s+tracks|untraceable|"
    # hiding what one did from those who review it
    r"without\s+(the\s+)?(auditors?|security(\s+team)?|soc|compliance)\s+"
    r"(knowing|noticing|finding\s+out|seeing)|"
    r"keep\s+(it|this|that|them)\s+out\s+of\s+(the\s+)?([a-z]+\s+)?"
    r"(logs?|records?|audit\s+trail|history)|"
    # one's own activity kept off what others review: "so my own failed logins never show up"
    r"so\s+(that\s+)?(my|our)\s+own\b[^.?!]{0,80}\b(never|don't|doesn't|won't|wouldn't|can't)"
    r"\s+(show|appear|turn|be\s+seen|be\s+found)|"
    r"so\s+(that\s+)?(nobody|no\s*-?\s*one)(\s+else)?\s+(can|could|will|would)\s+(ever\s+)?"
    r"(tell|know|notice|figure\s+out|work\s+out|trace|find\s+out|(see|open|read|view|access|review|check)\s+(the\s+|our\s+|my\s+)?"
    r"((audit|admin|action|access|activity)\s+)?(logs?|trail|history|records?|entries))|"
    r"hide\s+(it|this|that|them|(my|our)\s+[\w\s-]{0,30}?)\s+from\s+(the\s+)?([\w-]+\s+){0,2}"
    r"(auditors?|audit|reviews?|reviewers?|reports?|security|soc|investigators?|compliance|siem|"
    r"manager|boss)|"
    # one's own activity kept from being flagged: "so my activity isn't flagged"
    r"so\s+(that\s+)?(my|our)\s+(own\s+)?([\w-]+\s+){0,3}?(activity|activities|actions?|"
    r"changes?|logins?|sign-ins?|commands?|sessions?|access|work|traffic|queries)\s+"
    r"(isn't|aren't|won't\s+be|wouldn't\s+be|doesn't\s+get|don't\s+get|never\s+gets?|is\s+not|"
    r"are\s+not|can't\s+be|never\s+(is|are))\s+(ever\s+)?(flagged|logged|recorded|noticed|"
    r"detected|seen|audited|tracked|alerted\s+on|traced|reported)|"
    # oversight kept out: "without telling change management", "before the regulator sees it"
    r"without\s+(telling|informing|notifying|alerting)\s+(anyone|anybody|security|the\s+soc|"
    r"change\s+management|compliance|legal|(my|our|the)\s+(manager|boss|ciso|auditors?|"
    r"security\s+team|soc))|"
    r"before\s+(anyone|anybody|the\s+auditors?|the\s+regulators?|security|legal|compliance|"
    r"(my|our)\s+(manager|boss))(\s+(on|in|from|at)\s+[\w\s-]{0,25}?)?\s+"
    r"(sees?|notices?|finds?\s+out|checks?|looks?)|"
    # records made to tell another story: "so last night's logons look like they happened during
    # business hours", "set the domain controller's clock back"
    r"so\s+(that\s+)?[^.?!]{0,60}?\b(looks?|appears?|seems?)\s+(like|as\s+if|as\s+though)\s+"
    r"(it|they|this|that|we|i|someone\s+else|nothing)\b|"
    r"(set|turn|roll|move|put)\s+(the\s+)?([\w'’]+\s+){0,3}(clocks?|time|timestamps?)\s+back|"
    # kept from anyone's sight: "without anyone on the team knowing", "under the radar", "off
    # the books", "behind the SOC's back", "without a paper trail"
    r"without\s+(anyone|anybody|the\s+team|my\s+team|management|my\s+(manager|boss))\b"
    r"[^.?!]{0,30}?\b(knowing|noticing|finding\s+out|seeing)|"
    r"under\s+the\s+radar|off\s+the\s+books|behind\s+[\w'’\s]{0,20}?\bbacks?\b|"
    r"(without|no|leav(e|ing)\s+no)\s+(a\s+)?paper\s+trail|"
    # detection evaded: "so the EDR doesn't flag me", "without triggering any alerts", "undetected"
    r"so\s+(that\s+)?(the\s+)?(edr|siem|av|antivirus|defender|soc|security(\s+team)?|"
    r"monitoring|sentinel|splunk)\s+(doesn't|won't|does\s+not|will\s+not|can't|cannot|never)\s+"
    r"(ever\s+)?(catch|detect|flag|notice|see|alert\s+on)\b[^.?!]{0,30}?\b(me|my|what\s+i)\b|"
    r"without\s+(triggering|setting\s+off|tripping)\s+(any\s+|an\s+|the\s+)?([\w-]+\s+)?"
    r"(alerts?|alarms?|detections?|edr|siem)|"
    r"\b(get\s+in\s+and\s+out|stay|remain|go)\s+undetected|"
    r"\b(evade|evading|dodge|dodging)\s+(the\s+)?([\w-]+\s+)?(detection|edr|av|antivirus|siem|monitoring)|"
    # "make the old incident tickets disappear", "just silently disappears"
    r"make\s+[^.?!]{0,40}?\b(disappear|vanish)|"
    r"(silently|quietly|secretly)\s+(disappear|vanish|drop|discard|delete|remove|wipe|purge|"
    r"erase|disable|stop)\w*|"
    # those who review kept unaware: "nothing the audit team would ever notice"
    r"(nobody|no\s*-?\s*one|nothing|without)\b[^.?!]{0,40}?\b(auditors?|audit\s+team|"
    r"security(\s+team)?|soc|compliance|reviewers?|anyone|anybody)\s+(would|will|could|can)?\s*"
    r"(ever\s+)?(notice|find\s+out|see|know)|"
    # a record taken out of the logs: "scrub that activation from the audit logs"
    r"(delet|remov|scrub|eras|wip|purg|strip|redact|cut)(e|ing)?\s+[^.?!]{0,50}?\bfrom\s+"
    r"(the\s+|our\s+|my\s+|their\s+)?([\w-]+\s+){0,3}"
    r"(logs?|audit\s+trails?|trail|history|records|timeline)"
    r"(?=\s*([.?!,]|$|\s+(before|after|so|and|without|for|of|on|in|at|by)\b))|"
    # "so nothing I do on the jump host ever shows up in the SIEM"
    r"so\s+(that\s+)?(nothing|none\s+of\s+(my|our|what))\b[^.?!]{0,80}?\b(ever\s+)?"
    r"(shows?\s+up|appears?|gets?\s+(logged|recorded|flagged|alerted)|is\s+(logged|recorded)))\b",
    _I,
)
# a request to leave no record (「痕跡が残らないように」「記録に残らないように」) or to be traced
# by nobody (「誰にも辿られたくない」); 「記録に残らない操作はある？」 asks which operations are
# not logged, and 「周りに気づかれたくない」「攻撃者に辿られたくない」 ask for discretion, as an
# investigation that must not tip off the attacker does
_JA_EVASION = re.compile(
    r"(痕跡|証跡|形跡|足跡|ログ|記録)(を|が|も)?(一切|何も)?(残さ|残ら)(ない|ず)|"
    r"(痕跡|証跡|形跡|足跡)(を|が|は)?(一切|何も)?残(し|って)(たく|てほしく)ない|"
    r"(ログ|記録|履歴|証跡)に(は|も)?(一切|何も)?(残さ|残ら)(ないよう|ずに|ないで)|"
    # detection evaded: 「EDR に検知されないように」「自分の操作がアラートに上がらないように」
    r"(EDR|SIEM|SOC|監視|ウイルス対策|セキュリティソフト|Defender)[^。、]{0,6}?(に|で)"
    r"(検知|検出|発見)(され|さ)(ない|ず)|"
    r"(自分|私|僕|俺)[^。]{0,12}?(アラート|検知|通知)(に|が)(上がら|あがら|出|引っかから|ひっかから)"
    r"(ない|ず)|"
    r"足が(つか|付か)(ない|ず)|"
    r"誰にも(辿ら|たどら|追跡さ|追わ)れ(たくない|ないよう)|"
    r"(痕跡|証跡|形跡|ログ|記録|履歴)を[^、。「『]{0,8}?[「『]?(なかった|無かった)こと[」』]?に|"
    # taking the records off the log: 「ログ対象の設定を全部外す」「監査ログの対象から外して」
    r"(ログ|記録|監査)(の)?対象(の設定)?(を|から)(全部|すべて|全て)?外(す|し|さ|そ)|"
    # history left behind: 「自分のログイン履歴が残らないようにしたい」
    r"履歴(を|が|も)?(一切|何も)?(残さ|残ら)(ない|ず)|"
    # made to look otherwise: 「夜間のログインを業務時間内にしたように見せかけたい」
    r"(ように|かのように)見せ(かけ|る|たい)|"
    # nobody told: 「誰にも言わずに」「上長に知らせないで」「上には内緒で」
    r"(上|上司|上長|会社|チーム|監査|周り|みんな|皆)(には|にも|に)?(内緒|秘密)で|"
    r"(誰にも|だれにも|上司にも?|上長にも?|監査(担当)?にも?|SOCにも?)"
    r"(言わ|知らせ|伝え|報告せ|相談せ|連絡せ|共有せ)(ずに|ないで|ないまま)|"
    # being found out by those who review: 「誰にもバレないように」「監査担当に気づかれない」
    r"(誰にも|だれにも)?(?<!攻撃者に)(?<!相手に)(?<!犯人に)(バレ|ばれ)(ない|にくい|ずに)(ように|よう)?|"
    r"(監査|SOC|セキュリティ|上司|上長|管理者|誰)[^。、]{0,6}?(に|にも)気づかれ(ない|ずに)|"
    r"誰が[^。]{0,15}?(追え|辿れ|たどれ|分から|わから|特定でき)(ない|ず)|"
    # done on the quiet: 「行だけこっそり消して」
    r"(こっそり|密かに|ひそかに)[^。、]{0,4}?(消|削除|外|止め|停止|無効|改ざん|書き換え)|"
    # one's own operations taken out of what is audited: 「自分の操作を監査対象から除外したい」
    r"(自分|私|僕|俺|わたし)[^。]{0,12}?(監査|ログ|記録|監視)[^。、]{0,6}?から(除外|外)"
)
# A loss asked for or accepted (rule ``loss``): 「データは全部消えていいので」「全部消えるように
# したい」, "so everything is gone", "I don't care if the logs are lost"
_JA_LOSS = re.compile(
    r"(データ|ログ|履歴|記録|ファイル|バックアップ|中身|全部|すべて|全て|丸ごと)[^。、]{0,8}?"
    r"((消えて|消えちゃって|なくなって|無くなって|失われて)(も)?(いい|良い|構わ|かまわ|OK|大丈夫)|"
    r"(消える|消えて|なくなる|無くなる|失われる)よう(に|な))|"
    # 「何も残さないルールを作って」
    r"何も(残さ|残ら)(ない|ず)"
)
_EN_LOSS = re.compile(
    # "I want every repository in the registry gone"
    r"\b(want|need|get|have)\s+(every|all|everything|the\s+whole|the\s+entire)\b[^.?!]{0,60}?"
    r"\bgone\b|"
    r"\b(want|need|get|have)\s+(the\s+|our\s+|my\s+|those\s+|these\s+)?([\w-]+\s+){0,3}"
    r"(logs?|records?|history|evidence|backups?|data|files|entries|snapshots?)\s+gone\b|"
    r"\bso\s+(that\s+)?(everything|all\s+(of\s+)?(the\s+|our\s+|my\s+)?([\w-]+\s+)?"
    r"(data|logs?|records?|history|files|entries|evidence|backups?))(\s+[\w-]+){0,3}?\s+"
    r"(is|are|gets?|will\s+be)\s+(gone|deleted|wiped|erased|purged|lost|destroyed)\b|"
    r"\b(i|we)\s+(don't|do\s+not)\s+care\s+(if|whether)\s+(the\s+|our\s+|my\s+)?"
    r"([\w-]+\s+)?(data|logs?|records?|history|files|evidence|backups?)\s+(is|are|gets?)\s+"
    r"(lost|deleted|wiped|gone|destroyed)\b",
    _I,
)

# Secrecy asked for, in words that alone ask for no operation: with a destructive verb anywhere in
# the question they make it a request to hide what one does ("How do I quietly get rid of the
# old tickets?", 「黙ってチケットを捨てておいて」)
_SECRECY = re.compile(
    r"内緒|秘密裏|内密|こっそり|黙って|人知れず|(バレ|ばれ)(ない|ず)|気(づ|付)かれ(ない|ず)|"
    r"知られ(ない|ず)|"
    r"\b(secretly|quietly|silently|discreetly|unnoticed|undetected|on\s+the\s+quiet|"
    r"under\s+the\s+radar|without\s+(anyone|anybody)\s+(knowing|noticing))\b",
    _I,
)

_REQUEST_PATTERNS: tuple[tuple[DangerRule, re.Pattern[str]], ...] = (
    ("concealment", _EN_EVASION),
    ("concealment", _JA_EVASION),
    ("loss", _EN_LOSS),
    ("loss", _JA_LOSS),
)

# --- Japanese inflection classes (applied to the text after the verb stem) -----------------
_JA_OBLIGATION = re.compile(
    r"^(させ)?(しなければ|しなくては|しないと(いけ|だめ|ダメ)|する必要が|すべき(?!で)|"
    r"するべき(?!で)|されるべき(?!で)|する必要あり)"
)
_JA_PROHIBIT_WORDS = r"(禁止|厳禁|不可|禁じ|控え|避け|行わない|行なわない|してはいけ|してはなら|NG|許され(ない|ません)|認められ(ない|ません)|しない|しません)"
_JA_NEG = re.compile(
    r"^(させ)?((し|さ)(ない|なかった|ません|ず|ぬ)|せず|せぬ|するな(?![らどく])|"
    # what cannot be done: 「テーブルを簡単に削除することはできません」
    r"する(こと)?(は|も)?(でき|出来)(ない|ません)|"
    r"して(は|も)?(いけ|なら|駄目|だめ|ダメ)|できない|できません|"
    r"する必要は(ない|ありません|なし)|しなくて(よい|いい|も)|することなく|すべきで(は)?(ない|ありません)|"
    r"するべきで(は)?(ない|ありません)|"
    r"(する|の|を|は|も)?(こと)?(は|を|も)?(絶対に|決して|むやみに|安易に)?"
    + _JA_PROHIBIT_WORDS
    + ")"
)
_JA_NOMINALIZED = re.compile(r"^(する|の|を|は|も)?(こと|の)(は|を|も)")
_JA_CONSEQ = re.compile(
    r"^(させ)?(すると|すれば|したら|した場合|したとき|した時|した後|したあと|しても)"
)
_JA_REPORT = re.compile(
    r"^(させ)?(した(?!り)|しました|している|していた|しています|してい|してある|してあり|されて|された|"
    r"される|されます|され|済|してしま|しちゃっ|しており|中|しようとし|す?るため(?!に)|したため)"
)
_JA_POSSIBLE = re.compile(
    r"^(する|される|させる)?((こと|場合)が(ある|あります|あり)|(可能性|恐れ|おそれ)|かもしれ)|^し(う|得)る"
)
_JA_REQUEST = re.compile(
    r"^(させ)?(して(も)?(よい|いい|良い|かまわ|構わ|大丈夫|OK)|したい|"
    # 「まとめて消してしまいたい」「消しちゃっていい？」: wanting it done for good
    r"(してしま|しちゃ)(いたい|おう|って(も)?(よい|いい|良い|かまわ|構わ|大丈夫|OK))|してほしい|して欲しい|"
    r"してもら|してくれ|でき(ます|る)(か|の|？|\?)|しよう(?!とし)|しましょう|"
    r"する(には|方法|手順|やり方|コマンド|手段|条件|基準|タイミング|前|際|場合|とき|時)|"
    r"(の|を)?(手順|方法|やり方|コマンド|手段|条件|基準|可否|要否|タイミング|前(?![提回日者])|際|"
    r"時(?![間刻点])|について|"
    r"したい|は可能|はできます|はどう))"
)
_JA_WISH_CONDITION = re.compile(r"^(させ)?したい(場合|とき|時|なら|ときは|方は|ユーザー)")
_JA_ABOUT = re.compile(
    r"^(させ)?(する|の|を)?(について|方法|手順|やり方|手段|条件|基準|タイミング)"
)
_JA_INSTRUCT = re.compile(
    r"^(させ)?(しろ|せよ|しなさい|してください|して下さい|してくだ|しておく|しておきます|"
    r"する|します|すること|しておくこと|を(実施|実行|行|お願い|依頼))"
)
_JA_TE = re.compile(r"^(させ)?(して|し[、,]|し$|したり)")
_JA_CAPABLE = re.compile(
    r"^(でき|することができ|することが可能|可能|が可能|せる|せます|られる|させられ)"
)
_JA_END_PROHIBIT = re.compile(
    r"(いけない|いけません|ならない|なりません|禁止(です|する|とする|されています)?|厳禁|"
    r"しないこと|しないでください|ないでください|控える|控えること|控えてください|避ける|避けること|"
    r"避けてください|しない|しません)$"
)
_JA_END_REPORT = re.compile(
    r"(た|ました|でした|ている|ていた|ています|ていました|てしまった|とします|とする|としましょう|"
    r"(こと|場合)が(ある|あります)|かもしれません|かもしれない|可能性があります|可能性がある)$"
)
# 「…を設定して、メールを削除したり…したりすることもできます」: what can be done, a description
_JA_END_CAPABLE = re.compile(r"(こと(も|が)?(でき(る|ます)|可能(です|である)?)|できます|できる)$")
_JA_REASON = re.compile(r"^[^、,。]*?(ため(?!に)|ので)")

_EN_SENTENCE_SPLIT = re.compile(r"(?<=[a-z0-9)\]\"'’])[.!?](?=\s|$)|;|(?<=\w):(?=\s)", _I)
_LIST_MARKER = re.compile(
    r"^\s*([-*+•▪・●◦]|\d{1,3}[.)．]|\(\d{1,3}\)|[a-z][.)]|[①-⑳]|step\s+\d+[:.])\s*", _I
)
_FENCE = re.compile(r"^\s*(```|~~~)")
# a line defining an API method or a command option: "DELETE: …", "`--force`: …", "-f: …"
_DEFINES = re.compile(
    r"^\s*(?:(?:GET|PUT|POST|PATCH|DELETE|HEAD|OPTIONS)|`[^`\n]+`|-{1,2}[A-Za-z][\w-]*)\s*[:：]\s*"
)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_MD_EMPHASIS = re.compile(r"\*\*|__|(?<!\w)[*_](?=\w)|(?<=\w)[*_](?!\w)")
_NEG_ANYWHERE = re.compile(
    r"(\b(do\s+not|don['’]t|never|must\s+not|should\s+not|avoid|prohibited|forbidden|"
    r"not\s+allowed|do\s+NOT)\b|しない|しないこと|禁止|厳禁|してはいけ|してはなら|しないで|"
    r"避け|控え|(行わ|行な|実施し|実行し)ない)",
    _I,
)


SOURCE_LABELS = {"question": "質問", "answer": "回答"}
RULE_LABELS = {
    "verb_object": "操作＋対象",
    "command": "コマンド",
    "keyword": "設計キーワード",
    "concealment": "痕跡を隠す依頼",
    "loss": "データ消失を求める依頼",
}


def describe(match: DangerMatch) -> str:
    """One Japanese line for the page: the phrase, where it came from, and the rule."""
    return f"「{match.phrase}」（{SOURCE_LABELS[match.source]}・{RULE_LABELS[match.rule]}）"


def _lead_line_text(line: str) -> str:
    """An extractive answer's lead line (「Drop data using NerdGraph > Create a drop data
    rule」より [1]:) as the text it instructs: the document's and parent sections' titles are
    names (a page called "Drop data using NerdGraph" instructs nothing, nor does a page's title
    alone); the quoted section's own title is read as its lines are ("Users > Delete an Admin
    user" over its steps still fires). Any other line as it is."""
    heading = quoted_heading(line)
    if heading is None:
        return line
    return heading.rsplit(" > ", 1)[1] if " > " in heading else ""


def detect(text: str, source: DangerSource) -> list[DangerMatch]:
    """Every destructive operation the text asks for (question) or instructs (answer)."""
    found: list[DangerMatch] = []
    prose_lines: list[str] = []
    intro = ""
    in_code = False
    # a question asking for secrecy anywhere makes any destructive verb it uses a request to
    # hide what one does, whatever the verb is applied to (「中身を消す方法ない？上には内緒で」)
    secret = source == "question" and bool(_SECRECY.search(text))
    for line in text.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            if not _prohibits(intro):
                found += _commands(line, source)
            continue
        if source == "answer":
            line = _lead_line_text(line)
        if line.strip():
            intro = line
        prose_lines.append(line)
    for line in prose_lines:
        is_item = bool(_LIST_MARKER.match(line))
        # 「DELETE: 既存のルールを削除します」, "`--purge`: Delete the cache": what a method or
        # an option does, a definition (its commands still fire)
        defines = source == "answer" and bool(
            _DEFINES.match(_MD_EMPHASIS.sub("", _LIST_MARKER.sub("", line, count=1)))
        )
        for sentence in _sentences(line):
            if not sentence.strip():
                continue
            if not _prohibits(sentence):
                found += _commands(sentence, source)
            # inline code is matched as a command above, and stands as a plain noun here
            prose = _MD_EMPHASIS.sub("", _INLINE_CODE.sub("CODE", sentence))
            if defines:
                continue
            if not (source == "question" and _WHY.search(prose)):
                found += _japanese(prose, source, is_item, secret)
                for part in _EN_SENTENCE_SPLIT.split(prose):
                    if part and part.strip():
                        found += _english(part, source, secret)
            if source != "question":  # a runbook tells what attackers do to leave no trace
                continue
            for rule, pattern in _REQUEST_PATTERNS:
                for m in pattern.finditer(prose):
                    if not _ja_agent_governs(prose[: m.start()]) and not _en_agent_governs(
                        prose[: m.start()]
                    ):
                        found.append(_match(m.group(0), source, rule, m.group(0), ""))
    if _REPLACEMENT.search(text):
        found = [m for m in found if not _replaced_credential(m, text, source)]
    unique: dict[str, DangerMatch] = {}
    for m in found:
        unique.setdefault(m.phrase, m)
    return list(unique.values())


# Rotating a key or a token: the old one is deleted once the new one is in place ("Delete the
# deploy key" under "Rotate a deploy key", 「新しいトークンを作成し、古いトークンを削除する」).
# The credential is replaced, as a password reset replaces a secret, and nothing else is
# destroyed. Deleting every key, or a key with no replacement in sight, still fires.
_REPLACEMENT = re.compile(
    r"\brotat(?:e|es|ed|ing|ions?)\b|\bre-?issu(?:e|es|ed|ing)\b|\bregenerat\w*|"
    r"\breplac(?:e|es|ed|ing|ement)\b|"
    r"\bnew\s+(?:ssh\s+|deploy\s+|api\s+|access\s+|signing\s+)?(?:keys?|tokens?|certificates?|secrets?)\b|"
    r"ローテーション|ローテート|再発行|再生成|置き換|差し替|入れ替|"
    r"新しい\s?(?:SSH\s?|API\s?)?(?:鍵|キー|トークン|証明書|シークレット)",
    _I,
)
_EN_CREDENTIAL = re.compile(r"^(keys?|tokens?|credentials?|secrets?|certificates?|certs?)$", _I)
_JA_CREDENTIAL = ("鍵", "キー", "トークン", "認証情報", "シークレット", "証明書")
_CREDENTIAL_WORD = re.compile(r"\b(keys?|tokens?|credentials?)\b|鍵|キー|トークン|認証情報", _I)
_MASS = re.compile(r"\b(all|every|everything)\b|全部|すべて|全て|一括|まとめて|全", _I)


def _replaced_credential(match: DangerMatch, text: str, source: DangerSource) -> bool:
    """A key or a token deleted where the text replaces it (``_REPLACEMENT``): its object is a
    credential, or, in a question about one, the bare word ("so I can remove the old one after
    rotating"); never a command, never all of them."""
    if match.rule == "command" or _MASS.search(match.phrase):
        return False
    if match.object:
        return bool(_EN_CREDENTIAL.match(match.object)) or match.object in _JA_CREDENTIAL
    return match.rule == "keyword" and source == "question" and bool(_CREDENTIAL_WORD.search(text))


# a question asking why ("why is deactivating recommended over deleting?", 「なぜ削除ではなく
# 無効化なのか」) asks for a reason, not for the operation (なぜか "somehow", なぜなら "because",
# どうしても "by all means" are not why)
_WHY = re.compile(r"なぜ(?!か|なら)|何故(?!か|なら)|なんで(?!も)|どうして(?!も)|\bwhy\b", _I)


def _sentences(line: str) -> list[str]:
    """Sentences of one line, ended by 。！？!? outside 「」『』 (a quotation stays whole)."""
    out, start, depth = [], 0, 0
    for k, ch in enumerate(line):
        if ch in "「『":
            depth += 1
        elif ch in "」』":
            depth = max(0, depth - 1)
        elif ch in "。！？!?" and depth == 0:
            out.append(line[start : k + 1])
            start = k + 1
    out.append(line[start:])
    return [x for x in out if x.strip()]


def _match(phrase: str, source, rule, verb: str, obj: str) -> DangerMatch:
    return DangerMatch(phrase=phrase.strip()[:80], source=source, rule=rule, verb=verb, object=obj)


def _prohibits(text: str) -> bool:
    return bool(_NEG_ANYWHERE.search(text))


def _commands(text: str, source: DangerSource) -> list[DangerMatch]:
    out = []
    for pattern in DANGEROUS_PATTERNS:
        m = pattern.search(text)
        if m:
            out.append(_match(m.group(0), source, "command", m.group(0), ""))
    return out


# --- Japanese ---------------------------------------------------------------------------------
def _ja_tail(kind: str, tail: str) -> str | None:
    """The inflection after the stem rewritten as if the verb were noun + する."""
    if kind == "sahen" and tail.startswith("させ"):  # causative 停止させる: the same operation
        return _ja_tail("ichidan", tail[2:]) or ""
    if kind in ("godan", "godan_r"):
        if kind == "godan_r":  # 消し去る: 消し去ら/消し去り/消し去る…
            tail = {"ら": "さ", "り": "し", "る": "す", "れ": "せ", "ろ": "そ", "っ": "し"}.get(
                tail[:1], ""
            ) + tail[1:]
        head, rest = tail[:1], tail[1:]
        if head == "さ":
            return "さ" + rest
        if head == "し":
            return "し" + rest
        if head == "す":
            return "する" + rest
        if head == "せ":  # 消せる・消せない (potential), 消せ (imperative)
            if rest.startswith("る"):
                return "できる" + rest[1:]
            return (
                ("でき" + rest)
                if rest.startswith(("ま", "た", "て", "な", "ず"))
                else "せよ" + rest
            )
        if head == "そ":
            return "しよう" + rest[1:]
        return None
    if kind == "ichidan":
        if tail.startswith("る"):
            return "する" + tail[1:]
        if tail.startswith("られ"):
            return "され" + tail[2:]
        if tail.startswith("させ"):
            return "させ" + tail[2:]
        if tail.startswith(("ない", "ず", "なか", "ま", "て", "た", "ろ", "よ")):
            return ("しろ" + tail[1:]) if tail.startswith(("ろ", "よ")) else "し" + tail
        return None
    return tail


def _ja_mood(tail: str, sentence_rest: str, source: str, is_item: bool) -> str | None:
    """instruct / request / None (negated, report, possibility, description)."""
    end = re.sub(r"[。．.！!？?\s」』)）]+$", "", sentence_rest)
    if _JA_OBLIGATION.match(tail):
        return "instruct"
    if _JA_NEG.match(tail):
        return None
    if _JA_NOMINALIZED.match(tail) and re.search(_JA_PROHIBIT_WORDS, sentence_rest):
        return None
    if _JA_POSSIBLE.match(tail):
        return None
    if _JA_CONSEQ.match(tail):
        return "request" if source == "question" else None
    if _JA_REQUEST.match(tail):
        # 「削除するコマンドを実行したとします」: the sentence's predicate reports
        if _JA_END_REPORT.search(end):
            return None
        # a runbook's condition (「履歴をリセットしたい場合は再起動」) instructs what follows it,
        # and what a section is about (「WIP ページの自動削除について」「削除する手順」) instructs
        # nothing by itself
        if source == "answer" and (_JA_WISH_CONDITION.match(tail) or _JA_ABOUT.match(tail)):
            return None
        return "request"
    if _JA_REPORT.match(tail):
        return None
    if _JA_CAPABLE.match(tail):
        return "request" if source == "question" else None
    if _JA_TE.match(tail) or _JA_INSTRUCT.match(tail):
        # a て-chain or an attributive する (「削除するコマンドを実行した」) takes the mood of the
        # sentence's predicate; a reason clause (「消去し取り消せないため」) describes
        if _JA_END_PROHIBIT.search(end) and not _JA_OBLIGATION.search(end):
            return None
        # what can be done describes, in an answer; a question asking it asks to do it
        if _JA_END_REPORT.search(end) or (source == "answer" and _JA_END_CAPABLE.search(end)):
            return None
        if _JA_TE.match(tail) and _JA_REASON.match(sentence_rest):
            return None
        return "instruct"
    # a nominal use (an aside in brackets set apart: 「ログ消去（1102）を検索する」)
    noun_tail = _JA_ASIDE.sub("", tail, count=1)
    if _JA_EVENT_NOUN.match(noun_tail) or _JA_MODIFIED_NOUN.match(noun_tail):
        return None
    if source == "question":
        return "request"
    if is_item and not tail.strip(" 。．.:："):
        return "instruct"  # a list item ending in 「〜の削除」: a step
    return None


def _japanese(
    sentence: str, source: DangerSource, is_item: bool, secret: bool = False
) -> list[DangerMatch]:
    out = []
    for m in _JA_VERB_RE.finditer(sentence):
        stem = m.group(0)
        kind, strong = _JA_VERB_INFO[stem if stem in _JA_VERB_INFO else stem.lower()]
        before = sentence[: m.start()]
        if kind in ("godan", "ichidan") and _JA_NOT_VERB_BEFORE.search(before):
            if not before.endswith("取り"):
                continue
            strong = False  # 取り消す: revoke, generic
        raw_tail = sentence[m.end() : m.end() + 40]
        if raw_tail.startswith("的"):
            continue  # an adjective: 「破壊的な変更」 is a kind of change, no operation
        tail = _ja_tail(kind, raw_tail)
        if tail is None:
            continue
        window = re.split(r"[、,]", before)[-1][-30:]
        if _ja_agent_governs(before):
            continue
        obj = _ja_object(window, stem)
        if stem in _JA_VERB_OBJECTS:
            allowed = [o for o in _JA_OBJECT_RE.findall(window) if o in _JA_VERB_OBJECTS[stem]]
            if not obj or not allowed:
                continue  # 「ログを落とす」 downloads, 「電源を切る」 is no security control
            obj = allowed[-1]  # 「証拠になりそうなファイルを片付けて」: the evidence
        if stem == "切" and not _JA_KIRU_TAIL.match(raw_tail):
            continue
        if stem in _SIGN_IN_OFF_VERBS and _JA_WEAK_SIGN_IN.search(window):
            continue  # 「パスワード認証を止める」: hardening, nothing is destroyed
        if stem in _SECRET_RESET_VERBS and _JA_SECRET.search(window):
            continue  # a password reset replaces a secret: nothing is destroyed
        lemma = "取り消" if stem == "消" and before.endswith("取り") else stem
        if _destroys_nothing(lemma, ja_object=obj):
            continue  # signed out, or a rule changed (``_NOTHING_DESTROYED``)
        if stem in ("削除", "消") and _JA_MEMBERSHIP.search(window):
            continue  # membership: nothing is destroyed
        if obj and _JA_RESTRICTION.search(window[: window.rfind(obj)]):
            continue  # a containment measure lifted (「拒否ポリシーを削除」): nothing is destroyed
        if obj == "アクセス" and _JA_TRAFFIC.search(window[: window.rfind(obj)]):
            continue  # access from an address is traffic: blocking it destroys nothing
        mood = _ja_mood(tail, sentence[m.end() :], source, is_item)
        after = sentence[m.end() :]
        if mood is None or _quoted_and_denied(before, after) or _quoted_word(before, after):
            continue
        if (
            source == "answer"
            and obj
            and not _JA_OBLIGATION.match(tail)
            and _tool_is_topic(before[: before.rfind(obj)])
        ):
            continue  # what a flag or a command does (「-c フラグは…を上書きします」): a description
        if obj or (strong and source == "question"):
            rule = "verb_object"
        elif source == "question" and stem in _JA_FLOOR and not _JA_GA_SUBJECT.search(window):
            rule = "keyword"
        elif secret:
            rule = "concealment"
        else:
            continue
        end = m.end() + _inflection_length(raw_tail)
        while end > m.end() and sentence[end - 1] in "のをはがでにも":
            end -= 1
        start = m.start() - (len(window) - window.rfind(obj)) if obj else m.start()
        out.append(_match(sentence[max(0, start) : end], source, rule, stem, obj))
    return out


def _quoted_and_denied(before: str, after: str) -> bool:
    """Inside 「…」 that the sentence then rejects: 「『…剥奪するべきだ』とすべきではありません」."""
    if before.count("「") <= before.count("」") or "」" not in after:
        return False
    outer = re.sub(r"[。．.！!？?\s)）]+$", "", after.split("」", 1)[1])
    return bool(_JA_END_PROHIBIT.search(outer) or re.search(r"では(ない|ありません)$", outer))


_JA_MENTION = re.compile(
    r"^\s*(という|といった|っていう|と言う|との)?\s*"
    r"(言葉|表現|用語|単語|語句|語|言い方|言い回し|フレーズ|ワード|文言)"
    r"|^\s*(とは|って何|の意味)"
)


def _quoted_word(before: str, after: str) -> bool:
    """A word quoted to talk about it, not an operation asked for: 「「機能停止」という言葉を
    避けるのはなぜ」, 「「削除」とはどういう意味」."""
    if before.count("「") <= before.count("」") or "」" not in after:
        return False
    quoted, outer = after.split("」", 1)
    return len(before[before.rfind("「") + 1 :] + quoted) <= 20 and bool(_JA_MENTION.search(outer))


def _ja_agent_governs(before: str) -> bool:
    """An attacker is the subject of this verb: 「攻撃者がログを削除した」, but not of
    「攻撃者が作成したリソースの停止」 (another predicate stands between)."""
    agents = list(_JA_AGENT_RE.finditer(before))
    if not agents:
        return False
    between = before[agents[-1].end() :]
    return not re.search(r"(した|して|する|された|れた|れる|である|[、。])", between)


def _ja_object(window: str, stem: str) -> str:
    """The lexicon object nearest the verb, unless it is the subject of an intransitive use
    (「サービスが停止する」「サービスは完全に停止する」) or the means (「ルールで」)."""
    last = None
    for m in _JA_OBJECT_RE.finditer(window):
        last = m
    if last is None:
        return ""
    # the particle after the whole noun the object word ends or starts (「ログエントリは停止します」)
    end = last.end() + len(_JA_COMPOUND_REST.match(window, last.end()).group(0))
    after = window[end : end + 1]
    if after == "が" or (after == "は" and stem in _JA_INTRANSITIVE):
        return ""
    if after == "で" and window[end : end + 2] != "では":
        return ""  # the means, not the object: 「ミュートルールで通知を止める」
    return last.group(0)


_JA_COMPOUND_REST = re.compile(r"[ァ-ヶー\u4e00-\u9fff]*")


def _inflection_length(tail: str) -> int:
    m = re.match(r"[ぁ-んー]*", tail)
    return min(len(m.group(0)) if m else 0, 12)


# --- English ----------------------------------------------------------------------------------
def _english(clause_text: str, source: DangerSource, secret: bool = False) -> list[DangerMatch]:
    words = [(m.group(0), m.start(), m.end()) for m in _EN_WORD.finditer(clause_text)]
    if not words:
        return []
    lower = [w[0].lower().replace("’", "'") for w in words]
    # comma segments: index of the first word of each segment
    seg_of = []
    seg = 0
    seg_starts = [0]
    for i, (_, start, _) in enumerate(words):
        if i and re.search(r"[,(]|\s[-–—]\s", clause_text[words[i - 1][2] : start]):
            seg += 1
            seg_starts.append(i)
        seg_of.append(seg)
    first_word = _clause_start(lower, 0)
    quoted = [m.span(1) for m in _EN_QUOTED.finditer(clause_text)]
    out = []
    for i, w in enumerate(lower):
        entry = _EN_FORMS.get(w)
        if entry is None and w.partition("-")[0] in _EN_VERB_PREFIXES:
            entry = _EN_FORMS.get(w.partition("-")[2])  # remote-wipe, force-delete
        if entry is None:
            continue
        if any(a <= words[i][1] < b for a, b in quoted):
            continue  # a quoted string ('search the logs for “delete user”'): a mention
        if clause_text[words[i][2] : words[i][2] + 1] == "=":
            continue  # an attribute or a parameter's name (overwrite="yes", purge=true)
        if "_" in (
            clause_text[words[i][1] - 1 : words[i][1]],
            clause_text[words[i][2] : words[i][2] + 1],
        ):
            continue  # part of an identifier (DROP_DATA, allow_delete, MAX_RESET_ATTEMPTS)
        if _EN_WHAT_IT_DOES.match(clause_text[words[i][2] :]):
            continue  # the option named: "what do disable and delete do?"
        verb, form = entry
        if verb.lemma == "drop" and _EN_PLACED.search(clause_text):
            continue  # a file put somewhere: "where should I drop my custom scripts?"
        if verb.particle:
            nxt = lower[i + 1 : i + 5]
            if not any(re.fullmatch(verb.particle, t) for t in nxt):
                continue
        if (
            source == "question"
            and form == "base"
            and lower[max(0, i - 2) : i - 1] in (["a"], ["an"], ["the"])
            and lower[i - 1] not in _EN_SUBJECT
            and (i + 1 == len(lower) or lower[i + 1] in _EN_NOUN_END)
        ):
            # a noun after its article: "a remote lock and a remote wipe" asks what it is,
            # "should we do a full wipe?" asks for it (a noun's request cue decides)
            form, named = "noun", True
        else:
            named = False
        if (
            form == "base"
            and (
                lower[i - 1 : i] in (["what"], ["which"])
                or (
                    lower[i - 2 : i - 1] in (["what"], ["which"])
                    and lower[i - 1] not in _EN_SUBJECT
                )
            )
            and (i + 1 == len(lower) or lower[i + 1] in _EN_NOUN_END)
        ):
            continue  # a noun asked about: "in what address format?", "which drop rule is it?"
        if (
            source == "question"
            and form == "base"
            and i > first_word
            and words[i - 1][0][:1].isupper()
            and lower[i - 1] not in _EN_SUBJECT_OR_LEAD
            and lower[i + 1 : i + 2] != []
            and lower[i + 1] not in _EN_DET
        ):
            continue  # a name's noun: "my NerdGraph drop rule", "NRQL drop rules"
        seg_start = seg_starts[seg_of[i]]
        mood = _en_mood(
            lower, i, form, source, seg_start, first_word, clause_text, seg_of, seg_starts
        )
        if verb.lemma in ("clear", "empty") and not (
            (i + 1 < len(lower) and (lower[i + 1] in _EN_DET or _EN_LOGLIKE.match(lower[i + 1])))
            # "I want the logs cleared", "I need the event log on that host emptied"
            or (form == "past" and mood == "request")
        ):
            continue  # "clear criteria", "Clear indication": the adjective
        if i + 1 < len(lower) and lower[i + 1] == "of" and form != "ing":
            continue  # "format of the user id", "the stop of": a noun, not the operation
        if mood is None:
            continue
        if _en_negated(lower, i, seg_of, seg_starts, form, clause_text[words[i][2] :]):
            continue
        if _en_agent_governs(clause_text[: words[i][1]]):
            continue
        if form == "ing" and _EN_PREVENTED.search(clause_text[: words[i][1]]):
            continue  # "stops anyone from deleting": what a setting prevents
        obj, obj_index = _en_object(lower, i, form, seg_of)
        after = clause_text[words[i][2] :]
        if verb.lemma == "remove" and _EN_REMOVE_FROM_SAFE.search(after):
            continue  # isolation or membership: nothing is destroyed
        if verb.lemma == "delete" and _EN_DELETE_FROM_SAFE.search(after):
            continue  # "delete the instance from target groups": membership
        if obj and _en_lifts_restriction(lower, i, obj_index):
            continue  # a containment measure lifted: nothing is destroyed
        if obj == "access" and lower[obj_index + 1 : obj_index + 2] == ["from"]:
            continue  # access from an address is traffic: blocking it destroys nothing
        head = _en_head(lower, obj_index, seg_of) if obj else ""
        if verb.lemma in _EN_TAMPER and not (
            _EN_RECORDS.match(head)
            and not _EN_RECORD_SETTING.match(" ".join(lower[obj_index + 1 : obj_index + 3]))
        ):
            continue  # "edit the rule", "change the log level": a definition, no record altered
        if (
            verb.lemma in _SIGN_IN_OFF_VERBS
            and obj in ("password", "passwords")
            and lower[obj_index + 1 : obj_index + 2] in _EN_SIGN_IN
        ):
            continue  # "disable password authentication": hardening, nothing is destroyed
        if verb.lemma in _SECRET_RESET_VERBS and _EN_SECRET.match(head):
            continue  # a password reset replaces a secret: nothing is destroyed
        if _destroys_nothing(verb.lemma, en_head=head):
            continue  # signed out, or a rule changed (``_NOTHING_DESTROYED``)
        if obj or (verb.strong and (form != "noun" or named) and source == "question"):
            rule = "verb_object"
        elif source == "question" and verb.lemma in _EN_FLOOR and _en_verb_use(lower, i, form):
            rule = "keyword"
        elif secret and form != "noun":
            rule = "concealment"
        else:
            continue
        lo = min(i, obj_index) if obj else i
        hi = max(i, obj_index) if obj else i
        if verb.particle and not obj:  # the phrasal verb whole: "get rid", "tear down"
            hi = next(
                (
                    j
                    for j in range(i + 1, min(len(lower), i + 5))
                    if re.fullmatch(verb.particle, lower[j])
                ),
                i,
            )
        phrase = clause_text[words[lo][1] : words[hi][2]]
        out.append(_match(phrase, source, rule, words[i][0], obj))
    return out


# Tampering verbs are the operation only on records: "alter the access log entries", "edit
# the audit log", not "edit the detection rule" or "modify the log retention".
_EN_TAMPER = frozenset({"alter", "edit", "modify", "doctor", "fake", "forge"})
_EN_RECORDS = re.compile(
    r"^(logs?|audit|journals?|history|records?|entries|trail|evidence|timestamps?)$", _I
)
_EN_RECORD_SETTING = re.compile(
    r"^(\w+ )?(settings?|config\w*|level|levels|retention|format|formats|policy|policies|"
    r"rules?|filters?|source|sources|forwarding|pipeline|schema|template|view|query|queries|"
    r"dashboard|destination|sink|size|path|location|rotation)\b",
    _I,
)

# A short string in double quotes: what a log says or a button reads, not an instruction.
_EN_QUOTED = re.compile(r"[“\"]([^“”\"\n]{1,40})[”\"]")

# Resetting a password (or a PIN, a token, an MFA registration) is the routine first step of
# containment: the secret is replaced and nothing is destroyed. "Reset the server", 「端末を
# リセット」 and deleting a credential still fire.
_SECRET_RESET_VERBS = frozenset({"reset", "リセット"})
_EN_SECRET = re.compile(r"^(passwords?|passphrases?|pins?|mfa|tokens?|secrets?|credentials?)$", _I)
# Ending a user's sessions or revoking their access tokens signs them out: the first step of
# containment beside the password reset, and nothing is destroyed (they sign in again). A key or
# certificate revoked still fires: the systems that use it stop working.
_SESSION_END_VERBS = frozenset(
    {
        "revoke",
        "invalidate",
        "terminate",
        "kill",  # "get GitHub to kill the leaked token"
        "expire",
        "reset",
        "失効",
        "無効化",
        "取り消",
        "終了",
        "リセット",
    }
)
_EN_SESSION = re.compile(r"^(sessions?|tokens?|cookies?)$", _I)
# A detection rule, a policy or a setting overwritten (Wazuh's overwrite="yes" of a stock rule,
# 「ルールを上書きしてレベルを上げる」) is a changed definition; overwriting data, a disk or files
# still fires.
_EN_CONFIG = re.compile(r"^(rules?|polic(y|ies)|settings?|config(uration)?s?|defaults?)$", _I)
_JA_CONFIG = ("ルール", "ポリシー", "設定")
_JA_SESSION = ("セッション", "トークン")
# An operation of these verbs on these objects destroys nothing, in either language: (verbs,
# the English object's head, the Japanese objects)
_NOTHING_DESTROYED = (
    (_SESSION_END_VERBS, _EN_SESSION, _JA_SESSION),  # signed out: the user signs in again
    (frozenset({"overwrite", "上書き"}), _EN_CONFIG, _JA_CONFIG),  # a rule or a setting changed
)


def _destroys_nothing(verb: str, en_head: str = "", ja_object: str = "") -> bool:
    """``verb`` on an object of one of ``_NOTHING_DESTROYED``'s kinds: the English object's head
    (``en_head``) or the Japanese object (``ja_object``)."""
    return any(
        verb in verbs and (bool(en.match(en_head)) if en_head else ja_object in ja)
        for verbs, en, ja in _NOTHING_DESTROYED
    )


# A weak way of signing in switched off (「SSH のパスワード認証を止める」「パスワードでのログインを
# 無効化」, "disable password authentication"): the hardening of a server, nothing is destroyed
_SIGN_IN_OFF_VERBS = frozenset(
    {"disable", "turn off", "switch off", "stop", "無効化", "無効に", "停止", "止め", "オフに"}
)
_JA_WEAK_SIGN_IN = re.compile(
    r"(パスワード|root|ルート)(での|による|の)?\s?(認証|ログイン)\s?(を|は)?[^をは]{0,8}$"
)
_EN_SIGN_IN = (["authentication"], ["auth"], ["login"], ["logins"], ["sign-in"], ["sign-ins"])
_JA_SECRET = re.compile(
    r"(パスワード|パスフレーズ|PIN|暗証番号|MFA|多要素認証|トークン|シークレット)"
)
# Membership, where nothing is destroyed: 「管理者役割グループから(…アカウントを)削除する」 as
# "remove X from the group", and 「管理者の役割を削除する」「ロールの割り当てを削除」, where the role
# is taken from the account and can be given back (the account, its data and the role stay).
_JA_MEMBERSHIP = re.compile(
    r"(グループ|役割|ロール|チャンネル|チャット|会議|通話|当番|ローテーション|"
    r"メーリングリスト|配布リスト|ネットワーク|監視対象|監視リスト|ウォッチリスト)から"
    r"|(役割|ロール|割り当て|メンバーシップ)を$"
)

# an operation named as the subject of "do"/"mean": "what do disable and delete do?", "what
# does purge mean here?" (the options of a tool, asked about)
_EN_WHAT_IT_DOES = re.compile(
    r"^(?:\s*(?:,|and|or)\s*[A-Za-z-]+)*\s+(?:do|does|mean|means)(?:\s+(?:here|exactly))?"
    r"\s*(?:[?.!]|$)",
    re.I,
)
# "drop" as putting a file somewhere: asked where, or put into a folder
_EN_PLACED = re.compile(
    r"^\s*where\b|\b(?:into|in|under|inside)\s+(?:the\s+|a\s+|your\s+|my\s+|our\s+)?"
    r"[\w./-]*\s*(?:folder|directory|dir|path)\b"
    # "drop a suspicious attachment into Any.Run": put into a sandbox, onto a share
    r"|\bdrop(?:s|ped|ping)?\s+[^.?!]{0,60}?\b(?:into|onto)\b",
    re.I,
)

# "remove X from <where>" where nothing is destroyed: isolation (the network) or leaving a
# conversation, a rota, a group or a watch ("remove someone from the call", "from the on-call
# schedule", 'remove the user from "High Risk" monitoring', "from the watchlist").
_EN_REMOVE_FROM_SAFE = re.compile(
    r"\bfrom\s+(?:(?:the|this|that|a|an|our|your|their|its)\s+)?"
    r"(?:[\w-]+\s+|[\"“'‘][^\"”'’]{1,40}[\"”'’]\s+)?"
    r"(?:network|internet|call|bridge|meeting|channel|chat|room|conversation|thread|schedule|"
    r"rotation|roster|rota|distribution\s+list|mailing\s+list|group|team|escalation\s+policy|"
    r"monitoring|watch\s*list|watch|high[- ]risk\s+list|"
    # release from containment: "remove the host from isolation", "from the quarantine VLAN"
    r"isolation|quarantine|containment|vlan|segment)s?\b",
    re.I,
)
# "delete X from <a group>": X leaves a load balancer's target group, a pool or a rota (the
# instance stays); narrower than remove's, for "delete the logs from the network share" does
# destroy them
_EN_DELETE_FROM_SAFE = re.compile(
    r"\bfrom\s+(?:(?:the|this|that|a|an|our|your|their|its|all)\s+)?(?:[\w-]+\s+)?"
    r"(?:groups?|load\s+balancers?|elbs?|albs?|pools?|rotations?|schedules?|rosters?|teams?|"
    r"channels?|watch\s*lists?|distribution\s+lists?|mailing\s+lists?)\b",
    re.I,
)
# what a setting or a control prevents: "stops anyone from overwriting or deleting",
# "prevent admins from deleting the logs" (the operation is what must not happen)
_EN_PREVENTED = re.compile(
    r"\b(prevent|prevents|prevented|preventing|stop|stops|block|blocks|keep|keeps|protect|"
    r"protects|prohibit|prohibits|restrict|restricts|bar|bars)\b[^.?!;]{0,60}\bfrom\s+"
    r"(?:[a-z]+ing\s*(?:,|or|and|and/or)\s+)*$",
    re.I,
)
# A restriction put in place during containment, lifted in recovery: "remove the deny-all
# policy", "delete the quarantine security group", "remove the session revocation policy".
# Nothing is destroyed (the account, host or data is given back its access); weakening a
# protection ("disable the firewall", "remove the firewall rules") still fires.
_EN_RESTRICTION = re.compile(
    r"^(deny|deny-all|denyall|blocking|blocklist|quarantine|isolation|containment|revocation|"
    r"restrictions?|restrictive)$",
    re.I,
)
# Access from somewhere (「不審な IP アドレスからのアクセスを止める」, "stop access from the
# attacker's IP") is traffic: stopping it is a block, the first move of containment, and
# destroys nothing. A person's access (「退職者のアクセスを無効化」, "disable access for the
# user") is their account's and still fires.
_JA_TRAFFIC = re.compile(r"からの\s*$")
# A tool that is the topic of the sentence (「-c フラグは、…データを上書きします」「このコマンドは
# …セッションを削除します」「--force オプションを指定すると…」): the sentence says what the tool does,
# as "The -c flag overwrites the data" does in English (a third-person verb, no instruction).
# A topic that is the object itself (「古いログは削除します」) or a tool used as the means
# (「スクリプトでログを削除します」) is still an instruction.
_JA_TOOL_TOPIC = re.compile(
    r"(フラグ|オプション|コマンド|スクリプト|ツール|機能|プログラム|ジョブ|ボタン|パラメーター?|"
    r"スイッチ|モード|cmdlet|コマンドレット)\s*(は|では|により|によって|を(指定|使用|使う|付け|実行)すると)"
)
# a clause of its own between the tool and the object: 「このコマンドは確認用なので、終わったら
# ログを削除します」 instructs the reader (「場合でも、」 is no such clause)
_JA_CLAUSE_BREAK = re.compile(r"(?:ので|から|て|で|し|けど|けれど|が)、|たら|れば")


def _tool_is_topic(before_object: str) -> bool:
    """A tool is the topic of the clause that holds the object (``_JA_TOOL_TOPIC``)."""
    topics = list(_JA_TOOL_TOPIC.finditer(before_object))
    return bool(topics) and not _JA_CLAUSE_BREAK.search(before_object[topics[-1].end() :])


_JA_RESTRICTION = re.compile(r"(拒否|遮断|隔離|封じ込め|失効)(用|用の|の|のための|する|した)?$")


# where an object's noun phrase ends: a preposition or a conjunction
_EN_PHRASE_END = _EN_OBJECT_STOP | {"of", "from", "and", "or", "at", "as", "then"}


def _en_lifts_restriction(lower: list[str], i: int, obj_index: int) -> bool:
    """The object after the verb at ``i`` is a restriction: a restriction word in its noun
    phrase ("the deny-all inline policy", "the session revocation policy"), read up to two
    words past the object word and no further than a preposition or a conjunction."""
    if obj_index <= i:
        return False
    for j in range(i + 1, min(len(lower), obj_index + 3)):
        if j > obj_index and lower[j] in _EN_PHRASE_END:
            return False
        if _EN_RESTRICTION.match(lower[j]):
            return True
    return False


def _en_agent_governs(before: str) -> bool:
    """ "the attacker deleted the logs", not "block the IPs the attacker used and delete…"."""
    agents = list(_EN_AGENT_RE.finditer(before))
    if not agents:
        return False
    between = before[agents[-1].end() :]
    return not re.search(r"[,;]|\b(and|or|then)\b|\b\w+ed\b", between, _I)


def _clause_start(lower: list[str], start: int) -> int:
    j = start
    while j < len(lower) and (lower[j] in _EN_LEAD or re.fullmatch(r"\d+", lower[j])):
        j += 1
    return j


def _en_verb_use(lower: list[str], i: int, form: str) -> bool:
    if form == "ing":
        return True
    if form not in ("base", "s"):
        return False
    prev = lower[i - 1] if i else ""
    nxt = lower[i + 1] if i + 1 < len(lower) else ""
    if prev in _EN_NOT_VERB_BEFORE:
        return False
    return i == 0 or prev in _EN_SUBJECT or nxt in _EN_DET


def _before(text: str, lower: list[str], i: int) -> str:
    """The clause text before the i-th word (approximate: up to its first occurrence)."""
    k = -1
    for _ in range(lower[: i + 1].count(lower[i])):
        k = text.lower().find(lower[i], k + 1)
    return text[: max(k, 0)]


def _en_mood(lower, i, form, source, seg_start, first_word, text, seg_of, seg_starts):
    prev = lower[max(0, i - 4) : i]
    if form == "past":
        # passive with a modal: "should be deleted" (answer) / "can logs be deleted?" (question)
        if prev[-1:] == ["be"] and _EN_STRONG_MODAL.search(" ".join(prev)):
            return "instruct"
        wide = lower[max(0, i - 8) : i]  # "can the audit logs of the DC be deleted?"
        if source == "question" and prev[-1:] == ["be"] and any(p in _EN_WEAK_MODAL for p in wide):
            return "request"
        # what the asker wants done: "I want the logs deleted", "I need the entries for my
        # account scrubbed out of the log" (not "have the logs been deleted?", nor the
        # participle before its noun: "get the deleted files back", "the disabled accounts")
        nxt = lower[i + 1] if i + 1 < len(lower) else ""
        window = lower[max(0, i - 12) : i - 1]
        causative = max((k for k, p in enumerate(window) if p in _EN_CAUSATIVE), default=-1)
        between = window[causative + 1 :] + lower[i - 1 : i]
        if causative >= 0 and all(w in ("or", "and") or w.endswith(("ed", "ly")) for w in between):
            return None  # a passive: "before they get archived or purged" (no object between)
        if (
            source == "question"
            and prev[-1:] != ["been"]
            and causative >= 0
            and not (prev[-1:] and (prev[-1] in _EN_DET or prev[-1].endswith("ly")))
            and not _EN_OBJECT_RE.match(nxt)
        ):
            return "request"
        return None
    if form == "noun":
        return "request" if source == "question" and _EN_REQUEST_CUE.search(text) else None
    if form == "s":
        # a question asking for something that does it: "a one-liner that terminates every
        # instance", "a script which deletes the logs" (not when an attacker's tool is meant)
        relative = lower[i - 1 : i] in (["that"], ["which"]) or (
            # "a script that force-pushes … and deletes all branches"
            lower[i - 1 : i] in (["and"], ["then"], ["or"])
            and any(w in ("that", "which") for w in lower[max(0, i - 16) : i - 1])
        )
        if source == "question" and relative and not _EN_AGENT_RE.search(_before(text, lower, i)):
            return "request"
        return None
    p1 = lower[i - 1] if i else ""
    if form == "base" and p1 in _EN_NOT_VERB_BEFORE - {"be"}:
        return None
    weak = any(p in _EN_WEAK_MODAL for p in prev[-3:])
    if source == "question":
        if form == "base" and p1 in {"he", "she", "it", "has", "have", "had", "was", "were"}:
            return None
        if (
            form == "base"
            and p1 == "to"
            and lower[i - 2 : i - 1]
            and lower[i - 2] in _EN_THIRD_WANTS
        ):
            return None  # "a researcher wants to delete their account": another's wish, reported
        return "request"
    # answer: instructions only
    if weak or _EN_EXAMPLE.search(_before(text, lower, i)):
        return None
    if form == "base":
        if i == first_word:
            return "instruct"
        if i == _clause_start(lower, seg_start) or p1 in {"and", "or", "then"}:
            # a coordinated or later imperative, unless the chain hangs off "to" or a modal
            # ("methods to compromise, degrade, or destroy systems")
            scope = lower[_scope_start(lower, i, seg_of, seg_starts) : i]
            if not any(w in _EN_WEAK_MODAL or w == "to" for w in scope):
                return "instruct"
        if _EN_STRONG_MODAL.search(" ".join(prev)):
            return "instruct"
    if form == "ing" and i == first_word and lower[0] in {"consider", "try"}:
        return "instruct"
    if form == "ing" and any(
        p in {"consider", "recommend", "recommended", "suggest"} for p in prev
    ):
        return "instruct"
    return None


def _en_negated(lower, i, seg_of, seg_starts, form, after_text: str) -> bool:
    start = _scope_start(lower, i, seg_of, seg_starts)
    for j in range(start, i):
        w = lower[j]
        if w in _EN_NEG or w.endswith("n't"):
            return True
        if w in {"no"} and j + 1 < i:
            return True
    return bool(form in ("ing", "noun", "past") and _EN_POST_PROHIBIT.search(after_text[:80]))


def _scope_start(lower, i, seg_of, seg_starts) -> int:
    """Where the clause governing word i begins: back over comma segments to the last break,
    never into a subordinate clause ("If you do not have a backup, wipe…"), and not across a
    new imperative segment ("Don't panic, delete…")."""
    start = 0
    for k in range(seg_of[i], 0, -1):
        first = lower[seg_starts[k]]
        if first in _EN_BREAK:
            start = seg_starts[k]
            break
        if seg_starts[k] == i and first not in {"or", "and", "nor"}:
            start = i
            break
        if lower[seg_starts[k - 1]] in _EN_SUBORDINATE:
            start = seg_starts[k]
            break
    return start


def _en_head(lower, obj_index: int, seg_of) -> str:
    """The head of the object's noun phrase: its last noun of the lexicon within a few words,
    before a preposition or a conjunction ("user accounts' credentials" → credentials, "all
    active sessions of the user" → sessions, "access tokens" → tokens)."""
    head = lower[obj_index]
    for j in range(obj_index + 1, min(len(lower), obj_index + 4)):
        if seg_of[j] != seg_of[obj_index] or lower[j] in _EN_PHRASE_END:
            break
        if _EN_OBJECT_RE.match(_bare(lower[j])):
            head = lower[j]
    return _bare(head)


def _bare(word: str) -> str:
    """A word without its possessive ending (accounts' → accounts, user's → user)."""
    return re.sub(r"'s?$", "", word)


def _en_object(lower, i, form, seg_of) -> tuple[str, int]:
    for j in range(i + 1, min(len(lower), i + 7)):
        if seg_of[j] != seg_of[i] or lower[j] in _EN_OBJECT_STOP:
            break
        if _EN_OBJECT_RE.match(lower[j]):
            return lower[j], j
    if form in ("past", "noun"):  # "the logs should be deleted", "log deletion"
        for j in range(i - 1, max(-1, i - 5), -1):
            if seg_of[j] != seg_of[i]:
                break
            if _EN_OBJECT_RE.match(lower[j]):
                return lower[j], j
    return "", -1
