"""The masking policy on the PII table (0 raw values left) and the over-masking table (0 masked)."""

import logging

import pytest

from core.masking import (
    MaskingFilter,
    MaskPolicy,
    luhn_ok,
    mask_text,
    mask_value,
    my_number_ok,
)
from tests.support.pii import KEEP, PII

EXACT = [
    ("連絡先は taro.yamada@corp.example.co.jp です", "連絡先は [EMAIL] です"),
    ("電話 03-1234-5678 まで", "電話 [PHONE] まで"),
    ("代表は(03)1234-5678です", "代表は[PHONE]です"),
    ("+81 90 1234 5678 に連絡", "[PHONE] に連絡"),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwx", "Authorization: Bearer [TOKEN]"),
    ("password=Hunter2pass", "password=[SECRET]"),
    ("パスワードは Hunter2! です", "パスワードは [SECRET] です"),
    ("カード 4111 1111 1111 1111", "カード [CARD]"),
    ("担当の田中さんに連絡", "担当の[NAME]さんに連絡"),
    ("攻撃元 2400:cb00:2048:1::c629:d7a2 を遮断", "攻撃元 [IP] を遮断"),
    ("::ffff:8.8.8.8 から", "[IP] から"),
]


@pytest.mark.parametrize(("text", "raw"), PII)
def test_pii_table_leaves_no_raw_value(text, raw):
    masked = mask_text(text)
    for value in raw:
        assert value not in masked, masked


@pytest.mark.parametrize("text", KEEP)
def test_over_masking_table_is_left_alone(text):
    assert mask_text(text) == text


@pytest.mark.parametrize(("raw", "masked"), EXACT)
def test_placeholders(raw, masked):
    assert mask_text(raw) == masked


def test_checksums():
    assert luhn_ok("4111111111111111") and not luhn_ok("4111111111111112")
    assert luhn_ok("378282246310005")  # Amex, 15 digits
    assert my_number_ok("123456789018") and not my_number_ok("123456789012")
    assert mask_text("番号 1234 5678 9018") == "番号 [ID_NUMBER]"


def test_policy_switches():
    assert mask_text("田中さん", MaskPolicy(person_names=False)) == "田中さん"
    assert mask_text("社内 10.1.2.3", MaskPolicy(private_ips=True)) == "社内 [IP]"


def test_masking_is_stable_on_its_own_output():
    for text, _ in PII:
        once = mask_text(text)
        assert mask_text(once) == once


def test_nested_values():
    data = {"query": "a@b.example.com", "list": ["03-1234-5678", 3], "n": 1}
    assert mask_value(data) == {"query": "[EMAIL]", "list": ["[PHONE]", 3], "n": 1}


def test_log_filter_masks_message_args_and_traceback():
    record = logging.LogRecord(
        "core.x",
        logging.WARNING,
        __file__,
        1,
        "slow answer for %r",
        ("田中さん 090-1234-5678",),
        None,
    )
    try:
        raise ValueError("pw=abc123")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    MaskingFilter().filter(record)
    text = logging.Formatter().format(record)
    assert "090-1234-5678" not in text and "田中" not in text and "abc123" not in text
