"""The HLO's file names are the program's and the model's, not the app's own driver files (issue 55: the
optimized HLO's ``FileNames`` listed ``app/cli/parser.py``, ``app/core/engine/engine.py``, ``<frozen runpy>`` …)."""

from __future__ import annotations

import io
import os

import pytest

from app.cli import main
from app.core.inspect.ir import DRIVER_PATHS, app_driver_paths

PROGRAM = '''import jax.numpy as jnp


def f(x):
    return jnp.sin(x) + 0.5  # not test_program_cli.py's f: a shared cache entry would make its first call a hit


def f_args():
    return (jnp.ones((3, 5)),)
'''


def _file_names(hlo: str) -> list[str]:
    block = hlo.split("\nFileNames\n", 1)[1].split("\n\n", 1)[0]
    return [line.split(" ", 1)[1].strip('"') for line in block.splitlines()]


@pytest.mark.cold_compile  # JAX's persistent cache key leaves locations out: a cached HLO keeps its compile's files
def test_the_hlo_names_the_programs_file_and_no_app_driver(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    out, err = io.StringIO(), io.StringIO()
    assert main(["program", f"{path}:f", "--what", "hlo"], out=out, err=err) == 0, err.getvalue()
    names = _file_names(out.getvalue())
    assert str(path) in names
    app = os.path.dirname(os.path.dirname(os.path.abspath(main.__code__.co_filename)))  # app/
    assert not [n for n in names if n.startswith(app + os.sep) or n.startswith("<frozen")], names


def test_the_driver_list_names_files_that_exist():
    """A renamed driver file must be renamed here too, or its frames come back into the HLO."""
    assert len(app_driver_paths()) == len(DRIVER_PATHS) + 1  # + "<frozen "
    assert not any("examples" in p or p.endswith(("sampling.py", "jit.py")) for p in app_driver_paths())
