"""app/core must import and run without Qt (the design's one-way dependency)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys
for name in ("PySide6", "PySide6.QtCore", "PySide6.QtWidgets", "pyqtgraph", "shiboken6"):
    sys.modules[name] = None  # makes `import PySide6` raise ImportError
import pkgutil, importlib, app.core
for mod in pkgutil.walk_packages(app.core.__path__, "app.core."):
    importlib.import_module(mod.name)
import app.cli
assert not any(m.startswith(("PySide6", "pyqtgraph", "widgets")) for m in sys.modules if sys.modules[m])
print("ok")
"""


def test_core_imports_without_qt():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")


def test_importing_the_app_sets_a_passive_openmp_wait_policy_before_torch_loads():
    """PyTorch's OpenMP threads must sleep, not spin, when idle (app/__init__.py has the measurements)."""
    code = ("import os; os.environ.pop('OMP_WAIT_POLICY', None); import app.core.engine.engine, torch; "
            "print(os.environ['OMP_WAIT_POLICY'])")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "PASSIVE"
