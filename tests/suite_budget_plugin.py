"""Registers :class:`tests.suite_budget.BudgetPlugin` (``pytest_plugins`` in tests/conftest.py) in the process that
reports: the only one, or pytest-xdist's controller. An xdist worker leaves its compile counts
(:data:`tests.compile_sharing.COUNTS`) in the run's scratch folder for the controller to add up."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests import compile_sharing
from tests.suite_budget import BudgetPlugin


def pytest_configure(config):  # noqa: ANN001
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(BudgetPlugin(), "suite-budget")


def pytest_sessionfinish(session):  # noqa: ANN001
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        folder = Path(os.environ["TORCHAX_PLAYGROUND_TEST_SCRATCH"])
        (folder / f"compile-counts-{worker}.json").write_text(json.dumps(dict(compile_sharing.COUNTS)))
