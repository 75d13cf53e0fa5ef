"""docs/architecture.md stays true: every file or folder it names exists, and each newcomer task ("Add a mode",
"Add an IR view", "Add a backend", "Add an example") lists files that exist (issue 35, item 6)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
#: a repository path as the page writes it: `app/core/…`, [`app/…`](../app/…), tests/…, widgets/…
PATH = re.compile(r"(?:(?<=\.\./)|(?<![\w/.-]))((?:app|widgets|tests|bench|tools|docs|assets)/[\w./*-]*[\w*/])")
#: made when the tests run (ignored by git)
GENERATED = ("tests/artifacts",)


def _paths(text: str) -> list[str]:
    return sorted({m.group(1).rstrip("/.") for m in PATH.finditer(text)})


def _exists(path: str) -> bool:
    if path in GENERATED:
        return True
    if "*" in path:
        return any(ROOT.glob(path))
    return (ROOT / path).exists()


def test_every_path_the_page_names_exists():
    missing = [p for p in _paths(DOC.read_text(encoding="utf-8")) if not _exists(p)]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_each_newcomer_task_lists_files_that_exist():
    text = DOC.read_text(encoding="utf-8")
    sections = dict(re.findall(r"^### (Add [^\n]+)\n(.*?)(?=^### |^## |\Z)", text, flags=re.M | re.S))
    for task in ("Add a mode", "Add an IR view", "Add a backend", "Add an example"):
        body = next((b for t, b in sections.items() if t.lower().startswith(task.lower())), None)
        assert body is not None, f"docs/architecture.md has no '### {task}' section"
        paths = _paths(body)
        assert paths, f"'{task}' lists no files"
        assert all(_exists(p) for p in paths), (task, [p for p in paths if not _exists(p)])


def test_the_path_check_can_fail(tmp_path):
    assert _paths("see `app/core/nowhere.py` and [x](../app/core/engine/engine.py)") == [
        "app/core/engine/engine.py", "app/core/nowhere.py"]
    assert not _exists("app/core/nowhere.py")
