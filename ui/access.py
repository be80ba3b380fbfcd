"""Who the current Streamlit session runs as (Streamlit-only).

``current_principal()`` is the one place pages ask for the principal they pass to the core
(``ChatConfig.principal``, question-set runs, the dashboard's drill-downs). Without sign-in it is
``LOCAL`` (every page, every runbook collection); the sign-in work fills it from ``st.user``.
"""

from __future__ import annotations

from core.access import LOCAL, Principal


def current_principal() -> Principal:
    """The principal of this session (``LOCAL`` until sign-in is configured)."""
    return LOCAL
