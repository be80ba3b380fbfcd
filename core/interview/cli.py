"""``python -m core interview …``: simulate scripted users, chat, list sessions, replay the WAL,
compute KPIs.

  interview simulate --domain D [--scenario FILE] [--json] [--corpus runbooks|wiki]
  interview chat --domain D --topic T [--user U]       (answers from stdin, 「終了」 to stop)
  interview sessions [--user U] [--json]
  interview show SESSION_ID [--json]                   (the document, or the pending question)
  interview replay [--date YYYY-MM-DD | --file PATH] [--json]
  interview kpi [--days N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core.errors import InputError

DOMAIN_CHOICES = ["sop", "postmortem", "recipe", "daily_work"]


def _print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


def _evidence(settings: Any, corpus: str | None) -> Any:
    from core.interview.evidence import evidence_source

    return evidence_source(settings, corpus)


def cmd_simulate(args: argparse.Namespace) -> int:
    from core.interview.kpi import aggregate
    from core.interview.simulator import load_scenario, load_scenarios, run_scenario
    from core.settings import get_settings

    if args.scenario:
        scenarios = load_scenario(Path(args.scenario))
        wrong = [s.id for s in scenarios if args.domain and s.domain != args.domain]
        if wrong:
            raise InputError(f"シナリオのドメインが --domain {args.domain} と一致しません: {wrong}")
    else:
        scenarios = load_scenarios(args.domain)
    if not scenarios:
        raise InputError(f"ドメイン {args.domain} のシナリオが見つかりません。")
    kwargs: dict[str, Any] = {"llm": None}
    if args.corpus:
        kwargs["evidence"] = _evidence(get_settings(), args.corpus)
    results = [run_scenario(s, interviewer_kwargs=kwargs) for s in scenarios]
    summary = aggregate(r.kpis for r in results)
    if args.json:
        _print_json(
            {
                "domain": args.domain,
                "results": [
                    {
                        **r.model_dump(
                            mode="json", exclude={"document"} if not args.document else None
                        ),
                        "document_quality": r.quality.summary(),
                    }
                    for r in results
                ],
                "document_quality": quality_totals(results),
                "summary": {k: v.model_dump(mode="json") for k, v in summary.items()},
            }
        )
        return 0
    for r in results:
        print(f"== {r.scenario}: {r.title}")
        for t in r.turns:
            print(f"  [{t.turn}] Q ({'+'.join(t.targets)}, VoI {t.voi:.3f}): {t.question}")
            print(f"      A: {t.answer}")
        k = r.kpis
        print(
            f"  停止理由: {r.stop_label}（{r.stop_reason}） 未充足: {', '.join(r.missing) or 'なし'}"
        )
        print(
            f"  KPI: 充足率 {k.slot_coverage:.2f} / ターン {k.turn_count} / 重複率 "
            f"{k.duplicate_rate:.2f} / QCheck 失敗率 {k.qcheck_fail_rate:.2f} / "
            f"VoI 非増加 {'はい' if k.voi_non_increasing else 'いいえ'}"
        )
        q = r.quality.summary()
        print(
            f"  文書の品質: 回答に裏づけのある値 {r.quality.supported}/{q['values']}"
            f"（{q['supported_share']:.0%}）/ 断片 {q['fragments']} / 列の重複 {q['duplicates']}"
            f" / 別の質問の回答から {q['cross_slot']}"
        )
        for problem in r.quality.problems:
            print(f"    - {problem}")
        if args.document and r.document:
            print(r.document)
    for d in summary.values():
        print(
            f"-- {d.domain}: {d.sessions} 件, 平均ターン {d.turn_count}, 充足率 {d.slot_coverage:.2f}"
        )
    t = quality_totals(results)
    print(
        f"-- 文書の品質: 裏づけ率 {t['supported_share']:.3f}（{t['values']} 値）/ 断片 "
        f"{t['fragments']} / 列の重複 {t['duplicates']} / 別の質問の回答から {t['cross_slot']}"
    )
    return 0


def quality_totals(results: list[Any]) -> dict[str, Any]:
    """Document quality over the scenarios: values shown, share supported by an answer span,
    fragments, duplicated columns, values taken from answers to other questions."""
    values = sum(r.quality.values for r in results)
    return {
        "values": values,
        "supported_share": round(sum(r.quality.supported for r in results) / max(1, values), 4),
        "fragments": sum(r.quality.fragments for r in results),
        "duplicates": sum(r.quality.duplicates for r in results),
        "cross_slot": sum(r.quality.cross_slot for r in results),
    }


def _interviewer(args: argparse.Namespace) -> Any:
    from core.interview.orchestrator import Interviewer
    from core.settings import get_settings

    settings = get_settings()
    return Interviewer(settings, evidence=_evidence(settings, getattr(args, "corpus", None)))


def cmd_chat(args: argparse.Namespace) -> int:
    iv = _interviewer(args)
    result = iv.start(args.domain, args.topic, user_id=args.user)
    print(f"セッション: {result.session.session_id}")
    while not result.done:
        print(f"\n質問: {result.question}")
        if result.decision:
            print(f"  （VoI {result.decision.voi:.3f}: {result.decision.reason}）")
        try:
            line = input("> ")
        except EOFError:
            print("\n入力が終わったため中断します（続きは再開できます）。")
            return 0
        result = iv.answer(result.session.session_id, line)
        for c in result.contradictions:
            print(
                f"  ※ {c.field} が以前の回答と食い違っています: 「{c.old_value}」→「{c.new_value}」"
            )
        for w in result.warnings:
            print(f"  ※ {w}", file=sys.stderr)
    print(f"\n停止理由: {result.stop.label if result.stop else ''}\n")
    print(result.document or "")
    return 0


def cmd_sessions(args: argparse.Namespace) -> int:
    iv = _interviewer(args)
    rows = iv.sessions(user_id=args.user)
    if args.json:
        _print_json([asdict(r) for r in rows])
        return 0
    if not rows:
        print("セッションはまだありません。")
    for r in rows:
        flag = "（破損）" if r.corrupt else ""
        print(
            f"{r.session_id}  {r.domain:10s} {r.status:7s} ターン{r.turn:>3}  {r.updated_at[:19]}  "
            f"{r.topic[:40]}{flag}"
        )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    iv = _interviewer(args)
    result = iv.resume(args.session_id)
    if args.json:
        _print_json(result.session.model_dump(mode="json"))
        return 0
    for w in result.warnings:
        print(f"※ {w}", file=sys.stderr)
    if result.document:
        print(result.document)
    else:
        print(f"次の質問: {result.question}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from core.interview.store import open_session_store
    from core.interview.wal import replay, wal_files, wal_salt
    from core.settings import get_settings

    settings = get_settings()
    if args.file:
        paths = [Path(args.file)]
    else:
        day = args.date or datetime.now(UTC).strftime("%Y-%m-%d")
        paths = wal_files(settings.wal_dir, [day])
    if not paths or not all(p.exists() for p in paths):
        raise InputError("WAL ファイルが見つかりません。--date または --file を確認してください。")
    report = replay(paths, open_session_store(settings), wal_salt(settings))
    if args.json:
        _print_json(
            {
                "rebuilt": report.rebuilt,
                "skipped": report.skipped,
                "events": report.events,
                "bad_lines": report.bad_lines,
                "truncated_tail": report.truncated_tail,
            }
        )
        return 0
    print(
        f"再構築 {len(report.rebuilt)} 件、最新のためスキップ {len(report.skipped)} 件"
        f"（イベント {report.events} 件、読めない行 {report.bad_lines} 行）"
    )
    if report.truncated_tail:
        print("最後の行が途中で切れていたため読み飛ばしました。")
    return 0


def cmd_kpi(args: argparse.Namespace) -> int:
    from core.interview.kpi import KPI_DEFINITIONS, aggregate, kpis_from_wal
    from core.interview.wal import wal_files
    from core.settings import get_settings

    settings = get_settings()
    today = datetime.now(UTC).date()
    days = [(today - timedelta(days=n)).isoformat() for n in range(args.days)]
    sessions = kpis_from_wal(wal_files(settings.wal_dir, days))
    domains = aggregate(sessions)
    if args.json:
        _print_json(
            {
                "definitions": KPI_DEFINITIONS,
                "sessions": [s.model_dump(mode="json") for s in sessions],
                "domains": {k: v.model_dump(mode="json") for k, v in domains.items()},
            }
        )
        return 0
    if not sessions:
        print(f"直近 {args.days} 日の WAL にセッションがありません。")
    for d in domains.values():
        print(
            f"{d.domain}: {d.sessions} 件 充足率 {d.slot_coverage:.2f} 重複率 {d.duplicate_rate:.2f} "
            f"平均ターン {d.turn_count} QCheck 失敗率 {d.qcheck_fail_rate:.2f} "
            f"停止理由 {d.stop_reason_ratio}"
        )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``interview`` and its subcommands to the ``python -m core`` parser."""
    p = sub.add_parser("interview", help="インタビュー（聞き取りで文書を作成）")
    isub = p.add_subparsers(dest="interview_command", required=True)

    s = isub.add_parser("simulate", help="シナリオの模擬ユーザーでインタビューを実行する")
    s.add_argument("--domain", choices=DOMAIN_CHOICES, required=True)
    s.add_argument("--scenario", default=None, help="シナリオ YAML（既定: ドメインの全シナリオ）")
    s.add_argument(
        "--corpus", choices=["runbooks", "wiki"], default=None, help="検索に使うコーパス"
    )
    s.add_argument("--document", action="store_true", help="生成文書も出力する")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_simulate)

    c = isub.add_parser("chat", help="端末で対話してインタビューする")
    c.add_argument("--domain", choices=DOMAIN_CHOICES, required=True)
    c.add_argument("--topic", required=True)
    c.add_argument("--user", default="cli")
    c.add_argument("--corpus", choices=["runbooks", "wiki"], default=None)
    c.set_defaults(func=cmd_chat)

    ls = isub.add_parser("sessions", help="保存されたセッションの一覧")
    ls.add_argument("--user", default=None)
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_sessions)

    sh = isub.add_parser("show", help="セッションの文書または次の質問を表示する")
    sh.add_argument("session_id")
    sh.add_argument("--json", action="store_true")
    sh.set_defaults(func=cmd_show)

    r = isub.add_parser("replay", help="WAL からセッションを再構築する")
    r.add_argument("--date", default=None, help="YYYY-MM-DD（UTC、既定: 今日）")
    r.add_argument("--file", default=None)
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_replay)

    k = isub.add_parser("kpi", help="WAL からインタビューの KPI を集計する")
    k.add_argument("--days", type=int, default=7)
    k.add_argument("--json", action="store_true")
    k.set_defaults(func=cmd_kpi)
