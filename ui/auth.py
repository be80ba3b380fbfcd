"""Sign-in and roles in the app: who this session is, the sign-in screen, the page guard.

Sign-in is Streamlit's OpenID Connect (``st.login`` / ``st.user`` / ``st.logout``), switched on by
an ``[auth]`` section in the secrets file (``core.serving.read_auth_config``). Without it the
session is ``local`` (admin), as on a laptop. ``signed_in()`` returns the session's principal or
stops the run with the sign-in screen or a Japanese refusal; ``app.py`` calls it before the
navigation, and every page calls ``require(role)`` first, so that a page opened by its URL is
refused on the server whatever the menu showed. The principal is derived on every run from
``st.user`` (signed by Streamlit's cookie) and never kept in a shared cache.
"""

from __future__ import annotations

import streamlit as st

from core.access import Principal
from core.identity import (
    AccessDenied,
    client_address,
    local_principal,
    principal_from_claims,
    provider_problem,
)
from core.serving import AuthConfig, read_auth_config
from core.settings import Settings
from ui.resources import settings as get_settings

ROLE_LABELS = {"operator": "オペレーター", "reviewer": "レビュアー", "admin": "管理者"}


def role_label(role: str) -> str:
    return ROLE_LABELS.get(role, role)


def client(settings: Settings) -> str:
    """This session's client address (``X-Forwarded-For`` only from a trusted proxy)."""
    peer = st.context.ip_address
    forwarded = st.context.headers.get("X-Forwarded-For")
    return client_address(
        peer if isinstance(peer, str) else None,  # None: loopback (or no connection: AppTest)
        forwarded if isinstance(forwarded, str) else None,
        settings.trusted_proxies,
    )


def _stop_with(message: str, *, sign_out: bool = False) -> None:
    st.title("🛡️ SOC ワークベンチ")
    st.error(message)
    if sign_out:
        st.button("サインアウト", on_click=st.logout, key="auth_denied_logout")
    st.stop()


def _sign_in_screen(auth: AuthConfig, settings: Settings) -> None:
    st.title("🛡️ SOC ワークベンチ")
    st.subheader("サインイン")
    st.write(
        "このワークベンチはチームの ID プロバイダーでサインインしてから使います。"
        "手順書・質問の記録は、サインインした利用者の役割に応じて表示されます。"
    )
    streamlit_sees = _streamlit_has_auth()
    if not streamlit_sees:
        st.error(
            f"サインインの設定（{settings.secrets_file}）を Streamlit が読み込んでいません。"
            "`python -m core serve`（make run）で起動するか、`streamlit run` に "
            "`--secrets.files` でこのファイルを指定してください。管理者に連絡してください。"
        )
    for name, metadata_url in auth.providers:
        problem = provider_problem(metadata_url, settings.idp_timeout_sec) if streamlit_sees else ""
        label = "サインイン" if name is None else f"{name} でサインイン"
        if problem:
            st.error(problem)
        st.button(
            label,
            type="primary",
            on_click=st.login,
            args=(name,) if name else (),
            disabled=problem is not None,  # "" too: Streamlit could not start the sign-in
            key=f"auth_login_{name or 'default'}",
        )
    st.stop()


def _streamlit_has_auth() -> bool:
    """Whether Streamlit itself reads an ``[auth]`` section (``st.login`` needs it)."""
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all, or one Streamlit cannot parse
        return False


def signed_in(settings: Settings | None = None) -> Principal:
    """This session's principal; otherwise the sign-in screen or a refusal, and the run stops."""
    settings = settings or get_settings()
    address = client(settings)
    auth = read_auth_config(settings.secrets_file)
    if auth.problem:  # a secrets file meant for sign-in that cannot be used: serve nothing
        _stop_with(
            f"サインインの設定を読み込めないため、画面を表示できません。{auth.problem}"
            "管理者に連絡してください。"
        )
    if not auth.configured:
        return local_principal(address)
    if not st.user.is_logged_in:
        _sign_in_screen(auth, settings)
    try:
        return principal_from_claims(st.user.to_dict(), settings, address)
    except AccessDenied as exc:
        _stop_with(exc.user_message, sign_out=True)
        raise  # not reached: st.stop() ends the run


def sidebar(principal: Principal) -> None:
    """The signed-in user and the sign-out button (nothing for the local, sign-in-less user)."""
    if not principal.signed_in:
        return
    with st.sidebar:
        st.caption(f"サインイン中: **{principal.name}**（{role_label(principal.role)}）")
        st.button("サインアウト", on_click=st.logout, key="auth_logout", use_container_width=True)


def require(role: str) -> Principal:
    """The guard at the top of every page: the principal when their role is ``role`` or above,
    else a Japanese message and the page stops (also when the page is opened by its URL)."""
    principal = signed_in()
    if not principal.allows(role):
        st.error(
            f"この画面を開く権限がありません（必要な役割: {role_label(role)}以上、"
            f"あなたの役割: {role_label(principal.role)}）。必要な場合は管理者に連絡してください。"
        )
        st.stop()
    return principal
