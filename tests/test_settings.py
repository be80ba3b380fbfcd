from pathlib import Path

from core.settings import PROJECT_ROOT, Settings


def test_default_paths_are_at_the_project_root(monkeypatch):
    monkeypatch.delenv("WB_STATE_DIR", raising=False)
    s = Settings(_env_file=None)
    assert s.chroma_dir == PROJECT_ROOT / "chroma_db"
    assert s.logs_dir == PROJECT_ROOT / "logs"
    assert s.index_dir == PROJECT_ROOT / "indexes"
    assert s.answer_mode == "extractive"


def test_state_dir_moves_every_generated_path(monkeypatch, tmp_path):
    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path))
    s = Settings(_env_file=None)
    for path in (
        s.chroma_dir,
        s.logs_dir,
        s.index_dir,
        s.runbook_index_dir,
        s.wiki_index_dir,
        s.sessions_db,
    ):
        assert Path(path).is_relative_to(tmp_path)


def test_provider_variables_are_read_as_they_are(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:7687")
    s = Settings(_env_file=None)
    assert s.openai_base_url == "http://127.0.0.1:9/v1" and s.llm_enabled
    assert s.answer_mode == "llm"
    assert s.neo4j_uri == "bolt://127.0.0.1:7687"


def test_datasets_dir_is_read_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("WB_DATASETS_DIR", str(tmp_path))
    s = Settings(_env_file=None)
    assert s.datasets_dir == tmp_path
    assert s.dataset_path("jsquad-v1.3", "valid-v1.3.json") is None  # not there: benches stop
    wanted = tmp_path / "jsquad-v1.3" / "valid-v1.3.json"
    wanted.parent.mkdir()
    wanted.write_text("{}", "utf-8")
    assert s.dataset_path("jsquad-v1.3", "valid-v1.3.json") == wanted
