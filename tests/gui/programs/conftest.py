"""The Code workspace's window, shared by this folder's tests (a module's own ``code_window`` overrides it)."""

from __future__ import annotations

import pytest


@pytest.fixture
def code_window(make_window, gui_model):
    """A 1280×720 window on the built-in model (not loaded) showing the Code workspace."""
    win = make_window(gui_model, autoload=False, size=(1280, 720))
    win.workspaces.show("Code")
    yield win
    win.close()
