"""The app shell and home page through Streamlit's AppTest."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.settings import PROJECT_ROOT


def test_home_shows_embedder_mode_and_index_status(monkeypatch, sample_state):
    monkeypatch.setenv("WB_STATE_DIR", str(sample_state))
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert "SOC ワークベンチ" in at.title[0].value
    labels = [m.label for m in at.metric]
    assert "埋め込みモデル" in labels and "回答モード" in labels
    assert any(m.value == "抽出型" for m in at.metric)
    assert any("文書" in s.value and "チャンク" in s.value for s in at.success)


def test_home_says_when_the_index_is_missing(monkeypatch, tmp_path):
    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path))
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert any("未構築" in w.value for w in at.warning)


def test_home_shows_build_time_in_the_configured_time_zone(monkeypatch, sample_state):
    """The index's build time is stored in UTC; the page shows it in WB_TIMEZONE."""
    monkeypatch.setenv("WB_STATE_DIR", str(sample_state))
    for tz, suffix in (("Asia/Tokyo", " JST"), ("UTC", " UTC")):
        monkeypatch.setenv("WB_TIMEZONE", tz)
        at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=60).run()
        assert not at.exception
        built = next(s.value for s in at.success if "最終構築" in s.value)
        assert "+00:00" not in built and f"{suffix}、" in built, built
