"""No by-name reaches across modules (issue 57, item 3): a widget is found by its object name
(``findChild(Type, "name")``) only in the module that gives it that name (``setObjectName("name")``); any other
module is handed the widget (a constructor argument, an attribute set by its owner) or a function of the module
that names it (``app.gui.layout.card_title``). Object names stay for style sheets, saved layouts and tests."""

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
