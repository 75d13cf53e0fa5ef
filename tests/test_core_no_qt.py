"""app/core must import and run without Qt (the design's one-way dependency)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import sys
for name in ("PySide6", "PySide6.QtCore", "PySide6.QtWidgets", "pyqtgraph", "shiboken6"):
    sys.modules[name] = None  # makes `import PySide6` raise ImportError
import pkgutil, importlib, app.core
for mod in pkgutil.iter_modules(app.core.__path__):
    importlib.import_module("app.core." + mod.name)
import app.cli
assert not any(m.startswith(("PySide6", "pyqtgraph", "widgets")) for m in sys.modules if sys.modules[m])
print("ok")
"""


def test_core_imports_without_qt():
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("ok")
