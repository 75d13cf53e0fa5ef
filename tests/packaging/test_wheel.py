"""The app as people install it (issue 56, part 1): an sdist built from the checkout, a wheel built from that
sdist, installed with ``pip install --no-deps --target`` into an empty folder and run from a folder outside the
checkout, with the checkout nowhere on ``sys.path``: the installed ``torchax-playground`` generates tokens from the
built-in pydoc-llama and runs a gallery program, and finds its data through ``importlib.resources``.

The installed copy runs on the base interpreter of the suite's virtual environment with ``PYTHONPATH`` = the
target folder + the environment's site-packages (for torch, JAX and the rest): a folder on ``PYTHONPATH`` is not
a site directory, so the editable install's finder for the checkout's ``app`` (a ``.pth`` file) is not loaded.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from tools import package_build as pb

ROOT = Path(__file__).resolve().parents[2]
P = pb.PACKAGE
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)

pytestmark = pytest.mark.skipif(
    sys.prefix == sys.base_prefix,
    reason="the installed copy runs on the base interpreter beside a virtual environment's packages (make test's .venv)")


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sdist")
    _run([sys.executable, "-c", "import sys, setuptools.build_meta as b; b.build_sdist(sys.argv[1])", str(out)], ROOT)
    (found,) = out.glob("*.tar.gz")
    return found


@pytest.fixture(scope="module")
def wheel(sdist, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(sdist)],
         out)
    (found,) = out.glob("*.whl")
    return found


@pytest.fixture(scope="module")
def target(wheel, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("target")
    _run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(out), str(wheel)], out)
    return out


@pytest.fixture
def outside(target, tmp_path) -> tuple[Path, dict[str, str]]:
    """A folder outside the checkout and the environment the installed copy runs in there."""
    site = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PYTHONPATH=os.pathsep.join([str(target), *site]), PYTHONNOUSERSITE="1", PYTHONSAFEPATH="1",
               PATH=os.pathsep.join(["/usr/bin", "/bin"]))
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    assert not cwd.resolve().is_relative_to(ROOT)
    return cwd, env


def test_the_sdist_holds_the_build_hook_the_packages_and_the_apps_data(sdist):
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for needed in ("pyproject.toml", "setup.py", "MANIFEST.in", "tools/package_build.py", f"{P}/__init__.py",
                   "app/__main__.py", "app/core/paths.py", "app/examples/01_jit_speedup.py", "widgets/__init__.py"):
        assert needed in names, needed
    for item in pb.ASSETS:
        assert f"assets/{item}" in names, item
    assert "assets/models/pydoc-llama/model.safetensors" in names
    assert not any(n.startswith("tests/") for n in names)


def test_the_wheel_from_the_sdist_installs_one_package_with_the_apps_data(wheel):
    with zipfile.ZipFile(wheel) as whl:
        names = whl.namelist()
        info = f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"
        top_level = whl.read(f"{info}/top_level.txt").decode()
        entry_points = whl.read(f"{info}/entry_points.txt").decode()
    assert {n.split("/")[0] for n in names} == {P, info}, "no top-level app, widgets or tests"
    assert top_level.split() == [P]
    assert f"torchax-playground = {P}:main" in entry_points
    for needed in ("app/core/paths.py", "app/examples/01_jit_speedup.py", "widgets/__init__.py", "__main__.py",
                   "assets/models/pydoc-llama/model.safetensors", "assets/models/pydoc-llama/tokenizer.json",
                   "assets/icons/torchax-playground.svg", "assets/style.qss", "assets/prompts.json"):
        assert f"{P}/{needed}" in names, needed


def test_the_installed_copy_finds_its_data_through_importlib_resources_and_not_the_checkout(target, outside):
    cwd, env = outside
    script = f"""
import importlib.util, json, sys
found = {{n: importlib.util.find_spec(n) is not None for n in ("app", "widgets")}}
from {P}.app.core import desktop, paths
from {P}.app.core.crash import blame
from {P}.app.core.models import sources
from {P}.app.core.programs import gallery
print(json.dumps(dict(found=found, installed=paths.installed(), assets=str(paths.assets_dir()),
    models=str(sources.MODELS_DIR), icon=str(desktop.ICON), examples=str(gallery.EXAMPLES_DIR),
    n_examples=len(gallery.list_examples()), roots=[str(r) for r in blame.APP_ROOTS],
    own=blame.is_user_file(str(paths.package_root() / "app" / "cli" / "parser.py")),
    launch=desktop.launch_command())))
"""
    got = json.loads(_run([BASE_PYTHON, "-c", script], cwd, env).stdout.strip().splitlines()[-1])
    package = target / P
    assert got["found"] == {"app": False, "widgets": False}, "the checkout (or another app package) leaked in"
    assert got["installed"] and got["assets"] == str(package / "assets")
    assert got["models"] == str(package / "assets" / "models") and Path(got["icon"]).is_file()
    assert got["examples"] == str(package / "app" / "examples") and got["n_examples"] >= 10
    assert got["roots"] == [str(package)] and got["own"] is False
    assert got["launch"] == [BASE_PYTHON, "-m", f"{P}.app"]
    for item in pb.ASSETS:
        assert (package / "assets" / item).exists(), item
    for path in package.rglob("*.py"):  # no import of a top-level app / widgets left anywhere
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                assert node.module.split(".")[0] not in pb.PROJECT_PACKAGES, (path, node.module)
    listed = _run([BASE_PYTHON, "-m", P, "program", "--list-examples"], cwd, env).stdout
    assert "01_jit_speedup" in listed and "08_torch_module" in listed


def test_the_installed_command_generates_tokens_from_the_built_in_model(target, outside):
    """Mode ``torch`` (a mode of the installed catalog, no XLA compile: the installed copy's paths are new each
    run, so the suite's compile cache would miss); the gallery program below compiles with JAX."""
    cwd, env = outside
    out = _run([BASE_PYTHON, str(target / "bin" / "torchax-playground"), "generate", "--model", "pydoc-llama",
                "--max-new-tokens", "4", "--no-chat", "--prompt", "def add(a, b):", "--mode", "torch", "--json"],
               cwd, env).stdout
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    tokens = [e for e in events if e["event"] == "token"]
    summary = next(e for e in events if e["event"] == "summary")
    assert len(tokens) == 4 and all(isinstance(t["token_id"], int) for t in tokens)
    assert summary["model"] == "pydoc-llama" and summary["n_tokens"] == 4 and summary["mode"] == "torch"


def test_the_installed_command_runs_a_gallery_program(target, outside):
    cwd, env = outside
    out = _run([BASE_PYTHON, str(target / "bin" / "torchax-playground"), "program", "--example", "jit_speedup"],
               cwd, env).stdout
    assert "01_jit_speedup.py:selu | mode jit | 5 calls" in out
    assert "compiles 1" in out
