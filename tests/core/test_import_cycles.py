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
    graph = grimp.build_graph("app", "widgets", include_external_packages=False, cache_dir=None)  # never a stale cache
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


# -- packages (issue 57): every core package on a floor, and no cycle between packages -------------------------
CORE = "app.core"
#: Package cycles still standing (none since issue 57: the three through ``TYPE_CHECKING`` annotations were
#: mended by moving the step vocabulary, the mode catalog and the live recording to their floors). A cycle
#: added on purpose would be listed here, and the list may only shrink.
KNOWN_PACKAGE_CYCLES: list[set[str]] = []


def _core_layers() -> set[str]:
    import tomllib
    from pathlib import Path

    data = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    contract = next(c for c in data["tool"]["importlinter"]["contracts"] if c.get("containers") == [CORE])
    return {name.strip() for floor in contract["layers"] for name in floor.split("|")}


def package_cycles(graph: grimp.ImportGraph, container: str) -> list[set[str]]:
    """The strongly connected sets (more than one package) of the graph of ``container``'s direct children,
    counting every import grimp sees (inside functions and under TYPE_CHECKING too). Tarjan's algorithm."""
    def child(module: str) -> str | None:
        rest = module[len(container) + 1:] if module.startswith(container + ".") else None
        return rest.split(".")[0] if rest else None

    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        a = child(module)
        if a is not None:
            edges.setdefault(a, set()).update(
                b for b in map(child, graph.find_modules_directly_imported_by(module)) if b and b != a)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_every_core_package_is_on_a_floor_of_the_layers_contract():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "app" / "core"
    packages = {p.stem for p in root.iterdir() if (p.suffix == ".py" and p.stem != "__init__")
                or (p.is_dir() and (p / "__init__.py").exists())}
    missing = packages - _core_layers()
    assert not missing, f"app/core packages on no floor of pyproject.toml's core layers contract: {sorted(missing)}"


def test_no_new_package_cycle_in_the_core():
    graph = grimp.build_graph("app", include_external_packages=False, cache_dir=None)  # never a stale cache
    cycles = package_cycles(graph, CORE)
    new = [c for c in cycles if c not in KNOWN_PACKAGE_CYCLES]
    assert not new, f"package cycles in app.core: {new}"
    mended = [c for c in KNOWN_PACKAGE_CYCLES if c not in cycles]
    assert not mended, f"mended, remove from KNOWN_PACKAGE_CYCLES: {mended}"


def test_the_package_cycle_check_finds_a_cycle_under_type_checking(tmp_path, monkeypatch):
    root = tmp_path / "pkgcyc"
    for sub in ("low", "high"):
        (root / sub).mkdir(parents=True)
        (root / sub / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "high" / "x.py").write_text("from pkgcyc.low import y\n")
    (root / "low" / "y.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkgcyc.high import x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("pkgcyc", include_external_packages=False)
    assert package_cycles(graph, "pkgcyc") == [{"high", "low"}]
