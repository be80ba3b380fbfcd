"""A name the cited passage does not carry is the cited runbook's own when its other passages
carry it again and again (the Kafka runbook's commands), and names in identifiers count."""

from __future__ import annotations

import pytest

from core.runbook_chat import ChatConfig, _named_by_document, ask, runbook_corpus, search_runbooks
from core.text.glossary import missing_names
from tests.conftest import indexed_runbooks

# Written for this test: a broker runbook whose commands name the product, and a general guide
# that names a SIEM once.
RUNBOOKS = {
    "broker-outage.md": """# Incident Runbook: Broker Outage

## Verify broker status

```
kubectl get pods -n kafka -l strimzi.io/name=prod-kafka-kafka
```

## Check the logs

```
kubectl logs -n kafka prod-kafka-kafka-0 --tail=100
```

## Restart the pod

```
kubectl delete pod -n kafka prod-kafka-kafka-1
```

## Disk usage above 90%

Shorten the retention of old log segments to 24 hours and add a volume to the broker.
""",
    "triage.md": """# アラートのトリアージ

## 手順

1. アラートの重大度と影響範囲を確認する。
2. 誤検知なら抑制ルールを登録する。

## ツール

ログは Splunk に集約している。

## 連絡

重大度が高い場合は当番に電話する。
""",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory):
    return indexed_runbooks(tmp_path_factory.mktemp("docnames"), RUNBOOKS)


def test_the_runbook_naming_the_product_in_its_commands_answers(folder):
    settings, data = folder
    question = "Kafka のブローカーのディスク使用率が 90% を超えた。短期対応は？"
    answer = ask(question, [], ChatConfig(session_id="t", data=data), settings)
    assert not answer.flags.insufficient_evidence, answer.answer
    assert answer.citations[0].file == "broker-outage.md"


def test_a_guide_naming_a_product_once_is_not_about_it(folder):
    settings, data = folder
    corpus = runbook_corpus(settings, data)
    hits = search_runbooks(settings, "アラートのトリアージの手順", data=data).hits
    assert hits[0].chunk.source == "triage.md"
    assert not _named_by_document("Splunk", hits[:1], corpus)
    broker = search_runbooks(settings, "broker disk usage above 90%", data=data).hits
    assert _named_by_document("Kafka", broker[:1], corpus)


def test_a_name_in_lower_case_counts_inside_an_identifier():
    assert missing_names(["Kafka"], ["kubectl get pods -l strimzi.io/name=prod-kafka-kafka"]) == []
    assert missing_names(["Kafka"], ["See kafka.apache.org for details."]) == []
    # the common word is not the product, at the end of a sentence too
    assert missing_names(["Volatility"], ["Expect market volatility."]) == ["Volatility"]
    assert missing_names(["Slack"], ["Leave some slack: time."]) == ["Slack"]
