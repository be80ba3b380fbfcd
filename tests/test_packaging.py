"""The installed package: a wheel built from the checkout, installed in a temporary virtualenv and
used from a folder outside the checkout (``python -m core``, the retriever, the README's LCEL
example). Nothing is downloaded: the build uses this venv's setuptools, and the temporary venv sees
this venv's dependencies through a ``.pth`` file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import setuptools
from packaging.requirements import Requirement
from packaging.version import Version

from core.interview.domains import load_domains
from core.question_sets.golden import list_pools
from core.settings import PROJECT_ROOT
from tests.support.openai_server import OpenAIStub

EXAMPLE = PROJECT_ROOT / "examples" / "lcel_retriever.py"
BUILD_INPUTS = ("pyproject.toml", "setup.py", "README.md", "core", "data", "eval")

PHISHING = """# 不審メール対応

## 初動
報告者に添付ファイルを開いたか、リンクをクリックしたかを確認する。
原本メールを取得し、差出人ドメインと認証結果を記録する。
"""
BACKUP = """# バックアップ復旧

## 手順
復旧対象のボリュームを選び、直近の正常なスナップショットから戻す。
復旧後にファイルのハッシュを照合する。
"""


def run(args: list, cwd: Path, env: dict[str, str], timeout: int = 240):
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, f"{args}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Build the wheel from a copy of the checkout and install it into a fresh virtualenv."""
    work = tmp_path_factory.mktemp("packaging")
    src = work / "src"
    src.mkdir()
    for name in BUILD_INPUTS:
        source = PROJECT_ROOT / name
        if source.is_dir():
            shutil.copytree(source, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, src / name)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("WB_", "OPENAI_", "NEO4J_", "PYTHON", "PIP_"))
    }
    env["XDG_DATA_HOME"] = str(work / "xdg")
    if Version(setuptools.__version__) < Version("70.1"):
        pytest.fail("setuptools 70.1 以上が必要です（requirements-dev.txt: make setup-dev）")
    pip = ["-m", "pip", "--disable-pip-version-check", "-q"]
    offline = ["--no-deps", "--no-index"]
    dist = work / "dist"
    run(
        [sys.executable, *pip, "wheel", *offline, "--no-build-isolation", "-w", dist, src],
        work,
        env,
    )
    (wheel,) = dist.glob("soc_workbench-*.whl")

    venv = work / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], work, env)
    python = venv / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = Path(run([python, "-c", where], work, env).stdout.strip())
    # This interpreter's site-packages folders (its own and any it reaches through .pth files).
    ours = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    (purelib / "_workbench_deps.pth").write_text("\n".join(ours) + "\n")
    run([python, *pip, "install", *offline, "--ignore-installed", wheel], work, env)

    cwd = work / "elsewhere"  # outside the checkout
    cwd.mkdir()
    return {
        "python": python,
        "venv": venv,
        "purelib": purelib,
        "cwd": cwd,
        "env": env,
        "work": work,
    }


PROBE = """
import json, core
from core import settings as s
from core.interview.domains import load_domains
from core.question_sets.golden import list_pools
from core.retrieval.langchain_adapter import WorkbenchRetriever
from core.evaluation.dataset import load_dataset
got = s.get_settings()
print(json.dumps({
    "core": core.__file__,
    "installed": s.INSTALLED,
    "state_root": str(got.state_root),
    "runbooks_dir": str(got.runbooks_dir),
    "runbooks": sorted(p.name for p in got.runbooks_dir.iterdir()),
    "domains": sorted(load_domains().domains),
    "pools": [(e.pool_id, e.ok) for e in list_pools(got.golden_dir)],
    "eval_cases": len(load_dataset(got.eval_dataset)[0].test_cases),
    "retriever": WorkbenchRetriever.__module__,
}))
"""


@pytest.mark.slow
def test_installed_copy_imports_from_the_venv_and_carries_its_inputs(installed):
    proc = run([installed["python"], "-c", PROBE], installed["cwd"], installed["env"])
    got = json.loads(proc.stdout)
    core_file = Path(got["core"])
    assert core_file.is_relative_to(installed["purelib"]), core_file
    assert not core_file.is_relative_to(PROJECT_ROOT)
    assert got["installed"] is True
    # Generated state goes to the user's data folder, never into site-packages.
    assert Path(got["state_root"]) == installed["work"] / "xdg" / "soc-workbench"
    assert Path(got["runbooks_dir"]).is_relative_to(installed["purelib"])
    shipped = sorted(
        p.name
        for p in (PROJECT_ROOT / "data" / "runbooks").iterdir()
        if p.suffix in {".md", ".pdf"}
    )
    assert got["runbooks"] == shipped
    assert got["domains"] == sorted(load_domains().domains)
    checkout_pools = [[e.pool_id, e.ok] for e in list_pools(PROJECT_ROOT / "data" / "golden")]
    assert got["pools"] == checkout_pools and all(ok for _, ok in got["pools"])
    assert got["eval_cases"] > 0
    assert got["retriever"] == "core.retrieval.langchain_adapter"


@pytest.mark.slow
def test_cli_help_from_the_installed_copy(installed):
    proc = run([installed["python"], "-m", "core", "--help"], installed["cwd"], installed["env"])
    assert "SOC ワークベンチ CLI" in proc.stdout
    for command in ("index", "search", "ask", "audit", "interview", "qset", "wiki", "eval"):
        assert command in proc.stdout
    script = installed["venv"] / "bin" / "soc-workbench"
    assert run([script, "search", "--help"], installed["cwd"], installed["env"]).stdout.startswith(
        "usage: python -m core search"
    )


@pytest.fixture(scope="module")
def example_run(installed) -> dict:
    """The README's example, copied next to a tiny runbook folder, with its own state folder."""
    cwd = installed["cwd"]
    books = cwd / "books"
    books.mkdir()
    (books / "suspicious-mail.md").write_text(PHISHING, encoding="utf-8")
    (books / "backup.md").write_text(BACKUP, encoding="utf-8")
    shutil.copy2(EXAMPLE, cwd / "lcel_retriever.py")
    env = installed["env"] | {"WB_RUNBOOKS_DIR": str(books), "WB_STATE_DIR": str(cwd / "state")}
    return {"cwd": cwd, "env": env, "state": cwd / "state"}


@pytest.mark.slow
def test_lcel_example_runs_offline_from_the_installed_copy(installed, example_run):
    before = files_under(installed["venv"])
    proc = run(
        [installed["python"], "lcel_retriever.py", "不審なメールの添付ファイルを開いてしまった"],
        example_run["cwd"],
        example_run["env"],
    )
    lines = proc.stdout.splitlines()
    assert lines[0] == "[1] suspicious-mail.md"
    assert "添付ファイルを開いたか" in proc.stdout
    assert "[2] backup.md" in lines  # k=3, two one-section files: both come back, best first
    assert (example_run["state"] / "chroma_db").is_dir()
    assert files_under(installed["venv"]) == before  # nothing written into the installation
    assert not (installed["work"] / "xdg").exists()  # WB_STATE_DIR was honoured


@pytest.mark.slow
def test_lcel_example_pipes_the_passages_into_a_configured_chat_model(installed, example_run):
    with OpenAIStub(default_content="添付を開いた場合は端末を隔離します [1]") as stub:
        env = example_run["env"] | {"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "test"}
        question = "バックアップからの復旧手順は？"
        proc = run([installed["python"], "lcel_retriever.py", question], example_run["cwd"], env)
        requests = stub.chat_requests()
    assert proc.stdout.strip() == "添付を開いた場合は端末を隔離します [1]"
    assert len(requests) == 1
    prompt = requests[0]["messages"][-1]["content"]
    assert question in prompt
    assert prompt.index("[1] backup.md") < prompt.index("[2] suspicious-mail.md")
    assert "直近の正常なスナップショット" in prompt


def test_readme_shows_the_example_file_as_it_is():
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.DOTALL)
    shown = [b for b in blocks if "WorkbenchRetriever(" in b]
    assert shown == [EXAMPLE.read_text(encoding="utf-8")]


def pins(name: str) -> dict[str, str]:
    found = {}
    for line in (PROJECT_ROOT / name).read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-r"):
            requirement = Requirement(line)
            (version,) = (s.version for s in requirement.specifier if s.operator == "==")
            found[requirement.name.lower()] = version
    return found


def test_declared_dependencies_admit_the_pinned_versions():
    project = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = project["project"]
    runtime = pins("requirements.txt")
    groups = {
        "dependencies": (project["dependencies"], runtime),
        "prod": (project["optional-dependencies"]["prod"], runtime | pins("requirements-prod.txt")),
    }
    for group, (declared, pinned) in groups.items():
        for line in declared:
            requirement = Requirement(line)
            name = requirement.name.lower()
            assert name in pinned, f"{group}: {name} is not pinned"
            assert requirement.specifier.contains(pinned[name]), (
                f"{group}: {line} vs {pinned[name]}"
            )
    # Optional integrations stay out of the default install.
    for extra in ("hf", "discord"):
        for line in project["optional-dependencies"][extra]:
            assert Requirement(line).name.lower() not in runtime
