"""Who is asking: the principal every pipeline call, audit record and search runs as.

A ``Principal`` is built once per request by the UI (from the identity provider's ID token,
``st.user``) or by the CLI (``--user`` / ``--groups``), and passed down to the core. The core never
reads Streamlit: it only sees this value. Without sign-in the principal is ``LOCAL``.

Roles (``operator`` < ``reviewer`` < ``admin``) decide which pages and actions are offered;
groups decide which runbook collections the search engine may return (``core.collections``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

ROLES = ("operator", "reviewer", "admin")


def role_rank(role: str) -> int:
    """0 for operator, 1 for reviewer, 2 for admin; -1 for anything else (no access)."""
    try:
        return ROLES.index(role)
    except ValueError:
        return -1


@dataclass(frozen=True, slots=True)
class Principal:
    """The signed-in user (or ``local``), as the identity provider names them."""

    subject: str = "local"  # the ID token's ``sub`` (stable, opaque)
    name: str = "local"  # display name (``name`` / ``preferred_username`` / ``email``)
    role: str = "admin"  # one of ROLES
    groups: tuple[str, ...] = field(default_factory=tuple)  # IdP groups, as given
    client: str | None = None  # client address (X-Forwarded-For only from a trusted proxy)
    signed_in: bool = False  # False for the local, sign-in-less principal

    def allows(self, role: str) -> bool:
        """True when this principal's role is ``role`` or above."""
        return role_rank(self.role) >= role_rank(role) >= 0


# No sign-in configured (loopback, single user): every page, every collection.
LOCAL = Principal()
