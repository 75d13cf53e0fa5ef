"""Complete catalogs (issue 57, item 4): no mode, step, IR-view or platform name is written as a string literal in
``app/`` or ``widgets/`` outside the module that catalogs it. Code reads the catalog instead: a mode's
capability (a :class:`app.core.mode_catalog.ModeInfo` field and its helper, ``modes_across_processes()``,
``decode_loop_mode()``, ``race_lane_mode()``), a step constant (``app.core.steps.PREFILL`` / ``DECODE``,
re-exported to the widgets by ``app.core.inspect.views``), a view's key from ``app.core.inspect.views``, a
backend row's field (``backends.CPU.platform``, ``CPU.torch_device``, ``backends.TORCH_CUDA``).

The scan walks each module's AST and reports ``path:line`` of every ``str`` constant exactly equal to one of those
names. What is not a literal of a catalog's name, and so not reported:

- docstrings, and any other string statement (attribute docstrings); comments are not in the AST;
- a sentence, a label or an f-string part that merely contains the word (``"compiling the decode step"``): only
  an exact match counts;
- an attribute's name, the second argument of ``getattr`` / ``hasattr`` / ``setattr`` (``getattr(pipeline,
  "gpu")``, ``hasattr(x, "cpu")``): Python's word for a field or method, not a platform;
- a Python package's name: the argument of ``sys.modules.get`` / ``importlib.import_module`` /
  ``find_spec`` / ``metadata.version``, and the strings of a tuple, list or set that also names the ``jax``
  package (a listing of packages: ``("jax", "jaxlib", "torch", …)``), where ``"torch"`` is the package the mode
  is named after.

Where a literal is the outside world's word (``jax.devices("cpu")``'s platform, a torch device), it goes through
the catalog's named constant, not through an exemption. The catalog modules themselves are where the names are
written (:data:`CATALOGS`).

IR-view keys are also the everyday names of other things: a session file's field (``"passes"``), a ``CallRecord``
field (``"compile_phases"``), JAX's equation parameter (``"jaxpr"``), a JSON event, a column header
(``"fusions"``). Where code means the view it reads the catalog (``views.HLO``, ``view(PASSES).cli``); the other
thing gets a named constant in the module that owns it, and that definition is not reported: a module-level
``NAME = "passes"`` (one UPPER_CASE name, the whole value the string), whose name is not the catalog's own
(``PASSES = "passes"`` outside the catalog is a second catalog, and is reported). Each such constant is defined
in one module only (:func:`test_each_other_name_of_a_view_key_has_one_home`). The exemption is the views' only:
mode, step and platform names have no other meaning in the tree.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from app.core.backends import BACKENDS, TORCH_CUDA
from app.core.inspect.views import IR_VIEWS
from app.core.mode_catalog import MODE_NAMES
from app.core.steps import MODEL_STEPS

ROOT = Path(__file__).resolve().parents[2]
#: The modules where the names are written, one per kind of name.
CATALOGS = {
    "mode": "app/core/mode_catalog.py",
    "step": "app/core/steps.py",
    "view": "app/core/inspect/views.py",
    "platform": "app/core/backends.py",
}
#: The names of each catalog. Platforms: JAX's (the rows of ``BACKENDS``, and ``rocm``, JAX's name of AMD GPUs,
#: which has no row yet) and torch's device types of them (``cpu``, ``cuda``).
NAMES: dict[str, frozenset[str]] = {
    "mode": frozenset(MODE_NAMES),
    "step": frozenset(MODEL_STEPS),
    "view": frozenset(v.key for v in IR_VIEWS),
    "platform": frozenset({*BACKENDS, "rocm", TORCH_CUDA,
                           *(row.torch_device.split(":")[0] for row in BACKENDS.values() if row.torch_device)}),
}
#: The name of a named constant (:func:`_named_constants`): UPPER_CASE, maybe private.
_CONSTANT_NAME = re.compile(r"_?[A-Z][A-Z0-9_]*")
#: Calls whose argument is an attribute's name, and calls whose first argument is a Python package's name.
_ATTRIBUTE_CALLS = frozenset({"getattr", "hasattr", "setattr", "delattr"})
_PACKAGE_CALLS = frozenset({"get", "import_module", "find_spec", "version", "distribution"})


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _exempt(tree: ast.AST) -> set[int]:
    """ids of the ``str`` constants of ``tree`` that are not literals of a catalog's name (see the module doc)."""
    skip: set[int] = set()
    parent: dict[int, ast.AST] = {}
    packages: list[ast.AST] = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            for stmt in stmts if isinstance(stmts, list) else []:
                if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                    skip.add(id(stmt.value))  # a docstring, or a string statement
        if isinstance(node, ast.Call):
            name = _call_name(node)
            if name in _ATTRIBUTE_CALLS and len(node.args) >= 2:
                skip.add(id(node.args[1]))
            elif name in _PACKAGE_CALLS and node.args and (
                    name != "get" or ast.unparse(node.func) == "sys.modules.get"):
                skip.add(id(node.args[0]))
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            for child in node.elts:
                parent[id(child)] = node
        elif isinstance(node, ast.Constant) and node.value == "jax":
            packages.append(node)
    for node in packages:  # the outermost tuple, list or set around a "jax": a listing of packages
        while id(node) in parent:
            node = parent[id(node)]
        skip.update(id(n) for n in ast.walk(node) if isinstance(n, ast.Constant))
    return skip


def _named_constants(tree: ast.Module) -> dict[int, str]:
    """``{id(value): name}`` of the module-level ``NAME = "text"`` / ``NAME: T = "text"`` of ``tree`` whose
    name is UPPER_CASE and not the text's own upper case (``PASSES_FIELD = "passes"``, not ``PASSES = "passes"``):
    another thing's name that equals an IR-view key, written once where that thing is owned."""
    found = {}
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(
            stmt, ast.AnnAssign) else []
        value = getattr(stmt, "value", None)
        if (len(targets) == 1 and isinstance(name := targets[0], ast.Name) and _CONSTANT_NAME.fullmatch(name.id)
                and isinstance(value, ast.Constant) and isinstance(value.value, str)
                and name.id.lstrip("_") != value.value.upper()):
            found[id(value)] = name.id
    return found


def catalog_literals(source: str, path: str = "<source>") -> list[str]:
    """``"path:line: kind 'name'"`` for each ``str`` constant of ``source`` equal to a mode, step, IR-view or
    platform name (:data:`NAMES`), but in that kind's catalog module (``path`` = :data:`CATALOGS`' value) and
    the constants :func:`_exempt` leaves out, and for IR views the named constants of other things
    (:func:`_named_constants`); sorted by line."""
    tree = ast.parse(source)
    skip, named = _exempt(tree), _named_constants(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            for kind, names in NAMES.items():
                if node.value in names and CATALOGS[kind] != path and not (kind == "view" and id(node) in named):
                    found.append((node.lineno, f"{path}:{node.lineno}: {kind} {node.value!r}"))
    return [text for _, text in sorted(found)]


@functools.cache
def _tree_literals() -> list[str]:
    paths = sorted([*(ROOT / "app").rglob("*.py"), *(ROOT / "widgets").rglob("*.py")])
    return [hit for p in paths for hit in catalog_literals(p.read_text("utf-8"), p.relative_to(ROOT).as_posix())]


def test_no_mode_step_view_or_platform_literal_outside_its_catalog():
    found = _tree_literals()
    assert not found, ("read the catalog instead (a ModeInfo capability, app.core.steps' PREFILL / DECODE, a view's "
                       "key or field of app.core.inspect.views, a backend row's field), or give another thing's "
                       "name its own named constant where that thing is owned:\n" + "\n".join(found))


def _other_names(source: str) -> dict[str, str]:
    """``{name: text}`` of ``source``'s named constants (:func:`_named_constants`) whose text is an IR-view key."""
    tree = ast.parse(source)
    values = {id(n): n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
    return {name: values[i] for i, name in _named_constants(tree).items() if values[i] in NAMES["view"]}


def defined_twice(sources: dict[str, str]) -> dict[str, list[str]]:
    """``{"NAME = 'text'": [paths]}`` of the named constants equal to an IR-view key (:func:`_other_names`) that
    more than one of ``sources`` (path → source) defines."""
    homes: dict[tuple[str, str], list[str]] = {}
    for path, source in sources.items():
        for name, text in _other_names(source).items():
            homes.setdefault((name, text), []).append(path)
    return {f"{name} = {text!r}": paths for (name, text), paths in homes.items() if len(paths) > 1}


def test_each_other_name_of_a_view_key_has_one_home():
    paths = sorted([*(ROOT / "app").rglob("*.py"), *(ROOT / "widgets").rglob("*.py")])
    twice = defined_twice({p.relative_to(ROOT).as_posix(): p.read_text("utf-8") for p in paths})
    assert not twice, f"one home each: import the constant from its owner instead of defining it again: {twice}"


def test_the_scan_finds_a_seeded_literal():
    """The check itself: each kind of name is found at its line; a docstring, a sentence, an attribute's name, a
    package's name and the catalog module's own rows are not."""
    src = ('"""jit-static is the decode step\'s mode."""\n'
           'import sys\n'
           'if mode == "jit-loop":\n'
           '    step = "prefill"\n'
           'dev = jax.devices("cpu")\n'
           'text = "compiling the decode step"\n'
           'gpu = getattr(pipeline, "gpu", None)\n'
           'torch = sys.modules.get("torch")\n'
           'VERSIONED = ("jax", "torch")\n'
           'where = torch_device.startswith("cuda")\n'
           'shown = "hlo"\n'
           'HLO_FIELD = "hlo"\n'
           'HLO = "hlo"\n'
           'def f():\n'
           '    PASSES_FIELD = "passes"\n'
           'JIT_LOOP_MODE = "jit-loop"\n')
    assert catalog_literals(src, "app/x.py") == [
        "app/x.py:3: mode 'jit-loop'", "app/x.py:4: step 'prefill'", "app/x.py:5: platform 'cpu'",
        "app/x.py:10: platform 'cuda'", "app/x.py:11: view 'hlo'", "app/x.py:13: view 'hlo'",
        "app/x.py:15: view 'passes'", "app/x.py:16: mode 'jit-loop'"]
    in_catalog = catalog_literals(src, CATALOGS["mode"])
    assert len(in_catalog) == 6 and not any(": mode " in hit for hit in in_catalog)
    assert _other_names(src) == {"HLO_FIELD": "hlo"}
    assert defined_twice({"app/x.py": src, "app/y.py": 'HLO_FIELD = "hlo"\nOTHER = "hlo"\n'}) == {
        "HLO_FIELD = 'hlo'": ["app/x.py", "app/y.py"]}
