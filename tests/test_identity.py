"""Roles from the ID token's claim, the principal of a signed-in user, the trusted-proxy rule."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.access import LOCAL
from core.identity import (
    AccessDenied,
    claim_values,
    client_address,
    local_principal,
    principal_from_claims,
    role_for,
)
from core.settings import Settings

ROLE_MAP = {"soc-admins": "admin", "soc-reviewers": "reviewer", "soc-operators": "operator"}


def _settings(**extra) -> Settings:
    return Settings(_env_file=None, role_map=ROLE_MAP, **extra)


def test_claim_values_shapes():
    assert claim_values({"groups": ["a", "b"]}, "groups") == ("a", "b")
    assert claim_values({"groups": "a, b"}, "groups") == ("a", "b")
    assert claim_values({"groups": []}, "groups") == ()
    assert claim_values({}, "groups") is None
    assert claim_values({"groups": {"a": 1}}, "groups") is None
    keycloak = {"realm_access": {"roles": ["soc-admins", "offline_access"]}}
    assert claim_values(keycloak, "realm_access.roles") == ("soc-admins", "offline_access")
    assert claim_values(keycloak, "realm_access.missing") is None


def test_highest_role_wins():
    assert role_for(["soc-operators", "soc-admins"], ROLE_MAP, signed_in=True) == "admin"
    assert role_for(["soc-operators", "soc-reviewers"], ROLE_MAP, signed_in=True) == "reviewer"
    assert role_for(["soc-operators"], ROLE_MAP, signed_in=True) == "operator"
    assert role_for(["marketing"], ROLE_MAP, signed_in=True) is None
    assert role_for([], {**ROLE_MAP, "*": "operator"}, signed_in=True) == "operator"
    assert role_for(["soc-admins"], {**ROLE_MAP, "*": "operator"}, signed_in=True) == "admin"


def test_principal_of_a_signed_in_user():
    claims = {
        "sub": "u-123",
        "name": "山田 太郎",
        "email": "yamada@example.jp",
        "groups": ["soc-operators", "soc-reviewers"],
    }
    p = principal_from_claims(claims, _settings(), client="10.0.0.7")
    assert (p.subject, p.name, p.role, p.client) == ("u-123", "山田 太郎", "reviewer", "10.0.0.7")
    assert p.signed_in and p.groups == ("soc-operators", "soc-reviewers")
    assert p.allows("reviewer") and p.allows("operator") and not p.allows("admin")
    # no name: the preferred username, then the e-mail address
    assert principal_from_claims({**claims, "name": ""}, _settings()).name == "yamada@example.jp"


def test_token_without_the_groups_claim_is_refused():
    with pytest.raises(AccessDenied) as exc:
        principal_from_claims({"sub": "u-1", "email": "a@example.jp"}, _settings())
    message = exc.value.user_message
    assert "権限がありません" in message and "「groups」" in message and "管理者に連絡" in message


def test_user_in_no_mapped_group_is_refused():
    with pytest.raises(AccessDenied) as exc:
        principal_from_claims({"sub": "u-2", "groups": ["marketing", "sales"]}, _settings())
    assert "権限がありません" in exc.value.user_message
    assert "marketing, sales" in exc.value.user_message
    # an empty role map gives nobody a role
    with pytest.raises(AccessDenied):
        principal_from_claims({"sub": "u-3", "groups": ["soc-admins"]}, Settings(_env_file=None))


def test_role_claim_is_a_setting():
    settings = _settings(role_claim="roles")
    claims = {"sub": "u-4", "groups": ["soc-operators"], "roles": ["soc-admins"]}
    assert principal_from_claims(claims, settings).role == "admin"


def test_settings_reject_unknown_roles_and_bad_proxies(monkeypatch):
    with pytest.raises(ValidationError, match="superuser"):
        Settings(_env_file=None, role_map={"g": "superuser"})
    with pytest.raises(ValidationError, match="not-an-ip"):
        Settings(_env_file=None, trusted_proxies=["not-an-ip"])
    monkeypatch.setenv("WB_ROLE_MAP", '{"soc-admins": "admin"}')
    monkeypatch.setenv("WB_TRUSTED_PROXIES", '["10.0.0.0/8"]')
    s = Settings(_env_file=None)
    assert s.role_map == {"soc-admins": "admin"} and s.trusted_proxies == ["10.0.0.0/8"]


def test_local_principal_without_sign_in():
    p = local_principal("127.0.0.1")
    assert (p.subject, p.name, p.role, p.signed_in) == ("local", "local", "admin", False)
    assert p.client == "127.0.0.1" and LOCAL.client is None


@pytest.mark.parametrize(
    ("peer", "forwarded", "trusted", "expected"),
    [
        # an untrusted peer: its X-Forwarded-For is whatever the client wrote, never believed
        ("192.0.2.10", "203.0.113.5", [], "192.0.2.10"),
        ("192.0.2.10", "203.0.113.5", ["10.0.0.1"], "192.0.2.10"),
        # a trusted proxy: the address it saw (the right-most entry)
        ("10.0.0.1", "203.0.113.5", ["10.0.0.1"], "203.0.113.5"),
        ("10.0.0.1", "198.51.100.1, 203.0.113.5", ["10.0.0.0/24"], "203.0.113.5"),
        # a chain of trusted proxies: the first address that is not one of them
        ("10.0.0.1", "203.0.113.5, 10.0.0.2", ["10.0.0.0/24"], "203.0.113.5"),
        # a spoofed left part does not help: the proxy appended the real address
        ("10.0.0.1", "1.2.3.4, 203.0.113.5", ["10.0.0.1"], "203.0.113.5"),
        # garbage from the proxy's side: keep the peer
        ("10.0.0.1", "not-an-address", ["10.0.0.1"], "10.0.0.1"),
        ("10.0.0.1", None, ["10.0.0.1"], "10.0.0.1"),
        # Streamlit reports no address for a loopback connection (a proxy on the same host)
        (None, "203.0.113.5", ["127.0.0.1"], "203.0.113.5"),
        (None, "203.0.113.5", [], "127.0.0.1"),
        ("2001:db8::1", "2001:db8::99", ["2001:db8::/64"], "2001:db8::99"),
        ("10.0.0.1", "203.0.113.5:51000", ["10.0.0.1"], "203.0.113.5"),
    ],
)
def test_trusted_proxy_rule(peer, forwarded, trusted, expected):
    assert client_address(peer, forwarded, trusted) == expected
