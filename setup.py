"""Packages of the wheel: ``core`` and its subpackages, plus the shipped inputs.

``data/`` and ``eval/`` stay at the top of the checkout (the app, the tests and the README use
them there). The files the library reads by default (sample runbooks, golden pools, interview
domains and scenarios, the evaluation dataset) go into the wheel as ``core/_shipped/data/...``
and ``core/_shipped/eval/...``, where ``core.settings`` finds them in an installed copy. Each
folder holding such files becomes a data-only package, so setuptools maps it without warnings.
Everything else is declared in pyproject.toml.
"""

from pathlib import Path

from setuptools import find_packages, setup

# Glob patterns per top-level folder, relative to it.
SHIPPED = {
    "data": [
        "runbooks/*.md",
        "runbooks/*.pdf",
        "golden/*.json",
        "golden/*.sha256",
        "golden/README.md",
        "golden/examples/*.json",
        "interview/domains.yaml",
        "interview/scenarios/*/*.yaml",
    ],
    "eval": ["eval_dataset.json"],
}


def shipped() -> tuple[dict[str, str], dict[str, list[str]]]:
    """``package_dir`` and ``package_data`` for the shipped files (paths relative to setup.py)."""
    package_dir: dict[str, str] = {}
    package_data: dict[str, list[str]] = {}
    for top, patterns in SHIPPED.items():
        for pattern in patterns:
            for path in sorted(Path(top).glob(pattern)):
                package = ".".join(("core", "_shipped", *path.parent.parts))
                package_dir[package] = path.parent.as_posix()
                package_data.setdefault(package, []).append(path.name)
    return package_dir, package_data


package_dir, package_data = shipped()
setup(
    packages=[*find_packages(include=["core", "core.*"]), *package_dir],
    package_dir=package_dir,
    package_data=package_data,
)
