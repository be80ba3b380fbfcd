"""Shared fixtures: every test gets its own state folder (WB_STATE_DIR semantics), real components."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.settings import PROJECT_ROOT, Settings

SAMPLE_RUNBOOKS = PROJECT_ROOT / "data" / "runbooks"


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests run offline unless a test starts its own local OpenAI-compatible server."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "NEO4J_URI", "WB_OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def make_settings(state: Path, runbooks: Path | None = None, **extra) -> Settings:
    return Settings(
        _env_file=None,
        state_dir=state,
        runbooks_dir=runbooks or SAMPLE_RUNBOOKS,
        allowed_roots=[state, SAMPLE_RUNBOOKS.parent],
        **extra,
    )


def indexed_runbooks(tmp_path: Path, files: dict[str, str], **extra) -> tuple[Settings, Path]:
    """``files`` written to ``tmp_path/runbooks`` and indexed; the settings (``extra`` passed
    on) and the folder."""
    from core.runbooks import index_runbooks

    folder = tmp_path / "runbooks"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    settings = make_settings(tmp_path / "state", folder, **extra)
    index_runbooks(settings, folder, check_allowed=False)
    return settings, folder


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "state", tmp_path / "runbooks")


@pytest.fixture
def runbook_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "runbooks"
    folder.mkdir()
    return folder


@pytest.fixture(scope="session")
def sample_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A state folder with the sample runbooks indexed once for the whole session."""
    from core.runbooks import index_runbooks

    state = tmp_path_factory.mktemp("sample-state")
    index_runbooks(make_settings(state), None)
    return state


@pytest.fixture
def sample_settings(sample_state: Path) -> Settings:
    return make_settings(sample_state)


def copy_samples(dest: Path, names: list[str]) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy2(SAMPLE_RUNBOOKS / name, dest / name)
