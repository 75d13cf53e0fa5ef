"""Light project imports at the top of each module, heavy ones inside functions (issue 57, item 5):
tools/inline_imports.py counts the in-function imports of light project modules in app/ and widgets/ (at most 2 per
1,000 lines), ruff's PLC0415 holds the rest with the heavy libraries allowed. Each check is shown to fail on a
seeded regression."""

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from tools import inline_imports

ROOT = Path(__file__).resolve().parents[2]


def test_light_in_function_imports_stay_under_the_limit():
    report = inline_imports.count(ROOT)
    assert report.lines > 10_000  # it read the tree
    assert not inline_imports.problems(report)


def _seed(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


SEEDED = {
    "app/__init__.py": "",
    "app/core/__init__.py": "",
    "app/core/light.py": "import json\n\nVALUE = 1\n",
    "app/core/heavy.py": "import jax\n",
    # heavy through a call at module level: the import inside _register runs on import
    "app/core/registers.py": "def _register():\n    import torch\n    return torch\n\n\n_register()\n",
    "app/core/typed.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from app.core import heavy\n",
    "app/core/user.py": (
        "def light_inside():\n    from app.core.light import VALUE\n    return VALUE\n\n\n"
        "def heavy_inside():\n    from app.core import heavy, registers\n    import jax\n    return heavy, registers, jax\n"
    ),
    "app/core/uses_heavy.py": "import app.core.heavy\n\n\ndef f():\n    from app.core import registers\n    return registers\n",
}


def test_the_counter_sorts_a_seeded_tree_and_fails_on_a_light_import_inside_a_function(tmp_path):
    _seed(tmp_path, SEEDED)
    report = inline_imports.count(tmp_path)
    kinds = {(i.path, i.line): (i.kind, i.modules) for i in report.inline}
    assert kinds == {
        ("app/core/registers.py", 2): ("heavy-library", ("torch",)),
        ("app/core/user.py", 2): ("light", ("app.core.light",)),
        ("app/core/user.py", 7): ("heavy-project", ("app.core.heavy", "app.core.registers")),
        ("app/core/user.py", 8): ("heavy-library", ("jax",)),
        # loads torch, which uses_heavy does not load yet: heavy for it
        ("app/core/uses_heavy.py", 5): ("heavy-project", ("app.core.registers",)),
    }
    assert report.heavy_project == {"app.core.heavy": "jax, jaxlib, numpy", "app.core.registers": "torch",
                                    "app.core.uses_heavy": "jax, jaxlib, numpy"}
    found = inline_imports.problems(report)
    assert len(found) == 1 and "app/core/user.py:2: app.core.light" in found[0], found
    # moved to the top, the same tree passes
    (tmp_path / "app/core/user.py").write_text(SEEDED["app/core/user.py"].replace(
        "def light_inside():\n    from app.core.light import VALUE\n", "from app.core.light import VALUE\n\n\ndef light_inside():\n"))
    assert not inline_imports.problems(inline_imports.count(tmp_path))


def _ruff() -> str:
    return shutil.which("ruff", path=str(Path(sys.executable).parent)) or "ruff"


def test_ruff_allows_exactly_the_heavy_libraries_inside_functions(tmp_path):
    """pyproject's PLC0415 allow-list is the counter's heavy libraries, and ruff flags a light in-function import
    but not a heavy one (the file sits outside the tree, so no per-file ignore applies)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["ruff"]["lint"]
    assert {"PLC0415", "TID253"} <= set(config["select"])
    assert set(config["flake8-tidy-imports"]["banned-module-level-imports"]) == inline_imports.HEAVY_LIBRARIES
    seeded = tmp_path / "seeded.py"
    seeded.write_text("def f():\n    import json\n    import jax.numpy as jnp\n    from torch import nn\n"
                      "    return json, jnp, nn\n")
    out = subprocess.run([_ruff(), "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"),
                          # TID253 selected too: ruff reads PLC0415's allow-list only while TID253 is on
                          "--select", "PLC0415,TID253", "--output-format", "concise", str(seeded)],
                         capture_output=True, text=True, check=False)
    flagged = [line for line in out.stdout.splitlines() if "PLC0415" in line]
    assert len(flagged) == 1 and f"{seeded}:2:" in flagged[0], out.stdout + out.stderr
