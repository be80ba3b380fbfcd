"""Who can reach the app: the bind address, sign-in, and the refusal to serve a network openly.

The app binds to 127.0.0.1 unless told otherwise (``WB_SERVER_ADDRESS``; the repository's
``.streamlit/config.toml`` says the same for a bare ``streamlit run``). On any other address it
serves only when sign-in is configured (an ``[auth]`` section in ``.streamlit/secrets.toml``, used
by Streamlit's ``st.login``) or when anonymous access is allowed on purpose
(``WB_ALLOW_ANONYMOUS=true``; every page then says that it runs without sign-in).
``exposure_problem`` is the one rule; ``python -m core serve`` checks it before starting the
server and ``app.py`` checks it again at run time (for a server started some other way).
"""

from __future__ import annotations

import ipaddress
import tomllib
from dataclasses import dataclass
from pathlib import Path

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}
AUTH_KEYS = ("client_id", "client_secret", "server_metadata_url")


def is_loopback(address: str | None) -> bool:
    """Whether a bind address is reachable from this machine only (empty means every interface)."""
    host = (address or "").strip().strip("[]")
    if not host:
        return False
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name that may resolve anywhere: treat it as exposed


@dataclass(frozen=True, slots=True)
class AuthConfig:
    """What ``.streamlit/secrets.toml`` says about sign-in."""

    configured: bool
    problem: str | None = None  # Japanese: why the file or its [auth] section cannot be used
    # (name, server_metadata_url) of each usable provider: name None for [auth] itself (the
    # default of ``st.login()``), else the section name (``[auth.okta]`` -> "okta")
    providers: tuple[tuple[str | None, str], ...] = ()


def read_auth_config(secrets_file: Path) -> AuthConfig:
    """Whether ``secrets_file`` has a usable ``[auth]`` section (a provider, directly or named)."""
    if not secrets_file.exists():
        return AuthConfig(False)
    try:
        data = tomllib.loads(secrets_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return AuthConfig(
            False, f"{secrets_file} を読み込めません（TOML の形式が不正です: {exc}）。"
        )
    auth = data.get("auth")
    if not isinstance(auth, dict):
        return AuthConfig(False)
    missing = [k for k in ("redirect_uri", "cookie_secret") if not auth.get(k)]
    sections = [(None, auth)] + [(k, v) for k, v in auth.items() if isinstance(v, dict)]
    providers = tuple(
        (name, str(p["server_metadata_url"]))
        for name, p in sections
        if all(p.get(k) for k in AUTH_KEYS)
    )
    if not providers:
        missing.append("client_id / client_secret / server_metadata_url")
    if missing:
        return AuthConfig(
            False,
            f"{secrets_file} の [auth] に必要な項目がありません: {', '.join(missing)}。",
        )
    return AuthConfig(True, providers=providers)


def exposure_problem(address: str | None, auth: AuthConfig, allow_anonymous: bool) -> str | None:
    """The Japanese reason not to serve on ``address``, or ``None`` when serving is fine."""
    if is_loopback(address) or auth.configured or allow_anonymous:
        return None
    where = address or "すべてのインターフェース"
    reason = f" {auth.problem}" if auth.problem else ""
    return (
        f"ワークベンチを {where} で公開しようとしていますが、サインインが設定されていません。{reason}"
        "手順書と質問の記録を守るため起動しません。"
        "チームに公開するには .streamlit/secrets.toml の [auth] に ID プロバイダー"
        "（Entra ID・Okta・Keycloak・Google Workspace など OpenID Connect）の設定を書いてください"
        "（README「チームに公開する」）。自分の端末だけで使う場合は WB_SERVER_ADDRESS=127.0.0.1 "
        "のままにしてください。サインインなしで公開することを承知のうえなら WB_ALLOW_ANONYMOUS=true "
        "を設定します。"
    )
