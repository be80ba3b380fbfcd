"""A Japanese–English glossary of incident-response terms, for questions across languages.

A Japanese question over English runbooks (or the reverse) shares no keyword with them, so the
keyword index and the evidence grade see nothing but the multilingual vectors. Dictionary-based
query translation is the classic remedy in cross-language retrieval: the question's domain terms
found in this glossary are added, in the other language, to the keyword query, and the evidence
grade measures how many of them the passages contain.

The table is the vocabulary of security operations and incident response in general (NIST SP
800-61 phases, incident roles, on-call and communication, forensics, attacks and malware,
identity, network, cloud, vulnerability management), written for this project, not taken from any
runbook. Each line is ``english terms | japanese terms``; alternatives are separated by ``;``.
The first term of each side is the one added to a query; every term of a side is matched.
Matching is case-insensitive on NFKC-normalised text; English terms match whole words, plural
``s`` included; Japanese terms match as substrings, longest first.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from core.text.english import is_plain_word, same_stem_in
from core.text.loanwords import MIN_KEY, katakana_words, phonetic_key, vowels_agree

_TABLE = """
incident | インシデント
security incident | セキュリティインシデント
major incident | 重大インシデント;メジャーインシデント
incident response | インシデント対応;インシデントレスポンス
incident handling | インシデントハンドリング;インシデント処理
incident response team | インシデント対応チーム;CSIRT
incident response plan | インシデント対応計画
incident response policy | インシデント対応ポリシー
incident commander | インシデントコマンダー;インシデント指揮官;指揮官
incident manager | インシデントマネージャー;インシデント管理者
troubleshooting;troubleshoot | 切り分け;トラブルシューティング;障害切り分け
deputy | 副指揮官;デピュティ;代理
scribe | 書記;記録係;スクライブ
subject matter expert | 専門家;SME;対象分野の専門家
customer liaison | カスタマーリエゾン;顧客窓口;顧客担当
internal liaison | 社内リエゾン;社内窓口;内部リエゾン
liaison | リエゾン;連絡係;連絡窓口
role | 役割;ロール
responsibility | 責任;責務;役割分担
prerequisite | 前提条件;前提
training | トレーニング;訓練;研修
exercise | 演習
tabletop exercise | 机上演習
severity | 重大度;深刻度;重要度;シビアリティ
severity level | 重大度レベル;深刻度レベル
priority | 優先度;優先順位
prioritization | 優先順位付け;優先度付け;トリアージ
triage | トリアージ;一次切り分け
escalation | エスカレーション;上位者への報告
escalate | エスカレーションする;エスカレート
on-call | オンコール;当番;待機
on-call schedule | オンコールスケジュール;当番表
handoff | 引き継ぎ;ハンドオフ
shift | シフト;交代
alert | アラート;警報;警告
alerting | アラート通知;アラート発報
notification | 通知;連絡
notify | 通知する;連絡する
inform | 知らせる;伝える
after hours;overnight;night | 夜間;時間外;営業時間外
weekend;holiday | 週末;休日;祝日
page | 呼び出し;ページング
paging | ページング;呼び出し
acknowledge | 確認応答;了解;アクノレッジ
status update | ステータス更新;状況報告;進捗報告
status page | ステータスページ
maintenance window | メンテナンスウィンドウ;メンテナンスの時間帯;メンテナンス時間帯;メンテナンス枠
status | 状況;ステータス
first report;initial report | 初報;第一報;第1報
certainty;confidence | 確度;確からしさ;確信度
summary | 概要;要約;サマリー
example | 事例;具体例;記入例;例えば;サンプル
external assistance;outside help | 外部支援;外部の支援;外部の協力
communication | コミュニケーション;連絡;広報
external communication | 社外向けコミュニケーション;対外連絡;外部への連絡;対外発表
internal communication | 社内連絡;社内コミュニケーション
public | 公開;一般向け;公表
sign in;log in | サインイン;ログイン
suspend | サスペンド;一時停止;停止する
announce | 告知;発表;公表
announcement | 告知;発表;お知らせ
post | 投稿
how often | 頻度
declare | 宣言
declaration | 宣言
instruction | 指示
responsible | 責任;担当
everyone | 全員
department | 部署;部門
engineering | エンジニアリング;技術部門
customer | 顧客;お客様;カスタマー
stakeholder | ステークホルダー;関係者;利害関係者
executive | 経営層;経営陣;役員
management | 経営者;管理職;マネジメント
leadership | リーダーシップ;経営陣;指導層
legal | 法務;法律
law enforcement | 法執行機関;警察
media | メディア;報道
press release | プレスリリース;報道発表
regulator | 規制当局;監督官庁
report | 報告;レポート;報告書
reporting | 報告;届出
approval | 承認;許可
approve | 承認する
decision | 判断;意思決定;決定
call | 電話会議;コール;通話
conference call | 電話会議;カンファレンスコール
bridge | ブリッジ;会議用回線
war room | 作戦室;ウォールーム;対策本部
chat | チャット
chat channel | チャットチャンネル;チャンネル
meeting | 会議;ミーティング
timeline | タイムライン;時系列;経緯
postmortem | ポストモーテム;事後レビュー;事後検証
post-mortem | ポストモーテム
post-incident | 事後;インシデント後
post-incident review;after-action review | 事後レビュー;事後検証;振り返り会
review | レビュー;見直し
lessons learned | 教訓;学んだこと;振り返り
root cause | 根本原因
root cause analysis | 根本原因分析;RCA
contributing factor | 寄与要因;要因
action item | アクションアイテム;対応項目;改善項目
follow-up | フォローアップ;追跡対応;事後対応
owner | オーナー;担当者;責任者
template | テンプレート;ひな形;雛形
checklist | チェックリスト
procedure | 手順;手続き
standard operating procedure;sop | 標準作業手順;SOP
runbook | ランブック;手順書
playbook | プレイブック;対応手順書
policy | ポリシー;方針;規程
guideline | ガイドライン;指針
preparation | 準備
prepare | 準備する;備える
detection | 検知;検出
detect | 検知する;検出する
analysis | 分析;解析
investigation | 調査
investigate | 調査する
containment | 封じ込め
contain | 封じ込める
containment strategy | 封じ込め戦略
eradication | 根絶;駆除
recovery | 復旧;回復;リカバリ
restore | 復元;リストア;復旧
mitigation | 緩和;軽減
mitigate | 緩和する;軽減する
remediation | 修復;是正
response | 対応;応答
handling | 対処;ハンドリング
impact | 影響
business impact | ビジネスへの影響;業務影響
scope | 範囲;スコープ
outage | 障害;停止;機能停止
downtime | ダウンタイム;停止時間
degradation | 性能低下;劣化
service disruption | サービス中断
availability | 可用性
crisis | 危機;クライシス
crisis management | 危機管理
business continuity | 事業継続;BCP
disaster recovery | 災害復旧;ディザスタリカバリ
classification | 分類;区分
category | カテゴリ;分類
precursor | 前兆;予兆
indicator | 兆候;痕跡;指標
indicator of compromise | 侵害指標;IOC;侵害の痕跡
sign | 兆候;サイン
source | 情報源;ソース
evidence | 証拠;証跡
evidence gathering | 証拠収集;証拠の収集
evidence retention | 証拠保全;証拠の保管;証拠の保持
retention | 保管;保持;保存期間
chain of custody | 証拠保全の記録;管理の連鎖;チェーン・オブ・カストディ
forensics | フォレンジック;フォレンジクス;鑑識
forensic | フォレンジック
disk image | ディスクイメージ
memory dump | メモリダンプ
snapshot | スナップショット
preserve | 保全する;保存する
preservation | 保全
artifact | アーティファクト;痕跡
documentation | 文書化;記録
document | 文書;ドキュメント;記録する
record | 記録
log | ログ;記録
audit log | 監査ログ
logging | ロギング;ログ記録;ログ取得
event log | イベントログ
clock synchronization | 時刻同期
time synchronization | 時刻同期
correlation;correlate | 相関;突き合わせ;紐付け;関連付け
baseline | ベースライン;基準
monitoring | 監視;モニタリング
dashboard | ダッシュボード
metric | メトリクス;指標
attack | 攻撃
attacker | 攻撃者
attack vector | 攻撃ベクトル;侵入経路;攻撃経路
threat | 脅威
threat actor | 脅威アクター;攻撃者
vulnerability | 脆弱性
exploit | エクスプロイト;悪用
patch | パッチ;修正プログラム
malware | マルウェア;不正プログラム
ransomware | ランサムウェア
virus | ウイルス
worm | ワーム
trojan | トロイの木馬
backdoor | バックドア
phishing | フィッシング
spam | スパム;迷惑メール
social engineering | ソーシャルエンジニアリング
denial of service | サービス妨害;DoS
distributed denial of service | 分散型サービス妨害;DDoS
data breach | 情報漏えい;データ侵害;情報漏洩
breach | 侵害;侵入
damage | 被害;損害
exfiltration | 持ち出し;流出;窃取
leak | 漏えい;漏洩;流出
unauthorized access | 不正アクセス
compromise | 侵害
compromised | 侵害された
intrusion | 侵入
privilege escalation | 権限昇格
lateral movement | 横展開;ラテラルムーブメント
brute force | 総当たり;ブルートフォース
credential | 認証情報;資格情報;クレデンシャル
password | パスワード
password reset | パスワードリセット
account | アカウント
user | ユーザー;利用者
administrator | 管理者
admin console;admin panel | 管理画面;管理コンソール
privilege | 権限;特権
access | アクセス
access control | アクセス制御
authentication | 認証
multi-factor authentication | 多要素認証;MFA
session | セッション
token | トークン
api key | APIキー
secret | シークレット;秘密情報
key | キー;暗号鍵
certificate | 証明書
encryption | 暗号化
host | ホスト
server | サーバー;サーバ
endpoint | エンドポイント;端末
device | デバイス;機器;端末
laptop | ノートPC;ノートパソコン
workstation | ワークステーション;端末
instance | インスタンス
virtual machine | 仮想マシン
network | ネットワーク
isolate | 隔離する;切り離す
isolation | 隔離;切り離し
quarantine | 隔離;検疫
firewall | ファイアウォール
proxy | プロキシ
dns | DNS;名前解決
domain | ドメイン
ip address | IPアドレス
traffic | 通信;トラフィック
connection | 接続;コネクション
source ip;source address | 送信元;接続元;送信元IP
port | ポート
flood | フラッド
packet | パケット
wireless | 無線
access point | アクセスポイント
vpn | VPN
email | メール;電子メール
attachment | 添付ファイル
mailbox | メールボックス
web server | ウェブサーバー;Webサーバー
website | ウェブサイト;Webサイト
database | データベース
backup | バックアップ
cloud | クラウド
third party | サードパーティ;第三者;外部業者
vendor | ベンダー;業者
provider | プロバイダー;事業者
service | サービス
outsourcing | 外部委託;アウトソーシング
contractor | 委託先;契約業者
collaborator;partner company | 協力会社;協力者;パートナー企業;外注先
developer | 開発者
work from home;working from home;remote work | 在宅勤務;自宅で作業;自宅作業;自宅;リモートワーク;テレワーク
public space;public place | 公共の場;公共スペース;カフェ;コワーキングスペース
share | 共有
channel | チャンネル
team | チーム
team model | チームモデル;組織モデル
coordination | 連携;調整
information sharing | 情報共有
sharing agreement | 共有協定;情報共有の取り決め
personnel | 要員;人員
staff | スタッフ;職員
employee | 従業員;社員
engineer | エンジニア;技術者
support | サポート;支援
help desk | ヘルプデスク
security operations center | セキュリティオペレーションセンター;SOC
siem | SIEM
edr | EDR
intrusion detection system | 侵入検知システム;IDS
antivirus | ウイルス対策;アンチウイルス
jump kit | ジャンプキット;初動キット
toolkit | ツールキット;道具一式
spare | 予備
removable media | リムーバブルメディア;外部記憶媒体
contact list | 連絡先リスト;連絡先一覧
contact | 連絡先;問い合わせ先
phone number | 電話番号
point of contact | 窓口;連絡窓口
risk | リスク
risk assessment | リスク評価;リスクアセスメント
false positive | 誤検知;誤報
false alarm | 誤報;誤警報
code name | コードネーム;案件名
naming | 命名;名付け
title | タイトル;件名;表題
schedule | スケジュール;予定
frequency | 頻度
interval | 間隔
volunteer | 志願者;ボランティア
expectation | 期待;期待事項
anti-pattern | アンチパターン;避けるべきこと
blameless | 非難しない;責めない;ブレームレス
respond | 対応する;対処する
handle | 対処;対応
check | 確認;チェック
confirm | 確認
verify | 検証;確かめる
recipient | 宛先;受信者
sender | 送信者;差出人
misdelivery | 誤送信;誤配送;誤送付
wrong recipient | 誤送信;宛先間違い
fax | ファクス;ファックス;FAX
printer | プリンター;プリンタ
multifunction printer | 複合機
usb stick | USBメモリ;USBメモリー
external storage | 外部記憶媒体;外部ストレージ
lost | 紛失した;なくした
loss | 紛失
stolen | 盗まれた;盗難にあった
theft | 盗難
remote wipe | リモートワイプ;遠隔消去
scan | スキャン
install | インストール
update | 更新;アップデート
configuration | 構成;設定
setting | 設定
suspicious | 不審;怪しい;疑わしい
suspicious activity | 不審な動き;不審な挙動;不審な活動;怪しい動き
power off;shut down;turn off | 電源を切;電源オフ;電源断;シャットダウン
billable | 請求可能;請求対象
infection | 感染
infected | 感染した
expire | 期限切れ;失効
expiry | 有効期限;期限切れ
renew | 更新する
login | ログイン
sign-in | サインイン
locked out | ロックアウト
unlock | ロック解除
block | ブロック;遮断
tampering | 改ざん;改竄
defacement | 改ざん;書き換え
impossible travel | 不可能な移動;あり得ない移動
location | 場所;位置;所在地
travel | 移動;出張
ransom | 身代金
ransom note | 脅迫文;身代金要求;ランサムノート
extortion | 恐喝;脅迫
payment | 支払い;支払;払う
data | データ
personal data | 個人データ;個人情報
sensitive data | 機密データ;機微情報
privacy | プライバシー
data subject | 本人;データ主体
legal hold | リーガルホールド;訴訟ホールド;訴訟保全
object | オブジェクト
bucket | バケット
version | バージョン;版数
versioning | バージョニング;バージョン管理
replication | レプリケーション;複製
repository | リポジトリ
storage | ストレージ;保存領域
permission | 権限;アクセス許可;許可
deny | 拒否
delete | 削除;消去
remove | 削除;除去;取り除く
deletion | 削除
disable | 無効化;無効にする
enable | 有効化;有効にする
default | 既定;デフォルト;既定値
recommendation | 推奨事項;推奨;お勧め
exemption;exclusion | 除外;適用除外
suppression;suppress | 抑制
query | クエリ;照会
request | 要求;リクエスト;申請
threshold | しきい値;閾値
limit | 上限;制限
rule | ルール;規則
edit | 編集
change;modify | 変更
create | 作成
fix | 修正
bug | バグ;不具合
track | 追跡
resolve;resolved | 解決
restrict;restriction | 制限;限定
filter | フィルター;絞り込み
tag | タグ
attribute | 属性
attempt | 試行
deactivate | 無効化;非アクティブ化
revoke | 失効;取り消し;剥奪
rotate | ローテーション;入れ替え
rotation | ローテーション
persistence | 永続化;永続化の仕組み;居座り
insider | 内部関係者;内部者
insider threat | 内部不正;内部脅威
unauthorized | 不正;無許可
severity assessment | 重大度の判定;重大度判定
regulation | 規制;法令;規則
regulatory | 規制上の;法令上の
"""


@dataclass(frozen=True, slots=True)
class Entry:
    english: tuple[str, ...]
    japanese: tuple[str, ...]


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


@lru_cache(maxsize=1)
def entries() -> tuple[Entry, ...]:
    out = []
    for line in _TABLE.strip().splitlines():
        en, _, ja = line.partition("|")
        english = tuple(t.strip() for t in en.split(";") if t.strip())
        japanese = tuple(t.strip() for t in ja.split(";") if t.strip())
        if english and japanese:
            out.append(Entry(english, japanese))
    return tuple(out)


@lru_cache(maxsize=1)
def _matchers() -> tuple[
    re.Pattern[str], dict[str, list[int]], re.Pattern[str], dict[str, list[int]]
]:
    ja_index: dict[str, list[int]] = {}
    en_index: dict[str, list[int]] = {}
    for n, e in enumerate(entries()):
        for term in e.japanese:
            ja_index.setdefault(_fold(term), []).append(n)
        for term in e.english:
            en_index.setdefault(_fold(term), []).append(n)
    explicit = set(en_index)  # "engineering" is an entry of its own, not engineer + -ing
    for n, e in enumerate(entries()):
        for term in e.english:
            for form in _inflections(_fold(term)):
                if form not in explicit:
                    en_index.setdefault(form, []).append(n)
    ja_terms = sorted(ja_index, key=len, reverse=True)
    en_terms = sorted(en_index, key=len, reverse=True)
    ja_re = re.compile("|".join(re.escape(t) for t in ja_terms))
    en_re = re.compile(
        r"(?<![a-z0-9])(?:" + "|".join(re.escape(t) for t in en_terms) + r")(?:e?s)?(?![a-z0-9])"
    )
    return ja_re, ja_index, en_re, en_index


# Nouns whose -ed form is another word ("Microsoft-signed binaries" have no 兆候).
_NOT_INFLECTED = frozenset({"sign"})


def _inflections(term: str) -> list[str]:
    """When ``term``'s last word is a verb-like word of four letters or more, ``term`` with that
    word's past and -ing forms ("isolated", "isolating", "revoked", "stopped"): a question says
    "the suspended user", "once it is contained". Plurals are matched by the pattern itself."""
    head, _, last = term.rpartition(" ")
    if len(last) < 4 or not last.isalpha() or last in _NOT_INFLECTED:
        return []
    if last.endswith("e"):
        forms = [last + "d", last[:-1] + "ing"]
    elif last.endswith("y") and last[-2] not in "aeiou":
        forms = [last[:-1] + "ied", last + "ing"]
    else:
        forms = [last + "ed", last + "ing"]
        if re.fullmatch(r".*[^aeiou][aeiou][bdgklmnprt]", last) and len(last) <= 5:
            forms += [last + last[-1] + "ed", last + last[-1] + "ing"]  # stopped, logging
    prefix = f"{head} " if head else ""
    return [prefix + f for f in forms]


def _english_key(surface: str, index: dict[str, list[int]]) -> str | None:
    for key in (surface, surface[:-1], surface[:-2]):
        if key in index:
            return key
    return None


def _found(folded: str, source: str) -> list[tuple[str, list[int]]]:
    """(surface, glossary entries) of every term of the ``source`` language ("en" or "ja") in
    NFKC-lower-cased text, longest matches first and without overlaps, in order of appearance."""
    ja_re, ja_index, en_re, en_index = _matchers()
    if source == "ja":
        return [(m.group(0), ja_index[m.group(0)]) for m in ja_re.finditer(folded)]
    found = []
    for match in en_re.finditer(folded):
        key = _english_key(match.group(0), en_index)
        if key is not None:
            found.append((match.group(0), en_index[key]))
    return found


def translations(text: str, target: str) -> list[str]:
    """The glossary terms of ``text`` in the ``target`` language ("en" or "ja"), first term of
    each entry found, longest matches first and without overlaps, in order of appearance."""
    side = "english" if target == "en" else "japanese"
    table = entries()
    found = _found(_fold(text), "ja" if target == "en" else "en")
    return list(dict.fromkeys(getattr(table[n], side)[0] for _, ns in found for n in ns))


def cross_language(text: str) -> tuple[list[str], list[str]]:
    """(the words of ``text`` the glossary translates, as written (lower-cased, NFKC); their
    glossary terms in the other language: English for a Japanese question, Japanese for an
    English one), from one pass over ``text``; both empty for a text in neither script."""
    from core.text.script import dominant_script

    script = dominant_script(text)
    if script == "none":
        return [], []
    source = "ja" if script == "ja" else "en"
    side = "english" if source == "ja" else "japanese"
    found = _found(_fold(text), source)
    table = entries()
    surfaces = list(dict.fromkeys(surface for surface, _ in found))
    terms = list(dict.fromkeys(getattr(table[n], side)[0] for _, ns in found for n in ns))
    return surfaces, terms


def cross_language_terms(text: str) -> list[str]:
    """The glossary terms of ``text`` in the other language (``cross_language``)."""
    return cross_language(text)[1]


def translated_surfaces(text: str) -> list[str]:
    """The words of ``text`` that the glossary translates, as written: the source side of
    ``cross_language_terms``."""
    return cross_language(text)[0]


_LATIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-./][A-Za-z0-9]+)*")
# An English word joined to a name says how the name is used, it is not part of it:
# "base64-encoded", "SAML-based", "S3-compatible", "GPG-signed" name Base64, SAML, S3, GPG.
_NAME_SUFFIX = re.compile(
    r"-(?:[a-z]{2,}(?:ed|ing)|based|only|related|compatible|specific|aware|friendly|wide|level"
    r"|side|free|ready|style|like)$"
)


def _without_suffix(word: str) -> str:
    while (m := _NAME_SUFFIX.search(word)) and m.start() >= 2:
        word = word[: m.start()]
    return word


def untranslated_names(text: str) -> list[str]:
    """Names a question carries into any language unchanged: product, tool and standard names,
    identifiers ("CrowdStrike", "SPL", "SEV-1", "JPCERT/CC"). In a Japanese question every Latin
    word of two letters or more is one; in an English question, a word with a digit or a capital
    after its first letter, or a capitalised word that neither starts the sentence nor belongs to
    the glossary."""
    from core.text.script import dominant_script

    japanese = dominant_script(text) == "ja"
    names = []
    for match in _LATIN_NAME.finditer(text):
        word = _without_suffix(match.group(0))
        if len(word) < 2:
            continue
        before = text[: match.start()].rstrip()
        sentence_start = not before or before[-1] in ".!?:"
        if (
            japanese
            or any(ch.isdigit() for ch in word)
            or any(ch.isupper() for ch in word[1:])
            or (word[0].isupper() and not sentence_start and word.lower() not in _glossary_words())
        ):
            names.append(word)
    return list(dict.fromkeys(names))


# Short forms of product and service names that runbooks write out (and the reverse): a
# question about "M365" is about the "Microsoft 365" a runbook names. Written for the project.
_NAME_GROUPS = (
    ("M365", "Microsoft 365", "O365", "Office 365"),
    ("AAD", "Azure AD", "Azure Active Directory", "Entra ID", "Microsoft Entra"),
    ("AD", "Active Directory", "AD DS"),
    ("MDE", "Defender for Endpoint", "Microsoft Defender"),
    ("GCP", "Google Cloud"),
    ("macOS", "Mac", "Macs", "MacBook", "MacBooks", "OS X", "OSX"),
    ("GWS", "Google Workspace", "G Suite"),
    ("K8s", "Kubernetes"),
    ("AWS", "Amazon Web Services"),
    ("ES", "Elasticsearch"),
    ("Postgres", "PostgreSQL"),
    ("EXO", "Exchange Online"),
    ("SPO", "SharePoint Online"),
    ("PAN-OS", "Palo Alto"),
    ("JPCERT", "JPCERT/CC"),
    ("IPA", "情報処理推進機構"),
    ("NISC", "内閣サイバーセキュリティセンター"),
    ("GPO", "Group Policy", "グループポリシー"),
)


@lru_cache(maxsize=1)
def _name_variants() -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for group in _NAME_GROUPS:
        for name in group:
            out[squash_name(name)] = group
    return out


def squash_name(name: str) -> str:
    """``name`` lower-cased, letters and digits only ("Sev-1" -> "sev1"): how names compare."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def name_variants(name: str) -> tuple[str, ...]:
    """``name`` and the other ways runbooks write it ("M365" -> "Microsoft 365", "O365" ...)."""
    group = _name_variants().get(squash_name(name), ())
    return (name, *(n for n in group if squash_name(n) != squash_name(name)))


# Abbreviations that are common nouns of computing, not names of anything in particular: a
# runbook may say "laptop" where the question says "ノートPC".
_COMMON_ABBREVIATIONS = frozenset(
    [
        "pc",
        "os",
        "it",
        "id",
        "ip",
        "url",
        "uri",
        "usb",
        "cpu",
        "gpu",
        "ram",
        "lan",
        "wan",
        "wifi",
        "dns",
        "http",
        "https",
        "api",
        "ui",
        "gui",
        "cli",
        "csv",
        "pdf",
        "sms",
        "faq",
        "ok",
        "ng",
        "qa",
        "pos",
        "vm",
        "tv",
        "nas",
        "san",
        "ssd",
        "hdd",
        "cd",
        "dvd",
        # protocols, devices and roles named by their initials: a runbook says "firewall" or
        # "the SOC" as often as FW or SOC
        "tls",
        "ssl",
        "vpn",
        "fw",
        "vps",
        "db",
        "pin",
        "soc",
        "sla",
        # formats and a kind of customer: "the JSON 'message' field", "our VIP accounts"
        "json",
        "xml",
        "yaml",
        "html",
        "vip",
        # a kind of server and the properties of a setup: "our DC", "the HA setup", "DR site"
        "dc",
        "ha",
        "dr",
        # the analyst's own common nouns: indicators, techniques, personal data, one-time codes
        "ioc",
        "iocs",
        "ioa",
        "ttp",
        "ttps",
        "pii",
        "otp",
        "kpi",
        "ttl",
    ]
)


# Days, months and languages are written with a capital and name nothing a runbook must carry
# ("on Thursday night", "at 11pm on a Saturday", "the Japanese translation")
_CAPITALIZED_COMMON_WORDS = frozenset(
    (
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
        "january", "february", "march", "april", "may", "june", "july", "august",
        "september", "october", "november", "december",
        # languages and nationalities: "the Japanese tutorial" is a document's language
        "japanese", "english", "chinese", "korean", "american", "british", "european",
        "french", "german", "spanish",
    )
)  # fmt: skip


def proper_names(text: str) -> list[str]:
    """The names a question is about that no glossary entry translates or explains: products,
    vendors, organisations, identifiers ("CrowdStrike", "Falcon", "JPCERT/CC", "SEV-1"), and
    Japanese public bodies named in kanji (個人情報保護委員会, 金融庁); the
    evidence grade wants them in the passages (``enough_names``). Common
    abbreviations of computing (PC, URL, USB) are not names."""
    words = _glossary_words()
    kept = [
        name
        for name in untranslated_names(text)
        if name.lower() not in words
        and name.lower() not in _CAPITALIZED_COMMON_WORDS
        and squash_name(_singular(name)) not in _COMMON_ABBREVIATIONS
        and not _unit_of_a_number(name, text)
    ]
    names = [_with_number(name, text) for name in _phrases(text, kept)]
    return names + [n for n in dict.fromkeys(_JA_INSTITUTION.findall(text)) if n not in names]


def _singular(name: str) -> str:
    """An abbreviation's plural as its singular: IDs, VMs, PCs."""
    return name[:-1] if re.fullmatch(r"[A-Z]{2,}s", name) else name


def _unit_of_a_number(name: str, text: str) -> bool:
    """``name`` is written only right after a number, as a unit is ("1GB", "500 Mbps"): a
    quantity the asker wants, which the runbook may write in other units."""
    before = [
        text[max(0, m.start() - 2) : m.start()]
        for m in re.finditer(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", text)
    ]
    # 「何GBまで」「数GB」: the number asked for
    return bool(before) and all(re.search(r"(\d|何|数) ?$", b) for b in before)


def _phrases(text: str, names: list[str]) -> list[str]:
    """``names`` with those written next to each other (only spaces between) as one phrase:
    "AWS IAM" is the IAM of AWS, "Microsoft Defender" a product of Microsoft. A name that is
    part of a phrase is not also a name of its own (``missing_names`` reads the phrase's last
    name, its head)."""
    wanted = set(names)
    runs: list[list[str]] = []
    last_end = -1
    for match in _LATIN_NAME.finditer(text):
        word = _without_suffix(match.group(0))
        if word not in wanted:
            last_end = -1
            continue
        gap = text[last_end : match.start()] if last_end >= 0 else ""
        if gap and not gap.strip(" \u3000"):  # only spaces since the previous name
            runs[-1].append(word)
        else:
            runs.append([word])
        last_end = match.end()
    phrases = [" ".join(run) for run in runs if len(run) > 1]
    in_phrase = {w for run in runs if len(run) > 1 for w in run}
    singles = [n for n in names if n not in in_phrase]
    return list(dict.fromkeys([*phrases, *singles]))


# A Japanese public body named in kanji (個人情報保護委員会, 金融庁, 総務省, 情報処理推進機構):
# a question about it is about that body, and runbooks that never name it (English ones cannot)
# do not answer it.
_JA_INSTITUTION = re.compile(r"[\u4e00-\u9fff]{2,}(?:委員会|庁|省|機構|協会)")


def _with_number(name: str, text: str) -> str:
    """A product's number is part of its name: "Microsoft 365" is not "Microsoft Teams",
    "Windows 11" not any Windows."""
    # a number of its own ("Windows 11"), not the start of another word ("ZAP-Hosting 2FA")
    found = re.search(
        rf"(?<![A-Za-z0-9]){re.escape(name)}[ \u3000]?(\d{{1,4}})(?![\d.A-Za-z])", text
    )
    return f"{name} {found.group(1)}" if found else name


@lru_cache(maxsize=1)
def _glossary_words() -> frozenset[str]:
    return frozenset(w for e in entries() for term in e.english for w in term.split())


@lru_cache(maxsize=1024)
def _name_pattern(name: str, exact_case: bool = False) -> re.Pattern[str] | None:
    """``name`` as written or with its separators changed ("Sev1" = "SEV-1" = "sev 1"), in
    any case unless ``exact_case``."""
    parts = re.findall(r"[^\W_]+", name)
    if not parts:
        return None
    inner = r"[\s\-_/.]?".join(re.escape(ch) for ch in "".join(parts))
    flags = 0 if exact_case else re.IGNORECASE
    return re.compile(rf"(?<![A-Za-z0-9]){inner}(?![A-Za-z0-9])", flags)


def _capitalized(name: str) -> bool:
    """A name asked as a proper noun: one word, a capital, then lower case ("Volatility",
    "Slack", "Crowdstrike"). Runbooks write the product with a capital somewhere ("CrowdStrike",
    "SLACK"), and the same letters all in lower case as a common word ("market volatility",
    "slack time"), which is not the product."""
    return is_plain_word(name) and len(name) > 1 and name[0].isupper() and name[1:].islower()


def missing_names(names: list[str], passages: list[str]) -> list[str]:
    """The names of ``names`` found in none of ``passages``, under any of their usual forms
    (``name_variants``: "M365" is found as "Microsoft 365")."""
    text = "\n".join(passages)
    # a name asked in lower case is a word, a command or a tool (ping, nslookup, grep), which
    # runbooks inflect: "Pinging, NSlookup" names both; a name with capitals or digits is
    # found uninflected
    words = [n for n in names if n.islower() and is_plain_word(n)]
    inflected = same_stem_in(text, words) if words else set()
    missing = []
    katakana: list[str] | None = None
    for name in names:
        if name in inflected:
            continue
        if _SOUND_NAME.fullmatch(name):
            katakana = katakana_words(text) if katakana is None else katakana
            if _spelled_in_katakana(name, katakana):
                continue
        patterns = [p for v in name_variants(name) if (p := _name_pattern(v)) is not None]
        head = name.rsplit(" ", 1)[-1]
        if head != name and not head.isdigit():
            # a phrase ("AWS IAM", "CrowdStrike Falcon") is found by its head, written as a
            # name: "self-hosted runners" is not the "GitLab Runner" a question names
            patterns += [p for v in name_variants(head) if (p := _name_pattern(v, True))]
        # a proper noun is not found as the common word: "market volatility" is no Volatility
        common = _capitalized(name)
        if (
            patterns
            and not any(
                not (common and m.group(0).islower() and not _in_identifier(text, m))
                for p in patterns
                for m in p.finditer(text)
            )
            and not _spelled_out(name, text)
            and not _same_product_unnumbered(name, text)
        ):
            missing.append(name)
    return missing


def _same_product_unnumbered(name: str, text: str) -> bool:
    """A product asked with its number ("PowerShell 7") where the passages name it with no
    number at all: they are about that product, and name no other version of it ("Windows 10"
    is no answer about "Windows 11"), nor is the name a vendor's ("Microsoft Teams" is no
    answer about "Microsoft 365")."""
    m = re.fullmatch(r"(.+?) (\d{1,4})", name)
    if not m:
        return False
    base = _name_pattern(m.group(1), True)
    if base is None:
        return False
    after = [text[hit.end() : hit.end() + 12] for hit in base.finditer(text)]
    if any(re.match(r"[ \u3000]?v?\d", a) for a in after):
        return False  # another version named
    # the name standing alone: not followed by another capitalised word of a product's name
    return any(not re.match(r"[ \u3000]?[A-Z0-9]", a) for a in after)


_ACRONYM = re.compile(r"[A-Z]{2,5}s?")


def _spelled_out(name: str, text: str) -> bool:
    """An acronym the passages write in full: "HA" in "Fluentd High Availability
    Configuration", "DC" where the runbook says "domain controller" (a phrase of words of three
    letters or more whose initials spell it). The phrase must be a term there, not two words
    that happen to meet: capitalised, or written at least twice."""
    if not _ACRONYM.fullmatch(name):
        return False
    letters = name.rstrip("s") if len(name) > 2 and name.endswith("s") else name
    pattern = re.compile(
        r"(?<![A-Za-z])"
        + r"[\s-]+".join(rf"[{c}{c.lower()}][a-z]{{2,}}" for c in letters)
        + r"(?![A-Za-z])"
    )
    seen: dict[str, int] = {}
    for m in pattern.finditer(text):
        words = re.split(r"[\s-]+", m.group(0))
        if all(w[:1].isupper() for w in words):
            return True
        key = " ".join(w.lower() for w in words)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] >= 2:
            return True
    return False


def _in_identifier(text: str, match: re.Match[str]) -> bool:
    """The match is a part of an identifier, where names are written in lower case
    (``strimzi.io/name=my-kafka-cluster``, ``slack_webhook``): not the common word."""
    before = text[max(0, match.start() - 2) : match.start()]
    after = text[match.end() : match.end() + 2]
    if any(ch in "-/_=@" for ch in before[-1:] + after[:1]):
        return True
    # a dot inside a dotted name ("kafka.apache.org", "my.kafka"), not a full stop
    return (after[:1] == "." and after[1:].isalnum()) or (
        before[-1:] == "." and before[:1].isalnum()
    )


# A name of one Latin word a Japanese text may spell in katakana: "Cybozu" is サイボウズ there,
# "Splunk" スプランク, "Misskey" ミスキー (not an acronym: "EDR" is no word to spell)
_SOUND_NAME = re.compile(r"(?=[A-Za-z]*[a-z]{3})[A-Za-z]{4,}")  # XServer, Cybozu, GuardDuty


def _spelled_in_katakana(name: str, katakana: list[str]) -> bool:
    """A katakana word of the passages sounds like ``name`` (``core.text.loanwords``: the same
    consonant skeleton, of at least ``MIN_KEY`` consonants, and the first vowel written as
    katakana writes it)."""
    key = phonetic_key(name.lower())
    if len(key.lstrip("V")) < MIN_KEY:
        return False
    return any(phonetic_key(k) == key and vowels_agree(name.lower(), k) for k in katakana)


# The names a question is about must be in the passages that would answer it: when fewer than
# this share of them are, general advice close in meaning is not an answer about that product.
NAMES_FOUND_MIN = 0.5


def enough_names(names: Sequence[str], missing: Sequence[str]) -> bool:
    """At least NAMES_FOUND_MIN of ``names`` were found (``missing`` are the others)."""
    return not names or len(names) - len(missing) >= NAMES_FOUND_MIN * len(names)
