"""Streamlit entry point: ``streamlit run app.py`` (or ``make run``)."""

import streamlit as st

st.set_page_config(page_title="SOC ワークベンチ", page_icon="🛡️", layout="wide")

pages = [
    st.Page("pages/home.py", title="ホーム", icon="🏠", default=True),
]
st.navigation(pages).run()
