"""Registers :class:`tests.suite_budget.BudgetPlugin` (``pytest_plugins`` in tests/conftest.py) in the process that
reports: the only one, or pytest-xdist's controller. An xdist worker leaves its compile counts
(:data:`tests.compile_sharing.COUNTS`) in the run's scratch folder for the controller to add up.

It also orders the test files longest first (:func:`tests.suite_budget.longest_first`), from each file's time in
the previous runs (:func:`tests.suite_budget.history_file`): pytest-xdist's ``loadfile`` hands the
files to its two workers in collection order, so a long file collected last kept one worker busy alone at the end
of the run. The controller freezes the order for the run (``file-order.json`` in the run's scratch folder) before
the workers start, so every worker collects the same order."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests import compile_sharing
from tests.suite_budget import BudgetPlugin, history_file, longest_first

_SCRATCH = Path(os.environ.get("TORCHAX_PLAYGROUND_TEST_SCRATCH", "/nonexistent"))
_FROZEN = _SCRATCH / "file-order.json"


def _history() -> Path:
    return history_file()


def pytest_configure(config):  # noqa: ANN001
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(BudgetPlugin(_history()), "suite-budget")
        if _history().exists():
            shutil.copyfile(_history(), _FROZEN)
        else:
            _FROZEN.unlink(missing_ok=True)


def pytest_collection_modifyitems(session, config, items):  # noqa: ANN001
    try:
        seconds = json.loads(_FROZEN.read_text()) if _FROZEN.exists() else {}
    except (OSError, ValueError):
        seconds = {}
    if os.environ.get("TORCHAX_PLAYGROUND_TEST_ORDER") == "longest-first":  # opt-in: measured 6 Dec, the new
        items[:] = longest_first(items, seconds)  # order moved cold compiles onto torchax-eager tests (4 over 30 s)


def pytest_sessionfinish(session):  # noqa: ANN001
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        (_SCRATCH / f"compile-counts-{worker}.json").write_text(json.dumps(dict(compile_sharing.COUNTS)))
        (_SCRATCH / f"compile-seconds-{worker}.json").write_text(json.dumps(compile_sharing.TEST_COMPILE_S))
