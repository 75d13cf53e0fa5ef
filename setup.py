"""Build hooks of the wheel (issue 56): everything else is in pyproject.toml.

A wheel built from this checkout (``pip wheel .``, ``uv tool install .``, ``pipx install .``, or from the sdist)
installs one import package, ``torchax_playground``, holding ``app/``, ``widgets/`` and ``assets/``, with the
project's own imports rewritten to match (tools/package_build.py): no top-level ``app`` or ``widgets``. An
editable install (``pip install -e .``, what ``make`` does) keeps the checkout's layout: ``app``, ``widgets`` and
the small ``torchax_playground`` package that holds the console script's entry point.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("_torchax_playground_package_build", ROOT / "tools" / "package_build.py")
assert _spec is not None and _spec.loader is not None
layout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layout)


class BuildInstalledLayout(build_py):
    """``build_py`` that writes :func:`layout.build_tree`'s layout (an editable build keeps setuptools' own)."""

    def run(self) -> None:
        if self.editable_mode:
            super().run()
            return
        layout.build_tree(ROOT, Path(self.build_lib))

    def get_output_mapping(self) -> dict[str, str]:
        if self.editable_mode:
            return super().get_output_mapping()
        return layout.planned_outputs(ROOT, Path(self.build_lib))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        if self.editable_mode:
            return super().get_outputs(include_bytecode)
        return sorted(self.get_output_mapping())


class WheelTopLevel(bdist_wheel):
    """``bdist_wheel`` whose ``top_level.txt`` names the one package the wheel installs (setuptools would list
    the checkout's ``app`` and ``widgets``, which importlib.metadata.packages_distributions() then believes)."""

    def egg2dist(self, egginfo_path: str, distinfo_path: str) -> None:
        super().egg2dist(egginfo_path, distinfo_path)
        top_level = os.path.join(distinfo_path, "top_level.txt")
        if os.path.exists(top_level):
            Path(top_level).write_text(f"{layout.PACKAGE}\n", encoding="utf-8")


setup(cmdclass={"build_py": BuildInstalledLayout, "bdist_wheel": WheelTopLevel})
