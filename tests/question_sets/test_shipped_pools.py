"""The shipped Golden Question Pools match what the workbench ships: the runbook pool's
generated set, run against the real runbook target over the sample runbooks, is answered."""

from __future__ import annotations

from core.question_sets.generation import generate_question_set
from core.question_sets.golden import DEFAULT_POOL_ID, list_pools, load_pool
from core.question_sets.runner import run_question_set
from core.question_sets.targets import make_target
from core.settings import Settings
from tests.conftest import SAMPLE_RUNBOOKS

# the sample runbook each feature of RB-v1.0 stands for
FEATURE_FILES = {
    "phishing": "phishing-report.md",
    "malware": "malware-infection.md",
    "ransomware": "ransomware-isolation.md",
    "edr_isolation": "edr-isolation-release.md",
    "vpn": "vpn-login-failure.md",
    "ddos": "ddos-response.md",
    "ad_lockout": "ad-account-lockout.md",
    "account_compromise": "account-compromise-password-reset.md",
    "backup_restore": "backup-restore.md",
    "data_leakage": "data-leakage.md",
    "patching": "emergency-patching.md",
    "escalation": "escalation-contacts.md",
    "evidence": "evidence-preservation.md",
    "firewall": "firewall-rule-change.md",
    "privileged_id": "privileged-id-usage.md",
    "shift_handover": "shift-handover.md",
}


def test_every_shipped_pool_verifies_and_the_runbook_pool_is_the_default():
    entries = {e.pool_id: e for e in list_pools(Settings(_env_file=None).golden_dir)}
    assert all(e.ok for e in entries.values()), [e.message for e in entries.values()]
    assert DEFAULT_POOL_ID == "RB-v1.0" and DEFAULT_POOL_ID in entries
    pool = load_pool(Settings(_env_file=None).golden_dir, DEFAULT_POOL_ID)
    assert set(pool.features) == set(FEATURE_FILES)
    assert all((SAMPLE_RUNBOOKS / name).is_file() for name in FEATURE_FILES.values())


def test_the_runbook_pool_is_answered_by_the_sample_runbooks(sample_settings):
    pool = load_pool(sample_settings.golden_dir, DEFAULT_POOL_ID)
    qs = generate_question_set(pool, "runbooks").question_set
    run = run_question_set(qs, make_target("runbook", sample_settings), sample_settings).run
    assert len(run.records) == len(pool.questions)
    requires = {q.question_id: q.requires[0] for q in pool.questions}
    answered = [r for r in run.records if r.error is None and r.answer_mode != "template"]
    on_target = [
        r
        for r in answered
        if r.citations and r.citations[0]["file"].endswith(FEATURE_FILES[requires[r.question_id]])
    ]
    assert len(answered) >= 0.8 * len(run.records), [
        (r.question_id, r.answer[:40]) for r in run.records if r not in answered
    ]
    assert len(on_target) >= 0.7 * len(run.records), [
        (r.question_id, r.citations[0]["file"] if r.citations else None)
        for r in answered
        if r not in on_target
    ]
