"""The examples gallery: the short programs in ``app/examples/*.py`` (package data), each making one point.

Each example's module docstring gives its title (first line) and its point (the next paragraph).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from app.core.paths import examples_dir

#: ``app/examples`` (the package ``app.examples``, found through ``importlib.resources``: app.core.paths).
EXAMPLES_DIR = examples_dir()


@dataclass(frozen=True)
class Example:
    """``name``: file stem (``"jit_speedup"``); ``title``: one line; ``point``: what it shows, one line;
    ``path``: absolute path of the ``.py`` file."""

    name: str
    title: str
    point: str
    path: str


def list_examples() -> list[Example]:
    """Every example, in file-name order (the files are numbered in the order a talk would show them)."""
    out = []
    for path in sorted(EXAMPLES_DIR.glob("*.py")):
        if path.name.startswith("_"):
            continue
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        paras = [" ".join(p.split()) for p in doc.split("\n\n") if p.strip()]
        title = paras[0] if paras else path.stem
        point = paras[1] if len(paras) > 1 else ""
        out.append(Example(path.stem, title, point, str(path)))
    return out


def example(name: str) -> Example:
    """The example named ``name`` (file stem, with or without its number prefix ``01_``). Raises ``KeyError``."""
    for ex in list_examples():
        if name in (ex.name, ex.name.split("_", 1)[-1]):
            return ex
    raise KeyError(f"No example {name!r}; there are {', '.join(e.name for e in list_examples())}.")
