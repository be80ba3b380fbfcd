"""Escaping of what the danger caption shows (Streamlit-free helpers of ui/citations.py)."""

from core.danger import describe
from core.schemas.answer import DangerMatch
from ui.citations import literal_markdown


def test_detected_phrase_is_shown_literally():
    m = DangerMatch(phrase="<img src=x> **rm -rf** [a](b)", source="answer", rule="command")
    shown = literal_markdown(describe(m))
    assert "<img" not in shown and "&lt;img" in shown
    assert "\\*\\*rm \\-rf\\*\\*" in shown and "\\[a\\]\\(b\\)" in shown
    assert shown.endswith("（回答・コマンド）")
