"""The build step's rewrite of the project's own imports and module names (tools/package_build.py, issue 56):
what it rewrites, what it leaves, what makes the build fail loudly; and the one place the app finds its data
(app/core/paths.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.core import paths
from tools import package_build as pb

ROOT = Path(__file__).resolve().parents[2]
P = pb.PACKAGE


def test_imports_of_the_project_move_under_the_one_package_and_others_stay():
    src = ("from __future__ import annotations\nimport os, widgets.run.form as form\nfrom app.core import paths\n"
           "if T: from app.gui.x import (a,\n    b)\nfrom . import sibling\nfrom application import z\n")
    out = pb.rewrite_source(src)
    assert out == (f"from __future__ import annotations\nimport os, {P}.widgets.run.form as form\n"
                   f"from {P}.app.core import paths\nif T: from {P}.app.gui.x import (a,\n    b)\n"
                   "from . import sibling\nfrom application import z\n")


def test_module_name_strings_and_dash_m_are_rewritten_but_folder_names_and_prose_are_not():
    src = ('MODE = "app.core.modes.eager:TorchMode"\nCMD = [python, "-m", "app"]\nDIRS = ("app", "widgets")\n'
           'HELP = "run python -m app.cli here"\nTEXT = "the app.gui.layout module"\n'
           'def f():\n    """Start with ``python -m app``."""\n    return f"python -m app {x}"\n')
    out = pb.rewrite_source(src)
    assert f'MODE = "{P}.app.core.modes.eager:TorchMode"' in out
    assert f'CMD = [python, "-m", "{P}.app"]' in out
    assert 'DIRS = ("app", "widgets")' in out
    assert f'HELP = "run python -m {P}.app.cli here"' in out
    assert 'TEXT = "the app.gui.layout module"' in out
    assert f"``python -m {P}.app``" in out and f'f"python -m {P}.app {{x}}"' in out
    ast.parse(out)


@pytest.mark.parametrize("src, why", [
    ("import app.core\n", "binds the name 'app'"),
    ("import widgets\n", "binds the name 'widgets'"),
    ('name = "app." + rest\n', "not a module name"),
    ('m = importlib.import_module(f"app.{x}")\n', "f-string"),
    ('m = f"widgets.{x}:Form"\n', "f-string"),
])
def test_a_reference_the_build_cannot_rewrite_fails_the_build(src, why):
    with pytest.raises(pb.UnknownReference, match=why):
        pb.rewrite_source(src, "x.py")


def test_the_check_after_the_rewrite_catches_a_project_import_left_behind():
    with pytest.raises(pb.UnknownReference, match="still a top-level project name"):
        pb.check_rewritten("from app.core import paths\n", "x.py")
    pb.check_rewritten(f"from {P}.app.core import paths\nDIR = 'app'\n", "x.py")


def test_the_checkout_finds_its_data_beside_app():
    assert not paths.installed()
    assert paths.assets_dir() == ROOT / "assets"
    for item in pb.ASSETS:
        assert paths.asset(item).exists(), item
    assert paths.examples_dir() == ROOT / "app" / "examples"


def test_only_app_core_paths_names_the_assets_folder():
    """Every reader of the app's data goes through app.core.paths, so an installed copy finds it."""
    offenders = []
    for top in ("app", "widgets"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == ROOT / "app" / "core" / "paths.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and node.value == "assets":
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, f"read the app's data through app.core.paths: {offenders}"
