"""No import cycles in app/ and widgets/, counting every import grimp sees: inside functions and under
``if TYPE_CHECKING:`` too. A cycle between two modules is a cycle between the concepts they hold; the
layers in pyproject.toml's import-linter contracts keep packages apart, this keeps modules apart."""

import grimp


def _cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[tuple[str, str]]:
    """Pairs (a, b) with a importing b and a path from b back to a (one pair per cycle found)."""
    found = []
    for a in sorted(modules):
        for b in sorted(graph.find_modules_directly_imported_by(a)):
            if b in modules and a != b and graph.chain_exists(importer=b, imported=a):
                found.append((a, b))
    return found


def test_no_import_cycle_in_app_and_widgets():
    graph = grimp.build_graph("app", "widgets", include_external_packages=False)
    modules = {m for m in graph.modules if not graph.is_module_squashed(m)}
    cycles = _cycles(graph, modules)
    assert not cycles, "import cycles:\n" + "\n".join(
        f"{a} -> {b} -> … -> {a}: {' -> '.join(graph.find_shortest_chain(importer=b, imported=a) or [])}"
        for a, b in cycles
    )


def test_the_cycle_check_finds_a_cycle(tmp_path, monkeypatch):
    """The check itself: two modules importing each other (one inside a function) are reported."""
    pkg = tmp_path / "cyclepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from cyclepkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from cyclepkg import a\n    return a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("cyclepkg", include_external_packages=False)
    assert _cycles(graph, set(graph.modules)) == [("cyclepkg.a", "cyclepkg.b"), ("cyclepkg.b", "cyclepkg.a")]
