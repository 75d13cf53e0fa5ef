"""The `Any` ratchet (tools/any_check.py, issue 57 item 3): bare `Any` parameters per package of app/ and widgets/
may only fall. The real tree matches tools/any_params.toml, and a seeded regression (a module with a bare `Any`
parameter in a scratch tree) fails through the same counting and comparison."""

from pathlib import Path

from tools import any_check

ROOT = Path(__file__).resolve().parents[2]


def test_the_tree_matches_the_recorded_counts():
    problems = any_check.compare(any_check.count(ROOT), any_check.read_record(), "tools/any_params.toml")
    assert not problems, "\n".join(problems)


def test_only_a_parameter_annotated_exactly_any_counts():
    src = '''
from typing import Any
import typing

def f(a: Any, b: typing.Any, c: "Any", d: Any | None, e: list[Any], f, *args: Any, g: Any = 1, **kw: Any) -> Any:
    def inner(x: Any, /) -> None: ...
    return lambda y: y

class C:
    def m(self, x: int, y: Any) -> Any: ...
    async def n(self, z: Any) -> None: ...
'''
    assert any_check.bare_any_parameters(src) == [
        "f(a)", "f(b)", "f(c)", "f(g)", "f(args)", "f(kw)", "f.inner(x)", "C.m(y)", "C.n(z)"]


def _tree(root: Path, modules: dict[str, str]) -> Path:
    for rel, text in modules.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_seeded_bare_any_parameter_fails(tmp_path, capsys):
    typed = "def f(x: int) -> int:\n    return x\n"
    root = _tree(tmp_path, {"app/core/session/a.py": typed, "widgets/plot/b.py": "def g(x: object): ...\n"})
    assert any_check.main(["--root", str(root), "--write"]) == 0
    assert any_check.main(["--root", str(root)]) == 0
    (root / "app/core/session/a.py").write_text("from typing import Any\n\ndef f(x: Any) -> int:\n    return 1\n")
    capsys.readouterr()
    assert any_check.main(["--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "FAIL: app/core/session: 1 bare Any parameters, not listed, so held at 0" in out


def test_a_count_may_only_fall_and_a_fall_must_be_recorded(tmp_path):
    counts = any_check.count(_tree(tmp_path, {
        "app/core/session/a.py": "def f(x: Any, y: Any, z: Any): ...\n",
        "app/core/a.py": "def f(x: Any): ...\n",
        "widgets/ir/b.py": "def g(*args: Any, **kwargs: Any): ...\n",
    }))
    assert counts == {"app/core": 1, "app/core/session": 3, "widgets/ir": 2}
    recorded = {"app/core": 1, "app/core/session": 2, "widgets/ir": 4, "app/gone": 2}
    problems = any_check.compare(counts, recorded, "tools/any_params.toml")
    assert problems == [
        "app/core/session: 3 bare Any parameters, 2 recorded; the count may only fall: give the new ones a type"
        " (see them: python tools/any_check.py --show app/core/session)",
        'app/gone: 0 bare Any parameters, 2 recorded: well done; keep the ratchet tight: delete its line'
        ' "app/gone" in tools/any_params.toml (or run python tools/any_check.py --write)',
        'widgets/ir: 2 bare Any parameters, 4 recorded: well done; keep the ratchet tight: write "widgets/ir" = 2'
        " in tools/any_params.toml (or run python tools/any_check.py --write)",
    ]
    assert any_check.compare(counts, dict(counts), "x") == []


def test_write_lowers_the_counts_that_fell_and_never_raises_one(tmp_path, capsys):
    root = _tree(tmp_path, {"app/p/a.py": "def f(x: Any): ...\n", "app/q/b.py": "def f(x: Any, y: Any): ...\n"})
    record = root / "tools" / "any_params.toml"
    record.parent.mkdir()
    any_check.write_record(record, {"app/p": 3, "app/q": 1})
    assert any_check.main(["--root", str(root), "--write"]) == 0
    assert any_check.read_record(record) == {"app/p": 1, "app/q": 1}
    assert "app/q rose to 2; not recorded" in capsys.readouterr().out
    assert any_check.main(["--root", str(root)]) == 1
