"""Japanese validation messages for the Pydantic models of the project.

The search contract's global error map (seed search-schemas.md, section 3) applied to any
``ValidationError``: fixed messages per error type, bounds with their limit, enum choices,
custom messages (``contract_enum``, ``value_error``) as written. Paths are dotted, with list
indexes in brackets (``options.weights.keyword``, ``cases[3].query``).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import ErrorDetails

_FIXED_MESSAGES: dict[str, str] = {
    "missing": "必須項目です",
    "string_type": "文字列である必要があります",
    "float_type": "数値である必要があります",
    "float_parsing": "数値である必要があります",
    "int_parsing": "数値である必要があります",
    "int_from_float": "整数である必要があります",
    "finite_number": "有限の数値である必要があります",
    "bool_type": "真偽値である必要があります",
    "bool_parsing": "真偽値である必要があります",
    "list_type": "配列である必要があります",
    "dict_type": "オブジェクトである必要があります",
    "model_type": "オブジェクトである必要があります",
    "model_attributes_type": "オブジェクトである必要があります",
    "datetime_type": "日時（ISO 8601 形式の文字列）である必要があります",
    "datetime_parsing": "日時（ISO 8601 形式の文字列）である必要があります",
    "datetime_from_date_parsing": "日時（ISO 8601 形式の文字列）である必要があります",
    "datetime_object_invalid": "日時（ISO 8601 形式の文字列）である必要があります",
    "uuid_type": "UUIDである必要があります",
    "uuid_parsing": "UUIDである必要があります",
    "uuid_version": "UUIDである必要があります",
    "extra_forbidden": "未定義の項目です",
    "json_invalid": "JSONとして解析できません",
    "json_type": "JSON文字列である必要があります",
}

_BOUND_MESSAGES: dict[str, tuple[str, str]] = {
    "string_too_short": ("min_length", "{}文字以上である必要があります"),
    "string_too_long": ("max_length", "{}文字以下である必要があります"),
    "greater_than_equal": ("ge", "{}以上である必要があります"),
    "less_than_equal": ("le", "{}以下である必要があります"),
    "greater_than": ("gt", "{}より大きい必要があります"),
    "less_than": ("lt", "{}より小さい必要があります"),
    "too_short": ("min_length", "{}個以上の要素が必要です"),
    "too_long": ("max_length", "{}個以下の要素である必要があります"),
}


def _format_number(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _choices(expected: object) -> str:
    # Pydantic's ctx "expected" reads "'a', 'b' or 'c'"; render it as "a, b, c".
    return re.sub(r"'([^']*)'", r"\1", str(expected)).replace(" or ", ", ")


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    ctx: dict[str, Any] = dict(error.get("ctx") or {})
    if kind == "contract_enum":
        return error["msg"]
    if kind in ("value_error", "assertion_error") and "error" in ctx:
        return str(ctx["error"])
    if kind == "int_type":  # Zod: a non-number is "not a number"; a fraction is "not an integer"
        value = error.get("input")
        is_number = isinstance(value, int | float) and not isinstance(value, bool)
        return "整数である必要があります" if is_number else "数値である必要があります"
    if kind in _BOUND_MESSAGES:
        key, template = _BOUND_MESSAGES[kind]
        return template.format(_format_number(ctx.get(key)))
    if kind in ("enum", "literal_error"):
        return f"{_choices(ctx.get('expected', ''))} のいずれかである必要があります"
    return _FIXED_MESSAGES.get(kind, f"値が不正です（{kind}）")


def _format_path(loc: tuple[int | str, ...], camel: bool) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += ("." if path else "") + (to_camel(part) if camel else str(part))
    return path


def japanese_errors(exc: ValidationError, *, camel: bool = True) -> list[tuple[str, str]]:
    """Translate Pydantic errors into ``(dotted path, Japanese message)`` pairs; the path uses
    the contract's camelCase names unless ``camel`` is False (models with snake_case JSON)."""
    return [(_format_path(tuple(e["loc"]), camel), _message(e)) for e in exc.errors()]
