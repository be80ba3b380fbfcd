"""``python -m core eval run``: run the evaluation dataset through the runbook chat and judge it.

  eval run [--dataset F] [--judge llm|heuristic] [--judge-model M] [--case ID …] [--out F]
           [--resume] [--json]

The judge defaults to the LLM when one is configured (``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``),
else the heuristic judge. Results go to ``<eval_dir>/evaluation_results_YYYY-MM-DD.json``.
Exit status: 0 when the pass line is met, 1 when it is not, 2 on an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from core.evaluation.dataset import CATEGORY_LABELS
from core.evaluation.scores import CRITERIA, CRITERION_LABELS
from core.text.normalize import display_width

if TYPE_CHECKING:
    from core.evaluation.results import EvaluationRun


def _pad(text: str, width: int) -> str:
    """Left-justify for a terminal: East Asian wide characters take two columns."""
    used = display_width(text)
    return text + " " * max(0, width - used)


def _rjust(text: str, width: int) -> str:
    used = display_width(text)
    return " " * max(0, width - used) + text


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def format_report(run: EvaluationRun, path: Path) -> str:
    """The run's summary as Japanese text (per case, per category, pass line, refusals)."""
    summary = run.summary
    lines = [
        f"評価結果: {path}",
        f"判定方式: {run.judge_label}" + (f"（{run.judge_model}）" if run.judge_model else ""),
        f"回答モード: {run.answer_mode}　データセット: {run.dataset.path}"
        f"（v{run.dataset.version}、{run.dataset.cases} 件）",
        "",
        "ケース別:",
    ]
    for r in run.results:
        mark = "合格" if r.passed else "不合格"
        score = f"{r.scores.average:5.1f}" if r.scores else "  —  "
        failed = [c.name for c in r.checks if not c.passed]
        extra = f"  要確認: {', '.join(failed)}" if failed else ""
        if r.error:
            extra = f"  エラー: {r.error}"
        lines.append(
            f"  {r.id:<20} {CATEGORY_LABELS.get(r.category, r.category):<6} {score} {mark}{extra}"
        )
    if summary is None:
        return "\n".join(lines)
    head = "  " + " ".join(
        [
            _pad("カテゴリ", 10),
            _rjust("件数", 4),
            _rjust("合格", 4),
            _rjust("平均", 5),
            *(_rjust(CRITERION_LABELS[c], 8) for c in CRITERIA),
        ]
    )
    lines += ["", "カテゴリ別平均:", head]
    groups = [*summary.by_category.items(), ("overall", summary.overall)]
    for name, g in groups:
        label = "全体" if name == "overall" else CATEGORY_LABELS.get(name, name)
        crit = " ".join(f"{g.criteria.get(c, 0):8.1f}" for c in CRITERIA) if g.criteria else ""
        avg = f"{g.average:5.1f}" if g.average is not None else "  —  "
        lines.append(f"  {_pad(label, 10)} {g.cases:>4} {g.passed:>4} {avg} {crit}")
    pl = summary.pass_line
    lines += [
        "",
        f"合格ライン（平均 {pl.score:.0f} 点以上のケースが {pl.required_rate:.0%} 以上）: "
        f"{pl.passed_cases}/{pl.total} 件（{_pct(pl.pass_rate)}）→ {'合格' if pl.passed else '不合格'}",
        f"確定チェックがすべて合格したケース: {_pct(summary.overall.checks_pass_rate)}",
        f"拒否の指標: 根拠不足ケースの正しい拒否 {summary.refusal.correctly_refused}/"
        f"{summary.refusal.refusal_expected}（{_pct(summary.refusal.correct_refusal_rate)}）、"
        f"回答可能ケースの誤った拒否 {summary.refusal.wrongly_refused}/"
        f"{summary.refusal.answerable}（{_pct(summary.refusal.wrong_refusal_rate)}）",
    ]
    return "\n".join(lines)


def cmd_eval_run(args: argparse.Namespace) -> int:
    from core.__main__ import ProgressBar, principal_from_args
    from core.evaluation.dataset import load_dataset
    from core.evaluation.runner import run_evaluation
    from core.settings import get_settings

    settings = get_settings()
    judge_settings = (
        settings.model_copy(update={"chat_model": args.judge_model}) if args.judge_model else None
    )
    dataset, _ = load_dataset(args.dataset or settings.eval_dataset)
    for warning in dataset.coverage_warnings():
        print(f"注意: {warning}", file=sys.stderr)
    bar = None if args.json else ProgressBar("評価")
    try:
        outcome = run_evaluation(
            settings,
            args.dataset,
            args.judge,
            judge_settings=judge_settings,
            case_ids=args.case or None,
            out=args.out,
            resume=args.resume,
            progress=bar,
            principal=principal_from_args(args),
        )
    finally:
        if bar is not None:
            bar.close()
    run = outcome.run
    if args.json:
        print(json.dumps(run.model_dump(mode="json"), ensure_ascii=False, indent=2))
    else:
        if outcome.resumed:
            print(f"中断した実行から {outcome.resumed} 件を引き継ぎました。", file=sys.stderr)
        print(format_report(run, outcome.path))
    return 0 if run.passed else 1


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``eval run`` to the ``python -m core`` parser."""
    p_eval = sub.add_parser("eval", help="手順書チャットの評価（評価データセットと判定）")
    esub = p_eval.add_subparsers(dest="eval_command", required=True)
    p = esub.add_parser("run", help="評価データセットを実行して採点する")
    p.add_argument("--dataset", type=Path, default=None, help="既定: eval/eval_dataset.json")
    p.add_argument(
        "--judge",
        choices=["llm", "heuristic"],
        default=None,
        help="判定方式（既定: LLM が設定されていれば llm、なければ heuristic）",
    )
    p.add_argument(
        "--judge-model", default=None, help="判定に使うチャットモデル（既定: WB_CHAT_MODEL）"
    )
    p.add_argument("--case", action="append", default=None, help="実行するケース ID（複数指定可）")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="結果ファイル（既定: eval/evaluation_results_日付.json）",
    )
    p.add_argument("--resume", action="store_true", help="中断した同じ日の実行を再開する")
    p.add_argument("--json", action="store_true", help="結果を JSON で出力する")
    from core.__main__ import add_principal_options

    add_principal_options(p)
    p.set_defaults(func=cmd_eval_run)
