"""Imports written inside functions in app/ and widgets/, sorted into heavy and light (issue 57, item 5).

    python tools/inline_imports.py              # the counts, per 1,000 lines; fails (exit 1) over the limit
    python tools/inline_imports.py --show       # every in-function import of a light project module
    python tools/inline_imports.py --heavy      # the project modules that load a heavy library, and which

The rule: a light project module is imported at the top of the module that uses it; a heavy one may be imported
inside the function that needs it, so that ``torchax-playground --help`` or opening the window on a ``.session``
file does not start JAX or torch, and the CLI does not load Qt.

- **Heavy libraries**: :data:`HEAVY_LIBRARIES` — jax, jaxlib, torch, torchax, transformers, safetensors, gguf,
  huggingface_hub, pyqtgraph and matplotlib (each takes from a few tenths of a second to several seconds to
  import), and numpy, scipy, grandalf, tokenizers and pygments (one feature needs each; the CLI's start loads
  none of them). The same list is ruff's allow-list for PLC0415 (``banned-module-level-imports`` in
  pyproject.toml; a test keeps the two equal).
- **What a module loads**: the heavy libraries (and PySide6) that importing it runs, directly or through the
  project modules it imports at module level, transitively. Importing ``a.b.c`` runs ``a/__init__``,
  ``a/b/__init__`` and ``a/b/c``, so the parent packages count. "At module level" is whatever runs on import:
  the top, a top-level ``if``/``try``, a class body, and the imports inside the module's own functions that its
  module-level code calls (``_register()`` at the bottom of a module) — not the rest of a function, not
  ``if TYPE_CHECKING:`` and not ``if __name__ == "__main__":``.
- An in-function import of a project module is **heavy** when the module imported loads a heavy library (or Qt)
  that the importing module does not already load at its own module level (``app.cli`` importing the window,
  the compute service importing the engine); otherwise it is **light**, and light ones are what the limit counts
  (:data:`LIMIT_PER_1000` per 1,000 lines of app/ + widgets/). A light one stays inside a function only to break
  a real module-level cycle, with a ``# noqa: PLC0415 - cycle: a -> b -> a`` reason on its line. Moving a light
  import to the top therefore never makes a module load a heavy library it did not load before.
- Reported on their own and not limited: in-function imports of heavy libraries, of heavy project modules, and
  of the standard library and light third-party packages (``other``; ruff's PLC0415 wants a reason for those).

It reads the code with ``ast`` only (nothing of the app is imported). ``tests/core/test_inline_imports.py`` runs
it in `make test`, with a seeded regression.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The folders whose in-function imports are counted (and whose lines make the 1,000s).
DIRS = ("app", "widgets")
#: The project's own top-level packages: an import of one of these is a project import.
PROJECT = ("app", "widgets", "torchax_playground")
#: Third-party libraries imported inside the functions that need them (see the module docstring).
HEAVY_LIBRARIES = frozenset({
    "jax", "jaxlib", "torch", "torchax", "transformers", "safetensors", "gguf", "huggingface_hub", "pyqtgraph",
    "matplotlib", "numpy", "scipy", "grandalf", "tokenizers", "pygments",
})
#: What a heavy library loads in turn (so that a module loading pyqtgraph counts as loading Qt too).
LIBRARY_LOADS = {"jax": {"jaxlib", "numpy"}, "torchax": {"jax", "jaxlib", "numpy", "torch"},
                 "pyqtgraph": {"PySide6", "numpy"}, "matplotlib": {"numpy"}, "scipy": {"numpy"}}
#: Qt: light for the window's modules (they all load it), heavy for a module that does not load it (the CLI).
QT = "PySide6"
#: In-function imports of light project modules allowed per 1,000 lines of app/ + widgets/ (issue 57).
LIMIT_PER_1000 = 2.0


@dataclass(frozen=True)
class Inline:
    """One import statement inside a function: where it is, the modules it imports, and its kind."""

    path: str  # relative to the root, e.g. "app/gui/window/actions.py"
    line: int
    modules: tuple[str, ...]  # the dotted modules it runs (a ``from x import y`` of a submodule names x.y)
    kind: str  # "light" | "heavy-project" | "heavy-library" | "other"


@dataclass
class Report:
    """The counts over a tree: lines of app/ + widgets/, and every in-function import by kind."""

    lines: int = 0
    inline: list[Inline] = field(default_factory=list)
    heavy_project: dict[str, str] = field(default_factory=dict)  # heavy project module -> the heavy libraries it loads

    def of_kind(self, kind: str) -> list[Inline]:
        return [i for i in self.inline if i.kind == kind]

    def per_1000(self, kind: str) -> float:
        return 1000.0 * len(self.of_kind(kind)) / max(self.lines, 1)


# -- reading one module -----------------------------------------------------------------------------------------
def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(body: list[ast.stmt], in_function: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Each import statement with whether it sits in a function; ``if TYPE_CHECKING:`` and
    ``if __name__ == "__main__":`` bodies are skipped (they never run on import), their ``else:`` is walked."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, in_function
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _walk(node.body, True)
        elif isinstance(node, ast.If) and (_is_type_checking(node.test) or _is_main_guard(node.test)):
            yield from _walk(node.orelse, in_function)
        else:
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                children = getattr(node, name, None)
                if isinstance(children, list):
                    stmts = [c for c in children if isinstance(c, ast.stmt)]
                    for c in children:  # except handlers and match cases hold their own bodies
                        if isinstance(c, ast.ExceptHandler | ast.match_case):
                            stmts.extend(c.body)
                    yield from _walk(stmts, in_function)


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _calls(nodes: list[ast.stmt] | list[ast.expr]) -> set[str]:
    """The plain names called in ``nodes`` (``f(...)``, not ``x.f(...)``) by code that runs there and then: not
    inside the bodies of functions and lambdas defined in them (their decorators and defaults do run), and not
    under ``if __name__ == "__main__":``."""
    found: set[str] = set()
    todo: list[ast.AST] = list(nodes)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            found.add(node.func.id)
        if isinstance(node, _DEFS):
            todo += [*node.decorator_list, *node.args.defaults, *(d for d in node.args.kw_defaults if d)]
        elif isinstance(node, ast.If) and _is_main_guard(node.test):
            todo += node.orelse
        elif not isinstance(node, ast.Lambda):
            todo += ast.iter_child_nodes(node)
    return found


def _is_main_guard(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators))


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


class Tree:
    """The project's modules under ``root`` (by dotted name) and what each imports at module level."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, Path] = {}
        for top in PROJECT:
            if (root / top).is_dir():
                for path in sorted((root / top).rglob("*.py")):
                    self.files[_module_name(path, root)] = path
        self.trees = {name: ast.parse(path.read_text(encoding="utf-8"), str(path))
                      for name, path in self.files.items()}
        self._loads: dict[str, frozenset[str]] = {}

    def is_package(self, name: str) -> bool:
        return self.files[name].name == "__init__.py"

    def targets(self, module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
        """The dotted modules an import statement runs (for ``from x import y``: ``x.y`` when that is a project
        module, else ``x``)."""
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            package = module if self.is_package(module) else module.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in self.files]
        return subs or [base]

    def module_level(self, module: str) -> list[str]:
        """What importing ``module`` imports: its module-level imports, and the imports inside the module's own
        functions that its module-level code calls (``_register()`` at the bottom of a module runs the
        ``import jax`` inside ``_register`` at import time), followed through the calls they make in turn."""
        body = self.trees[module].body
        found = [node for node, inside in _walk(body, False) if not inside]
        functions = {n.name: n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
        called, todo = set(), _calls(body)
        while todo:
            name = todo.pop()
            if name in functions and name not in called:
                called.add(name)
                found += [n for n in ast.walk(functions[name]) if isinstance(n, ast.Import | ast.ImportFrom)]
                todo |= _calls(functions[name].body)
        return [t for node in found for t in self.targets(module, node)]

    def loads(self, target: str) -> frozenset[str]:
        """The heavy libraries (and PySide6) that importing ``target`` loads at module level, transitively."""
        top = target.split(".")[0]
        if top in HEAVY_LIBRARIES or top == QT:
            return frozenset({top, *LIBRARY_LOADS.get(top, ())})
        if top not in PROJECT:
            return frozenset()
        parts = target.split(".")
        found: set[str] = set()
        for i in range(1, len(parts) + 1):  # the parent packages run first
            name = ".".join(parts[:i])
            if name in self.files:
                found |= self._module_loads(name)
        return frozenset(found)

    def _module_loads(self, name: str) -> frozenset[str]:
        if name not in self._loads:
            self._loads[name] = frozenset()  # a module-level cycle in progress adds nothing twice
            self._loads[name] = frozenset().union(*(self.loads(t) for t in self.module_level(name)))
        return self._loads[name]

    def kind(self, importer: str, target: str) -> str:
        """``heavy-library`` for a heavy library itself; ``heavy-project`` for a project module that loads a heavy
        library (or Qt) the importer does not load at its own module level; ``light`` for any other project
        module; ``other`` for the standard library and light third-party packages (PySide6 included)."""
        top = target.split(".")[0]
        if top in HEAVY_LIBRARIES:
            return "heavy-library"
        if top not in PROJECT:
            return "other"
        return "heavy-project" if self.loads(target) - self.loads(importer) else "light"


def count(root: Path = ROOT) -> Report:
    """Reads app/ and widgets/ under ``root`` and sorts every in-function import (see the module docstring)."""
    tree = Tree(root)
    report = Report()
    rank = {"light": 0, "heavy-project": 1, "heavy-library": 2, "other": 3}
    for name, path in tree.files.items():
        rel = path.relative_to(root).as_posix()
        if not rel.startswith(tuple(d + "/" for d in DIRS)):
            continue
        report.lines += len(path.read_text(encoding="utf-8").splitlines())
        for node, inside in _walk(tree.trees[name].body, False):
            if inside:
                targets = tuple(tree.targets(name, node))
                kind = min((tree.kind(name, t) for t in targets), key=rank.__getitem__)
                report.inline.append(Inline(rel, node.lineno, targets, kind))
    for name in tree.files:
        loads = tree.loads(name) - {QT}
        if loads:
            report.heavy_project[name] = ", ".join(sorted(loads))
    return report


def problems(report: Report, limit: float = LIMIT_PER_1000) -> list[str]:
    """One line when the light in-function imports exceed ``limit`` per 1,000 lines, naming each; else []."""
    light = report.of_kind("light")
    if report.per_1000("light") <= limit:
        return []
    return [f"{len(light)} in-function imports of light project modules in {report.lines} lines "
            f"({report.per_1000('light'):.1f} per 1,000, over {limit}): import them at the top of the module, "
            f"or give a cycle as the reason (# noqa: PLC0415 - cycle: a -> b -> a):\n"
            + "\n".join(f"  {i.path}:{i.line}: {', '.join(i.modules)}" for i in light)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="list each in-function import of a light module")
    parser.add_argument("--heavy", action="store_true", help="list the heavy project modules and what they load")
    args = parser.parse_args(argv)
    report = count()
    if args.heavy:
        for name, why in sorted(report.heavy_project.items()):
            print(f"{name}: {why}")
    if args.show:
        for i in report.of_kind("light"):
            print(f"{i.path}:{i.line}: {', '.join(i.modules)}")
    print(f"{report.lines} lines in {', '.join(DIRS)}")
    for kind in ("light", "heavy-project", "heavy-library", "other"):
        print(f"  in-function imports, {kind:14}: {len(report.of_kind(kind)):4}  "
              f"({report.per_1000(kind):.1f} per 1,000 lines)")
    for problem in problems(report):
        print(problem, file=sys.stderr)
    return 1 if problems(report) else 0


if __name__ == "__main__":
    sys.exit(main())
