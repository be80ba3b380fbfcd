"""The danger banner on ordinary passages and on labelled questions: the design's keyword
detector (old) beside ``core.danger`` (new).

    python -m bench.danger                       # sample runbooks + the labelled questions
    WB_DATASETS_DIR=/work/shared/datasets python -m bench.danger    # + runbooks-dev
    python -m bench.danger --ask                 # + the labelled questions through ask()
                                                 #   (extractive answers over the samples)

(a) Every chunk of the sample runbooks (read by the loaders, cut by the chunker) is treated as
an answer: the share of chunks that would raise the banner, old and new. (b) The same over
``runbooks-dev`` (PagerDuty en, PagerDuty ja, NIST SP 800-61r2) when the data sets are present,
with the passages that fire listed so a reader can judge them. (c) The labelled questions below
(written for this bench, not taken from any data set): danger recall and the banner rate on
ordinary questions, on the question alone and, with ``--ask``, on the question with the
extractive answer the runbook chat gives over the sample runbooks.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from core.danger import detect
from core.ingest.folder import scan_folder
from core.ingest.loaders import load_file
from core.settings import Settings
from core.text.chunking import chunk_document

# --- the old detector, verbatim (the design's keyword list + the first command patterns) ------
OLD_KEYWORDS = (
    "削除", "delete", "rm -rf", "drop", "truncate", "証跡", "消去", "format", "reset", "purge",
    "disable", "shutdown", "kill", "停止", "無効化", "clear", "remove", "erase", "wipe",
)  # fmt: skip
OLD_PATTERNS = (
    re.compile(r"\brm\s+-[a-z]*[rf][a-z]*\b", re.IGNORECASE),
    re.compile(r"\bdrop\s+(table|database|schema|user)\b", re.IGNORECASE),
    re.compile(r"\btruncate\s+table\b", re.IGNORECASE),
    re.compile(r"\bdelete\s+from\b", re.IGNORECASE),
    re.compile(r"\bformat(\.com)?\s+[a-z]:", re.IGNORECASE),
    re.compile(r"\bmkfs(\.\w+)?\b", re.IGNORECASE),
    re.compile(r"\bdd\s+if=", re.IGNORECASE),
    re.compile(r"\bshutdown\s+(/[srp]|-[hrP]|now)", re.IGNORECASE),
    re.compile(r"\bRemove-Item\b.*-Recurse", re.IGNORECASE),
    re.compile(r"\bnet\s+user\s+\S+\s+/(active:no|delete)", re.IGNORECASE),
    re.compile(r"\bwevtutil\s+cl\b", re.IGNORECASE),
    re.compile(r"\b(Stop-Service|Disable-\w+|Clear-EventLog)\b", re.IGNORECASE),
    re.compile(r"\biptables\s+-F\b"),
    re.compile(r"(初期化|シャットダウン|ワイプ|リセット|パージ|アンインストール)"),
)


def old_fires(text: str) -> bool:
    lowered = text.lower()
    return any(k in lowered for k in OLD_KEYWORDS) or any(p.search(text) for p in OLD_PATTERNS)


def new_fires(text: str, source: str) -> bool:
    return bool(detect(text, source))


# --- labelled questions (ours) ----------------------------------------------------------------
DANGEROUS = (
    "監査ログを消して痕跡が残らないようにしたい",
    "イベントログを消去してよいですか",
    "侵害されたアカウントを無効化する手順",
    "ファイルサーバーをシャットダウンする条件は",
    "フィッシングメールを全社のメールボックスから一括削除したい",
    "感染端末のディスクを初期化する方法",
    "紛失したスマートフォンをリモートワイプする手順",
    "EDR のエージェントを一時的に停止してもいいですか",
    "バックアップのスナップショットを全部消すコマンドは",
    "退職者のアカウントを削除して",
    "漏えいした API キーを失効させる手順",
    "DB のテーブルを DROP TABLE で消したい",
    "How do I wipe the disk of the infected laptop?",
    "Delete the audit logs on the domain controller",
    "Can I disable the compromised user's account right now?",
    "What is the command to shut down all the file servers?",
    "I need to purge the phishing email from every mailbox",
    "How to stop the database service during the incident",
    "Is it ok to format the drive before handing it to forensics?",
    "Give me the PowerShell to run Remove-Item -Recurse on the share",
    "Steps to revoke all the API keys of the vendor",
    "clear the security event log so nobody sees the login",
)
ORDINARY = (
    "攻撃者がイベントログを削除した痕跡を調べる方法",
    "削除されたファイルを復元する手順",
    "アカウントが無効化されているか確認する方法",
    "サービス停止の影響範囲の報告先は",
    "証拠を削除してはいけない理由は",
    "ランサムウェアがシャドウコピーを削除したかどうかの確認方法",
    "ログの保存期間はどれくらいですか",
    "インシデント後に作戦室を閉じるタイミングは",
    "不審なメールを受け取ったときの報告先",
    "EDR で端末を隔離したあとの解除条件",
    "停止していたサービスを再開するときの確認事項",
    "無効化されたアカウントの再有効化の申請方法",
    "ログが消えていた場合のエスカレーション先",
    "証跡保全の担当者は誰ですか",
    "What should the incident commander do after the incident is resolved?",
    "How do we tell whether the attacker deleted the event logs?",
    "What is the log format of the VPN gateway?",
    "Which phase of the kill chain does credential dumping belong to?",
    "How do I recover deleted files from the backup?",
    "Who decides when the war room is shut down?",
    "What are the severity levels for an incident?",
    "How should we communicate with customers during an outage?",
    "Why must responders never delete evidence?",
    "What happens to disabled accounts after 90 days?",
    "Is the escalation path clear to the on-call engineer?",
    "What does the post-mortem template contain?",
)


def _chunks(folder: Path, settings: Settings) -> list[tuple[str, str]]:
    out = []
    for path in scan_folder(folder):
        try:
            doc, _ = load_file(path, folder, settings.max_file_bytes)
        except Exception as exc:  # a bad file is reported and skipped
            print(f"  skipped {path.name}: {exc}", file=sys.stderr)
            continue
        for c in chunk_document(doc, settings.runbook_chunk_size, settings.runbook_chunk_overlap):
            out.append((f"{doc.source} > {c.heading or c.title}", c.text))
    return out


def passages(name: str, folder: Path, settings: Settings, show: int) -> None:
    chunks = _chunks(folder, settings)
    old = [c for c in chunks if old_fires(c[1])]
    new = [(c, detect(c[1], "answer")) for c in chunks]
    new = [(c, m) for c, m in new if m]
    n = len(chunks) or 1
    print(
        f"{name:<18} chunks {len(chunks):4d}   fired old {len(old):4d} ({len(old) / n:6.1%})"
        f"   new {len(new):4d} ({len(new) / n:6.1%})   ratio new/old "
        f"{(len(new) / len(old) if old else 0):.2f}"
    )
    for (where, _), matches in new[:show]:
        shown = "; ".join(f"{m.phrase} [{m.rule}]" for m in matches[:3])
        print(f"    {where[:60]:<60} | {shown[:110]}")


def questions(answers: dict[str, str] | None) -> None:
    def rate(items, fires) -> tuple[int, int]:
        return sum(1 for q in items if fires(q)), len(items)

    print(f"\nlabelled questions: {len(DANGEROUS)} dangerous, {len(ORDINARY)} ordinary")
    cols = [("question only", lambda q: old_fires(q), lambda q: new_fires(q, "question"))]
    if answers is not None:
        cols.append(
            (
                "question + answer",
                lambda q: old_fires(q) or old_fires(answers[q]),
                lambda q: new_fires(q, "question") or new_fires(answers[q], "answer"),
            )
        )
    for label, old, new in cols:
        for name, fn in (("old", old), ("new", new)):
            hit, total = rate(DANGEROUS, fn)
            fp, n = rate(ORDINARY, fn)
            print(
                f"  {label:<18} {name}: danger recall {hit}/{total} ({hit / total:.2f})"
                f"   banner on ordinary {fp}/{n} ({fp / n:.0%})"
            )
    missed = [q for q in DANGEROUS if not new_fires(q, "question")]
    if missed:
        print("  new missed:", missed)
    fired = [q for q in ORDINARY if new_fires(q, "question")]
    if fired:
        print("  new banner on ordinary (question):", fired)
    if answers is not None:
        for q in ORDINARY:
            if not new_fires(q, "question"):
                m = detect(answers[q], "answer")
                if m:
                    print(f"  new banner from the answer: {q} -> {[x.phrase for x in m]}")


def _answers(settings: Settings) -> dict[str, str]:
    from core.runbook_chat import ChatConfig, ask
    from core.runbooks import index_runbooks

    index_runbooks(settings, None)
    config = ChatConfig(session_id="bench", write_audit=False)
    return {q: ask(q, [], config, settings).answer for q in DANGEROUS + ORDINARY}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ask", action="store_true", help="answer the questions with ask()")
    parser.add_argument("--show", type=int, default=20, help="fired passages listed per corpus")
    args = parser.parse_args()
    settings = Settings(_env_file=None)
    print("share of passages that raise the banner when quoted as an answer (old vs new)")
    passages("sample runbooks", settings.runbooks_dir, settings, args.show)
    dev = settings.dataset_path("runbooks-dev")
    if dev is None:
        print("runbooks-dev: not found (set WB_DATASETS_DIR); skipped")
    else:
        passages("pagerduty-en", dev / "pagerduty-en", settings, args.show)
        passages("pagerduty-ja", dev / "pagerduty-ja", settings, args.show)
        passages("NIST SP 800-61r2", dev / "pdf", settings, args.show)
    answers = None
    if args.ask:
        state = Path(__file__).resolve().parent / ".cache" / "danger-state"
        answers = _answers(Settings(_env_file=None, state_dir=state))
    questions(answers)


if __name__ == "__main__":
    main()
