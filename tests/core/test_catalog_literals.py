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
written (:data:`CATALOGS`). IR-view keys are scanned too, but today's are held by a count per module that may
only fall (:data:`VIEW_LITERALS`); see its comment for why they remain.
"""

from __future__ import annotations

import ast
import functools
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
#: IR-view keys written outside the view catalog, per module: may only fall (a module not listed is held at 0;
#: a fall must be written down). Where code means a view it reads ``views.HLO``, ``views.JAXPR``, …; what is left
#: is mostly another thing's name that equals a key: a ``CallRecord`` / session-file / JSON field
#: (``"compile_phases"``, ``"passes"``, ``"fusions"``, ``"memory"`` of ``StepIR.summary()``), a CLI command or
#: ``--what`` name (``"passes"``, ``"collectives"``, ``program``'s ``WHAT``), a ``Kind`` of the catalog
#: (``kind="passes"``), JAX's equation parameter ``"jaxpr"`` (``inspect/regions.py``), the comparison document's
#: sections (``compare/``). IR-view help, units and figures are fields of the catalog now (issue 57, item 4).
VIEW_LITERALS: dict[str, int] = {
    "app/cli/hosts.py": 2, "app/cli/parser.py": 1, "app/cli/passes.py": 1,
    "app/cli/passes_report.py": 3,
    "app/core/compare/runs.py": 1, "app/core/compile_settings/parting.py": 1,
    "app/core/inspect/hlo_diff.py": 1, "app/core/inspect/ir.py": 1, "app/core/inspect/regions.py": 4,
    "app/core/inspect/source_map_io.py": 2, "app/core/modes/loop.py": 1, "app/core/passes/gpu_dumps.py": 1,
    "app/core/passes/gpu_text.py": 1, "app/core/passes/query.py": 2,
    "app/core/programs/runner.py": 1, "app/core/recording/model.py": 3, "app/core/report/columns.py": 4,
    "app/core/report/export.py": 1, "app/core/session/requests.py": 1,
    "widgets/demo/compile_log.py": 1, "widgets/devices/collectives_table.py": 1,
    "widgets/passes/pass_list.py": 1,
}
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


def catalog_literals(source: str, path: str = "<source>") -> list[str]:
    """``"path:line: kind 'name'"`` for each ``str`` constant of ``source`` equal to a mode, step, IR-view or
    platform name (:data:`NAMES`), but in that kind's catalog module (``path`` = :data:`CATALOGS`' value) and
    the constants :func:`_exempt` leaves out; sorted by line."""
    tree = ast.parse(source)
    skip = _exempt(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            for kind, names in NAMES.items():
                if node.value in names and CATALOGS[kind] != path:
                    found.append((node.lineno, f"{path}:{node.lineno}: {kind} {node.value!r}"))
    return [text for _, text in sorted(found)]


@functools.cache
def _tree_literals() -> list[str]:
    paths = sorted([*(ROOT / "app").rglob("*.py"), *(ROOT / "widgets").rglob("*.py")])
    return [hit for p in paths for hit in catalog_literals(p.read_text("utf-8"), p.relative_to(ROOT).as_posix())]


def test_no_mode_step_or_platform_literal_outside_its_catalog():
    found = [hit for hit in _tree_literals() if ": view " not in hit]
    assert not found, ("read the catalog instead (a ModeInfo capability, app.core.steps' PREFILL / DECODE, a "
                       "backend row's field):\n" + "\n".join(found))


def test_ir_view_literals_only_fall():
    counts: dict[str, int] = {}
    for hit in _tree_literals():
        if ": view " in hit:
            path = hit.split(":", 1)[0]
            counts[path] = counts.get(path, 0) + 1
    grown = {p: n for p, n in counts.items() if n > VIEW_LITERALS.get(p, 0)}
    fell = {p: n for p, n in counts.items() if n < VIEW_LITERALS.get(p, 0)}
    gone = sorted(set(VIEW_LITERALS) - set(counts))
    assert not grown, f"IR-view keys written again outside app/core/inspect/views.py (read the catalog): {grown}"
    assert not fell and not gone, f"fewer IR-view literals: write the new counts in VIEW_LITERALS: {fell} {gone}"


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
           'shown = "hlo"\n')
    assert catalog_literals(src, "app/x.py") == [
        "app/x.py:3: mode 'jit-loop'", "app/x.py:4: step 'prefill'", "app/x.py:5: platform 'cpu'",
        "app/x.py:10: platform 'cuda'", "app/x.py:11: view 'hlo'"]
    in_catalog = catalog_literals(src, CATALOGS["mode"])
    assert len(in_catalog) == 4 and not any(": mode " in hit for hit in in_catalog)
