"""``question_set_id`` is a human label: never parsed, never branched on (design 6.4, 6.5).

Two files that differ only in it behave identically everywhere (validation, export, generation,
run, comparison) apart from echoing the id; and no code in the package inspects its content.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import replace

import pytest

from core.question_sets.contract import (
    dumps_question_set,
    loads_question_set,
    parse_question_set,
    validate_payload,
)
from core.question_sets.diff import diff_runs
from core.question_sets.generation import (
    generate_question_set,
)
from core.question_sets.golden import (
    load_pool,
)
from core.question_sets.runner import execution_sha256, run_question_set
from core.settings import PROJECT_ROOT
from tests.question_sets.helpers import GOLDEN_DIR, valid_payload
from tests.question_sets.test_runner import search_target

Q = "customized_question_set"
LABELS = [
    "cqset-k518RG00000022-A-v1.1",  # the design's form
    "cqset-OTHER-B-v9.9",  # looks like another ordinance and pool
    "customized_question_set.v2",  # looks like a schema version
    "質問セット（2026年度）",
    "A-v1.1",
]


def with_label(data, label):
    data = copy.deepcopy(data)
    data[Q]["question_set_id"] = label
    return data


@pytest.mark.parametrize("mutate", [None, "dup", "version", "note"])
def test_validation_is_identical_whatever_the_label(mutate):
    base = valid_payload()
    if mutate == "dup":
        base[Q]["questions"][1]["question_id"] = "A-1-Q1"
    elif mutate == "version":
        base["schema_version"] = "customized_question_set.v1.1"
    elif mutate == "note":
        base[Q]["metadata"]["note"] = "PASS"
    results = {label: validate_payload(with_label(base, label)) for label in LABELS}
    assert len({tuple(r) for r in results.values()}) == 1


def test_export_differs_only_in_the_echoed_label():
    exports = [
        dumps_question_set(parse_question_set(with_label(valid_payload(), label)))
        for label in LABELS
    ]
    for label, raw in zip(LABELS, exports, strict=True):
        assert raw.replace(f'"question_set_id": "{label}"'.encode(), b"X") == exports[0].replace(
            f'"question_set_id": "{LABELS[0]}"'.encode(), b"X"
        )


def test_generation_differs_only_in_the_label():
    pool = load_pool(GOLDEN_DIR, "A-v1.1")
    results = [generate_question_set(pool, "k1", question_set_id=label) for label in LABELS]
    first = results[0]
    for result in results[1:]:
        assert replace(result.question_set, question_set_id="", metadata=None) == replace(
            first.question_set, question_set_id="", metadata=None
        )
        assert replace(result.report, question_set_id="", generated_at="") == replace(
            first.report, question_set_id="", generated_at=""
        )


def test_runs_and_comparison_are_identical_apart_from_the_echo(small_settings):
    sets = [loads_question_set(dumps_question_set(parse_question_set(with_label(valid_payload(), label))))
            for label in LABELS[:3]]  # fmt: skip
    runs = [run_question_set(qs, search_target(small_settings), small_settings).run for qs in sets]
    assert len({execution_sha256(qs) for qs in sets}) == 1
    strip = {"question_set_id", "started_at", "elapsed_ms"}
    for run, label in zip(runs, LABELS, strict=False):
        assert run.question_set_id == label
        assert all(r.question_set_id == label for r in run.records)
    records = [[r.model_dump(exclude=strip) for r in run.records] for run in runs]
    assert records[0] == records[1] == records[2]
    diff = diff_runs(runs[0], runs[1])
    assert not diff.has_differences and diff.notes == ()
    assert (diff.question_set_id_a, diff.question_set_id_b) == (LABELS[0], LABELS[1])


def offences(source: str) -> list[int]:
    """Lines where ``question_set_id`` is examined rather than stored, passed or shown."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    lines: list[int] = []
    for node in ast.walk(tree):
        is_label = (isinstance(node, ast.Attribute) and node.attr == "question_set_id") or (
            isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == "question_set_id"
        )
        if not is_label:
            continue
        parent = parents.get(node)
        if (
            (isinstance(parent, ast.Attribute) and parent.value is node)
            or (isinstance(parent, ast.Subscript) and parent.value is node)
            or isinstance(parent, ast.Compare | ast.BoolOp | ast.UnaryOp)
            or (isinstance(parent, ast.If | ast.IfExp | ast.While) and parent.test is node)
            or (isinstance(parent, ast.Call) and _is_regex_call(parent))
        ):
            lines.append(node.lineno)
    return lines


def _is_regex_call(call: ast.Call) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in {"match", "search", "fullmatch", "findall", "split", "sub"}  # fmt: skip


def test_the_static_check_catches_inspection():
    bad = """
if qs.question_set_id.startswith("cqset-"): pass
x = data["question_set_id"][:5]
y = run.question_set_id == "a"
z = re.match(r"cqset-(.*)", qs.question_set_id)
w = 1 if qs.question_set_id else 2
"""
    assert sorted(offences(bad)) == [2, 3, 4, 5, 6]
    assert offences("print(qs.question_set_id)\nd = {'question_set_id': qs.question_set_id}") == []


def test_no_code_inspects_the_label():
    """Static proof: in the package, its page and UI helpers, the label is only stored, passed
    and shown: never a method call on it, indexing, slicing, comparison, regex or condition."""
    sources = sorted((PROJECT_ROOT / "core" / "question_sets").glob("*.py"))
    sources += [
        PROJECT_ROOT / "views" / "question_sets.py",
        PROJECT_ROOT / "ui" / "question_sets.py",
    ]
    found = {
        path.name: lines
        for path in sources
        if (lines := offences(path.read_text(encoding="utf-8")))
    }
    assert found == {}
