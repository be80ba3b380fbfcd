"""``python -m core qset …``: validate, generate, run and compare question sets.

qset validate FILE [--json]                 exit 0 when valid, 1 otherwise (errors with paths)
qset generate --pool ID --ordinance-id ID [--name NAME] [--structure FILE]
              [--question-set-id ID] --out FILE [--report FILE] [--force]
qset run FILE --target runbook|wiki [--json] [--resume RUN_FILE] [--user U --groups a,b]
qset diff RUN_A RUN_B [--json]              exit 0 when identical, 1 when they differ
qset pools                                  list the Golden Question Pools and their checksums
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.errors import ContractError, WorkbenchError
from core.question_sets.contract import (
    dumps_question_set,
    parse_json_bytes,
    read_bytes,
    read_question_set,
    save_question_set,
    validate_payload,
)
from core.question_sets.diff import citation_label, diff_runs
from core.question_sets.generation import (
    GenerationError,
    default_report_path,
    generate_question_set,
    read_structure,
    save_report,
)
from core.question_sets.golden import list_pools, load_pool, looks_like_pool
from core.question_sets.runner import read_run, run_question_set
from core.question_sets.targets import TARGET_LABELS, make_target


def _settings():
    from core.settings import get_settings

    return get_settings()


def display_path(path: str) -> str:
    return path or "（ルート）"


def _print_json(data: Any) -> None:
    print(json.dumps(data, ensure_ascii=False, indent=2))


def cmd_validate(args: argparse.Namespace) -> int:
    data: Any = None
    try:
        data = parse_json_bytes(read_bytes(args.file))
        issues = validate_payload(data)
    except ContractError as exc:
        issues = exc.errors
    except WorkbenchError as exc:  # a missing file is "not valid" for this command too
        issues = [("", exc.user_message)]
    if args.json:
        _print_json(
            {
                "file": str(args.file),
                "valid": not issues,
                "errors": [{"path": p, "message": m} for p, m in issues],
            }
        )
        return 0 if not issues else 1
    if not issues:
        qs = read_question_set(args.file)
        print(
            f"有効です: {args.file}（schema_version {qs.schema_version}、"
            f"質問 {len(qs.questions)}件、プール {qs.source_golden_question_pool}）"
        )
        if dumps_question_set(qs) != read_bytes(args.file):
            print("注: 正規形式（キー順・インデント2・末尾改行）ではありません。", file=sys.stderr)
        return 0
    print(f"無効です: {args.file}（エラー {len(issues)}件）", file=sys.stderr)
    for path, message in issues:
        print(f"  {display_path(path)}: {message}", file=sys.stderr)
    if looks_like_pool(data):
        print(
            "ヒント: これは Golden Question Pool のファイルです。質問セットはプールから "
            "`python -m core qset generate --pool ID --ordinance-id ID --out FILE` で作れます。",
            file=sys.stderr,
        )
    return 1


def cmd_generate(args: argparse.Namespace) -> int:
    out = Path(args.out)
    report_path = Path(args.report) if args.report else default_report_path(out)
    if not args.force:
        for path in (out, report_path):
            if path.exists():
                print(
                    f"エラー: {path} は既に存在します。上書きする場合は --force を指定してください。",
                    file=sys.stderr,
                )
                return 2
    pool = load_pool(_settings().golden_dir, args.pool)
    structure = read_structure(args.structure) if args.structure else None
    try:
        result = generate_question_set(
            pool,
            args.ordinance_id,
            ordinance_name=args.name,
            structure=structure,
            question_set_id=args.question_set_id,
        )
    except GenerationError as exc:
        print(f"エラー: {exc.user_message}", file=sys.stderr)
        if exc.report is not None:
            for item in exc.report.excluded:
                print(f"  除外 {item.question_id}: {item.reason}", file=sys.stderr)
        return 1
    save_question_set(result.question_set, out)
    save_report(result.report, report_path)
    print(f"生成しました: {out}（質問 {len(result.question_set.questions)}件）")
    print(result.report.summary_ja())
    for item in result.report.excluded:
        print(f"  除外 {item.question_id}: {item.reason}")
    print(f"生成レポート: {report_path}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    settings = _settings()
    qs = read_question_set(args.file)
    from core.__main__ import ProgressBar, principal_from_args

    target = make_target(args.target, settings, principal=principal_from_args(args))
    bar = ProgressBar("実行", unit="問")
    try:
        result = run_question_set(qs, target, settings, progress=bar, resume=args.resume)
    finally:
        bar.close()
    run = result.run
    failed = 1 if run.error_count else 0  # saved either way; non-zero tells CI to look
    if args.json:
        _print_json(run.model_dump(mode="json"))
        print(f"保存しました: {result.path}", file=sys.stderr)
        return failed
    for rec in run.records:
        flags = [name for name, on in rec.flags.items() if on]
        print(
            f"[{rec.index + 1}/{run.question_count}] {rec.question_id}  ({rec.elapsed_ms:.0f} ms)"
        )
        print(f"  質問: {rec.question_text}")
        if rec.error:
            print(f"  エラー: {rec.error}")
        else:
            answer = rec.answer.replace("\n", " ")
            print(f"  回答: {answer[:200]}{'…' if len(answer) > 200 else ''}")
            for c in rec.citations[:3]:
                print(f"  引用: {citation_label(c)}")
        if flags:
            print(f"  フラグ: {', '.join(flags)}")
    print(
        f"「{TARGET_LABELS.get(run.target, run.target)}」で {len(run.records)}問を実行しました"
        f"（エラー {run.error_count}件、合計 {run.total_ms / 1000:.1f} 秒）。"
    )
    print(f"保存しました: {result.path}")
    return failed


def cmd_diff(args: argparse.Namespace) -> int:
    diff = diff_runs(read_run(args.run_a), read_run(args.run_b))
    if args.json:
        _print_json(diff.to_dict())
        return 1 if diff.has_differences else 0
    print(f"比較元: {args.run_a}（{diff.question_set_id_a}）")
    print(f"比較先: {args.run_b}（{diff.question_set_id_b}）")
    for note in diff.notes:
        print(f"注: {note}")
    for q in diff.questions:
        if q.status == "unchanged":
            continue
        print(f"{q.question_id}:")
        for change in q.changes_ja():
            print(f"  {change}")
    print(diff.summary_ja())
    return 1 if diff.has_differences else 0


def cmd_pools(args: argparse.Namespace) -> int:
    settings = _settings()
    entries = list_pools(settings.golden_dir)
    if not entries:
        print(f"Golden Question Pool がありません（{settings.golden_dir}）。")
        return 0
    for e in entries:
        state = f"検証済み・{e.question_count}問・{e.title}" if e.ok else e.message
        print(f"{e.pool_id}: {state}")
    return 0 if all(e.ok for e in entries) else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``qset`` and its subcommands to the ``python -m core`` parser."""
    p = sub.add_parser(
        "qset", help="質問セット（customized_question_set.json）の検証・生成・実行・比較"
    )
    qsub = p.add_subparsers(dest="qset_command", required=True)

    v = qsub.add_parser("validate", help="契約に沿っているか検証する（有効なら終了コード0）")
    v.add_argument("file", type=Path)
    v.add_argument("--json", action="store_true", help="結果を JSON で出力する")
    v.set_defaults(func=cmd_validate)

    g = qsub.add_parser("generate", help="Golden Question Pool から条例別の質問セットを生成する")
    g.add_argument("--pool", required=True, help="プール ID（例: A-v1.1）")
    g.add_argument("--ordinance-id", required=True, help="条例 ID")
    g.add_argument(
        "--name", default=None, help="条例の名称（既定: 構造ファイルの名称か「この条例」）"
    )
    g.add_argument("--structure", type=Path, default=None, help="条例構造ファイル（JSON）")
    g.add_argument("--question-set-id", default=None, help="既定: cqset-<条例ID>-<プール>")
    g.add_argument("--out", type=Path, required=True, help="出力する質問セットのファイル")
    g.add_argument("--report", type=Path, default=None, help="生成レポート（既定: 出力の隣）")
    g.add_argument("--force", action="store_true", help="既存のファイルを上書きする")
    g.set_defaults(func=cmd_generate)

    r = qsub.add_parser(
        "run",
        help="質問セットを RAG パイプラインで実行し、結果を保存する（エラーの質問があれば終了コード1）",
    )
    r.add_argument("file", type=Path)
    r.add_argument("--target", choices=sorted(TARGET_LABELS), required=True)
    r.add_argument("--json", action="store_true", help="実行結果を JSON で出力する")
    r.add_argument("--resume", type=Path, default=None, help="中断した実行結果ファイルから再開する")
    from core.__main__ import add_principal_options

    add_principal_options(r)
    r.set_defaults(func=cmd_run)

    d = qsub.add_parser("diff", help="2つの実行結果を質問ごとに比較する（差分ありは終了コード1）")
    d.add_argument("run_a", type=Path)
    d.add_argument("run_b", type=Path)
    d.add_argument("--json", action="store_true")
    d.set_defaults(func=cmd_diff)

    pools = qsub.add_parser("pools", help="Golden Question Pool の一覧とチェックサム検証")
    pools.set_defaults(func=cmd_pools)


__all__ = ["register"]
