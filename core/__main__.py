"""The command line: ``python -m core <command>``.

Commands:
  index runbooks [--data DIR]      build or update the runbook indexes (incremental)
  search "QUERY" [--k N] [--fusion weighted|rrf] [--weights KW,SEM,GRAPH] [--json]
  ask "QUESTION" [--k N] [--bm25-weight W] [--data DIR] [--json]
    (search, ask, qset run and eval run take --user NAME --groups a,b [--role ROLE]: run as
    that user, seeing only the runbook collections of those groups; without them: local)
  inspect FILE [--json]            how a document is read: title, heading tree, chunks
  audit verify [--date YYYY-MM-DD]   exit 0 intact, 1 tampered, 2 could not check
  audit verify --against FILE       the local log against the SIEM's exported copy (JSONL)
  audit rotate-key
  audit ship [--destination NAME] [--follow]   forward records to the SIEM destinations
  serve [--address ADDR] [--port N]  check who could reach it, index, then start the app

Errors print a Japanese message on stderr and exit non-zero.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import sys
from pathlib import Path

from core.errors import WorkbenchError
from core.masking import install_log_masking


class ProgressBar:
    """A progress callback ``(done, total, message)`` drawn as a bar on stderr from its first
    report on (nothing is drawn when nothing is done); ``close`` when the work ends."""

    def __init__(self, desc: str, unit: str = "件") -> None:
        self.desc = desc
        self.unit = unit
        self.bar = None

    def __call__(self, done: int, total: int, message: str) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(
                total=0, desc=self.desc, unit=self.unit, dynamic_ncols=True, file=sys.stderr
            )
        if self.bar.total != total:
            self.bar.reset(total=total)
        self.bar.n = done
        self.bar.set_postfix_str(message[-40:], refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def cmd_index(args: argparse.Namespace) -> int:
    from core.runbooks import index_runbooks
    from core.settings import get_settings

    settings = get_settings()
    bar = ProgressBar("索引")
    try:
        report = index_runbooks(settings, args.data, progress=bar, check_allowed=False)
    finally:
        bar.close()
    _print_skipped(report)
    print(report.summary_ja())
    return 0


def _print_skipped(report) -> None:
    for name, message in report.skipped:
        print(f"スキップ: {name}: {message}", file=sys.stderr)


def add_principal_options(parser: argparse.ArgumentParser) -> None:
    """``--user NAME --groups a,b [--role operator]``: run as a given user (default: local)."""
    group = parser.add_argument_group("実行するユーザー（既定: local = すべてのコレクション）")
    group.add_argument(
        "--user", default=None, help="ユーザー名（サインインしたユーザーとして実行）"
    )
    group.add_argument(
        "--groups", default=None, help="所属グループ（カンマ区切り、例: soc-network,soc-leads）"
    )
    group.add_argument(
        "--role", default=None, help="ロール operator / reviewer / admin（既定: operator）"
    )


def principal_from_args(args: argparse.Namespace):  # -> core.access.Principal
    """The principal of ``--user`` / ``--groups`` / ``--role``; ``LOCAL`` without them."""
    from core.access import LOCAL, ROLES, Principal

    user = (getattr(args, "user", None) or "").strip()
    groups_text = getattr(args, "groups", None)
    role = getattr(args, "role", None)
    if not user:
        if groups_text is not None or role is not None:
            raise WorkbenchError("--groups と --role は --user と一緒に指定してください。")
        return LOCAL
    role = (role or "operator").strip()
    if role not in ROLES:
        raise WorkbenchError(f"--role は {' / '.join(ROLES)} のいずれかにしてください: {role}")
    groups = tuple(dict.fromkeys(g.strip() for g in (groups_text or "").split(",") if g.strip()))
    return Principal(subject=user, name=user, role=role, groups=groups, signed_in=True)


def _weights(text: str | None) -> dict[str, float] | None:
    if not text:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise WorkbenchError(
            "--weights は KW,SEM,GRAPH の3つの数値で指定してください（例: 0.4,0.6,0）。"
        )
    try:
        kw, sem, graph = (float(p) for p in parts)
    except ValueError as exc:
        raise WorkbenchError("--weights には数値を指定してください（例: 0.4,0.6,0）。") from exc
    return {"keyword": kw, "semantic": sem, "graph": graph}


def cmd_search(args: argparse.Namespace) -> int:
    from core.runbooks import search_runbooks
    from core.settings import get_settings

    outcome = search_runbooks(
        get_settings(),
        args.query,
        limit=args.k,
        fusion=args.fusion,
        weights=_weights(args.weights),
        data=args.data,
        min_relevance=args.min_relevance,
        principal=principal_from_args(args),
    )
    if args.json:
        print(
            json.dumps(
                outcome.result.model_dump(mode="json", by_alias=True), ensure_ascii=False, indent=2
            )
        )
        return 0
    if not outcome.hits:
        print("該当する結果はありませんでした。")
        return 0
    for rank, hit in enumerate(outcome.hits, start=1):
        c = hit.chunk
        print(
            f"[{rank}] {c.source} > {c.heading or c.title}  スコア {hit.score:.3f}"
            f" (BM25 {hit.raw['bm25']:.2f} / cos {hit.raw['cosine']:.3f} / graph {hit.raw['graph']:.2f})"
        )
        excerpt = c.body.replace("\n", " ")
        print("    " + (excerpt[:160] + ("…" if len(excerpt) > 160 else "")))
    print(
        f"（{outcome.result.total_count}件中 {len(outcome.hits)}件、{outcome.result.processing_time:.1f} ms）"
    )
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from core.runbook_chat import ChatConfig, ask
    from core.runbooks import prepare_index
    from core.settings import get_settings

    # The first question of a folder builds its index (minutes on a large folder): shown on
    # stderr, so that --json output stays the answer alone. A folder that cannot be read is
    # left to ask(), which answers with the reason.
    bar = ProgressBar("インデックスを構築しています")
    try:
        report = prepare_index(get_settings(), args.data, progress=bar)
    except WorkbenchError:
        report = None
    finally:
        bar.close()
    if report is not None:
        _print_skipped(report)
        print(f"インデックスを構築しました: {report.summary_ja()}", file=sys.stderr)
    config = ChatConfig(
        k=args.k,
        bm25_weight=args.bm25_weight,
        data=args.data,
        session_id="cli",
        principal=principal_from_args(args),
    )
    answer = ask(args.question, [], config, get_settings())
    if args.json:
        print(json.dumps(answer.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return 2 if answer.error else 0
    if answer.error:
        print(f"エラー: {answer.error}", file=sys.stderr)
        return 2
    print(answer.display_text())
    print()
    mode = {"llm": f"LLM（{answer.model}）", "extractive": "抽出型（LLM 不使用）"}.get(
        answer.answer_mode, "定型応答"
    )
    print(f"回答モード: {mode}  処理時間: {answer.processing_time_sec:.2f} 秒")
    for c in answer.citations:
        if c.cited:
            print(f"  [{c.n}] 引用元: {c.file} > {c.heading} (スコア: {c.score:.2f})")
    flags = [name for name, on in answer.flags.model_dump().items() if on]
    if flags:
        print("フラグ: " + ", ".join(flags))
    for warning in answer.warnings:
        print(f"警告: {warning}", file=sys.stderr)
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from core.ingest.inspect import inspect_file, render_inspection
    from core.settings import get_settings

    result = inspect_file(args.file, get_settings())
    if args.json:
        print(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
    else:
        print(render_inspection(result))
    return 0


def cmd_audit_verify(args: argparse.Namespace) -> int:
    from datetime import date

    from core.audit import keyring_for, log_path
    from core.audit_keys import AuditKeyError
    from core.audit_verify import INTACT, TAMPERED, verify_file, verify_log
    from core.settings import get_settings

    settings = get_settings()
    logs_dir = settings.logs_dir
    if args.against is not None:
        from core.audit_against import verify_against

        against = verify_against(logs_dir, args.against)
        for message in against.messages_ja():
            print(message, file=sys.stdout if against.exit_code == INTACT else sys.stderr)
        return against.exit_code
    try:
        keys = keyring_for(settings, create=False)
    except AuditKeyError as exc:
        if not any(logs_dir.glob("query_*.jsonl*")):
            print("監査ログはまだありません（記録が 1 件も無い状態です）。")
            return INTACT
        print(f"確認できません: {exc.user_message}", file=sys.stderr)
        return 2
    if args.date:
        try:
            day = date.fromisoformat(args.date)
        except ValueError as exc:
            raise WorkbenchError(f"日付は YYYY-MM-DD で指定してください: {args.date}") from exc
        path = log_path(logs_dir, day)
        if not path.exists():
            print(f"{path.name} がありません。", file=sys.stderr)
            return TAMPERED
        check = verify_file(path, keys)
        print(check.message_ja())
        return INTACT if check.ok else TAMPERED
    report = verify_log(logs_dir, keys)
    for message in report.messages_ja():
        print(message, file=sys.stdout if report.exit_code == INTACT else sys.stderr)
    return report.exit_code


def cmd_audit_rotate(args: argparse.Namespace) -> int:
    from core.audit import keyring_for, rotate_key
    from core.settings import get_settings

    settings = get_settings()
    new_id = rotate_key(settings.logs_dir, keyring_for(settings))
    print(f"監査ログの署名鍵を交替しました（新しい鍵: {new_id}）。交替はログに記録されています。")
    return 0


def cmd_audit_ship(args: argparse.Namespace) -> int:
    """One pass (or ``--follow``): 0 everything sent, 1 records left unsent, 2 nothing configured."""
    import threading

    from core.audit_ship import ship_all
    from core.settings import get_settings

    settings = get_settings()
    if not settings.audit_ship_destinations:
        print(
            "送信先が設定されていません（WB_AUDIT_SHIP_DESTINATIONS。README「監査ログの SIEM 転送」）。",
            file=sys.stderr,
        )
        return 2
    stop = threading.Event()
    while True:
        reports = ship_all(settings, args.destination or None, stop=stop)
        for report in reports:
            for warning in report.warnings:
                print(f"警告: {warning}", file=sys.stderr)
            print(report.summary_ja(), file=sys.stdout if report.ok else sys.stderr)
        if not args.follow:
            return 0 if all(r.ok and not r.pending for r in reports) else 1
        stop.wait(settings.audit_ship_interval_sec)


def cmd_serve(args: argparse.Namespace) -> int:
    import os

    from core.serving import exposure_problem, read_auth_config
    from core.settings import get_settings

    settings = get_settings()
    address = settings.server_address if args.address is None else args.address
    port = settings.server_port if args.port is None else args.port
    problem = exposure_problem(
        address, read_auth_config(settings.secrets_file), settings.allow_anonymous
    )
    if problem:
        raise WorkbenchError(problem)
    app = settings.project_root / "app.py"
    if not app.exists():
        raise WorkbenchError(
            f"アプリ（{app}）がありません。画面はリポジトリのチェックアウトから起動してください。"
        )
    if not args.no_index:
        cmd_index(argparse.Namespace(data=None))
    # before the server loads the embedder (OpenMP reads it once, at start-up)
    os.environ.setdefault("OMP_NUM_THREADS", str(settings.serve_threads_per_answer))
    streamlit = [sys.executable, "-m", "streamlit", "run", str(app)]
    options = ["--server.address", address, "--server.port", str(port)]
    options += ["--server.headless", "true", "--browser.gatherUsageStats", "false"]
    # the same as .streamlit/config.toml: no source watching, no gc.collect(2) after each rerun
    options += ["--server.fileWatcherType", "none", "--runner.postScriptGC", "false"]
    if settings.secrets_path is not None:  # Streamlit's st.login reads the same [auth]
        options += ["--secrets.files", str(settings.secrets_path)]
    # The client address rule is the app's (core.identity.client_address, WB_TRUSTED_PROXIES):
    # stop uvicorn from rewriting the peer from X-Forwarded-For itself (it trusts loopback).
    env = {**os.environ, "FORWARDED_ALLOW_IPS": ""}
    print(f"http://{address}:{port} で起動します。", file=sys.stderr)
    sys.stdout.flush()
    os.execve(sys.executable, [*streamlit, *options], env)
    return 0  # not reached


# Feature packages add their own subcommands: each module has ``register(subparsers)``.
# Keyed by the command name, so that only the module of the command being run is imported
# (some pull in pandas or the wiki index; the runbook commands should start fast).
SUBCOMMANDS: dict[str, str] = {
    "interview": "core.interview.cli",
    "qset": "core.question_sets.cli",
    "wiki": "core.wiki.cli",
    "eval": "core.evaluation.cli",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``command`` given, only that feature module is imported."""
    parser = argparse.ArgumentParser(prog="python -m core", description="SOC ワークベンチ CLI")
    sub = parser.add_subparsers(dest="command", required=True)

    p_index = sub.add_parser("index", help="インデックスを構築・更新する")
    p_index.add_argument("target", choices=["runbooks"])
    p_index.add_argument("--data", type=Path, default=None, help="手順書フォルダ（既定: サンプル）")
    p_index.set_defaults(func=cmd_index)

    p_search = sub.add_parser("search", help="手順書を検索する")
    p_search.add_argument("query")
    p_search.add_argument("--k", type=int, default=5)
    p_search.add_argument("--fusion", choices=["weighted", "rrf"], default="weighted")
    p_search.add_argument("--weights", default=None, help="KW,SEM,GRAPH（合計1.0）")
    p_search.add_argument("--min-relevance", type=float, default=0.0)
    p_search.add_argument("--data", type=Path, default=None)
    p_search.add_argument("--json", action="store_true")
    add_principal_options(p_search)
    p_search.set_defaults(func=cmd_search)

    p_ask = sub.add_parser("ask", help="手順書チャットに質問する")
    p_ask.add_argument("question")
    p_ask.add_argument("--k", type=int, default=4)
    p_ask.add_argument("--bm25-weight", type=float, default=0.6)
    p_ask.add_argument("--data", type=Path, default=None)
    p_ask.add_argument("--json", action="store_true")
    add_principal_options(p_ask)
    p_ask.set_defaults(func=cmd_ask)

    p_inspect = sub.add_parser(
        "inspect", help="文書の読み取り結果（タイトル・見出し・チャンク）を表示する"
    )
    p_inspect.add_argument(
        "file", type=Path, help=".md / .pdf / .docx / .html / .txt などのファイル"
    )
    p_inspect.add_argument("--json", action="store_true")
    p_inspect.set_defaults(func=cmd_inspect)

    p_audit = sub.add_parser("audit", help="監査ログ")
    audit_sub = p_audit.add_subparsers(dest="audit_command", required=True)
    p_verify = audit_sub.add_parser("verify", help="ハッシュチェーンを検証する")
    p_verify.add_argument("--date", default=None, help="YYYY-MM-DD（既定: すべての日）")
    p_verify.add_argument(
        "--against",
        type=Path,
        default=None,
        metavar="FILE",
        help="SIEM から書き出した写し（JSONL）と照合し、送信後の編集・削除を示す",
    )
    p_verify.set_defaults(func=cmd_audit_verify)
    p_ship = audit_sub.add_parser("ship", help="監査ログを SIEM（syslog / HTTP）へ転送する")
    p_ship.add_argument(
        "--destination", action="append", default=[], help="送信先の名前（既定: すべて）"
    )
    p_ship.add_argument("--follow", action="store_true", help="終了せずに一定間隔で送り続ける")
    p_ship.set_defaults(func=cmd_audit_ship)
    p_rotate = audit_sub.add_parser("rotate-key", help="署名鍵を交替し、交替をログに記録する")
    p_rotate.set_defaults(func=cmd_audit_rotate)

    p_serve = sub.add_parser("serve", help="公開範囲を確認し、索引を更新してアプリを起動する")
    p_serve.add_argument(
        "--address", default=None, help="待ち受けアドレス（既定: WB_SERVER_ADDRESS）"
    )
    p_serve.add_argument("--port", type=int, default=None, help="ポート（既定: WB_SERVER_PORT）")
    p_serve.add_argument("--no-index", action="store_true", help="起動前の索引の更新を省く")
    p_serve.set_defaults(func=cmd_serve)

    for name, module in SUBCOMMANDS.items():
        if command is None or command == name:
            importlib.import_module(module).register(sub)
        else:
            sub.add_parser(name, help=f"（{name} のヘルプは python -m core {name} -h）")
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    install_log_masking()  # no raw question, address or secret on stderr
    argv = sys.argv[1:] if argv is None else argv
    command = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser(command).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except WorkbenchError as exc:
        print(f"エラー: {exc.user_message}", file=sys.stderr)
        if getattr(exc, "errors", None):
            for path, message in exc.errors:
                print(f"  {path}: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("中断しました。完了した分は保存されています。", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
