"""Streamlit entry point: ``python -m core serve`` (``make run``) or ``streamlit run app.py``."""

import streamlit as st

from core.masking import install_log_masking
from core.serving import exposure_problem, is_loopback, read_auth_config
from ui import auth
from ui.navigation import PAGES
from ui.resources import ensure_audit_shipper
from ui.resources import settings as get_settings

st.set_page_config(page_title="SOC ワークベンチ", page_icon="🛡️", layout="wide")
install_log_masking()  # app logs on stderr are a sink too: no raw questions
settings = get_settings()
address = st.get_option("server.address")
auth_config = read_auth_config(settings.secrets_file)
problem = exposure_problem(address, auth_config, settings.allow_anonymous)
if problem:  # started some other way than `python -m core serve`: serve nothing
    st.error(problem)
    st.stop()
if settings.allow_anonymous and not is_loopback(address) and not auth_config.configured:
    st.sidebar.warning(
        "⚠️ サインインなしで公開されています（WB_ALLOW_ANONYMOUS）。"
        "同じネットワークの誰でも手順書と質問の記録を見られます。"
    )
ensure_audit_shipper(settings)  # a daemon thread, started once per process when enabled
principal = auth.signed_in(settings)  # the sign-in screen or a refusal stops here
auth.sidebar(principal)
# Pages outside the role are left out of the menu but stay routable, so that opening one by its
# URL reaches its guard (ui.auth.require) and gets a Japanese refusal, not a blank page.
st.navigation(
    [
        st.Page(
            p.path,
            title=p.title,
            icon=p.icon,
            default=p.default,
            visibility="visible" if principal.allows(p.role) else "hidden",
        )
        for p in PAGES
    ]
).run()
