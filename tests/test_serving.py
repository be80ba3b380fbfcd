"""Who can reach the app: loopback by default, no open network without sign-in."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import tomllib

import pytest
from streamlit import config as st_config
from streamlit.testing.v1 import AppTest

from core.__main__ import main
from core.serving import exposure_problem, is_loopback, read_auth_config
from core.settings import PROJECT_ROOT, get_settings

AUTH_OK = """
[auth]
redirect_uri = "https://workbench.example.jp/oauth2callback"
cookie_secret = "a-long-random-string"
client_id = "workbench"
client_secret = "s3cret"
server_metadata_url = "https://idp.example.jp/.well-known/openid-configuration"
"""


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.1", True), ("127.0.1.1", True), ("::1", True), ("[::1]", True),
        ("localhost", True), ("", False), (None, False), ("0.0.0.0", False), ("::", False),
        ("192.168.10.5", False), ("10.0.0.1", False), ("workbench.example.jp", False),
    ],
)  # fmt: skip
def test_loopback_addresses(address, loopback):
    assert is_loopback(address) is loopback


def test_auth_config_from_secrets(tmp_path):
    secrets = tmp_path / "secrets.toml"
    assert not read_auth_config(secrets).configured  # no file
    secrets.write_text(AUTH_OK, encoding="utf-8")
    assert read_auth_config(secrets).configured
    named = AUTH_OK.replace("client_id", "[auth.entra]\nclient_id", 1)
    secrets.write_text(named, encoding="utf-8")
    assert read_auth_config(secrets).configured  # a named provider ([auth.entra])
    secrets.write_text('[auth]\nredirect_uri = "x"\n', encoding="utf-8")
    incomplete = read_auth_config(secrets)
    assert not incomplete.configured and "cookie_secret" in incomplete.problem
    secrets.write_text("[auth\nbroken = ", encoding="utf-8")
    broken = read_auth_config(secrets)
    assert not broken.configured and "TOML の形式が不正" in broken.problem


def test_exposure_rule(tmp_path):
    none = read_auth_config(tmp_path / "missing.toml")
    assert exposure_problem("127.0.0.1", none, False) is None
    message = exposure_problem("0.0.0.0", none, False)
    assert "サインインが設定されていません" in message and "WB_ALLOW_ANONYMOUS" in message
    assert "すべてのインターフェース" in exposure_problem("", none, False)
    assert exposure_problem("0.0.0.0", none, True) is None
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(AUTH_OK, encoding="utf-8")
    assert exposure_problem("0.0.0.0", read_auth_config(secrets), False) is None


def test_the_repository_config_binds_to_loopback():
    text = (PROJECT_ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8")
    assert 'address = "127.0.0.1"' in text


def test_the_served_app_spends_no_cpu_on_watching_or_forced_collection():
    """bench.concurrency: gc.collect(2) after each rerun and the source watcher halved the rate."""
    config = tomllib.loads((PROJECT_ROOT / ".streamlit" / "config.toml").read_text("utf-8"))
    assert config["runner"]["postScriptGC"] is False
    assert config["server"]["fileWatcherType"] == "none"


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("WB_STATE_DIR", str(tmp_path / "state"))
    get_settings.cache_clear()
    yield monkeypatch
    get_settings.cache_clear()


def test_serve_refuses_an_open_address_without_sign_in(env, capsys):
    env.setenv("WB_SERVER_ADDRESS", "0.0.0.0")
    assert main(["serve", "--no-index"]) == 2
    err = capsys.readouterr().err
    assert "サインインが設定されていません" in err and "起動しません" in err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _lan_address() -> str | None:
    """A non-loopback address of this machine, if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))  # UDP connect sends nothing; picks the route
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.slow
def test_make_run_serves_loopback_only(tmp_path):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WB_")}
    env["WB_STATE_DIR"] = str(tmp_path / "state")
    proc = subprocess.Popen(
        [sys.executable, "-m", "core", "serve", "--no-index", "--port", str(port)],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while not _reachable("127.0.0.1", port):
            assert proc.poll() is None, proc.stdout.read().decode()[-2000:]
            assert time.monotonic() < deadline, "the app did not start"
            time.sleep(0.5)
        lan = _lan_address()
        if lan is not None:
            assert not _reachable(lan, port), f"reachable on {lan}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture
def open_address():
    before = st_config.get_option("server.address")
    st_config.set_option("server.address", "0.0.0.0")
    yield
    st_config.set_option("server.address", before)


def test_app_serves_nothing_on_an_open_address_without_sign_in(env, open_address):
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=60).run()
    assert at.error and "サインインが設定されていません" in at.error[0].value
    assert not at.title  # no page was rendered


def test_anonymous_override_is_announced_on_every_page(env, open_address):
    env.setenv("WB_ALLOW_ANONYMOUS", "true")
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=60).run()
    assert not at.error
    assert any("サインインなしで公開されています" in w.value for w in at.sidebar.warning)


def test_app_on_loopback_shows_no_notice(env):
    at = AppTest.from_file(str(PROJECT_ROOT / "app.py"), default_timeout=60).run()
    assert not at.error and not at.sidebar.warning


def test_secrets_are_not_tracked():
    ignored = (PROJECT_ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert ".streamlit/secrets.toml" in ignored


def test_serve_hands_the_secrets_file_and_leaves_the_client_rule_to_the_app(env, tmp_path):
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(AUTH_OK, encoding="utf-8")
    env.setenv("WB_SECRETS_PATH", str(secrets))
    env.setenv("WB_SERVER_ADDRESS", "0.0.0.0")  # allowed: sign-in is configured
    started = {}

    def fake_execve(path, argv, environ):
        started.update(argv=argv, env=environ)
        raise SystemExit(0)

    env.setattr(os, "execve", fake_execve)
    with pytest.raises(SystemExit):
        main(["serve", "--no-index"])
    argv = started["argv"]
    assert argv[argv.index("--secrets.files") + 1] == str(secrets)
    assert argv[argv.index("--server.address") + 1] == "0.0.0.0"
    # uvicorn would otherwise rewrite the peer from X-Forwarded-For for loopback itself
    assert started["env"]["FORWARDED_ALLOW_IPS"] == ""
    assert argv[argv.index("--runner.postScriptGC") + 1] == "false"
    assert argv[argv.index("--server.fileWatcherType") + 1] == "none"
