"""The third ratchet, beside size and type errors: bare ``Any`` parameters per package may only fall.

    python tools/any_check.py            # prints a table; fails (exit 1) when a count differs from its record
    python tools/any_check.py --write    # records the counts that fell in tools/any_params.toml (never a rise)

A bare ``Any`` parameter is a parameter of a function, method or nested function whose annotation is exactly
``Any`` (``Any``, ``typing.Any`` or the string ``"Any"``): positional, positional-only and keyword-only ones, and
``*args: Any`` / ``**kwargs: Any`` too (a forwarding bag is a seam left untyped; ``ParamSpec`` or the callee's
own parameters type it). ``Any | None``, ``list[Any]``, ``Callable[..., Any]`` and unannotated parameters are not
counted: only the annotation that says nothing at all. ``self`` and ``cls`` are never annotated ``Any`` here.

A package is the folder that holds the module, relative to the repository root: ``app/core/session``,
``app/core`` (its top-level modules), ``app/gui/panels/demo``, ``widgets/plot``. ``tools/any_params.toml``
records each package's count (a package at 0 is not listed). The check fails, one line per package, when

- a package's count rose above its record, or a package that is not listed has any (a new one is held at 0);
- a package's count fell below its record: write the new number in the file (or run ``--write``), so that the
  ratchet stays tight and the next rise is caught at once.

It reads the code with ``ast`` only (no pyright, no imports of the app): `make test` runs it in pytest
(``tests/core/test_any_ratchet.py``).
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIRS = ("app", "widgets")
RECORD = ROOT / "tools" / "any_params.toml"
HEADER = """\
# Bare `Any` parameters per package of app/ and widgets/ (tools/any_check.py): a parameter annotated exactly
# `Any`, *args and **kwargs included. The counts may only fall: `make test` fails when a package's count rises
# above its number here (a package not listed is held at 0) and when it falls below it (write the new number,
# or run `python tools/any_check.py --write`). A package is the folder holding the module.
"""


def _is_bare_any(annotation: ast.expr | None) -> bool:
    """Whether an annotation is exactly ``Any``: ``Any``, ``typing.Any`` (any ``x.Any``) or ``"Any"``."""
    if isinstance(annotation, ast.Name):
        return annotation.id == "Any"
    if isinstance(annotation, ast.Attribute):
        return annotation.attr == "Any"
    if isinstance(annotation, ast.Constant):
        return annotation.value == "Any"
    return False


def bare_any_parameters(source: str, filename: str = "<module>") -> list[str]:
    """``"qualname(param)"`` for each bare ``Any`` parameter of one module's source, in source order.
    SyntaxError when the source does not parse."""
    found: list[str] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                a = child.args
                params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
                params += [p for p in (a.vararg, a.kwarg) if p is not None]
                found.extend(f"{name}({p.arg})" for p in params if _is_bare_any(p.annotation))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source, filename=filename), "")
    return found


def count(root: Path = ROOT, dirs: tuple[str, ...] = DIRS) -> dict[str, int]:
    """Bare ``Any`` parameters per package (the module's folder relative to root), packages with none left out."""
    counts: dict[str, int] = {}
    for d in dirs:
        for path in sorted((root / d).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(root)
            n = len(bare_any_parameters(path.read_text(encoding="utf-8"), rel.as_posix()))
            if n:
                package = rel.parent.as_posix()
                counts[package] = counts.get(package, 0) + n
    return dict(sorted(counts.items()))


def read_record(path: Path = RECORD) -> dict[str, int]:
    """The recorded counts; a missing file records none. ValueError on a count that is not a whole number."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8")).get("packages", {})
    bad = {k: v for k, v in data.items() if not isinstance(v, int) or isinstance(v, bool) or v < 0}
    if bad:
        raise ValueError(f"{path.name}: counts must be whole numbers: {bad}")
    return dict(data)


def write_record(path: Path, counts: dict[str, int]) -> None:
    lines = [f'"{package}" = {n}\n' for package, n in sorted(counts.items()) if n]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + "\n[packages]\n" + "".join(lines), encoding="utf-8")


def compare(counts: dict[str, int], recorded: dict[str, int], record_name: str) -> list[str]:
    """One problem per package whose count differs from its record (a package not listed is recorded at 0)."""
    problems = []
    for package in sorted(set(counts) | set(recorded)):
        now, was = counts.get(package, 0), recorded.get(package, 0)
        if now > was:
            where = "not listed, so held at 0" if package not in recorded else f"{was} recorded"
            problems.append(
                f"{package}: {now} bare Any parameters, {where}; the count may only fall: give the new ones a"
                f" type (see them: python tools/any_check.py --show {package})"
            )
        elif now < was:
            fix = f'delete its line "{package}"' if now == 0 else f'write "{package}" = {now}'
            problems.append(
                f"{package}: {now} bare Any parameters, {was} recorded: well done; keep the ratchet tight: {fix}"
                f" in {record_name} (or run python tools/any_check.py --write)"
            )
    return problems


def show(root: Path, package: str) -> list[str]:
    """``path:qualname(param)`` for each bare ``Any`` parameter of one package's modules."""
    out = []
    for path in sorted((root / package).glob("*.py")):
        rel = path.relative_to(root).as_posix()
        out += [f"{rel}:{p}" for p in bare_any_parameters(path.read_text(encoding="utf-8"), rel)]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="record the counts that fell (never a rise)")
    parser.add_argument("--show", metavar="PACKAGE", help="list a package's bare Any parameters (app/core/session)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository root (default: this checkout)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    record = root / "tools" / "any_params.toml"
    name = record.relative_to(root).as_posix()
    if args.show:
        for line in show(root, args.show.rstrip("/")):
            print(line)
        return 0
    try:
        counts, recorded = count(root), read_record(record)
    except (ValueError, SyntaxError, tomllib.TOMLDecodeError) as e:
        print(f"any_check: FAIL: {e}")
        return 1
    if args.write:
        new = {p: min(n, recorded[p]) if p in recorded else n for p, n in counts.items()}
        for package in sorted(p for p in counts if recorded and counts[p] > recorded.get(p, 0)):
            print(f"any_check: note: {package} rose to {counts[package]}; not recorded (fix it in the code)")
        write_record(record, {p: n for p, n in new.items() if p in recorded or not recorded})
        print(f"any_check: wrote {name}: {sum(new.values())} bare Any parameters")
        return 0
    problems = compare(counts, recorded, name)
    for problem in problems:
        print(f"any_check: FAIL: {problem}")
    if problems:
        return 1
    print(f"any_check: ok: {sum(counts.values())} bare Any parameters in {len(counts)} packages, as recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
