"""The masking rules on a table of samples (positives and negatives)."""

import pytest

from core.masking import mask_text, mask_value

CASES = [
    ("連絡先は taro.yamada@corp.example.co.jp です", "連絡先は [EMAIL] です"),
    ("電話 03-1234-5678 まで", "電話 [PHONE] まで"),
    ("携帯 090-1234-5678", "携帯 [PHONE]"),
    ("+81 90 1234 5678 に連絡", "[PHONE] に連絡"),
    ("キーは sk-proj-abcdefghijklmnop1234 です", "キーは [API_KEY] です"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123", "token [API_KEY]"),
    ("AKIAABCDEFGHIJKLMNOP を無効化", "[API_KEY] を無効化"),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwx", "Authorization: Bearer [TOKEN]"),
    ("password=Hunter2pass", "password=[SECRET]"),
    ("パスワード：Secr3t!x", "パスワード：[SECRET]"),
    ("送信元 10.1.2.3 から", "送信元 [IP] から"),
    ("172.16.0.0/12 を遮断", "[IP] を遮断"),
    ("カード 4111 1111 1111 1111", "カード [CARD]"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r", "[TOKEN]"),
]

KEEP = [
    "C2 通信先 203.0.113.45 を遮断する",  # documentation range stays
    "192.0.2.10 と 198.51.100.7",
    "CVE-2024-3400 のパッチを適用",
    "イベントID 4625 を確認",
    "手順 1. から 3. まで 15分以内",
    "2025-04-01 14:30 に検知",
    "バージョン 10.2.3 に更新",
]


@pytest.mark.parametrize(("raw", "masked"), CASES)
def test_masked(raw, masked):
    assert mask_text(raw) == masked


@pytest.mark.parametrize("text", KEEP)
def test_kept(text):
    assert mask_text(text) == text


def test_nested_values():
    data = {"query": "a@b.example.com", "list": ["03-1234-5678", 3], "n": 1}
    assert mask_value(data) == {"query": "[EMAIL]", "list": ["[PHONE]", 3], "n": 1}
