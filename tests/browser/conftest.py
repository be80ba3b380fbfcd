"""Start the real app on a free port and drive Debian's Chromium with Playwright."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from core.settings import PROJECT_ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(
    state: Path,
    extra_env: dict[str, str] | None = None,
    *,
    port: int | None = None,
    extra_args: tuple[str, ...] = (),
) -> tuple[subprocess.Popen, str]:
    port = port or free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WB_", "NEO4J_"))}
    env.update({"WB_STATE_DIR": str(state), **(extra_env or {})})
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            *extra_args,
        ],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("streamlit did not start: " + (proc.stdout.read() or b"").decode()[-2000:])


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Per module: Playwright's sync API keeps an event loop running while it is open, which
    would break later tests that call ``asyncio.run``."""
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is missing: run `make browser-deps` (make test does it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@contextmanager
def running_app(
    state: Path,
    extra_env: dict[str, str] | None = None,
    *,
    port: int | None = None,
    extra_args: tuple[str, ...] = (),
) -> Iterator[str]:
    """The app's URL while it runs; stopped afterwards whatever happened."""
    proc, url = start_app(state, extra_env, port=port, extra_args=extra_args)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def app_url(sample_state: Path) -> Iterator[str]:
    with running_app(sample_state) as url:
        yield url


SCREENSHOTS = PROJECT_ROOT / "tests" / "artifacts" / "screenshots"


def save_screenshot(page, name: str) -> Path:
    """Keep a full-page screenshot as a test artefact (git-ignored) for a human to look at."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
