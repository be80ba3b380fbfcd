"""What sign-in and attribution cost: the guard every page run pays, and the audit append.

    python -m bench.auth [--runs 5000] [--records 300]

1. The guard's core work on every Streamlit run with sign-in configured: read and check the
   secrets file's ``[auth]`` (``core.serving.read_auth_config``), map the ID token's claims to a
   role (``core.identity.principal_from_claims``) and derive the client address through a trusted
   proxy (``client_address``). ``app.py`` and the page's ``require`` each do it once per run.
   Printed as microseconds per run (p50 / p95), against the run without sign-in (the secrets file
   is absent: ``local``).
2. The audit append (mask, sign, chain, fsync) of a runbook answer, attributed to a signed-in user
   vs to ``local``, in the same run: the ratio shows what the four attribution fields add.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from core.access import LOCAL, Principal
from core.audit import AuditRecord, append_record, default_keyring
from core.identity import client_address, local_principal, principal_from_claims
from core.schemas.answer import Answer, Citation
from core.serving import read_auth_config
from core.settings import Settings

SECRETS = """[auth]
redirect_uri = "https://workbench.example.jp/oauth2callback"
cookie_secret = "0123456789abcdef0123456789abcdef"
client_id = "workbench"
client_secret = "secret"
server_metadata_url = "https://login.microsoftonline.com/tenant/v2.0/.well-known/openid-configuration"
"""
CLAIMS = {
    "sub": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
    "name": "佐藤 花子",
    "email": "hanako.sato@example.jp",
    "groups": [f"group-{i:02d}" for i in range(40)] + ["soc-reviewers"],
}
ROLE_MAP = {"soc-admins": "admin", "soc-reviewers": "reviewer", "soc-operators": "operator"}


def _percentiles(samples_us: list[float]) -> tuple[float, float]:
    ordered = sorted(samples_us)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def guard_run(secrets: Path, settings: Settings) -> Principal:
    auth = read_auth_config(secrets)
    address = client_address("10.0.0.1", "203.0.113.5", settings.trusted_proxies)
    if not auth.configured:
        return local_principal(address)
    return principal_from_claims(CLAIMS, settings, address)


def time_guard(secrets: Path, settings: Settings, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        guard_run(secrets, settings)
        samples.append((time.perf_counter() - t0) * 1e6)
    return samples


def answer() -> Answer:
    excerpt = "感染端末を EDR でネットワーク隔離する。端末の電源は切らない。" * 4
    return Answer(
        question="ランサムウェアに感染した端末の隔離手順",
        answer="1. 感染端末を EDR でネットワーク隔離する。 [1]\n2. 電源は切らない。 [1]",
        answer_mode="extractive",
        page="runbook_chat",
        citations=[
            Citation(n=n, chunk_id=f"ransomware-isolation.md#{n}", file="ransomware-isolation.md",
                     heading="初動対応", score=0.9, bm25_score=7.5, vector_score=0.82,
                     excerpt=excerpt[:200], text=excerpt, doc_hash="0" * 64)
            for n in range(1, 5)
        ],
    )  # fmt: skip


def time_appends(logs: Path, principal: Principal, records: int) -> list[float]:
    keys = default_keyring(logs)
    item = answer()
    samples = []
    for _ in range(records):
        t0 = time.perf_counter()
        append_record(logs, AuditRecord.from_answer(item, "bench", principal), keys=keys)
        samples.append((time.perf_counter() - t0) * 1e6)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5000)
    parser.add_argument("--records", type=int, default=300)
    args = parser.parse_args()
    settings = Settings(_env_file=None, role_map=ROLE_MAP, trusted_proxies=["10.0.0.0/24"])
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        secrets = root / "secrets.toml"
        secrets.write_text(SECRETS, encoding="utf-8")
        signed = _percentiles(time_guard(secrets, settings, args.runs))
        plain = _percentiles(time_guard(root / "missing.toml", settings, args.runs))
        print(f"guard per run, sign-in configured: p50 {signed[0]:.1f} µs, p95 {signed[1]:.1f} µs")
        print(f"guard per run, no sign-in (local):  p50 {plain[0]:.1f} µs, p95 {plain[1]:.1f} µs")
        alice = principal_from_claims(CLAIMS, settings, "203.0.113.5")
        # interleaved halves, so that both see the same disk and load
        signed_s: list[float] = []
        local_s: list[float] = []
        for _ in range(2):
            signed_s += time_appends(root / "logs-signed", alice, args.records // 2)
            local_s += time_appends(root / "logs-local", LOCAL, args.records // 2)
        s50, s95 = _percentiles(signed_s)
        l50, l95 = _percentiles(local_s)
        print(f"audit append, attributed:  p50 {s50 / 1000:.2f} ms, p95 {s95 / 1000:.2f} ms")
        print(f"audit append, local:       p50 {l50 / 1000:.2f} ms, p95 {l95 / 1000:.2f} ms")
        print(f"ratio attributed / local (p50): {s50 / l50:.2f}")


if __name__ == "__main__":
    main()
