"""The interview's search action over the Wikipedia index (WikiEvidence)."""

from __future__ import annotations

import pytest

from core.errors import IndexStateError
from core.interview.evidence import WikiEvidence, evidence_source
from tests.conftest import make_settings


def test_wiki_evidence_returns_cited_passages(wiki_settings):
    found = WikiEvidence(wiki_settings).search("点字 ルイ・ブライユ 六つの点", 3)
    assert found
    assert found[0].source.startswith("jawiki:") and "点字" in found[0].source
    assert 0 < found[0].score <= 1 and found[0].chunk_id


def test_unbuilt_wiki_index_is_a_clear_error(tmp_path):
    source = evidence_source(make_settings(tmp_path / "state"), "wiki")
    assert isinstance(source, WikiEvidence)
    with pytest.raises(IndexStateError, match="Wikipedia インデックスが未構築"):
        source.search("何か", 3)
    assert evidence_source(make_settings(tmp_path / "state"), None) is None
