"""Property-based fuzzing: arbitrary JSON, arbitrary bytes and near-valid files never crash.

Every input is either a valid set or a list of Japanese errors with paths; a valid set always
exports canonically and round-trips byte for byte.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import ContractError
from core.question_sets.contract import (
    dumps_question_set,
    loads_question_set,
    parse_question_set,
    validate_payload,
)
from core.question_sets.draft import draft_from_payload, draft_to_payload
from tests.question_sets.helpers import has_japanese, to_bytes, valid_payload

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
Q = "customized_question_set"

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)  # fmt: skip


def check_outcome(data: Any) -> None:
    issues = validate_payload(data)
    assert isinstance(issues, list)
    for path, message in issues:
        assert isinstance(path, str) and isinstance(message, str)
        assert has_japanese(message), message
    if issues:
        try:
            parse_question_set(data)
        except ContractError as exc:
            assert exc.errors == issues
        else:  # pragma: no cover - a failure
            raise AssertionError("invalid data parsed")
    else:
        qs = parse_question_set(data)
        raw = dumps_question_set(qs)
        assert dumps_question_set(loads_question_set(raw)) == raw
    # the editor can always open what the validator can judge
    draft, _ = draft_from_payload(data)
    assert isinstance(draft_to_payload(draft), dict)


@FUZZ
@given(json_values)
def test_arbitrary_json_values(data):
    check_outcome(data)


@FUZZ
@given(st.dictionaries(st.sampled_from(["schema_version", Q, "x"]), json_values, max_size=3))
def test_arbitrary_roots_with_contract_keys(data):
    check_outcome(data)


@FUZZ
@given(st.binary(max_size=300))
def test_arbitrary_bytes(raw):
    try:
        qs = loads_question_set(raw)
    except ContractError as exc:
        assert exc.errors and all(has_japanese(m) for _, m in exc.errors)
        assert has_japanese(exc.user_message)
    else:
        assert qs.questions


PATHS = [
    ("schema_version",),
    (Q,),
    (Q, "ordinance_id"),
    (Q, "question_set_id"),
    (Q, "source_golden_question_pool"),
    (Q, "questions"),
    (Q, "questions", 0),
    (Q, "questions", 1, "question_id"),
    (Q, "questions", 2, "question_text"),
    (Q, "metadata"),
    (Q, "metadata", "generated_at"),
    (Q, "metadata", "note"),
]


def _set(data: Any, path: tuple, value: Any) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


def _delete(data: Any, path: tuple) -> None:
    for part in path[:-1]:
        data = data[part]
    del data[path[-1]]


def _dotted(path: tuple) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + part
    return out


OPTIONAL = {(Q, "metadata"), (Q, "metadata", "generated_at"), (Q, "metadata", "note"), (Q, "questions", 0)}  # fmt: skip


@FUZZ
@given(st.sampled_from(PATHS), json_values, st.booleans())
def test_near_valid_files_one_field_wrong(path, value, delete):
    data = copy.deepcopy(valid_payload())
    if delete:
        _delete(data, path)
    else:
        _set(data, path, value)
    check_outcome(data)
    issues = validate_payload(data)
    if delete and path not in OPTIONAL:
        assert issues
    # every error names the changed field or lies inside it
    target = _dotted(path)
    assert all(p.startswith(target) or "重複" in m for p, m in issues), (target, issues)


@FUZZ
@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=12), st.text(min_size=1, max_size=40)),
        min_size=1,
        max_size=6,
    ),
    st.text(min_size=1, max_size=20),
)
def test_generated_sets_validate_exactly_when_their_rules_hold(rows, ordinance):
    data = valid_payload()
    data[Q]["ordinance_id"] = ordinance
    data[Q]["questions"] = [{"question_id": i, "question_text": t} for i, t in rows]
    issues = validate_payload(data)
    ids = [i for i, _ in rows]
    blank_or_control = any(
        not s.strip() or any((ord(c) < 32 and c not in "\t\n\r") or ord(c) == 127 for c in s)
        for s in [ordinance, *ids, *(t for _, t in rows)]
    )
    has_surrogate = any(0xD800 <= ord(c) <= 0xDFFF for s in [ordinance, *ids, *(t for _, t in rows)] for c in s)  # fmt: skip
    duplicated = len(set(ids)) != len(ids)
    assert (issues == []) == (not blank_or_control and not duplicated and not has_surrogate)
    if not issues:
        raw = to_bytes(data)
        assert [q.question_id for q in loads_question_set(raw).questions] == ids
        assert json.loads(dumps_question_set(loads_question_set(raw))) == data
