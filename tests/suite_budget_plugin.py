"""Registers :class:`tests.suite_budget.BudgetPlugin` (``pytest_plugins`` in tests/conftest.py)."""

from __future__ import annotations

from tests.suite_budget import BudgetPlugin


def pytest_configure(config):  # noqa: ANN001
    config.pluginmanager.register(BudgetPlugin(), "suite-budget")
