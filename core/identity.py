"""From a signed-in identity to a ``Principal``: the role from an ID-token claim, the client address.

The identity provider (Entra ID, Okta, Keycloak, Google Workspace … through Streamlit's OpenID
Connect sign-in) hands the app the ID token's claims. ``principal_from_claims`` turns them into
the ``core.access.Principal`` every pipeline call and audit record runs as:

- subject: the ``sub`` claim (stable, opaque); display name: ``name``, else ``preferred_username``,
  else ``email``;
- role: the values of the claim ``settings.role_claim`` (``groups`` by default; a dotted path
  such as ``realm_access.roles`` reaches a nested claim) looked up in ``settings.role_map``; the
  highest mapped role wins, ``"*"`` matches anyone signed in. A token without the claim, or a
  user in no mapped group, is refused with ``AccessDenied`` (Japanese), never given a default;
- client: the peer address, or the address a trusted reverse proxy reports in
  ``X-Forwarded-For`` when the peer is listed in ``settings.trusted_proxies``.

Streamlit-free: the UI passes ``st.user`` and ``st.context`` values in.
"""

from __future__ import annotations

import ipaddress
import json
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from core.access import LOCAL, ROLES, Principal, role_rank
from core.errors import WorkbenchError
from core.settings import Settings

ANY_SIGNED_IN = "*"
MAX_GROUPS_SHOWN = 10
LOOPBACK_PEER = "127.0.0.1"


class AccessDenied(WorkbenchError):
    """Signed in, but the workbench gives this user no role (Japanese message)."""


def claim_values(claims: Mapping[str, Any], claim: str) -> tuple[str, ...] | None:
    """The values of ``claim`` (a dotted path into nested claims), or ``None`` when it is absent.

    A list gives its string items; a single string is split at commas (some providers send
    ``"a,b"``); anything else (a number, a mapping) counts as absent.
    """
    value: Any = claims
    for part in claim.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    if isinstance(value, str):
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, list | tuple):
        items = value
    else:
        return None
    return tuple(s for v in items if isinstance(v, str | int) and (s := str(v).strip()))


def role_for(groups: Iterable[str], role_map: Mapping[str, str], *, signed_in: bool) -> str | None:
    """The highest role ``role_map`` gives to any of ``groups`` (``"*"``: anyone signed in)."""
    roles = [role_map[g] for g in groups if g in role_map]
    if signed_in and ANY_SIGNED_IN in role_map:
        roles.append(role_map[ANY_SIGNED_IN])
    roles = [r for r in roles if r in ROLES]
    return max(roles, key=role_rank) if roles else None


def display_name(claims: Mapping[str, Any]) -> str:
    for key in ("name", "preferred_username", "email", "sub"):
        value = claims.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return "不明なユーザー"


def principal_from_claims(
    claims: Mapping[str, Any], settings: Settings, client: str | None = None
) -> Principal:
    """The principal of a signed-in user; ``AccessDenied`` (Japanese) when they have no role."""
    subject = str(claims.get("sub") or claims.get("email") or "").strip()
    if not subject:
        raise AccessDenied(
            "権限がありません。ID トークンに利用者を識別するクレーム（sub）がありません。"
            "管理者に連絡してください。"
        )
    groups = claim_values(claims, settings.role_claim)
    role = role_for(groups or (), settings.role_map, signed_in=True)
    if role is None:
        if groups is None:
            reason = (
                f"ID トークンに役割を決めるクレーム「{settings.role_claim}」が含まれていません。"
                "ID プロバイダーでこのクレームを発行するよう"
            )
        else:
            shown = ", ".join(groups[:MAX_GROUPS_SHOWN]) or "なし"
            more = (
                f" ほか {len(groups) - MAX_GROUPS_SHOWN} 件"
                if len(groups) > MAX_GROUPS_SHOWN
                else ""
            )
            reason = (
                f"あなたのグループ（{shown}{more}）はワークベンチの役割に割り当てられていません。"
                "役割の割り当て（WB_ROLE_MAP）を"
            )
        raise AccessDenied(
            f"権限がありません。{reason}管理者に連絡してください。",
            detail=f"sub={subject} claim={settings.role_claim} groups={groups}",
        )
    return Principal(
        subject=subject,
        name=display_name(claims),
        role=role,
        groups=tuple(groups or ()),
        client=client,
        signed_in=True,
    )


def local_principal(client: str | None = None) -> Principal:
    """Without sign-in: ``local``, admin (loopback, or anonymous access allowed on purpose)."""
    return replace(LOCAL, client=client)


def _networks(trusted: Sequence[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    out = []
    for item in trusted:
        try:
            out.append(ipaddress.ip_network(item.strip(), strict=False))
        except ValueError:
            continue  # Settings validates; a bad entry trusts nothing
    return out


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    host = text.strip()
    if host.startswith("[") and "]" in host:  # [v6]:port
        host = host[1 : host.index("]")]
    elif host.count(":") == 1:  # v4:port
        host = host.split(":", 1)[0]
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def client_address(
    peer: str | None, forwarded_for: str | None, trusted_proxies: Sequence[str]
) -> str:
    """The client's address: ``peer``, unless ``peer`` is a trusted proxy, then the right-most
    address of ``X-Forwarded-For`` that is not itself a trusted proxy.

    ``peer`` ``None`` is loopback (Streamlit reports no address for a local connection). A
    forwarded entry that is not an address stops the walk: what a client wrote is never believed.
    """
    peer = peer or LOOPBACK_PEER
    networks = _networks(trusted_proxies)
    peer_ip = _address(peer)

    def trusted(ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
        return ip is not None and any(ip in net for net in networks)

    if not forwarded_for or not trusted(peer_ip):
        return peer
    client = peer
    for hop in reversed([h for h in forwarded_for.split(",") if h.strip()]):
        ip = _address(hop)
        if ip is None:
            break
        client = str(ip)
        if not trusted(ip):
            break
    return client


def provider_problem(metadata_url: str, timeout: float = 3.0) -> str | None:
    """Why the identity provider cannot be used right now (Japanese), or ``None`` when its
    OpenID Connect metadata answers. The sign-in screen asks before offering the button, so that
    a provider that is down gets a message instead of Streamlit's bare "Authentication error"."""
    parts = urlsplit(metadata_url)
    host = parts.netloc or metadata_url
    if parts.scheme not in ("http", "https"):
        return f"ID プロバイダーの設定（server_metadata_url: {metadata_url}）が URL ではありません。管理者に連絡してください。"
    try:
        with urllib.request.urlopen(metadata_url, timeout=timeout) as response:
            data = json.loads(response.read(1_000_000))
    except (OSError, ValueError):
        return (
            f"ID プロバイダー（{host}）に接続できません。しばらくしてから再度お試しください。"
            "続く場合は管理者に連絡してください。"
        )
    if not isinstance(data, dict) or not data.get("authorization_endpoint"):
        return (
            f"ID プロバイダー（{host}）の応答が OpenID Connect の設定ではありません。"
            "管理者に連絡してください。"
        )
    return None
