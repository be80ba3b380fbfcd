"""Who the current Streamlit session runs as (Streamlit-only).

``current_principal()`` is the principal pages pass to the core (``ChatConfig.principal``,
question-set runs, the dashboard's drill-downs): the signed-in user from ``ui.auth`` (derived
from ``st.user`` on every run), or ``LOCAL`` when sign-in is not configured. Pages that guard
themselves with ``ui.auth.require(role)`` use the principal it returns, which is the same.
"""

from __future__ import annotations

from core.access import Principal


def current_principal() -> Principal:
    """The principal of this session (``LOCAL`` without sign-in; the sign-in screen otherwise)."""
    from ui.auth import signed_in

    return signed_in()
