"""Wiki fixtures: small slices of the shared JSQuAD file (written to tmp, never into the project)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.settings import Settings
from tests.conftest import JSQUAD_VALID, make_settings

# Short articles (one or two chunks each): cheap to embed. チェリスト has a question whose
# answer is the title; 打楽器 and 天体暦 span several chunks.
SMALL_TITLES = [
    "天治",
    "享保",
    "CODEN",
    "チェリスト",
    "北史",
    "寛保",
    "ヘクトメートル",
    "東ヨーロッパ時間",
    "アマルティア・セン",
    "文部科学大臣",
    "打楽器",
]
# About 10 chunks: a build in batches of 4 can be killed between two batches.
RESUME_TITLES = ["清水建設", "ルガンスク人民共和国", "軌道長半径", "ハノーファー"]


def jsquad_slice(path: Path, titles: list[str]) -> Path:
    """Write the JSQuAD entries of ``titles`` (in the shared file's order) to ``path``."""
    data = json.loads(JSQUAD_VALID.read_text(encoding="utf-8"))
    entries = [e for e in data["data"] if e["title"] in set(titles)]
    assert len(entries) == len(titles), "a title is missing from the shared JSQuAD file"
    path.write_text(json.dumps({"version": "slice", "data": entries}, ensure_ascii=False), "utf-8")
    return path


@pytest.fixture(scope="session")
def small_jsquad(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return jsquad_slice(tmp_path_factory.mktemp("jsquad") / "small.json", SMALL_TITLES)


@pytest.fixture(scope="session")
def wiki_state(tmp_path_factory: pytest.TempPathFactory, small_jsquad: Path) -> Path:
    """A state folder whose default wiki index is built from the small slice (once)."""
    from core.wiki.index import build_wiki_index

    state = tmp_path_factory.mktemp("wiki-state")
    build_wiki_index(make_settings(state), f"jsquad:{small_jsquad}")
    return state


@pytest.fixture
def wiki_settings(wiki_state: Path) -> Settings:
    return make_settings(wiki_state)
