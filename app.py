"""Streamlit entry point: ``python -m core serve`` (``make run``) or ``streamlit run app.py``."""

import streamlit as st

from core.serving import exposure_problem, is_loopback, read_auth_config
from ui.navigation import PAGES
from ui.resources import ensure_audit_shipper
from ui.resources import settings as get_settings

st.set_page_config(page_title="SOC ワークベンチ", page_icon="🛡️", layout="wide")
settings = get_settings()
address = st.get_option("server.address")
problem = exposure_problem(
    address, read_auth_config(settings.secrets_file), settings.allow_anonymous
)
if problem:  # started some other way than `python -m core serve`: serve nothing
    st.error(problem)
    st.stop()
if settings.allow_anonymous and not is_loopback(address):
    st.sidebar.warning(
        "⚠️ サインインなしで公開されています（WB_ALLOW_ANONYMOUS）。"
        "同じネットワークの誰でも手順書と質問の記録を見られます。"
    )
ensure_audit_shipper(settings)  # a daemon thread, started once per process when enabled
st.navigation([st.Page(p.path, title=p.title, icon=p.icon, default=p.default) for p in PAGES]).run()
