"""Wiki fixtures: the project's own JSQuAD-format articles (tests/support/jsquad_fixture.py),
written to tmp at test time."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.settings import Settings
from tests.conftest import make_settings
from tests.support.jsquad_fixture import SMALL_TITLES, write_jsquad


@pytest.fixture(scope="session")
def small_jsquad(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsquad(tmp_path_factory.mktemp("jsquad") / "small.json", SMALL_TITLES)


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
