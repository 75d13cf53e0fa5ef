"""The window the program tests (tests/gui/programs/) drive, shared: a test module imports the ``code_window``
fixture with ``from programs_helpers import code_window_fixture  # noqa: F401`` (under another Python name, so that
a test's ``code_window`` argument does not redefine an import). A plain module, not a conftest.py: the test modules
import ``conftest`` by name, and a nested conftest.py would be the one they found."""

from __future__ import annotations

import pytest


@pytest.fixture(name="code_window")
def code_window_fixture(request, make_window, gui_model):
    """A shown 1280×720 window on :func:`conftest.gui_model`, no model loaded; closed at teardown. A test module
    sets ``CODE_WINDOW_WORKSPACE = "Code"`` to have the Code workspace shown first (else the window opens on Run
    and, say, File ▸ Examples switches it)."""
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    workspace = getattr(request.module, "CODE_WINDOW_WORKSPACE", "")
    if workspace:
        win.workspaces.show(workspace)
    yield win
    win.close()
