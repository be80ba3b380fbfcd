"""Who sees which runbook collection: the manifest, its defaults and every way it can be wrong."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from core.access import LOCAL, Principal
from core.collections import (
    DEFAULT_COLLECTION,
    CollectionRules,
    allowed_collections,
    collection_of,
    load_rules,
)


def user(*groups: str, role: str = "operator") -> Principal:
    return Principal(subject="u", name="u", role=role, groups=groups, signed_in=True)


def data_folder(
    tmp_path: Path, manifest: str | bytes | None, name: str = "collections.yaml"
) -> Path:
    folder = tmp_path / "runbooks"
    for sub in ("network", "malware"):
        (folder / sub).mkdir(parents=True)
    if manifest is not None:
        path = folder / name
        path.write_bytes(manifest if isinstance(manifest, bytes) else manifest.encode("utf-8"))
    return folder


def test_the_collection_is_the_first_folder():
    assert collection_of("network/vpn.md") == "network"
    assert collection_of("network/deep/vpn.md") == "network"
    assert collection_of("vpn.md") == DEFAULT_COLLECTION


def test_local_and_admins_see_everything(tmp_path):
    folder = data_folder(tmp_path, "collections:\n  network: [net]\n")
    assert allowed_collections(LOCAL, folder) is None
    assert allowed_collections(user(role="admin"), folder) is None


def test_without_a_manifest_a_group_sees_its_folder_and_the_default(tmp_path):
    folder = data_folder(tmp_path, None)
    assert allowed_collections(user("network"), folder) == {"network", DEFAULT_COLLECTION}
    assert allowed_collections(user(), folder) == {DEFAULT_COLLECTION}
    assert load_rules(folder).problems == ()


def test_the_manifest_maps_collections_to_groups(tmp_path):
    folder = data_folder(
        tmp_path,
        "public: [default, network]\ncollections:\n  malware:\n    groups: [mal, leads]\n",
    )
    assert allowed_collections(user("leads"), folder) == {"default", "network", "malware"}
    assert allowed_collections(user("net"), folder) == {"default", "network"}
    # a listed collection is not opened by a group of the same name
    assert "malware" not in allowed_collections(user("malware"), folder)


def test_the_default_collection_can_be_restricted(tmp_path):
    folder = data_folder(tmp_path, "collections:\n  default: [core]\n  network: [net]\n")
    assert allowed_collections(user("net"), folder) == {"network"}
    assert allowed_collections(user("core"), folder) == {"default"}


def test_json_manifests_work_too(tmp_path):
    folder = data_folder(tmp_path, '{"collections": {"network": ["net"]}}', "collections.json")
    assert allowed_collections(user("net"), folder) == {"default", "network"}


@pytest.mark.parametrize(
    "manifest",
    [
        "collections: [network\n",  # YAML syntax
        b"\xff\xfe\x00collections",  # not UTF-8
        "- network\n- malware\n",  # not a mapping
        "colections:\n  network: [net]\n",  # a typo: its rules would be lost
        "public: yes\n",  # public must be a list
        "collections: [network]\n",  # collections must be a mapping
        "!!python/object/apply:os.system ['echo hacked']\n",  # no code from data files
    ],
)
def test_a_manifest_that_cannot_be_read_fails_closed(tmp_path, caplog, manifest):
    folder = data_folder(tmp_path, manifest)
    with caplog.at_level(logging.WARNING, logger="core.collections"):
        rules = load_rules(folder)
    assert rules.all_closed and rules.problems
    assert "collections.yaml" in rules.problems[0] and "読み込めません" in rules.problems[0]
    assert rules.problems[0] in caplog.text  # logged for the admins
    assert allowed_collections(user("network", "net", "malware"), folder) == frozenset()
    assert allowed_collections(LOCAL, folder) is None  # the rest works
    assert allowed_collections(user(role="admin"), folder) is None


def test_an_entry_that_cannot_be_read_closes_that_collection_only(tmp_path):
    folder = data_folder(tmp_path, "collections:\n  network: [net]\n  malware: {owners: x}\n")
    rules = load_rules(folder)
    assert not rules.all_closed and rules.closed == {"malware"}
    assert any("「malware」" in p for p in rules.problems)
    assert allowed_collections(user("net", "malware"), folder) == {"default", "network"}


def test_a_manifest_naming_a_missing_folder_is_reported_and_the_rest_works(tmp_path):
    folder = data_folder(tmp_path, "collections:\n  network: [net]\n  forensics: [dfir]\n")
    rules = load_rules(folder)
    assert [p for p in rules.problems if "「forensics」" in p and "フォルダが見つかりません" in p]
    assert allowed_collections(user("net"), folder) == {"default", "network"}


def test_rules_follow_the_manifest_when_it_changes(tmp_path):
    folder = data_folder(tmp_path, "collections:\n  network: [net]\n")
    assert "network" in allowed_collections(user("net"), folder)
    (folder / "collections.yaml").write_text("collections:\n  network: [other, more]\n")
    assert "network" not in allowed_collections(user("net"), folder)


def test_rules_object_defaults():
    rules = CollectionRules()
    assert rules.allowed_for(user("x")) == {"default", "x"}
    assert rules.allowed_for(LOCAL) is None
