"""Output safety of answer text: a table of hostile strings, each made inert, benign text kept."""

from __future__ import annotations

import pytest

from core.generation.safety import SafeStream, make_safe, safe_prefix, unsafe_target

HOSTILE = [
    ("[click](javascript:alert(1))", "click"),
    ("[click](JaVaScRiPt:alert(1))", "click"),
    ("[click]( javascript:alert(1) )", "click"),
    ("[click](<javascript:alert(1)>)", "click"),
    ("[click](java\tscript:alert(1))", "click"),
    ("[click](&#106;avascript:alert(1))", "click"),
    ("[click](&#x6A;avascript&colon;alert(1))", "click"),
    ("[click](java&#115;cript:alert(1))", "click"),
    ("[click](javascript\\:alert(1))", "click"),
    ("[click](\u200bjavascript:alert(1))", "click"),
    ('[click](javascript:alert(1) "title")', "click"),
    ("[x](vbscript:msgbox(1))", "x"),
    ("[x](VBScript:msgbox(1))", "x"),
    ("![img](data:image/svg+xml;base64,PHN2Zz4=)", "img"),
    ("[x](data:text/html,<script>alert(1)</script>)", "x"),
    ("[a [nested] label](javascript:alert(1))", "a [nested] label"),
]


@pytest.mark.parametrize(("raw", "label"), HOSTILE)
def test_unsafe_link_targets_keep_only_their_text(raw, label):
    safe = make_safe(f"手順は次のとおりです {raw} 以上。")
    low = safe.text.lower()
    for scheme in ("javascript", "vbscript", "data:"):
        assert scheme not in low.replace("&#106;", "").replace(" ", "") or "](" not in low
    assert "](" not in safe.text
    assert label in safe.text and safe.links
    assert NOTE_IN(safe)


def NOTE_IN(safe) -> bool:
    return any("無効化" in n for n in safe.notes())


@pytest.mark.parametrize(
    "raw",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        '<a href="javascript:alert(1)">x</a>',
        "<javascript:alert(1)>",
        "<iframe srcdoc='<script>alert(1)</script>'></iframe>",
        "<!-- comment --><svg/onload=alert(1)>",
    ],
)
def test_raw_html_is_escaped(raw):
    safe = make_safe(f"回答 {raw} です")
    assert "<" not in safe.text and "&lt;" in safe.text
    assert safe.html_tags >= 1 and any("HTML" in n for n in safe.notes())


def test_reference_definitions_cannot_turn_markers_into_links():
    safe = make_safe("隔離します [1]\n\n[1]: javascript:alert(1)\n[2]: https://example.com")
    assert "\n[1]:" not in safe.text and "\\[1\\]:" in safe.text and "\\[2\\]:" in safe.text
    assert safe.links == ["javascript:alert(1)"]


@pytest.mark.parametrize(
    "text",
    [
        "1. EDR で端末を隔離する [1]\n2. 責任者に報告する [2]",
        "詳細は [NIST SP 800-61](https://csrc.nist.gov/pubs/sp/800/61/r2/final) を参照 [1]",
        "しきい値は 5 回 > 3 回です",
        "",
    ],
)
def test_benign_text_is_unchanged(text):
    safe = make_safe(text)
    assert safe.text == text and not safe.changed and safe.notes() == []


def test_code_is_left_as_written():
    text = "実行: `netsh advfirewall set <profile>`\n\n```\nGet-Process | Where {$_.CPU -gt 10} <x>\n```\n後 <b>"
    safe = make_safe(text)
    assert "`netsh advfirewall set <profile>`" in safe.text
    assert "{$_.CPU -gt 10} <x>\n```" in safe.text
    assert safe.text.endswith("後 &lt;b>")


@pytest.mark.parametrize("raw", [r for r, _ in HOSTILE] + ["<script>x</script>", "[1]: data:x"])
def test_idempotent(raw):
    once = make_safe(raw).text
    assert make_safe(once).text == once


def test_unsafe_target_detects_schemes_only():
    assert (
        unsafe_target("javascript:x")
        and unsafe_target(" DATA:x")
        and unsafe_target("&#118;bscript:x")
    )
    assert not unsafe_target("https://example.com/javascript:x") and not unsafe_target("#x")


def test_stream_shows_only_safe_prefixes():
    raw = "隔離します [1]。[click](javascript:alert(1)) と <script>x</script> の後 [2]。"
    stream = SafeStream()
    shown = "".join(stream.feed(raw[i : i + 3]) for i in range(0, len(raw), 3))
    assert "javascript" not in shown and "<script" not in shown
    assert make_safe(raw).text.startswith(shown) and len(shown) > 10
    assert safe_prefix("abc [cli") == "abc "
    assert safe_prefix("abc &#10") == "abc "
