"""No by-name reaches across modules (issue 57, item 3): a widget is found by its object name
(``findChild(Type, "name")``) only in the module that gives it that name (``setObjectName("name")``); any other
module is handed the widget (a constructor argument, an attribute set by its owner) or a function of the module
that names it (``app.gui.layout.card_title``). Object names stay for style sheets, saved layouts and tests.

And no panel reaches the window's widget set (issue 57, item 3: typed seams): a module of app/gui/panels/ or
app/gui/workspaces.py never reads ``ctx.ui`` (the context carries no widget) nor names ``WindowParts``; it is handed
the widgets it drives."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _string_arg(call: ast.Call, index: int) -> str | None:
    if len(call.args) > index and isinstance(call.args[index], ast.Constant) and isinstance(call.args[index].value, str):
        return call.args[index].value
    return None


def reaches(source: str, path: str) -> tuple[set[str], list[tuple[str, int, str]]]:
    """``(names set, reaches)`` of one module: the object names it sets, and each ``findChild(…, "name")`` as
    ``(path, line, name)``."""
    named, found = set(), []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "setObjectName" and (name := _string_arg(node, 0)):
                named.add(name)
            elif node.func.attr == "findChild" and (name := _string_arg(node, 1)):
                found.append((path, node.lineno, name))
    return named, found


def by_name_reaches_across_modules(files: dict[str, str]) -> list[str]:
    """``path:line findChild("name") — named in other.py`` for every reach of a name its own module does not set."""
    setters: dict[str, set[str]] = defaultdict(set)
    all_found = []
    for path, source in files.items():
        named, found = reaches(source, path)
        for name in named:
            setters[name].add(path)
        all_found += found
    return [f"{path}:{line} findChild({name!r}) — named in {', '.join(sorted(setters[name])) or 'no module'}"
            for path, line, name in all_found if path not in setters[name]]


def test_no_module_reaches_a_widget_by_a_name_another_module_gave_it():
    files = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
             for folder in ("app", "widgets") for p in sorted((ROOT / folder).rglob("*.py"))}
    assert by_name_reaches_across_modules(files) == []


def test_a_seeded_reach_is_named_with_where_the_name_is_set():
    files = {"a.py": 'w.setObjectName("whyTabs")\nself.t = w.findChild(QTabWidget, "whyTabs")\n',
             "b.py": 'tabs = host.findChild(QTabWidget, "whyTabs")\nfit = host.findChild(QObject, "nowhere")\n'}
    assert by_name_reaches_across_modules(files) == [
        "b.py:1 findChild('whyTabs') — named in a.py", "b.py:2 findChild('nowhere') — named in no module"]


# -- the window's widgets (issue 57, item 3: typed seams) ---------------------------------------------------------
#: The modules built with the window's context: each is handed the widgets it drives (constructor arguments or its
#: record in app/gui/context.py), never the window's whole set (app.gui.layout.WindowParts, the window's own record).
PANEL_MODULES = ("app/gui/panels", "app/gui/workspaces.py")
CONTEXT_NAMES = {"ctx", "context"}


def _is_context(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id in CONTEXT_NAMES) or (
        isinstance(node, ast.Attribute) and node.attr in CONTEXT_NAMES)


def window_parts_reaches(source: str, path: str) -> list[str]:
    """``path:line what`` for each reach of one module into the window's widget set: ``ctx.ui`` (or
    ``self.ctx.ui``, ``context.ui``, ``getattr(ctx, "ui")``) and any use of the name ``WindowParts``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr == "ui" and _is_context(node.value):
            found.append((node.lineno, ast.unparse(node)))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and len(node.args) >= 2 and _is_context(node.args[0]) and _string_arg(node, 1) == "ui"):
            found.append((node.lineno, ast.unparse(node)))
        elif (isinstance(node, ast.Name) and node.id == "WindowParts") or (
                isinstance(node, ast.alias) and node.name == "WindowParts"):
            found.append((node.lineno, "WindowParts"))
    return [f"{path}:{line} {what}" for line, what in sorted(found)]


def context_fields(source: str) -> list[str]:
    """The annotated fields of ``WindowContext`` in ``source`` (app/gui/context.py), as ``name: annotation``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == "WindowContext":
            return [f"{ast.unparse(f.target)}: {ast.unparse(f.annotation)}" for f in node.body
                    if isinstance(f, ast.AnnAssign)]
    raise AssertionError("no WindowContext class")


def window_parts_reaches_under(root: Path) -> list[str]:
    """Every reach into the window's widget set by a module of :data:`PANEL_MODULES` under ``root``, and a
    ``WindowContext`` field that carries it (``ui``, or one annotated ``WindowParts``)."""
    found = []
    for place in PANEL_MODULES:
        paths = [root / place] if place.endswith(".py") else sorted((root / place).rglob("*.py"))
        for p in paths:
            found += window_parts_reaches(p.read_text(encoding="utf-8"), str(p.relative_to(root)))
    context = root / "app/gui/context.py"
    found += [f"app/gui/context.py WindowContext.{f}" for f in context_fields(context.read_text(encoding="utf-8"))
              if f.startswith("ui:") or "WindowParts" in f]
    return found


def test_no_panel_reaches_the_windows_widget_set_through_the_context():
    assert window_parts_reaches_under(ROOT) == []


def test_a_seeded_reach_into_the_windows_widgets_fails(tmp_path):
    """A scratch tree with the reaches this gate forbids (the ones issue 57 found: ``self.ui = ctx.ui``,
    ``self.ctx.ui.plot``) beside clean modules: each is named; the clean tree passes."""
    clean = {
        "app/gui/context.py": "class WindowContext:\n    host: QMainWindow\n    session: Session\n",
        "app/gui/panels/a.py": "class A:\n    def __init__(self, ctx, plot):\n        self.plot, self.ui = plot, None\n",
        "app/gui/workspaces.py": "def f(parts):\n    return parts.ir_card\n",
    }
    for rel, text in clean.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert window_parts_reaches_under(tmp_path) == []
    (tmp_path / "app/gui/panels/demo").mkdir()
    (tmp_path / "app/gui/panels/demo/kit.py").write_text(
        "def f(self, ctx):\n    self.ui = ctx.ui\n    self.ctx.ui.plot.redraw()\n    return getattr(ctx, 'ui')\n")
    (tmp_path / "app/gui/workspaces.py").write_text("from app.gui.layout import WindowParts\n")
    (tmp_path / "app/gui/context.py").write_text("class WindowContext:\n    host: QMainWindow\n    ui: WindowParts\n")
    assert window_parts_reaches_under(tmp_path) == [
        "app/gui/panels/demo/kit.py:2 ctx.ui", "app/gui/panels/demo/kit.py:3 self.ctx.ui",
        "app/gui/panels/demo/kit.py:4 getattr(ctx, 'ui')", "app/gui/workspaces.py:1 WindowParts",
        "app/gui/context.py WindowContext.ui: WindowParts"]
