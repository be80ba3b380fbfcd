"""Streamlit entry point: ``streamlit run app.py`` (or ``make run``)."""

import streamlit as st

from ui.navigation import PAGES

st.set_page_config(page_title="SOC ワークベンチ", page_icon="🛡️", layout="wide")
st.navigation([st.Page(p.path, title=p.title, icon=p.icon, default=p.default) for p in PAGES]).run()
