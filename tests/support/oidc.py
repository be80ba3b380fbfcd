"""A real OpenID Connect provider on 127.0.0.1 for the sign-in tests: oidc-provider-mock.

``oidc-provider-mock`` (PyPI) is a Flask OpenID provider built on Authlib: discovery, JWKS,
authorization-code flow with signed ID tokens, userinfo and end-session, in-process and in a
thread. Users are predefined with their claims (``groups`` …) and chosen on its authorization
form, so a browser test signs in as a given user by pressing that user's button. Any client id
and secret are accepted (no registration needed).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from oidc_provider_mock import User, app
from werkzeug.serving import make_server

# Two users of different groups (and one whose token has no groups claim).
OPERATOR = User(
    sub="u-operator-01",
    claims={"name": "操作 一郎", "email": "ichiro@example.jp", "groups": ["soc-operators"]},
)
REVIEWER = User(
    sub="u-reviewer-02",
    claims={
        "name": "査閲 花子",
        "email": "hanako@example.jp",
        "groups": ["soc-operators", "soc-reviewers"],
    },
)
NO_GROUPS = User(sub="u-nogroups-03", claims={"name": "無所属 三郎", "email": "saburo@example.jp"})
ROLE_MAP = '{"soc-admins": "admin", "soc-reviewers": "reviewer", "soc-operators": "operator"}'


@contextmanager
def oidc_provider(users: tuple[User, ...] = (OPERATOR, REVIEWER, NO_GROUPS)) -> Iterator[str]:
    """The provider's base URL (``http://127.0.0.1:<port>``) while it runs."""
    server = make_server("127.0.0.1", 0, app(user_claims=users), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(5)
        server.server_close()


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (an identity provider that is down)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def secrets_toml(issuer: str, redirect_uri: str, provider: str | None = None) -> str:
    """An ``[auth]`` section for ``issuer`` (the default provider, or ``[auth.<provider>]``)."""
    client = (
        'client_id = "workbench"\n'
        'client_secret = "workbench-secret"\n'
        f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n'
    )
    head = (
        "[auth]\n"
        f'redirect_uri = "{redirect_uri}"\n'
        'cookie_secret = "test-cookie-secret-0123456789abcdef0123456789"\n'
    )
    return head + (client if provider is None else f"\n[auth.{provider}]\n{client}")
